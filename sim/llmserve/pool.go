package llmserve

import (
	"math"

	"github.com/conspirator-sim/conspirator/hw/llm"
)

// pool is a set of replicas on one kind of GPU placement: what a replica
// reads of its hardware. A colocated cluster has one; a disaggregated one
// a prefill and a decode pool, each with its own GPU, TP and KV capacity.
type pool struct {
	// p is the cluster's plan with this pool's Placement, Eff, Replicas
	// and KVBlocks (resolved from memory where 0).
	p                *Plan
	role             int // roleColocated, rolePrefill or roleDecode
	blockBytesPerGPU float64
	decode           *decodeTimer // decode-only step times (nil: llm.Step each step)

	// roomy is the placement with memory no batch exceeds, and roomyDecode
	// its decode timer: they time a step whose contexts share cached
	// prefix blocks, which llm.Step's fit check counts once per request
	// that reads them (replica.fits counts them once). memPerGPU and
	// weightsPerGPU are what that check compares.
	roomy                    llm.Placement
	roomyDecode              *decodeTimer
	memPerGPU, weightsPerGPU float64
}

func newPool(p Plan) (*pool, error) {
	pl := &pool{p: &p}
	pl.blockBytesPerGPU = float64(int64(p.BlockSize) * p.Model.KVBytesPerTokenPerGPU(p.Placement.TP))
	pl.weightsPerGPU = float64(p.Model.WeightBytes()) / float64(p.Placement.TP)
	pl.memPerGPU = float64(p.Placement.GPU.MemoryBytes)
	pl.roomy = p.Placement
	pl.roomy.GPU.MemoryBytes = math.MaxInt64
	if s := p.Placement.Slice; s != nil {
		pl.memPerGPU = float64(s.MemoryBytes)
		roomy := *s
		roomy.MemoryBytes = math.MaxInt64
		pl.roomy.Slice = &roomy
	}
	if p.KVBlocks == 0 {
		n, err := KVCapacity(p)
		if err != nil {
			return nil, err
		}
		pl.p.KVBlocks = n
	}
	pl.decode = newDecodeTimer(pl.p)
	roomy := *pl.p
	roomy.Placement = pl.roomy
	pl.roomyDecode = newDecodeTimer(&roomy)
	return pl, nil
}

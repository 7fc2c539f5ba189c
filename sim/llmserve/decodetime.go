package llmserve

import (
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// decodeTimer gives a decode-only step's llm.Step time without calling
// llm.Step each step, bit for bit the same.
//
// Why it is exact: for a decode-only batch of n requests, llm.Step's
// operators depend on n alone (the tokens through the layers, padded to
// a CUDA-graph size, and the sequences at the LM head) except attention,
// whose FLOPs and bytes are sums over the requests of terms linear in
// each context: 4 l hq hd and l kvLayer + 2 hq hd dtype. Every term is a
// whole number in float64 and every partial sum stays below 2^53 (at most
// 4 x 256 x 10M x 128 heads x 256 dims, about 3e14), so the sums are
// exact in any order: the attention operator is a function of S, the sum
// of the contexts. The step's time is then Step's own left-to-right sum of
// operator totals, which this replays: the constant prefix before
// attention, attention timed by the same roofline expression, then the
// constant suffix. A template per n is built from one real llm.Step call
// and kept only if replaying that very call gives its Seconds exactly;
// otherwise (or for a batch that would not fit memory, which Step
// refuses) the caller calls llm.Step. decodetime_test.go compares the two
// over random batches and placements.
type decodeTimer struct {
	p         *Plan
	templates []*decodeTemplate // by n; nil: not built, bad: Step only
	flopsC    float64           // the GPU's (slice's) peak FLOP/s x attention efficiency
	bwM       float64           // bandwidth x attention efficiency
	mem       float64
	fitW      float64 // weights per GPU, as Step's fit check counts them
	kvPerTok  int64   // KV bytes per token per GPU
	flopsPerT int64   // attention FLOPs per context token: 4 hq hd
	bytesPerT int64   // attention bytes per context token: kvLayer
	bytesPerQ int64   // attention bytes per request: 2 hq hd dtype
	ok        bool
}

type decodeTemplate struct {
	bad    bool
	prefix float64   // sum of the operator totals before attention
	floor  float64   // attention's kernel floor
	calls  float64   // attention calls (layers)
	suffix []float64 // operator totals after attention, in order
	host   float64   // the host's time (llm.Efficiency.Host): the step takes at least this
}

var badTemplate = &decodeTemplate{bad: true}

func newDecodeTimer(p *Plan) *decodeTimer {
	d := &decodeTimer{p: p, templates: make([]*decodeTemplate, p.MaxSeqs+1)}
	m, pl := p.Model, p.Placement
	g := pl.GPU
	if pl.TP < 1 || m.Heads%pl.TP != 0 {
		return d
	}
	flops, bw, mem := g.PeakDenseBF16, g.MemoryBandwidth, float64(g.MemoryBytes)
	if pl.Slice != nil {
		if g.MIG == nil {
			return d
		}
		flops *= g.MIG.ComputeShare(pl.Slice, mig.BasisSMs)
		share := float64(pl.Slice.MemSlices) / float64(g.MIG.MemorySlices)
		bw *= share
		mem = float64(pl.Slice.MemoryBytes)
	}
	d.flopsC, d.bwM, d.mem = flops*p.Eff.AttnCompute, bw*p.Eff.AttnMemory, mem
	d.fitW = float64(m.WeightBytes()) / float64(pl.TP)
	d.kvPerTok = m.KVBytesPerTokenPerGPU(pl.TP)
	hq := int64(m.Heads / pl.TP)
	kvh := m.KVBytesPerTokenPerGPU(pl.TP) / int64(2*m.Layers*m.HeadDim*m.DTypeBytes)
	d.flopsPerT = 4 * hq * int64(m.HeadDim)
	d.bytesPerT = 2 * kvh * int64(m.HeadDim) * int64(m.DTypeBytes)
	d.bytesPerQ = 2 * hq * int64(m.HeadDim) * int64(m.DTypeBytes)
	d.ok = true
	return d
}

// time returns the step time of decodes (their contexts, summing to S)
// and true, or false when the caller must call llm.Step.
func (d *decodeTimer) time(decodes []int, S int64) (float64, bool) {
	n := len(decodes)
	if !d.ok || n >= len(d.templates) {
		return 0, false
	}
	t := d.templates[n]
	if t == nil {
		if t = d.build(decodes, S); t == nil {
			return 0, false
		}
		d.templates[n] = t
	}
	if t.bad || d.fitW+float64(S*d.kvPerTok) > d.mem*llm.MemoryUtilization {
		return 0, false
	}
	return t.seconds(d.attn(n, S)), true
}

// attn is the attention operator's seconds per call, as llm.Step's roof.
func (d *decodeTimer) attn(n int, S int64) float64 {
	f := float64(S * d.flopsPerT)
	b := float64(S*d.bytesPerT + int64(n)*d.bytesPerQ)
	tc := f / d.flopsC
	tm := b / d.bwM
	return max(tc, tm)
}

func (t *decodeTemplate) seconds(attn float64) float64 {
	s := t.prefix
	s += (attn + t.floor) * t.calls
	for _, x := range t.suffix {
		s += x
	}
	// As llm.Step: the GPU waits for a slower host.
	if wait := t.host - s; wait > 0 {
		s += wait
	}
	return s
}

// build makes n's template from one llm.Step call, kept only if replaying
// that call gives its time exactly.
func (d *decodeTimer) build(decodes []int, S int64) *decodeTemplate {
	st, err := llm.Step(d.p.Model, d.p.Placement, llm.Batch{Decode: decodes}, d.p.Eff)
	if err != nil {
		return nil // not cached: the caller's own Step call reports it
	}
	t := &decodeTemplate{host: st.HostSeconds}
	at := -1
	var s float64
	for i, o := range st.Ops {
		if o.Name == "attn_decode" {
			at = i
			t.prefix, t.floor, t.calls = s, o.Floor, float64(o.Calls)
			// Step's tc > tm picks compute; max() agrees when equal.
			if got := d.attn(len(decodes), S) + o.Floor; got != o.Seconds {
				return badTemplate
			}
		} else if o.Name == "host_wait" {
			continue // depends on the rest: seconds recomputes it
		} else if at >= 0 {
			t.suffix = append(t.suffix, o.Seconds*float64(o.Calls))
		}
		s += o.Seconds * float64(o.Calls)
	}
	if wait := t.host - s; wait > 0 {
		s += wait
	}
	if at < 0 || s != st.Seconds || t.seconds(d.attn(len(decodes), S)) != st.Seconds {
		return badTemplate
	}
	return t
}

package training

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// setup is a training configuration resolved once (Config.resolve): the
// device with its overrides, the GPU link, each model's compute and
// gradient on the rack's GPU, the slots a job holds in flight, and the
// fallback; the replays read it and look nothing up.
type setup struct {
	cfg    Config
	dev    hw.AggregatorSpec
	intra  hw.IntraServerLinkSpec
	models map[string]modelPlan
	// need is the slots a synchronising job holds in flight: its
	// bandwidth-delay product, NIC rate x chunk round trip / chunk bytes,
	// at most the device's window per job.
	need int
	// snic is the SmartNIC in every server under placement server.
	snic serverNIC
	// inaWire and hostWire are the bytes on the wire per byte of
	// gradient: a chunk's packet ((slot + header bytes) / slot bytes) for
	// in-network and fallback transfers, a RoCEv2 packet ((MTU + 82) /
	// MTU) for the host all-reduce and parameter server.
	inaWire, hostWire float64
}

// serverNIC is the SmartNIC that sums its own server's GPUs' gradients
// (placement server): the DMA engine's rate each way between the GPUs
// and the SmartNIC, and its summation rate, bytes of contributions per
// second.
type serverNIC struct {
	name     string
	dma, sum float64
}

// modelPlan is one model on the rack's GPU.
type modelPlan struct {
	model   train.Model
	compute engine.Time // one iteration's forward and backward
	grad    float64     // bytes of one worker's gradient
}

// addModel looks model name up (once) and times it on the rack's GPU.
func (s *setup) addModel(name string) error {
	if _, ok := s.models[name]; ok {
		return nil
	}
	m, err := train.Lookup(name)
	if err != nil {
		return err
	}
	if _, gerr := gpu.Lookup(s.cfg.Cluster.GPU); gerr != nil || !slices.Contains(train.Precisions(), s.cfg.Cluster.Precision) {
		return nil // cluster.gpu or cluster.precision reports it; the model itself is known
	}
	c, err := m.ComputeSecondsAt(s.cfg.Cluster.GPU, s.cfg.Cluster.Precision)
	if err != nil {
		return err
	}
	s.models[name] = modelPlan{model: m, compute: max(1, engine.Seconds(c)), grad: m.GradientBytes(s.cfg.Sync.BytesPerValue)}
	return nil
}

// addJobs looks up the models of listed jobs (before the seeds run in
// parallel: the replays only read the setup).
func (s *setup) addJobs(jobs []train.Job) error {
	for _, j := range jobs {
		if err := s.addModel(j.Model); err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
	}
	return nil
}

// inFlight is the bandwidth-delay product of a worker's NIC through the
// device in chunks: how many aggregators a job streaming at line rate
// holds at once (189 at 100 Gb/s, 5 us and ATP's 332 B packet of 248 B
// of values), at most the device's window, at least 1.
func (s *setup) inFlight() int {
	bdp := float64(s.cfg.Cluster.NIC) * s.dev.ChunkRTT.Seconds() / (s.dev.SlotBytes + s.dev.ChunkHeaderBytes)
	return max(1, min(s.dev.PerJobSlots, int(math.Ceil(bdp-1e-9))))
}

// pool is the pool a policy of one seed shares.
func (s *setup) pool(seed uint64) ina.Pool {
	cost := 2 // SwitchML's slot and its shadow copy, on another's pool
	if s.dev.ShadowCounted {
		cost = 1
	}
	return ina.Pool{Slots: s.dev.Slots, PerJob: s.need, StaticCost: cost, Seed: seed, Hash: s.cfg.INA.Hash}
}

// ModelInfo is one model the replays ran, as timed on the rack's GPU:
// Derived says its throughput is derived (a FLOP ratio or an assumed
// share of peak), not measured.
type ModelInfo struct {
	Name          string  `json:"name"`
	Precision     string  `json:"precision"`
	ComputeS      float64 `json:"compute_s"`
	GradientBytes float64 `json:"gradient_bytes"`
	Derived       bool    `json:"derived"`
	Source        string  `json:"source"`
}

// modelInfos lists the models resolved, by name.
func (s *setup) modelInfos() []ModelInfo {
	var out []ModelInfo
	seen := map[string]bool{}
	for _, m := range s.models {
		if m.compute == 0 || seen[m.model.Name] {
			continue
		}
		seen[m.model.Name] = true
		out = append(out, ModelInfo{Name: m.model.Name, Precision: s.cfg.Cluster.Precision, ComputeS: m.compute.Seconds(),
			GradientBytes: m.grad, Derived: m.model.Derived, Source: m.model.Source})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

package llmserve

import (
	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// HostDispatchConfig is the model runner's host time per step: kernel
// launches layer by layer (eager steps) and per-sequence input
// preparation, which the GPU cannot run ahead of (llm.Efficiency.Host:
// a step takes max(GPU time, host time)). It is the engine's on its host,
// not the GPU's: zero by default, an engine with CUDA graphs whose host
// keeps ahead. The control plane (scheduler, API server) is a separate
// part, control_plane.
type HostDispatchConfig struct {
	Eager       bool           `yaml:"eager" doc:"every step launches layer by layer, decodes included (vLLM's enforce_eager); false: decode-only steps replay a CUDA graph captured at vLLM's batch sizes (one launch a step, per_layer not charged)" default:"false" source:"vendor: vLLM captures CUDA graphs for decode unless enforce_eager"`
	PerLayer    units.Duration `yaml:"per_layer" doc:"host time to launch one layer's kernels in an eager step; the step takes the longer of the GPU's and the host's time. Stretched by llm.host_load (CPU contention delays kernel launches outside CUDA graphs)" default:"0s" source:"measured (bench/stepval/RESULTS.md): fitted on SplitwiseSim's Llama-2-70B TP 4 decode iterations, 548 us on a DGX-A100 and 363 us on a DGX-H100 for that (unnamed, eager) engine; 0 for an engine whose host keeps ahead" plausible:"0s,700us"`
	PerSequence units.Duration `yaml:"per_sequence" doc:"host time per sequence of a step's batch (input preparation, sampling); not with control_plane, whose per_request stands for the same work. Stretched by llm.host_load" default:"0s" source:"measured (bench/stepval/RESULTS.md): 390 us (DGX-A100) and 323 us (DGX-H100) fitted with per_layer" plausible:"0s,800us"`
}

// maxHostDispatch bounds each term: past 10 ms a layer or a sequence the
// engine is not serving, and the bound keeps layers x per_layer +
// sequences x per_sequence far inside the clock.
const maxHostDispatch = 10 * units.Duration(engine.Millisecond)

func (c HostDispatchConfig) validate(cp ControlPlaneConfig, add func(key, format string, a ...any)) {
	for _, d := range []struct {
		key string
		v   units.Duration
	}{{"host_dispatch.per_layer", c.PerLayer}, {"host_dispatch.per_sequence", c.PerSequence}} {
		if d.v < 0 || d.v > maxHostDispatch {
			add(d.key, "%v must be 0s to %v (the host's time per layer launched or per sequence; 0s: a host that keeps ahead of the GPU)", d.v, maxHostDispatch)
		}
	}
	if c.PerSequence > 0 && cp.Placement != "" && cp.Placement != PlacementNone {
		add("host_dispatch.per_sequence", "%v with control_plane.placement %s: both charge the per-request CPU work; set per_sequence to 0s or control_plane.placement to none", c.PerSequence, cp.Placement)
	}
}

// apply puts the host's time into eff, stretched by the host's load as
// the control plane's host work is.
func (c HostDispatchConfig) apply(eff *llm.Efficiency, hostLoad float64) error {
	if c.Eager {
		eff.GraphBatchSizes = nil
	}
	if c.PerLayer == 0 && c.PerSequence == 0 {
		return nil
	}
	cpu, err := hw.LookupHostCPU("xeon-8380-2s")
	if err != nil {
		return err
	}
	scale := hw.HostCPUConfig{Cores: cpu.Cores, Background: hostLoad, Model: hw.BackgroundPerCore, Interference: hw.DefaultHostCosts.Interference}.Stretch()
	eff.Host = llm.HostDispatch{PerLayer: c.PerLayer.Time().Seconds() * scale, PerSequence: c.PerSequence.Time().Seconds() * scale}
	return nil
}

package llmserve

import (
	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// Control-plane placements and engine styles.
const (
	// PlacementNone keeps the step model's own fixed per-step costs
	// (llm.Efficiency's EagerStep and GraphStep) and no host.
	PlacementNone = "none"
	// PlacementHost runs the serving engine's CPU work on host cores,
	// stretched by the background load.
	PlacementHost = "host"
	// PlacementSmartNIC runs it on the SmartNIC's Arm cores (slower, no
	// host interference), as Blink does on a BlueField-3.
	PlacementSmartNIC = "smartnic"

	// EngineSerial: the GPU waits for the CPU every step (vLLM v0: the
	// scheduler, input preparation and the API server's per-token work in
	// one process): a step takes CPU + GPU.
	EngineSerial = "serial"
	// EngineOverlapped: the CPU prepares the next step while the GPU runs
	// this one, and the API server runs in its own process (vLLM v1,
	// SGLang's and TensorRT-LLM's overlap schedulers): a step takes
	// max(GPU, scheduler, API server) plus a hand-off.
	EngineOverlapped = "overlapped"
)

// ControlPlaneConfig is the serving engine's per-iteration CPU work and
// where it runs. With placement none the step model's fixed costs stand
// for it, as before; host or smartnic replace them with these parts.
type ControlPlaneConfig struct {
	Placement string `yaml:"placement" doc:"where the serving engine's per-step CPU work runs: none (the step model's fixed per-step cost stands for it, no host modelled), host (host cores, stretched by llm.host_load) or smartnic (the SmartNIC's Arm cores: slower, untouched by host load)" default:"none"`
	Engine    string `yaml:"engine" doc:"serial (the GPU waits for the CPU each step: vLLM v0) or overlapped (the CPU prepares the next step during this one and the API server is its own process: vLLM v1, SGLang, TensorRT-LLM): a step takes CPU + GPU, or max(GPU, scheduler, API server) + handoff" default:"serial"`

	PerStep    units.Duration `yaml:"per_step" doc:"CPU time per step whatever its batch: scheduling, batch assembly, launch" default:"3ms" source:"estimate: fitted by hand so that, with per_request and per_token, a serial engine's step of 64 decodes of Llama-3-8B on an H100 splits as vLLM's 2024-09-05 performance post reports for v0.5.3 on that setup (API server 33%, scheduling and input preparation 29%, GPU 38%); vLLM RFC #6854 reports several ms of GPU idle per decode step"`
	PerRequest units.Duration `yaml:"per_request" doc:"CPU time per request in the batch: input preparation, sampling hand-off" default:"40us" source:"estimate: as per_step"`
	PerToken   units.Duration `yaml:"per_token" doc:"CPU time per output token sampled: detokenisation and streaming by the API server" default:"120us" source:"estimate: as per_step (the API server's 33% of a 64-token step)"`
	Handoff    units.Duration `yaml:"handoff" doc:"overlapped engine: the CPU-GPU hand-off a step adds to max(GPU, scheduler, API server), CPU work stretched as the rest" default:"200us" source:"estimate: a few kernel launches and a queue hand-off between processes"`

	SmartNIC string `yaml:"smartnic" doc:"placement smartnic: the SmartNIC (hw catalog: bluefield3, bluefield2) whose Arm cores run the engine's CPU work, slower by its arm_speed" default:"bluefield3"`
}

func (c ControlPlaneConfig) validate(add func(key, format string, a ...any)) {
	switch c.Placement {
	case PlacementNone, PlacementHost, PlacementSmartNIC:
	default:
		add("control_plane.placement", "%q; use %s, %s or %s", c.Placement, PlacementNone, PlacementHost, PlacementSmartNIC)
	}
	if c.Engine != EngineSerial && c.Engine != EngineOverlapped {
		add("control_plane.engine", "%q; use %s or %s", c.Engine, EngineSerial, EngineOverlapped)
	}
	for _, d := range []struct {
		key string
		v   units.Duration
	}{{"per_step", c.PerStep}, {"per_request", c.PerRequest}, {"per_token", c.PerToken}, {"handoff", c.Handoff}} {
		if d.v < 0 || d.v > units.Duration(engine.Second) {
			add("control_plane."+d.key, "%v; want 0s to 1s of CPU time", d.v)
		}
	}
	if c.Placement == PlacementSmartNIC {
		if _, err := hw.LookupSmartNIC(c.SmartNIC); err != nil {
			add("control_plane.smartnic", "%v", err)
		}
	}
}

// ControlPlane is a resolved control plane: the CPU parts already scaled
// by where they run.
type ControlPlane struct {
	Serial                        bool
	PerStep, PerRequest, PerToken engine.Time
	Handoff                       engine.Time
	// Scale is how much slower the CPU work runs than on an idle host
	// core: the host's stretch under background load, or 1/arm_speed.
	Scale float64
}

// resolve scales the CPU parts by where they run; hostLoad is the llm
// section's host_load.
func (c ControlPlaneConfig) resolve(hostLoad float64) (*ControlPlane, error) {
	if c.Placement == PlacementNone || c.Placement == "" {
		return nil, nil
	}
	scale := 1.0
	switch c.Placement {
	case PlacementHost:
		cpu, err := hw.LookupHostCPU("xeon-8380-2s")
		if err != nil {
			return nil, err
		}
		scale = hw.HostCPUConfig{Cores: cpu.Cores, Background: hostLoad, Model: hw.BackgroundPerCore, Interference: hw.DefaultHostCosts.Interference}.Stretch()
	case PlacementSmartNIC:
		s, err := hw.LookupSmartNIC(c.SmartNIC)
		if err != nil {
			return nil, units.Invalid("control_plane.smartnic", "%v", err)
		}
		scale = 1 / s.ArmSpeed
	}
	at := func(d units.Duration) engine.Time { return engine.Time(float64(d) * scale) }
	return &ControlPlane{Serial: c.Engine == EngineSerial, PerStep: at(c.PerStep), PerRequest: at(c.PerRequest), PerToken: at(c.PerToken), Handoff: at(c.Handoff), Scale: scale}, nil
}

// stepTime is a step's duration with the control plane: the GPU's time
// and the CPU work of a batch of n requests sampling tokens tokens,
// serial (added) or overlapped (the largest of the GPU, the scheduler
// and the API server, plus the hand-off).
func (cp *ControlPlane) stepTime(gpu engine.Time, n, tokens int) engine.Time {
	sched := cp.PerStep + engine.Time(n)*cp.PerRequest
	api := engine.Time(tokens) * cp.PerToken
	if cp.Serial {
		return gpu + sched + api
	}
	// The scheduler prepares the next step during this one, and the API
	// server (detokenising, streaming) is a process of its own: each
	// runs beside the GPU.
	return max(gpu, sched, api) + cp.Handoff
}

package llmserve

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// Where the engine's CPU work runs sets its speed: an idle host 1x; a
// host at 80% background load (per-core model, interference 0.1)
// (1 + 0.1 x 0.8) / (1 - 0.8/2) = 1.08 / 0.6 = 1.8x; a BlueField-3's Arm
// cores 1/0.62 = 1.6129x whatever the host's load.
func TestControlPlaneScale(t *testing.T) {
	base := ControlPlaneConfig{Engine: EngineSerial, PerStep: units.Duration(engine.Millisecond), SmartNIC: "bluefield3"}
	for _, tc := range []struct {
		placement string
		load      float64
		want      float64
	}{
		{PlacementHost, 0, 1},
		{PlacementHost, 0.8, 1.8},
		{PlacementSmartNIC, 0.8, 1 / 0.62},
	} {
		c := base
		c.Placement = tc.placement
		cp, err := c.resolve(tc.load)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(cp.Scale-tc.want) > 1e-9 || cp.PerStep != engine.Time(float64(engine.Millisecond)*tc.want) {
			t.Errorf("%s at %v: scale %v, per step %s; want %v", tc.placement, tc.load, cp.Scale, cp.PerStep, tc.want)
		}
	}
	if cp, err := (ControlPlaneConfig{Placement: PlacementNone}).resolve(0.5); cp != nil || err != nil {
		t.Errorf("placement none: %v, %v; want no control plane", cp, err)
	}
}

// One request alone, two output tokens: each step takes the GPU's time
// and the CPU's (per step + per request + per sampled token): added by a
// serial engine, the larger plus the hand-off by an overlapped one.
func TestControlPlaneStepTime(t *testing.T) {
	const prompt = 500
	for _, serial := range []bool{true, false} {
		p := testPlan(t)
		p.Eff.EagerStep, p.Eff.GraphStep = 0, 0
		cp := &ControlPlane{Serial: serial, PerStep: 3 * engine.Millisecond, PerRequest: 40 * engine.Microsecond, PerToken: 120 * engine.Microsecond, Handoff: 200 * engine.Microsecond, Scale: 1}
		p.Control = cp
		res, err := Simulate(p, trace(req{at: 0, prompt: prompt, output: 2}))
		if err != nil {
			t.Fatal(err)
		}
		g1 := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: prompt}}})
		g2 := stepTime(t, p, llm.Batch{Decode: []int{prompt + 1}})
		sched, api := 3*engine.Millisecond+40*engine.Microsecond, 120*engine.Microsecond
		cpu := sched + api
		w1, w2 := g1+cpu, g2+cpu
		if !serial {
			w1, w2 = max(g1, sched, api)+200*engine.Microsecond, max(g2, sched, api)+200*engine.Microsecond
		}
		r := res.Requests[0]
		if r.FirstToken != w1 || r.Finish != w1+w2 {
			t.Errorf("serial %v: first token %s, finish %s; want %s and %s (GPU %s and %s, CPU %s)", serial, r.FirstToken, r.Finish, w1, w1+w2, g1, g2, cpu)
		}
	}
}

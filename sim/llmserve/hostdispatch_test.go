package llmserve_test

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/scenarios"
	. "github.com/conspirator-sim/conspirator/sim/llmserve"
)

// testConfig is llm/disagg's llm section with its defaults (a synthetic
// workload: no trace to read).
func testConfig(t *testing.T) Config {
	t.Helper()
	var sc scenarios.Scenario
	if err := scenarios.Load("llm/disagg", []string{"llm.disagg.enabled=false"}, nil, &sc); err != nil {
		t.Fatal(err)
	}
	return *sc.LLM
}

// host_dispatch resolves once into the plan's efficiency: eager drops the
// CUDA-graph sizes, the two terms are stretched by host_load exactly as
// the control plane's host work is, and zero leaves the fitted profile
// untouched.
func TestHostDispatchPlan(t *testing.T) {
	base := testConfig(t)
	p0, err := base.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p0.Eff.Host.PerLayer != 0 || p0.Eff.Host.PerSequence != 0 || len(p0.Eff.GraphBatchSizes) == 0 {
		t.Fatalf("default plan: host %+v, %d graph sizes; want zero host and CUDA graphs", p0.Eff.Host, len(p0.Eff.GraphBatchSizes))
	}
	c := base
	c.HostDispatch = HostDispatchConfig{Eager: true, PerLayer: units.Duration(500e3), PerSequence: units.Duration(300e3)} // 500 us, 300 us
	c.HostLoad = 0.8
	p, err := c.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := hw.LookupHostCPU("xeon-8380-2s")
	if err != nil {
		t.Fatal(err)
	}
	k := hw.HostCPUConfig{Cores: cpu.Cores, Background: 0.8, Model: hw.BackgroundPerCore, Interference: hw.DefaultHostCosts.Interference}.Stretch()
	// (1 + 0.1 x 0.8) / (1 - 0.8/2) = 1.8 under the per-core model.
	if math.Abs(k-1.8) > 1e-9 {
		t.Fatalf("stretch at 80%% load %g, want 1.8", k)
	}
	if math.Abs(p.Eff.Host.PerLayer-500e-6*k) > 1e-15 || math.Abs(p.Eff.Host.PerSequence-300e-6*k) > 1e-15 || p.Eff.GraphBatchSizes != nil {
		t.Errorf("eager at 80%% load: host %+v, graphs %v; want 900 us and 540 us a layer and a sequence, no graphs", p.Eff.Host, p.Eff.GraphBatchSizes)
	}
}

func TestHostDispatchRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Config)
		key  string
	}{
		{"negative", func(c *Config) { c.HostDispatch.PerLayer = -1 }, "host_dispatch.per_layer"},
		{"past 10 ms", func(c *Config) { c.HostDispatch.PerSequence = units.Duration(11e6) }, "host_dispatch.per_sequence"},
		{"with the control plane", func(c *Config) {
			c.HostDispatch.PerSequence = units.Duration(300e3)
			c.ControlPlane.Placement = PlacementHost
		}, "host_dispatch.per_sequence"},
	} {
		cfg := testConfig(t)
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.key)
		}
	}
}

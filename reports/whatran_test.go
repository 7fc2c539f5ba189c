package reports

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// A report opens with what was run: the headline beside the paper's
// figure, and exactly the inputs that differ from the built-in scenario
// (here one --set), or that there are none.
func TestWriteWhatRan(t *testing.T) {
	load := func(sets ...string) map[string]any {
		var sc scenarios.Scenario
		if err := scenarios.Load("paper/e2e", sets, nil, &sc); err != nil {
			t.Fatal(err)
		}
		m, err := sim.InputsMap(&sc)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	gap := Num(15.6)
	seed := int64(1)
	r := Result{Scenario: "paper/e2e", Seed: &seed, Version: "v", Gap: &gap, Inputs: load("datapath.host.background_load=80%")}
	var md strings.Builder
	writeWhatRan(&md, r)
	got := md.String()
	for _, want := range []string{"**The conspirator path's mean end-to-end time is 15.6% below host-rdma's (the paper: 15%).**",
		"seed 1", "- `datapath.host.background_load` = \"80%\" (built-in: \"0%\")"} {
		if !strings.Contains(got, want) {
			t.Errorf("opening lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n- "); n != 1 {
		t.Errorf("%d inputs listed, want exactly the one set:\n%s", n, got)
	}
	md.Reset()
	r.Inputs = load()
	writeWhatRan(&md, r)
	if !strings.Contains(md.String(), "the built-in scenario `paper/e2e` as it is") {
		t.Errorf("an unchanged run:\n%s", md.String())
	}
}

// A sweep point's derived gaps by hand: host-rdma 1000 µs, conspirator
// 900 (10% below), gpudirect unstable (no gap, no latency, unstable 1):
// an unbounded mean is never averaged into a curve.
func TestDerivedMetricsAndUnstablePaths(t *testing.T) {
	p := func(name string, mean float64, unstable bool) PathResult {
		return PathResult{Name: name, LatencyUS: Latency{Mean: Num(mean), P50: Num(mean), P95: Num(mean), P99: Num(mean)}, Unstable: unstable}
	}
	m := Metrics(Result{Paths: []PathResult{p("host-rdma", 1000, false), p("conspirator", 900, false), p("gpudirect", 5e6, true)}})
	if v := m["derived/conspirator vs host-rdma/gap_pct"]; math.Abs(v-10) > 1e-9 {
		t.Errorf("conspirator's gap %v, want 10", v)
	}
	if v := m["derived/gpudirect vs host-rdma/gap_pct"]; !math.IsNaN(v) {
		t.Errorf("an unstable path's gap %v, want none (NaN)", v)
	}
	if v := m["paths/gpudirect/latency_us.mean"]; !math.IsNaN(v) || m["paths/gpudirect/unstable"] != 1 {
		t.Errorf("unstable path: mean %v, unstable %v; want NaN and 1", v, m["paths/gpudirect/unstable"])
	}
	if m["paths/conspirator/unstable"] != 0 || m["paths/conspirator/latency_us.mean"] != 900 {
		t.Errorf("a stable path lost its values: %v", m)
	}
}

package sweep

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestAggregate(t *testing.T) {
	pts := Expand([]Param{{Key: "load", Values: []string{"0", "0.8"}}}, []uint64{1, 2, 3})
	// load=0: latency 10, 12, 14 -> mean 12, s = 2, t(0.975, 2) = 4.302653,
	//   half-width = 4.302653 * 2 / sqrt(3) = 4.968275.
	// load=0.8: latency 20, 20, NaN (unstable) -> mean 20 over N = 2,
	//   s = 0, half-width 0; drops only at load 0.8 seed 3: 5 -> N = 1,
	//   half-width NaN (one sample says nothing about spread).
	vals := []map[string]float64{
		{"lat": 10}, {"lat": 12}, {"lat": 14},
		{"lat": 20}, {"lat": 20}, {"lat": math.NaN(), "drops": 5},
	}
	var samples []Sample
	for i := len(pts) - 1; i >= 0; i-- { // reverse order: output must not care
		samples = append(samples, Sample{Point: pts[i], Metrics: vals[i]})
	}
	g := Aggregate(samples, 0.95)
	if len(g) != 2 || g[0].Params[0].Value != "0" || g[1].Params[0].Value != "0.8" {
		t.Fatalf("groups %+v, want load 0 then 0.8", g)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-5 }
	if e := g[0].Metrics["lat"]; !near(e.Mean, 12) || !near(e.HalfWidth, 4.968275) || e.N != 3 {
		t.Errorf("load 0 lat = %+v, want 12 +- 4.968275 (n=3)", e)
	}
	if e := g[1].Metrics["lat"]; !near(e.Mean, 20) || !near(e.HalfWidth, 0) || e.N != 2 {
		t.Errorf("load 0.8 lat = %+v, want 20 +- 0 (n=2)", e)
	}
	if e := g[1].Metrics["drops"]; !near(e.Mean, 5) || !math.IsNaN(e.HalfWidth) || e.N != 1 {
		t.Errorf("load 0.8 drops = %+v, want 5 +- NaN (n=1)", e)
	}
	if s := g[1].Seeds; len(s) != 3 || s[0] != 1 || s[2] != 3 {
		t.Errorf("seeds %v, want [1 2 3]", s)
	}
	b, err := json.Marshal(g[1].Metrics["drops"])
	if err != nil || string(b) != `{"mean":5,"half_width":null,"n":1}` {
		t.Errorf("JSON %s, %v", b, err)
	}
	var back Estimate
	if err := json.Unmarshal(b, &back); err != nil || back.Mean != 5 || !math.IsNaN(back.HalfWidth) {
		t.Errorf("round trip %+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"mean":"x"}`), &back); err == nil || !strings.Contains(err.Error(), "mean") {
		t.Errorf("bad JSON accepted: %v", err)
	}
}

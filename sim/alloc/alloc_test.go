package alloc

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/nodealloc"
)

func cfg(policies ...string) Config {
	return Config{Trace: "t.csv", Nodes: "n.csv", Policies: policies, Seeds: 1, Tune: 1, TypicalThreshold: 95, TieBreak: TieNodeOrder}
}

// A cluster of two 1-GPU nodes (2000 milli capacity) and three half-GPU
// pods. Tune 0.5 keeps 1000 of the 1500 requested: tuneDown removes one
// pod. Best-fit puts the first pod on either node (a tie, to the earlier
// in the seed's order) and the second beside it (the fuller node scores
// higher): both placed, 1000/2000 = 50% allocated at 50% arrived.
func TestHandExample(t *testing.T) {
	in := Input{
		Nodes: []nodealloc.Node{nodealloc.NewNode("b", "T4", 4000, 1024, 1), nodealloc.NewNode("a", "T4", 4000, 1024, 1)},
		Pods:  []nodealloc.Pod{{CPU: 1000, NumGPU: 1, GPUMilli: 500}, {CPU: 1000, NumGPU: 1, GPUMilli: 500}, {CPU: 1000, NumGPU: 1, GPUMilli: 500}},
	}
	c := cfg("best-fit")
	c.Tune = 0.5
	res, err := Simulate(c, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.Pods != 2 || r.Failed != 0 || r.FinalPct != 50 || r.CapacityM != 2000 {
		t.Fatalf("run %+v; want 2 pods, none failed, 50%% allocated of 2000", r)
	}
	// Points: after pod 1, 25% arrived and allocated; after pod 2, 50%.
	want := map[int]float64{25: 25, 50: 50}
	for _, p := range r.Points {
		if w, ok := want[p.ArrivedPct]; ok && p.AllocPct != w {
			t.Errorf("at %d%% arrived: %v%% allocated, want %v", p.ArrivedPct, p.AllocPct, w)
		}
	}
	// Tune 1 resamples up instead: 1500 -> 2000 (one more pod; the next
	// would pass the target), and all four fit, two per GPU.
	c.Tune = 1
	res, _ = Simulate(c, in, 1)
	if r := res.Runs[0]; r.Pods != 4 || r.Failed != 0 || r.FinalPct != 100 {
		t.Errorf("tuned up: %+v; want 4 pods, all placed, 100%%", r)
	}
}

// tuneUp stops before the next pod's share would pass the target, tuneDown
// removes pods until the request is at most the target, and both keep
// every original pod when tuning up.
func TestWorkloadTune(t *testing.T) {
	pods := []nodealloc.Pod{{NumGPU: 1, GPUMilli: 1000}, {NumGPU: 2, GPUMilli: 1000}, {NumGPU: 1, GPUMilli: 300}, {CPU: 5}}
	total := func(ps []nodealloc.Pod) (s int64) {
		for i := range ps {
			s += ps[i].TotalGPUMilli()
		}
		return s
	}
	for seed := range uint64(20) {
		up := workload(pods, 3000, 2, engine.NewStream(seed, "w")) // target 6000 from 3300
		if got := total(up); got > 6000+1000 || got < 6000-1000 || len(up) < len(pods) {
			t.Fatalf("seed %d: tuned up to %d milli (%d pods); want within one pod of 6000", seed, got, len(up))
		}
		down := workload(pods, 3000, 0.5, engine.NewStream(seed, "w")) // target 1500
		if got := total(down); got > 1500 {
			t.Fatalf("seed %d: tuned down to %d milli; want at most 1500", seed, got)
		}
	}
}

// The same seed gives byte-identical results, and the row order of the
// node list does not matter (servers are put in name order before the
// seed's order is drawn).
func TestDeterminismAndNodeOrder(t *testing.T) {
	var in Input
	for i := range 12 {
		in.Nodes = append(in.Nodes, nodealloc.NewNode(string(rune('a'+i)), []string{"T4", "P100"}[i%2], 16000, 65536, 1+i%4))
	}
	for i := range 60 {
		in.Pods = append(in.Pods, nodealloc.Pod{CPU: int64(1000 + 500*(i%5)), Mem: 1024, NumGPU: 1 + i%3/2, GPUMilli: []int64{250, 500, 1000}[i%3]})
		if i%7 == 0 {
			in.Pods[i] = nodealloc.Pod{CPU: 4000, Mem: 2048}
		}
	}
	c := cfg(nodealloc.Names()...)
	c.Seeds, c.Tune = 3, 1.3
	run := func(in Input) []byte {
		res, err := Simulate(c, in, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return append(b, CSV(res)...)
	}
	a := run(in)
	if !bytes.Equal(a, run(in)) {
		t.Fatal("same seed, different results")
	}
	rev := in
	rev.Nodes = slices.Clone(in.Nodes)
	slices.Reverse(rev.Nodes)
	if !bytes.Equal(a, run(rev)) {
		t.Error("reversing the node list changed the results")
	}
	// Byte-identical at any parallelism: the runs share nothing.
	for _, w := range []int{1, 2, 5, 64} {
		res, err := SimulateWorkers(c, in, 7, w)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if !bytes.Equal(a, append(b, CSV(res)...)) {
			t.Errorf("%d workers: results differ from the default's", w)
		}
	}
}

func TestValidate(t *testing.T) {
	c := cfg("fgd", "fdg", "fgd")
	c.Seeds, c.Tune, c.TieBreak, c.TypicalThreshold, c.Trace = 0, 0, "first", 0, ""
	err := c.Validate()
	for _, want := range []string{"trace", `unknown policy "fdg" (did you mean "fgd"?)`, `policy "fgd" is listed twice`, "seeds", "tune", "tie_break", "typical_threshold"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want it to mention %q", err, want)
		}
	}
	if _, err := Simulate(cfg("random"), Input{Nodes: []nodealloc.Node{nodealloc.NewNode("c", "", 1000, 1, 0)}, Pods: []nodealloc.Pod{{CPU: 1}}}, 1); err == nil {
		t.Error("a node list without GPUs was accepted")
	}
}

// Summarize gives the mean and a t-based 95% CI per milestone: two seeds
// at 90 and 92 give mean 91 and half-width t(0.975, 1) * 1 = 12.706.
func TestSummarize(t *testing.T) {
	res := &Result{Runs: []Run{
		{Policy: "p", Points: []Point{{100, 90}}},
		{Policy: "p", Points: []Point{{100, 92}}},
	}}
	s := Summarize(res)
	if len(s) != 1 || len(s[0].At) != 1 || s[0].At[0].Mean != 91 || s[0].At[0].CI95 == nil || math.Abs(*s[0].At[0].CI95-12.706) > 1e-3 {
		t.Errorf("Summarize = %+v", s)
	}
	one := Summarize(&Result{Runs: []Run{{Policy: "p", Points: []Point{{100, 90}}}}})
	if one[0].At[0].CI95 != nil {
		t.Error("one seed must have no CI")
	}
}

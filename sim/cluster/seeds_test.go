package cluster

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// node_fraction keeps, per GPU model, the first round(fraction x count)
// servers in the given order and at least one: by hand, of 4 P100, 2 T4
// and 1 V100 servers in this order, a half keeps P100 rows 0 and 2, T4 row
// 1 and the V100 (round(0.5) = 0, raised to 1); a server without GPU is
// kept for buildCluster to report.
func TestNodesKept(t *testing.T) {
	nodes := []trace.Node{
		{Name: "a", NumGPU: 2, GPUType: "P100"}, {Name: "b", NumGPU: 2, GPUType: "T4"},
		{Name: "c", NumGPU: 2, GPUType: "P100"}, {Name: "d", NumGPU: 2, GPUType: "P100"},
		{Name: "e", NumGPU: 0}, {Name: "f", NumGPU: 4, GPUType: "T4"},
		{Name: "g", NumGPU: 2, GPUType: "P100"}, {Name: "h", NumGPU: 8, GPUType: "V100M16"},
	}
	tm, _ := gpu.ParseTraceTypeMap("")
	got := fmt.Sprint(nodesKept(nodes, 0.5, tm))
	if want := "[true true true false true false false true]"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	if got := fmt.Sprint(nodesKept(nodes, 1, tm)); strings.Contains(got, "false") {
		t.Errorf("fraction 1 left servers out: %s", got)
	}
}

// A run of several seeds is the runs of its seeds, merged: every seed's
// results equal a one-seed run with that seed (a second path through the
// code), a policy's GPU-hours are their mean with a Student-t CI computed
// here by hand (t(0.975, 3) = 3.1824), vs_baseline is the mean of the
// per-seed differences, and the result does not depend on how many CPUs
// ran the seeds.
func TestSeedsMerge(t *testing.T) {
	dir := t.TempDir()
	rows := []string{"n0,64000,262144,2,P100", "n1,64000,262144,2,T4", "n2,96000,786432,8,G2", "n3,64000,262144,4,V100M16",
		"n4,64000,262144,2,P100", "n5,96000,786432,4,G2", "n6,64000,262144,1,T4", "n7,96000,786432,8,G2"}
	nodes := filepath.Join(dir, "nodes.csv")
	if err := os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var jobs []workloads.Job
	r := engine.NewStream(11, "jobs")
	for k := range 60 {
		jobs = append(jobs, job(fmt.Sprint("j", k), 2000*r.Float64(), math.Round(r.Exp(900)+1), 1+r.IntN(1000)))
	}
	cfg := small(jobs, "v100", 1, "naive-share", "best-fit", "conspirator")
	cfg.Nodes, cfg.GPUs = nodes, nil
	cfg.NodeFraction = 0.5
	const seeds, first = 4, 20
	cfg.Seeds = seeds
	res, err := Run(cfg, first, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PerSeed) != seeds || len(res.Clusters) != seeds || res.Baseline != "naive-share" {
		t.Fatalf("%d seeds, %d clusters, baseline %q; want %d, %d, naive-share", len(res.PerSeed), len(res.Clusters), res.Baseline, seeds, seeds)
	}
	one := cfg
	one.Seeds = 1
	hours := make([][]float64, len(cfg.Policies))
	distinct := map[float64]bool{}
	for s := range seeds {
		single, err := Run(one, first+uint64(s), testEnv)
		if err != nil {
			t.Fatal(err)
		}
		// G2 3 servers -> 2 kept, P100 2 -> 1, T4 2 -> 1, V100M16 1 -> 1:
		// 5 of 8 servers.
		if c := res.Clusters[s]; c.Seed != first+uint64(s) || c.GPUs != single.Clusters[0].GPUs {
			t.Errorf("seed %d: cluster %+v, one-seed run %+v", s, c, single.Clusters[0])
		}
		if n := single.Inputs[0]; n.Used != 5 || n.ByKind["not sampled"] != 3 {
			t.Errorf("seed %d: node rows %+v; want 5 used, 3 not sampled", s, n)
		}
		for k, p := range single.Policies {
			if got := res.PerSeed[s][k].GPUHours; got != p.GPUHours {
				t.Errorf("seed %d %s: %v GPU-hours in the merged run, %v alone", s, p.Name, got, p.GPUHours)
			}
			hours[k] = append(hours[k], p.GPUHours)
			distinct[p.GPUHours] = true
		}
	}
	if len(distinct) <= len(cfg.Policies) {
		t.Fatal("the seeds gave the same results: the test does not exercise them")
	}
	for k, p := range res.Policies {
		var sum, ss float64
		for _, h := range hours[k] {
			sum += h
		}
		mean := sum / seeds
		for _, h := range hours[k] {
			ss += (h - mean) * (h - mean)
		}
		ci := 3.1824463 * math.Sqrt(ss/(seeds-1)) / math.Sqrt(seeds)
		if math.Abs(p.GPUHours-mean) > 1e-9*mean || p.GPUHoursCI95 == nil || math.Abs(*p.GPUHoursCI95-ci) > 1e-6*ci+1e-12 || p.Seeds != seeds {
			t.Errorf("%s: %v ± %v over %d seeds; by hand %v ± %v over %d", p.Name, p.GPUHours, p.GPUHoursCI95, p.Seeds, mean, ci, seeds)
		}
		if k == 0 {
			if p.VsBaseline != nil {
				t.Errorf("the baseline compares with itself: %+v", p.VsBaseline)
			}
			continue
		}
		var pct float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for s := range seeds {
			d := 100 * (hours[k][s] - hours[0][s]) / hours[0][s]
			pct += d / seeds
			lo, hi = min(lo, d), max(hi, d)
		}
		if v := p.VsBaseline; v == nil || math.Abs(v.Pct-pct) > 1e-9 || v.Min != lo || v.Max != hi || v.CI95 == nil {
			t.Errorf("%s: vs_baseline %+v; by hand %.6f%% (%.6f .. %.6f)", p.Name, p.VsBaseline, pct, lo, hi)
		}
	}
	// The same bytes on one CPU as on several, and with a progress
	// function watching, which is told of the replays as their jobs
	// arrive: done grows, passes every whole replay, ends at the total.
	want, _ := res.JSON()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	env := testEnv
	var told []float64
	env.Progress = func(done float64, total int) {
		if total != seeds*len(cfg.Policies) {
			t.Errorf("progress total %d, want %d", total, seeds*len(cfg.Policies))
		}
		told = append(told, done)
	}
	again, err := Run(cfg, first, env)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := again.JSON(); string(got) != string(want) {
		t.Error("one CPU with progress gave other results than several without")
	}
	n := seeds * len(cfg.Policies)
	whole := 0
	for k, d := range told {
		if k > 0 && d <= told[k-1] {
			t.Fatalf("progress went from %g to %g", told[k-1], d)
		}
		if math.Abs(d-math.Round(d)) < 1e-9 {
			whole++
		}
	}
	if len(told) <= n || whole != n || math.Abs(told[len(told)-1]-float64(n)) > 1e-9 {
		t.Errorf("progress told %d times (%d whole replays), last %v; want more than %d reports (fractions within replays), %d whole, ending at %d", len(told), whole, told[len(told)-1], n, n, n)
	}
}

// The pending-event set changes speed only: a replay with migrations and
// MIG gives the same bytes on every queue kind.
func TestSameResultOnEveryQueue(t *testing.T) {
	defer func(k engine.QueueKind) { engine.QueueDefault = k }(engine.QueueDefault)
	var jobs []workloads.Job
	r := engine.NewStream(5, "jobs")
	for k := range 80 {
		jobs = append(jobs, job(fmt.Sprint("j", k), 3000*r.Float64(), math.Round(r.Exp(900)+1), 1+r.IntN(1000)))
	}
	cfg := small(jobs, "a100-40gb", 4, "naive-share", "conspirator")
	var want []byte
	for i, k := range engine.QueueKinds {
		engine.QueueDefault = k
		res, err := Run(cfg, 3, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := res.JSON()
		if i == 0 {
			want = got
		} else if string(got) != string(want) {
			t.Errorf("queue %s gives another result than %s", k, engine.QueueKinds[0])
		}
	}
}

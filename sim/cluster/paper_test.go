package cluster

import (
	"math"
	"testing"
)

// On the openb default trace and its whole node list (6,212 GPUs, one
// seed; paper/gpu-hours itself runs a sample of the servers sized to the
// trace, over 10 seeds, pinned by sim's golden files), conspirator uses
// fewer GPU-hours than naive-share (the paper: 33%). The
// simulation is deterministic, so the bands are tight: +-0.5 points catches
// any change of the model or the policies, which must then be explained
// and these values (and testdata/golden) updated. naive-share is
// heterogeneity-blind and takes the lowest-numbered GPU that fits, so its
// GPU-hours depend on which servers come first: in the file's own order
// (node_order listed: 44 P100 servers, 4.5x slower than the reference
// A100-40GB) the saving is 73.3%, an artefact of that order; in the
// seed's random order (seeded, the default; seed 1) it is 64.7% (74.7%
// and 66.8% before servers: gangs on one server and the servers' CPU and
// memory move naive-share's jobs). conspirator places by GPU time per unit
// of work and shares A100s by MIG, so its own GPU-hours do not move.
func TestPaperGPUHours(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole openb trace")
	}
	for _, c := range []struct {
		order string
		want  float64
	}{{NodeOrderListed, 0.733}, {NodeOrderSeeded, 0.647}} {
		cfg := openb(t)
		cfg.NodeOrder = c.order
		cfg.Policies = []string{"naive-share", "conspirator"}
		r := mustRun(t, cfg)
		naive, _ := r.Policy("naive-share")
		cons, _ := r.Policy("conspirator")
		saving := 1 - cons.GPUHours/naive.GPUHours
		t.Logf("%s: naive-share %.0f GPU-hours, conspirator %.0f: %.1f%% fewer (paper 33%%); conspirator migrations %v",
			c.order, naive.GPUHours, cons.GPUHours, 100*saving, cons.Migrations)
		if math.Abs(saving-c.want) > 0.005 {
			t.Errorf("%s: conspirator saves %.2f%% of naive-share's GPU-hours; this model gave %.1f%% +- 0.5", c.order, 100*saving, 100*c.want)
		}
		if naive.Unscheduled != 0 || cons.Unscheduled != 0 {
			t.Errorf("unscheduled jobs: naive %v, conspirator %v; the 6,212-GPU cluster fits every job", naive.Unscheduled, cons.Unscheduled)
		}
	}
}

// paper/heuristic-vs-optimal: windows of consecutive openb jobs, arrivals
// compressed 100x so that they overlap: 12 jobs on 4 A100-40GB, and 20 jobs
// on 8 (the "up to 20 jobs at a time on 8 GPUs"); the optimal
// policy solves the paper's program exactly at every event. The
// heuristic's GPU-hours must be within 2% of the optimum's. Decision times
// are logged, overall and over snapshots of >= LargeJobs jobs, and never
// asserted (wall clock): the speed claim is measured by
// `go test -bench Decision ./policies/conspirator/`.
func TestHeuristicVsOptimal(t *testing.T) {
	if testing.Short() {
		t.Skip("exact solves")
	}
	base := openb(t)
	for _, w := range []struct{ skip, jobs, gpus int }{{2000, 12, 4}, {3000, 12, 4}, {2000, 20, 8}} {
		c := base
		c.Nodes = ""
		c.GPUs = []GPUGroup{{Model: "a100-40gb", Count: w.gpus}}
		c.Window = Window{Skip: w.skip, Jobs: w.jobs, Compress: 100}
		c.Policies = []string{"conspirator", "optimal"}
		c.PolicyArgs = map[string]map[string]string{"optimal": {"time_limit": "5s"}}
		r := mustRun(t, c)
		cons, opt := r.Policies[0], r.Policies[1]
		ratio := r.Timing[1].TotalS / r.Timing[0].TotalS
		large := r.Timing[1].LargeUS.Mean / r.Timing[0].LargeUS.Mean
		t.Logf("window %+v: conspirator %.3f GPU-hours, optimal %.3f (gap %+.2f%%); decision time %.0f us vs %.0f us per call (%.0fx); on %d snapshots of >= %d jobs %.0f us vs %.0f us (%.0fx)",
			w, cons.GPUHours, opt.GPUHours, 100**cons.OptimalityGap, r.Timing[0].DecisionUS.Mean, r.Timing[1].DecisionUS.Mean, ratio,
			r.Timing[1].LargeCalls, LargeJobs, r.Timing[0].LargeUS.Mean, r.Timing[1].LargeUS.Mean, large)
		// The runs are deterministic (every solve here is proven): the
		// gaps are -0.01%, +0.19% and -0.01%. A band of 0.5 points holds
		// them and catches a heuristic or solver change; the paper claims
		// equality. (A negative gap is possible: the optimum is per
		// snapshot, not over the window.)
		if g := *cons.OptimalityGap; g > 0.005 || g < -0.005 {
			t.Errorf("window %+v: heuristic %+.2f%% off the per-snapshot optimum; this model gives -0.01%% to +0.19%%, band 0.5%%", w, 100*g)
		}
	}
}

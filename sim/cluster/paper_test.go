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
// Those are the model before issue 31 (every job fixed work, censored
// ones too; all-batch with censored: kind reproduces it). Most of that
// saving was the ten censored LS pods running 900 to 1,034 days on T4s:
// held for their recorded time it is 52.6% and 38.9%, and with services
// holding their time (by-qos, the default) 11.9% and 9.4%. All on the
// trace's own jobs (seed_varies cluster), not a bootstrap of them.
func TestPaperGPUHours(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole openb trace")
	}
	for _, c := range []struct {
		order, kind, censored string
		want                  float64
	}{
		// The model before issue 31: every job fixed work, censored ones too.
		{NodeOrderListed, JobKindAllBatch, CensoredKind, 0.733}, {NodeOrderSeeded, JobKindAllBatch, CensoredKind, 0.647},
		// Censored jobs hold their recorded time: the ten longest pods
		// (censored LS services) no longer run 6x longer on T4s.
		{NodeOrderListed, JobKindAllBatch, CensoredRecorded, 0.526}, {NodeOrderSeeded, JobKindAllBatch, CensoredRecorded, 0.389},
		// The default: services hold their time.
		{NodeOrderListed, JobKindByQoS, CensoredRecorded, 0.119}, {NodeOrderSeeded, JobKindByQoS, CensoredRecorded, 0.094},
	} {
		cfg := openb(t)
		cfg.NodeOrder, cfg.JobKind, cfg.Censored = c.order, c.kind, c.censored
		cfg.SeedVaries = SeedVariesCluster // the trace's own jobs: the figures pinned here
		cfg.Policies = []string{"naive-share", "conspirator"}
		r := mustRun(t, cfg)
		naive, _ := r.Policy("naive-share")
		cons, _ := r.Policy("conspirator")
		saving := 1 - cons.GPUHours/naive.GPUHours
		t.Logf("%s, %s, censored %s: naive-share %.0f GPU-hours, conspirator %.0f: %.1f%% fewer (paper 33%%); conspirator migrations %v",
			c.order, c.kind, c.censored, naive.GPUHours, cons.GPUHours, 100*saving, cons.Migrations)
		if math.Abs(saving-c.want) > 0.005 {
			t.Errorf("%s, %s, censored %s: conspirator saves %.2f%% of naive-share's GPU-hours; this model gave %.1f%% +- 0.5", c.order, c.kind, c.censored, 100*saving, 100*c.want)
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

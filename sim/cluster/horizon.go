package cluster

import (
	"time"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// HorizonRecord is what an offline policy (optimal-horizon) reports beside
// its GPU-hours, which are its proven lower bound.
type HorizonRecord struct {
	// Starts is the relaxation the bound holds under ("arrival": runs in
	// which no job waits; "any": every run that finishes its jobs).
	Starts string `json:"starts"`
	// UpperGPUHours is the best schedule of the relaxed program found
	// (equal to the bound when every solve was proven).
	UpperGPUHours float64 `json:"upper_gpu_hours"`
	// Intervals and Distinct count the program's time intervals and the
	// different sets of tasks among them (first seed).
	Intervals int `json:"intervals"`
	Distinct  int `json:"distinct_sets"`
	// Note says when the bound is weaker than asked; absent otherwise.
	Note string `json:"note,omitempty"`
}

// HorizonGap is a policy's GPU-hours against the horizon bound of the same
// seeds: Pct the mean over seeds of 100 x (policy - bound) / bound.
// Covered is true when the bound holds for every seed's run of the
// policy; Why says what broke it otherwise (jobs that waited under a
// bound that assumes none do, a different MIG mode, unfinished jobs).
type HorizonGap struct {
	Bound   string  `json:"bound"`
	Pct     float64 `json:"pct"`
	Covered bool    `json:"covered"`
	Why     string  `json:"why,omitempty"`
}

// horizon runs an offline policy over the whole window of one seed: the
// cluster's GPUs as the policy's MIG mode sees them, and every job of the
// feed with its arrival, work and options.
func horizon(off snapshot.Offline, mig bool, types []gpuType, gpus []clusterGPU, feed jobFeed, pl *planner, now func() time.Time) (PolicyResult, Timing, error) {
	w := &snapshot.Window{GPUs: make([]snapshot.GPU, len(gpus))}
	for g := range gpus {
		w.GPUs[g] = snapshot.GPU{ID: g, Model: *types[gpus[g].typ].model(mig)}
	}
	for k := 0; ; k++ {
		j, ok, err := feed.next()
		if err != nil {
			return PolicyResult{}, Timing{}, err
		}
		if !ok {
			break
		}
		p, err := pl.plan(k, &j)
		if err != nil {
			return PolicyResult{}, Timing{}, err
		}
		if p.work <= 0 || j.NumGPU < 1 {
			continue // nothing to run (as the replay does)
		}
		w.Jobs = append(w.Jobs, snapshot.WindowJob{ID: k, Tenant: p.tenant, Arrival: j.Arrival, Work: p.work, Tasks: j.NumGPU, Options: p.options(mig)})
	}
	var begin time.Time
	if now != nil {
		begin = now()
	}
	b, err := off.Horizon(w)
	if err != nil {
		return PolicyResult{}, Timing{}, err
	}
	pr := PolicyResult{GPUHours: b.GPUHours, Seeds: 1, Solves: &b.Solves,
		Horizon: &HorizonRecord{Starts: b.Starts, UpperGPUHours: b.Upper, Intervals: b.Intervals, Distinct: b.Distinct, Note: b.Note}}
	tm := Timing{Decisions: b.Solves.Total}
	if now != nil {
		tm.TotalS = now().Sub(begin).Seconds()
		if b.Solves.Total > 0 {
			us := tm.TotalS * 1e6 / float64(b.Solves.Total)
			tm.DecisionUS = Summary{Mean: us}
		}
	}
	return pr, tm, nil
}

// compareHorizon sets VsHorizon of every online policy of one seed when an
// offline policy ran (the first one, if several).
func compareHorizon(ps []PolicyResult) {
	h := -1
	for k := range ps {
		if ps[k].Horizon != nil {
			h = k
			break
		}
	}
	if h < 0 || !(ps[h].GPUHours > 0) {
		return
	}
	bound := snapshot.Bound{Starts: ps[h].Horizon.Starts}
	for k := range ps {
		p := &ps[k]
		if p.Horizon != nil {
			continue
		}
		g := &HorizonGap{Bound: ps[h].Name, Pct: 100 * (p.GPUHours - ps[h].GPUHours) / ps[h].GPUHours, Covered: true}
		switch {
		case p.usesMIG != ps[h].usesMIG:
			g.Covered, g.Why = false, "the bound packs with another MIG mode: set optimal-horizon's mig argument to match"
		case p.sharesInstances:
			g.Covered, g.Why = false, "the policy shares MIG instances between jobs, and the bound packs one job per instance"
		case p.unfinished > 0:
			g.Covered, g.Why = false, "jobs never finished"
		case !bound.Covers(p.waited, p.unfinished):
			g.Covered, g.Why = false, "jobs waited or were preempted, and the bound assumes every job runs from its arrival; starts=any covers them"
		}
		p.VsHorizon = g
	}
}

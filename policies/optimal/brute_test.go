package optimal

import (
	"math"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// bruteForce is the reference optimum: a depth-first enumeration of every
// assignment of every job (pending, or any GPU x fitting option x legal
// start), written from the rules of the snapshot package and the paper's
// objective, independently of the 0-1 program. Branch-and-bound prunes on
// the cost so far, which only grows along a branch. It returns the minimal
// cost (same penalty P as the program) or +Inf when no assignment is
// allowed (strict mode).
func bruteForce(s *snapshot.Snapshot, cfg Config) float64 {
	n := len(s.Jobs)
	penalty := 0.0
	if !cfg.Strict {
		penalty = cfg.E1*float64(len(s.GPUs)) + CostQuantum
		for _, j := range s.Jobs {
			if j.Current != nil {
				penalty += cfg.E2 * j.MigrationCost
			}
		}
	}
	type gpuState struct {
		mem     []bool
		compute int
		count   map[string]int
		frac    float64
		tenant  string
		jobs    int
		profile string // homogeneous mode
	}
	st := make([]gpuState, len(s.GPUs))
	for k := range st {
		slots := 1
		if m := s.GPUs[k].Model.MIG; m != nil {
			slots = m.MemorySlices
		}
		st[k] = gpuState{mem: make([]bool, slots), count: map[string]int{}}
	}
	best := math.Inf(1)
	var walk func(i int, cost float64)
	walk = func(i int, cost float64) {
		if cost >= best-1e-9 {
			return
		}
		if i == n {
			best = cost
			return
		}
		job := &s.Jobs[i]
		mig := 0.0
		if job.Current != nil {
			mig = cfg.E2 * job.MigrationCost
		}
		for k := range s.GPUs {
			g := &s.GPUs[k]
			gs := &st[k]
			open := 0.0
			if gs.jobs == 0 {
				open = cfg.E1
			}
			for t, o := range job.Options {
				if !o.Fits(&g.Model) {
					continue
				}
				if !g.Model.IsMIG() {
					if gs.jobs > 0 && (gs.tenant != job.Tenant || gs.frac+o.Fraction > 1+1e-9) {
						continue
					}
					here := snapshot.Placement{GPU: g.ID, Fraction: o.Fraction}
					c := mig
					if job.Current != nil && snapshot.SameInstance(*job.Current, here) {
						c = 0
					}
					old := *gs
					gs.frac += o.Fraction
					gs.tenant = job.Tenant
					gs.jobs++
					walk(i+1, cost+open+c)
					gs.frac, gs.tenant, gs.jobs = old.frac, old.tenant, old.jobs
					continue
				}
				prof, _ := g.Model.Profile(o.Profile)
				if cfg.Homogeneous && gs.jobs > 0 && gs.profile != prof.Name {
					continue
				}
				if gs.compute+prof.Compute > g.Model.MIG.ComputeSlices || (prof.MaxCount > 0 && gs.count[prof.Name] >= prof.MaxCount) {
					continue
				}
				for _, start := range prof.Starts {
					free := true
					for sl := start; sl < start+prof.MemSlices; sl++ {
						free = free && !gs.mem[sl]
					}
					if !free {
						continue
					}
					_ = t
					here := snapshot.Placement{GPU: g.ID, Profile: prof.Name, Start: start}
					c := mig
					if job.Current != nil && snapshot.SameInstance(*job.Current, here) {
						c = 0
					}
					for sl := start; sl < start+prof.MemSlices; sl++ {
						gs.mem[sl] = true
					}
					gs.compute += prof.Compute
					gs.count[prof.Name]++
					gs.jobs++
					oldProfile := gs.profile
					gs.profile = prof.Name
					walk(i+1, cost+open+c)
					gs.profile = oldProfile
					gs.jobs--
					gs.count[prof.Name]--
					gs.compute -= prof.Compute
					for sl := start; sl < start+prof.MemSlices; sl++ {
						gs.mem[sl] = false
					}
				}
			}
		}
		if !cfg.Strict {
			walk(i+1, cost+penalty+mig)
		}
	}
	walk(0, 0)
	return best
}

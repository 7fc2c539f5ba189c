package optimal

import (
	"math"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// bruteForce is the reference optimum: a depth-first enumeration of every
// assignment of every job (pending, or any GPU x fitting option x legal
// start), written from the rules of the snapshot package and the paper's
// objective, independently of the 0-1 program. Branch-and-bound prunes on
// the cost so far, which only grows along a branch. With shared instances
// (Config.InstanceSharing and Snapshot.ShareInstances) a job may also join
// an instance of its profile already created, of its tenant, with room.
// It returns the minimal cost (same penalty P as the program) or +Inf when
// no assignment is allowed (strict mode).
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
		inst    []sharedInstance
	}
	share := cfg.InstanceSharing && s.ShareInstances
	st := make([]gpuState, len(s.GPUs))
	for k := range st {
		slots := 1
		if m := s.GPUs[k].Model.MIG; m != nil {
			slots = m.MemorySlices
		}
		st[k] = gpuState{mem: make([]bool, slots), count: map[string]int{}}
	}
	best := math.Inf(1)
	at := make([]int, n) // GPU position of each job, -1 pending
	var walk func(i int, cost float64)
	walk = func(i int, cost float64) {
		if cost >= best-1e-9 {
			return
		}
		if i == n {
			if serversAllow(s, at) {
				best = cost
			}
			return
		}
		at[i] = -1
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
					at[i] = k
					walk(i+1, cost+open+c)
					at[i] = -1
					gs.frac, gs.tenant, gs.jobs = old.frac, old.tenant, old.jobs
					continue
				}
				prof, _ := g.Model.Profile(o.Profile)
				if cfg.Homogeneous && gs.jobs > 0 && gs.profile != prof.Name {
					continue
				}
				if cfg.TenantPerGPU && gs.jobs > 0 && gs.tenant != job.Tenant {
					continue
				}
				if share { // join an instance of this profile already created
					for n := range gs.inst {
						in := &gs.inst[n]
						if in.profile != prof.Name || in.tenant != job.Tenant || in.used+o.InstanceShare() > 1+1e-9 {
							continue
						}
						c := mig
						if job.Current != nil && snapshot.SameInstance(*job.Current, snapshot.Placement{GPU: g.ID, Profile: prof.Name, Start: in.start}) {
							c = 0
						}
						in.used += o.InstanceShare()
						gs.jobs++
						at[i] = k
						walk(i+1, cost+c)
						at[i] = -1
						gs.jobs--
						in.used -= o.InstanceShare()
					}
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
					oldProfile, oldTenant := gs.profile, gs.tenant
					gs.profile, gs.tenant = prof.Name, job.Tenant
					at[i] = k
					if share {
						gs.inst = append(gs.inst, sharedInstance{prof.Name, start, job.Tenant, o.InstanceShare()})
					}
					walk(i+1, cost+open+c)
					if share {
						gs.inst = gs.inst[:len(gs.inst)-1]
					}
					at[i] = -1
					gs.profile, gs.tenant = oldProfile, oldTenant
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

// sharedInstance is an instance bruteForce created, when instances are
// shared: its place, tenant and the shares of its jobs.
type sharedInstance struct {
	profile string
	start   int
	tenant  string
	used    float64
}

// serversAllow checks the server and gang rules of snapshot.Server and
// Job.Gang on a complete assignment (at: GPU position per job, -1
// pending): the jobs on a server fit its CPU and memory, a gang is placed
// whole or not at all, and on one server unless GangSpan.
func serversAllow(s *snapshot.Snapshot, at []int) bool {
	cpu, mem := map[int]int64{}, map[int]int64{}
	gangServer, gangPlaced, gangSize := map[int]int{}, map[int]int{}, map[int]int{}
	for i, k := range at {
		j := &s.Jobs[i]
		if j.Gang != 0 {
			gangSize[j.Gang]++
		}
		if k < 0 {
			continue
		}
		srv := s.GPUs[k].Server
		cpu[srv] += j.CPUMilli
		mem[srv] += j.MemoryMiB
		if j.Gang != 0 {
			if prev, ok := gangServer[j.Gang]; ok && prev != srv && s.OneServerGangs() {
				return false
			}
			gangServer[j.Gang] = srv
			gangPlaced[j.Gang]++
		}
	}
	for g, n := range gangPlaced {
		if n != gangSize[g] {
			return false
		}
	}
	for _, sv := range s.Servers {
		if sv.CPUMilli > 0 && cpu[sv.ID]+sv.HeldCPUMilli > sv.CPUMilli || sv.MemoryMiB > 0 && mem[sv.ID]+sv.HeldMemoryMiB > sv.MemoryMiB {
			return false
		}
	}
	return true
}

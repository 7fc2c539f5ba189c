package optimal

import (
	"maps"
	"slices"

	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// greedy builds a feasible assignment of the program without a solver:
// running jobs keep their place when it is still allowed, then the other
// jobs, largest least demand first, go to the first slot that fits, GPUs
// in index order (so identical idle GPUs fill in order, as the symmetry
// rows require). It is the incumbent the solvers must beat and the answer
// when a time limit leaves them with nothing better. In strict mode it
// returns nil when it leaves a job unplaced.
func (p *program) greedy(strict bool) []bool {
	s := p.snap
	x := make([]bool, len(p.vars))
	type gpuState struct {
		occ             mig.Occupancy // MIG: what the instances use
		frac            int64
		tenant, profile string
		jobs            int
	}
	st := make([]gpuState, len(s.GPUs))
	// Shared instances (p.share): what each created instance holds.
	type instKey struct {
		gpu     int
		profile string
		start   int
	}
	type instUse struct {
		used   int64
		tenant string
	}
	inst := map[instKey]instUse{}
	keyOf := func(v int) instKey { vr := p.vars[v]; return instKey{vr.gpu, vr.profile, vr.start} }
	// Servers: capacity and use by position, each GPU's server position,
	// and the server of each gang's placed tasks.
	srvPos := make(map[int]int, len(s.Servers))
	for k, sv := range s.Servers {
		srvPos[sv.ID] = k
	}
	gpuSrv := make([]int, len(s.GPUs))
	for j := range s.GPUs {
		gpuSrv[j] = -1
		if k, ok := srvPos[s.GPUs[j].Server]; ok && len(s.Servers) > 0 {
			gpuSrv[j] = k
		}
	}
	type srvUse struct{ cpu, mem int64 }
	use := make([]srvUse, len(s.Servers))
	for k, sv := range s.Servers {
		use[k] = srvUse{sv.HeldCPUMilli, sv.HeldMemoryMiB}
	}
	gangSrv := map[int]int{}
	banned := map[int]bool{}
	fits := func(v int) bool {
		vr := p.vars[v]
		g, gs, job := &s.GPUs[vr.gpu], &st[vr.gpu], &s.Jobs[vr.job]
		if k := gpuSrv[vr.gpu]; k >= 0 {
			sv := &s.Servers[k]
			if sv.CPUMilli > 0 && use[k].cpu+job.CPUMilli > sv.CPUMilli || sv.MemoryMiB > 0 && use[k].mem+job.MemoryMiB > sv.MemoryMiB || banned[k] {
				return false
			}
			if at, ok := gangSrv[job.Gang]; ok && job.Gang != 0 && s.OneServerGangs() && at != k {
				return false
			}
		}
		if !g.Model.IsMIG() {
			f := int64(job.Options[vr.option].Fraction*fractionUnits + 0.5)
			return gs.jobs == 0 || (gs.tenant == job.Tenant && gs.frac+f <= fractionUnits)
		}
		prof, _ := g.Model.Profile(vr.profile)
		if p.homogeneous && gs.jobs > 0 && gs.profile != prof.Name {
			return false
		}
		if p.tenantGPU && gs.jobs > 0 && gs.tenant != job.Tenant {
			return false
		}
		if in, ok := inst[keyOf(v)]; ok && p.share {
			return in.tenant == job.Tenant && in.used+shareUnits(job.Options[vr.option]) <= fractionUnits
		}
		return g.Model.MIG.Fits(&gs.occ, prof, vr.start)
	}
	take := func(v int) {
		vr := p.vars[v]
		g, gs, job := &s.GPUs[vr.gpu], &st[vr.gpu], &s.Jobs[vr.job]
		x[v] = true
		gs.jobs++
		gs.tenant = job.Tenant
		if k := gpuSrv[vr.gpu]; k >= 0 {
			use[k].cpu += job.CPUMilli
			use[k].mem += job.MemoryMiB
			if job.Gang != 0 {
				gangSrv[job.Gang] = k
			}
		}
		if !g.Model.IsMIG() {
			gs.frac += int64(job.Options[vr.option].Fraction*fractionUnits + 0.5)
			return
		}
		prof, _ := g.Model.Profile(vr.profile)
		gs.profile = prof.Name
		if p.share {
			in, ok := inst[keyOf(v)]
			inst[keyOf(v)] = instUse{in.used + shareUnits(job.Options[vr.option]), job.Tenant}
			if ok {
				return // joins an instance already created
			}
		}
		gs.occ.Add(g.Model.MIG, prof, vr.start)
	}
	placed := make([]bool, len(s.Jobs))
	for _, c := range p.cost { // stay terms: keep running jobs in place
		if vr := p.vars[c.v]; c.neg && vr.kind == kindX && !placed[vr.job] && fits(c.v) {
			take(c.v)
			placed[vr.job] = true
		}
	}
	order := make([]int, 0, len(s.Jobs))
	for i := range s.Jobs {
		if !placed[i] {
			order = append(order, i)
		}
	}
	// The tasks of a gang have equal options, hence equal needs: the stable
	// sort keeps them next to each other.
	slices.SortStableFunc(order, func(a, b int) int { return int(p.needC[b] - p.needC[a]) })
	placeOne := func(i int) bool {
		if p.share {
			// A new instance on a GPU in use, else a created instance
			// with room, else (below) a new GPU: jobs share an instance
			// only where that saves a GPU, since co-runners slow each
			// other.
			for _, join := range []bool{false, true} {
				for _, v := range p.xs[i] {
					if _, ok := inst[keyOf(v)]; ok == join && st[p.vars[v].gpu].jobs > 0 && fits(v) {
						take(v)
						placed[i] = true
						return true
					}
				}
			}
		}
		best := -1
		for _, v := range p.xs[i] { // xs is in GPU order
			if !fits(v) {
				continue
			}
			// prefer a GPU already in use over opening one
			if best < 0 || (st[p.vars[best].gpu].jobs == 0 && st[p.vars[v].gpu].jobs > 0) {
				best = v
			}
			if st[p.vars[v].gpu].jobs > 0 {
				break
			}
		}
		if best >= 0 {
			take(best)
			placed[i] = true
		}
		return best >= 0
	}
	for n := 0; n < len(order); n++ {
		i := order[n]
		gang := []int{i}
		for g := s.Jobs[i].Gang; g != 0 && n+1 < len(order) && s.Jobs[order[n+1]].Gang == g; n++ {
			gang = append(gang, order[n+1])
		}
		ok := len(gang) == 1 && placeOne(i)
		if len(gang) > 1 {
			ok = p.greedyGang(gang, placeOne, func() func() {
				// save everything take changes, to undo a gang that
				// does not fit whole
				stSave, useSave, xSave, instSave := slices.Clone(st), slices.Clone(use), slices.Clone(x), maps.Clone(inst)
				g := s.Jobs[i].Gang
				at, had := gangSrv[g]
				return func() {
					copy(st, stSave)
					copy(use, useSave)
					copy(x, xSave)
					inst = instSave
					for _, k := range gang {
						placed[k] = false
					}
					if had {
						gangSrv[g] = at
					} else {
						delete(gangSrv, g)
					}
				}
			}, func() (int, bool) {
				k, ok := gangSrv[s.Jobs[i].Gang]
				return k, ok
			}, banned)
		}
		if !ok && strict {
			return nil
		}
	}
	for v, vr := range p.vars {
		switch vr.kind {
		case kindY:
			x[v] = st[vr.gpu].jobs > 0
		case kindU:
			x[v] = !placed[vr.job]
		case kindA:
			x[v] = st[vr.gpu].jobs > 0 && st[vr.gpu].profile == vr.profile
		case kindT:
			x[v] = st[vr.gpu].jobs > 0 && st[vr.gpu].tenant == vr.tenant
		case kindI:
			_, x[v] = inst[keyOf(v)]
		case kindS:
			in, ok := inst[keyOf(v)]
			x[v] = ok && in.tenant == vr.tenant
		}
	}
	return x
}

// greedyGang places the tasks of one gang whole or not at all: placeOne
// places each; when one fails, the gang is undone, the server of its
// first task barred, and the gang tried again (as pack.View.PlacePending
// does for the heuristics).
func (p *program) greedyGang(gang []int, placeOne func(int) bool, save func() func(), server func() (int, bool), banned map[int]bool) bool {
	defer clear(banned)
	for {
		undo := save()
		all := true
		for _, i := range gang {
			if !placeOne(i) {
				all = false
				break
			}
		}
		if all {
			return true
		}
		k, ok := server()
		undo()
		if !ok || !p.snap.OneServerGangs() || banned[k] {
			return false
		}
		banned[k] = true
	}
}

// feasible reports whether x satisfies every row of the program.
func (p *program) feasible(x []bool) bool {
	for _, c := range p.cons {
		var sum int64
		for _, t := range c.terms {
			if x[t.v] {
				sum += t.coef
			}
		}
		if (c.sense == le && sum > c.rhs) || (c.sense == ge && sum < c.rhs) || (c.sense == eq && sum != c.rhs) {
			return false
		}
	}
	return true
}

var _ = snapshot.Decision{}

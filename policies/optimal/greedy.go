package optimal

import (
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
	fits := func(v int) bool {
		vr := p.vars[v]
		g, gs, job := &s.GPUs[vr.gpu], &st[vr.gpu], &s.Jobs[vr.job]
		if !g.Model.IsMIG() {
			f := int64(job.Options[vr.option].Fraction*fractionUnits + 0.5)
			return gs.jobs == 0 || (gs.tenant == job.Tenant && gs.frac+f <= fractionUnits)
		}
		prof, _ := g.Model.Profile(vr.profile)
		if p.homogeneous && gs.jobs > 0 && gs.profile != prof.Name {
			return false
		}
		return g.Model.MIG.Fits(&gs.occ, prof, vr.start)
	}
	take := func(v int) {
		vr := p.vars[v]
		g, gs, job := &s.GPUs[vr.gpu], &st[vr.gpu], &s.Jobs[vr.job]
		x[v] = true
		gs.jobs++
		gs.tenant = job.Tenant
		if !g.Model.IsMIG() {
			gs.frac += int64(job.Options[vr.option].Fraction*fractionUnits + 0.5)
			return
		}
		prof, _ := g.Model.Profile(vr.profile)
		gs.occ.Add(g.Model.MIG, prof, vr.start)
		gs.profile = prof.Name
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
	slices.SortStableFunc(order, func(a, b int) int { return int(p.needC[b] - p.needC[a]) })
	for _, i := range order {
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
		} else if strict {
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
		}
	}
	return x
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

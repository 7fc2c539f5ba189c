package optimal

import (
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// CostQuantum is the resolution of objective weights: e1, e2 x m_i and the
// penalty are rounded to integer multiples of it before solving.
const CostQuantum = 1e-4

// fractionUnits is the integer resolution of non-MIG fractions.
const fractionUnits = 1_000_000

// cutUnits is the resolution of the counting cuts: 840 = lcm(7, 8, ...), so
// that one MIG compute slice (1/7) and one memory slice (1/8) are integers.
const cutUnits = 840

type varKind uint8

const (
	kindX varKind = iota // job i in slot (GPU j, profile, start) or on non-MIG GPU j with option t
	kindY                // GPU j in use
	kindU                // job i left pending
	kindA                // GPU j configured for profile (homogeneous mode)
	kindT                // GPU j serves tenant (non-MIG GPUs; MIG GPUs under tenant_per_gpu)
	kindI                // instance (GPU j, profile, start) created (instance sharing)
	kindS                // instance (GPU j, profile, start) serves tenant (instance sharing)
)

// variable describes one 0-1 variable of the program.
type variable struct {
	kind    varKind
	job     int // index into Snapshot.Jobs (X, U)
	gpu     int // index into Snapshot.GPUs (X, Y, A, T)
	option  int // index into Job.Options (X)
	profile string
	start   int
	tenant  string
}

type term struct {
	v    int // variable index
	coef int64
}

type sense int8

const (
	le sense = iota // sum <= rhs
	ge              // sum >= rhs
	eq              // sum == rhs
)

type constraint struct {
	terms []term
	sense sense
	rhs   int64
}

// costTerm charges w when variable v is 1 (neg false) or 0 (neg true).
type costTerm struct {
	v   int
	neg bool
	w   int64
}

// program is the integer 0-1 program both backends solve.
type program struct {
	snap        *snapshot.Snapshot
	vars        []variable
	cons        []constraint
	cost        []costTerm
	constant    int64 // objective offset (migrations no placement can avoid)
	penalty     int64 // weight of each u_i (0 in strict mode)
	e1          int64
	bound       int64   // counting lower bound on the optimum, in quanta
	xs          [][]int // per job: its x variables
	needC       []int64 // per job: least compute need, 1/840 GPU
	homogeneous bool
	tenantGPU   bool   // one tenant per GPU, MIG GPUs included
	share       bool   // MIG instances hold several jobs of one tenant ((c) literally)
	incumbent   []bool // greedy assignment (nil if none), the start of the search
}

func quantise(c float64) int64 { return int64(math.Round(c / CostQuantum)) }

// oneTenant adds "GPU j (or one of its instances) serves at most one
// tenant" over the x variables of each tenant's jobs on it: a variable T_jk
// per tenant (a copy of at with the tenant filled in), x <= T_jk for each
// of tenant k's x (single implications, plain clauses for the SAT solver),
// and sum_k T_jk <= 1. Nothing is added when one tenant at most has jobs
// that fit there.
func (p *program) oneTenant(at variable, tenants []string, byTenant map[string][]int, newVar func(variable) int) {
	if len(tenants) < 2 {
		return
	}
	var ts []term
	for _, tn := range tenants {
		v := at
		v.tenant = tn
		tv := newVar(v)
		ts = append(ts, term{tv, 1})
		for _, x := range byTenant[tn] {
			p.cons = append(p.cons, constraint{[]term{{x, 1}, {tv, -1}}, le, 0})
		}
	}
	p.cons = append(p.cons, constraint{ts, le, 1})
}

// shareUnits is option o's share of a MIG instance in fractionUnits.
func shareUnits(o snapshot.Option) int64 {
	return int64(math.Round(o.InstanceShare() * fractionUnits))
}

// build formulates s under cfg.
func build(s *snapshot.Snapshot, cfg Config) (*program, error) {
	p := &program{snap: s, e1: quantise(cfg.E1), homogeneous: cfg.Homogeneous, tenantGPU: cfg.TenantPerGPU,
		share: cfg.InstanceSharing && s.ShareInstances}
	newVar := func(v variable) int { p.vars = append(p.vars, v); return len(p.vars) - 1 }
	p.xs = make([][]int, len(s.Jobs))
	ys := make([]int, len(s.GPUs))
	for j := range s.GPUs {
		ys[j] = newVar(variable{kind: kindY, gpu: j})
	}
	// x variables, GPU by GPU.
	type slotKey struct {
		profile string
		start   int
	}
	for j := range s.GPUs {
		g := &s.GPUs[j]
		m := &g.Model
		if m.IsMIG() {
			bySlot := map[slotKey][]int{}
			var slots []slotKey
			for i := range s.Jobs {
				for t, o := range s.Jobs[i].Options {
					if !o.Fits(m) {
						continue
					}
					prof, _ := m.Profile(o.Profile)
					for _, st := range prof.Starts {
						k := slotKey{prof.Name, st}
						// a job listing one profile twice (say for two GPU
						// types, both matching) needs one variable per slot.
						// With shared instances the one that takes the
						// smaller share is kept.
						dup := false
						for _, v := range bySlot[k] {
							if p.vars[v].job == i {
								dup = true
								if old := p.vars[v].option; p.share && shareUnits(o) < shareUnits(s.Jobs[i].Options[old]) {
									p.vars[v].option = t
								}
							}
						}
						if dup {
							continue
						}
						if len(bySlot[k]) == 0 {
							slots = append(slots, k)
						}
						v := newVar(variable{kind: kindX, job: i, gpu: j, option: t, profile: prof.Name, start: st})
						bySlot[k] = append(bySlot[k], v)
						p.xs[i] = append(p.xs[i], v)
					}
				}
			}
			if len(slots) == 0 {
				continue
			}
			// What occupies a slot's slices: its x variables (one job per
			// instance), or its instance variable I_jw when instances are
			// shared: (c) sum_i R_i x_ijw <= I_jw, one tenant per instance.
			occupy := bySlot
			if p.share {
				occupy = make(map[slotKey][]int, len(slots))
				for _, k := range slots {
					in := newVar(variable{kind: kindI, gpu: j, profile: k.profile, start: k.start})
					occupy[k] = []int{in}
					var rows []term
					total := int64(0)
					byTenant := map[string][]int{}
					var tenants []string
					for _, v := range bySlot[k] {
						vr := p.vars[v]
						r := shareUnits(s.Jobs[vr.job].Options[vr.option])
						rows = append(rows, term{v, r})
						total += r
						p.cons = append(p.cons, constraint{[]term{{v, 1}, {in, -1}}, le, 0})
						tn := s.Jobs[vr.job].Tenant
						if len(byTenant[tn]) == 0 {
							tenants = append(tenants, tn)
						}
						byTenant[tn] = append(byTenant[tn], v)
					}
					if total > fractionUnits {
						p.cons = append(p.cons, constraint{append(rows, term{in, -fractionUnits}), le, 0})
					}
					p.oneTenant(variable{kind: kindS, gpu: j, profile: k.profile, start: k.start}, tenants, byTenant, newVar)
				}
			}
			// (d) memory slices, each tied to Y_j.
			for sl := 0; sl < m.MIG.MemorySlices; sl++ {
				var ts []term
				for _, k := range slots {
					prof, _ := m.Profile(k.profile)
					if k.start <= sl && sl < k.start+prof.MemSlices {
						for _, v := range occupy[k] {
							ts = append(ts, term{v, 1})
						}
					}
				}
				if len(ts) > 0 {
					p.cons = append(p.cons, constraint{append(ts, term{ys[j], -1}), le, 0})
				}
			}
			// (d) compute slices and max count per profile.
			var comp []term
			count := map[string][]term{}
			maxComp := int64(0)
			for _, k := range slots {
				prof, _ := m.Profile(k.profile)
				for _, v := range occupy[k] {
					comp = append(comp, term{v, int64(prof.Compute)})
					count[k.profile] = append(count[k.profile], term{v, 1})
				}
				maxComp += int64(prof.Compute)
			}
			if maxComp > int64(m.MIG.ComputeSlices) {
				p.cons = append(p.cons, constraint{comp, le, int64(m.MIG.ComputeSlices)})
			}
			for _, prof := range m.MIG.Profiles {
				if ts := count[prof.Name]; prof.MaxCount > 0 && len(ts) > prof.MaxCount {
					p.cons = append(p.cons, constraint{ts, le, int64(prof.MaxCount)})
				}
			}
			// (g)-(h) homogeneous layouts.
			if cfg.Homogeneous {
				var as []term
				for _, prof := range m.MIG.Profiles {
					ts := count[prof.Name]
					if len(ts) == 0 {
						continue
					}
					a := newVar(variable{kind: kindA, gpu: j, profile: prof.Name})
					as = append(as, term{a, 1})
					// sum x <= N A_jt, as N single implications x <= A
					// (stronger, and plain clauses for the SAT solver).
					for _, x := range ts {
						p.cons = append(p.cons, constraint{[]term{x, {a, -1}}, le, 0})
					}
				}
				p.cons = append(p.cons, constraint{as, le, 1})
			}
			// (g)-(h) with t the tenant: one tenant per MIG GPU.
			if cfg.TenantPerGPU {
				byTenant := map[string][]int{}
				var tenants []string
				for _, k := range slots {
					for _, v := range bySlot[k] {
						tn := s.Jobs[p.vars[v].job].Tenant
						if len(byTenant[tn]) == 0 {
							tenants = append(tenants, tn)
						}
						byTenant[tn] = append(byTenant[tn], v)
					}
				}
				p.oneTenant(variable{kind: kindT, gpu: j}, tenants, byTenant, newVar)
			}
			continue
		}
		// Non-MIG GPU: one variable per fitting (job, option); a job with
		// two fitting fractions gets both and (a) picks at most one.
		var capTerms []term
		byTenant := map[string][]int{}
		var tenants []string
		for i := range s.Jobs {
			var fracs []float64
			for t, o := range s.Jobs[i].Options {
				if !o.Fits(m) || slices.Contains(fracs, o.Fraction) {
					continue
				}
				fracs = append(fracs, o.Fraction)
				v := newVar(variable{kind: kindX, job: i, gpu: j, option: t})
				p.xs[i] = append(p.xs[i], v)
				capTerms = append(capTerms, term{v, int64(math.Round(o.Fraction * fractionUnits))})
				tn := s.Jobs[i].Tenant
				if len(byTenant[tn]) == 0 {
					tenants = append(tenants, tn)
				}
				byTenant[tn] = append(byTenant[tn], v)
			}
		}
		if len(capTerms) == 0 {
			continue
		}
		p.cons = append(p.cons, constraint{append(capTerms, term{ys[j], -fractionUnits}), le, 0})
		p.oneTenant(variable{kind: kindT, gpu: j}, tenants, byTenant, newVar)
	}

	// Objective: e1 per GPU in use, e2 m_i per running job not kept in place.
	var others int64
	for j := range s.GPUs {
		if p.e1 > 0 {
			p.cost = append(p.cost, costTerm{ys[j], false, p.e1})
			others += p.e1
		}
	}
	for i := range s.Jobs {
		job := &s.Jobs[i]
		if job.Current == nil {
			continue
		}
		if cfg.E2*job.MigrationCost > maxWeight {
			return nil, fmt.Errorf("job %d: e2 x migration cost = %g; want at most %g (rescale the costs)", job.ID, cfg.E2*job.MigrationCost, float64(maxWeight))
		}
		w := quantise(cfg.E2 * job.MigrationCost)
		if w <= 0 {
			continue
		}
		others += w
		stay := -1
		for _, v := range p.xs[i] {
			if x := p.vars[v]; s.GPUs[x.gpu].ID == job.Current.GPU && x.profile == job.Current.Profile && x.start == job.Current.Start &&
				(s.GPUs[x.gpu].Model.IsMIG() || job.Options[x.option].Fraction == job.Current.Fraction) {
				stay = v
			}
		}
		if stay < 0 {
			p.constant += w // its current place is no longer allowed
		} else {
			p.cost = append(p.cost, costTerm{stay, true, w})
		}
	}

	// (a) each job once, or left pending at penalty P.
	if !cfg.Strict {
		p.penalty = others + 1
	}
	us := make([]int, len(s.Jobs))
	for i := range s.Jobs {
		ts := make([]term, 0, len(p.xs[i])+1)
		for _, v := range p.xs[i] {
			ts = append(ts, term{v, 1})
		}
		us[i] = -1
		if cfg.Strict {
			if len(ts) == 0 {
				return nil, fmt.Errorf("job %d: none of its %d options fits any GPU, and strict mode requires every job placed", s.Jobs[i].ID, len(s.Jobs[i].Options))
			}
		} else {
			us[i] = newVar(variable{kind: kindU, job: i})
			ts = append(ts, term{us[i], 1})
			p.cost = append(p.cost, costTerm{us[i], false, p.penalty})
		}
		p.cons = append(p.cons, constraint{ts, eq, 1})
	}

	// Symmetry breaking: of two pending jobs with the same tenant and the
	// same options, the first is left pending only if the second is too
	// (swapping them changes no cost).
	if !cfg.Strict {
		for i := range s.Jobs {
			for i2 := i + 1; i2 < len(s.Jobs); i2++ {
				a, b := &s.Jobs[i], &s.Jobs[i2]
				if a.Current == nil && b.Current == nil && a.Tenant == b.Tenant && slices.Equal(a.Options, b.Options) &&
					a.Gang == 0 && b.Gang == 0 && a.CPUMilli == b.CPUMilli && a.MemoryMiB == b.MemoryMiB {
					p.cons = append(p.cons, constraint{[]term{{us[i], 1}, {us[i2], -1}}, le, 0})
					break // chains i <= next twin <= ...
				}
			}
		}
	}

	// Symmetry breaking: identical idle GPUs are used in index order. GPUs
	// with a running job differ through the migration costs and are left
	// alone.
	busy := make([]bool, len(s.GPUs))
	for i := range s.Jobs {
		if c := s.Jobs[i].Current; c != nil {
			for j := range s.GPUs {
				if s.GPUs[j].ID == c.GPU {
					busy[j] = true
				}
			}
		}
	}
	// With servers, only idle GPUs of one server are interchangeable.
	type twin struct {
		model  string
		server int
	}
	last := map[twin]int{}
	for j := range s.GPUs {
		if busy[j] {
			continue
		}
		key := twin{model: s.GPUs[j].Model.Name}
		if len(s.Servers) > 0 {
			key.server = s.GPUs[j].Server
		}
		if prev, ok := last[key]; ok {
			p.cons = append(p.cons, constraint{[]term{{ys[prev], 1}, {ys[j], -1}}, ge, 0})
		}
		last[key] = j
	}
	p.serverRows(us)

	// Counting cuts and the counting lower bound.
	lone := p.aloneInInstance()
	needC, needM := make([]int64, len(s.Jobs)), make([]int64, len(s.Jobs))
	var sumC, sumM int64
	for i := range s.Jobs {
		needC[i], needM[i] = math.MaxInt64, math.MaxInt64
		for _, v := range p.xs[i] {
			x := p.vars[v]
			m := &s.GPUs[x.gpu].Model
			var c, mem int64
			if m.IsMIG() {
				prof, _ := m.Profile(x.profile)
				c = int64(prof.Compute) * cutUnits / int64(m.MIG.ComputeSlices)
				mem = int64(prof.MemSlices) * cutUnits / int64(m.MIG.MemorySlices)
				if p.share && !lone[v] { // the job's share of the instance, rounded down
					r := shareUnits(s.Jobs[i].Options[x.option])
					c, mem = c*r/fractionUnits, mem*r/fractionUnits
				}
			} else {
				f := s.Jobs[i].Options[x.option].Fraction
				c = int64(math.Floor(f * cutUnits * (1 - 1e-12)))
				mem = c
			}
			needC[i], needM[i] = min(needC[i], c), min(needM[i], mem)
		}
		if len(p.xs[i]) == 0 {
			needC[i], needM[i] = 0, 0
		}
		sumC += needC[i]
		sumM += needM[i]
	}
	for _, need := range [][]int64{needC, needM} {
		var ts []term
		var rhs int64
		for j := range s.GPUs {
			ts = append(ts, term{ys[j], cutUnits})
		}
		for i := range s.Jobs {
			if need[i] == 0 {
				continue
			}
			rhs += need[i]
			if us[i] >= 0 {
				ts = append(ts, term{us[i], need[i]})
			}
		}
		if rhs > 0 {
			p.cons = append(p.cons, constraint{ts, ge, rhs})
		}
	}
	p.needC = needC
	p.bound = p.constant + countingBound(needC, needM, p.xs, len(s.GPUs), p.e1, p.penalty)
	if x := p.greedy(cfg.Strict); x != nil && p.feasible(x) {
		p.incumbent = x
	}
	return p, nil
}

// aloneInInstance marks, where instances are shared, the x variables whose
// job would have its instance to itself: no other job of its tenant takes
// a share of that profile on that GPU model small enough to join it. Such
// a job holds the whole instance, which the counting bound then charges
// (valid: an instance holding two jobs holds only jobs with a possible
// partner, charged their shares, which sum to at most 1).
func (p *program) aloneInInstance() map[int]bool {
	if !p.share {
		return nil
	}
	s := p.snap
	type group struct {
		model, profile, tenant string
	}
	type least struct {
		job    [2]int // the jobs of the two least shares, -1 none
		shares [2]int64
	}
	groups := map[group]*least{}
	for i := range s.Jobs {
		for _, v := range p.xs[i] {
			x := p.vars[v]
			if !s.GPUs[x.gpu].Model.IsMIG() {
				continue
			}
			g := group{s.GPUs[x.gpu].Model.Name, x.profile, s.Jobs[i].Tenant}
			l := groups[g]
			if l == nil {
				l = &least{job: [2]int{-1, -1}}
				groups[g] = l
			}
			r := shareUnits(s.Jobs[i].Options[x.option])
			switch {
			case l.job[0] == i:
				l.shares[0] = min(l.shares[0], r)
			case l.job[1] == i:
				l.shares[1] = min(l.shares[1], r)
				if l.shares[1] < l.shares[0] {
					l.job[0], l.job[1], l.shares[0], l.shares[1] = l.job[1], l.job[0], l.shares[1], l.shares[0]
				}
			case l.job[0] < 0 || r < l.shares[0]:
				l.job[1], l.shares[1] = l.job[0], l.shares[0]
				l.job[0], l.shares[0] = i, r
			case l.job[1] < 0 || r < l.shares[1]:
				l.job[1], l.shares[1] = i, r
			}
		}
	}
	lone := map[int]bool{}
	for i := range s.Jobs {
		for _, v := range p.xs[i] {
			x := p.vars[v]
			if !s.GPUs[x.gpu].Model.IsMIG() {
				continue
			}
			l := groups[group{s.GPUs[x.gpu].Model.Name, x.profile, s.Jobs[i].Tenant}]
			other, share := l.job[0], l.shares[0]
			if other == i {
				other, share = l.job[1], l.shares[1]
			}
			if other < 0 || share > fractionUnits-shareUnits(s.Jobs[i].Options[x.option]) {
				lone[v] = true
			}
		}
	}
	return lone
}

// serverRows adds the rows of servers and gangs (snapshot.Server, Job.Gang):
//
//   - CPU and memory: for each server s with a modelled capacity,
//     sum over x on the GPUs of s of cpu_i x <= CPU_s - held_s (memory
//     alike);
//   - a gang is placed whole or not at all: u_a = u_b for consecutive tasks
//     a, b of one gang (in strict mode every job is placed anyway);
//   - and on one server unless GangSpan: for each server s,
//     sum_{x of a on s} x - sum_{x of b on s} x = 0.
func (p *program) serverRows(us []int) {
	s := p.snap
	for i := 0; i+1 < len(s.Jobs); i++ {
		a, b := &s.Jobs[i], &s.Jobs[i+1]
		if a.Gang == 0 || a.Gang != b.Gang {
			continue
		}
		if us[i] >= 0 && us[i+1] >= 0 {
			p.cons = append(p.cons, constraint{[]term{{us[i], 1}, {us[i+1], -1}}, eq, 0})
		}
		if !s.OneServerGangs() {
			continue
		}
		on := map[int][]term{}
		var servers []int
		for k, job := range []int{i, i + 1} {
			coef := int64(1 - 2*k)
			for _, v := range p.xs[job] {
				sv := s.GPUs[p.vars[v].gpu].Server
				if len(on[sv]) == 0 {
					servers = append(servers, sv)
				}
				on[sv] = append(on[sv], term{v, coef})
			}
		}
		for _, sv := range servers {
			p.cons = append(p.cons, constraint{on[sv], eq, 0})
		}
	}
	if len(s.Servers) == 0 {
		return
	}
	pos := make(map[int]int, len(s.Servers))
	for k, sv := range s.Servers {
		pos[sv.ID] = k
	}
	cpu := make([][]term, len(s.Servers))
	mem := make([][]term, len(s.Servers))
	for i := range s.Jobs {
		for _, v := range p.xs[i] {
			k := pos[s.GPUs[p.vars[v].gpu].Server]
			if c := s.Jobs[i].CPUMilli; c > 0 && s.Servers[k].CPUMilli > 0 {
				cpu[k] = append(cpu[k], term{v, c})
			}
			if m := s.Jobs[i].MemoryMiB; m > 0 && s.Servers[k].MemoryMiB > 0 {
				mem[k] = append(mem[k], term{v, m})
			}
		}
	}
	for k, sv := range s.Servers {
		if len(cpu[k]) > 0 {
			p.cons = append(p.cons, constraint{cpu[k], le, sv.CPUMilli - sv.HeldCPUMilli})
		}
		if len(mem[k]) > 0 {
			p.cons = append(p.cons, constraint{mem[k], le, sv.MemoryMiB - sv.HeldMemoryMiB})
		}
	}
}

// value returns the objective of an assignment, in quanta.
func (p *program) value(x []bool) int64 {
	c := p.constant
	for _, t := range p.cost {
		if x[t.v] != t.neg {
			c += t.w
		}
	}
	return c
}

// decision turns an assignment into a Decision.
func (p *program) decision(x []bool) snapshot.Decision {
	s := p.snap
	var d snapshot.Decision
	placed := make([]bool, len(s.Jobs))
	for v, on := range x {
		vr := p.vars[v]
		if !on || vr.kind != kindX || placed[vr.job] {
			continue
		}
		placed[vr.job] = true
		g := &s.GPUs[vr.gpu]
		pl := snapshot.Placement{JobID: s.Jobs[vr.job].ID, GPU: g.ID, Option: vr.option, Profile: vr.profile, Start: vr.start}
		if !g.Model.IsMIG() {
			pl.Fraction = s.Jobs[vr.job].Options[vr.option].Fraction
		}
		d.Placements = append(d.Placements, pl)
	}
	for i := range s.Jobs {
		if !placed[i] {
			d.Unscheduled = append(d.Unscheduled, s.Jobs[i].ID)
		}
	}
	slices.SortFunc(d.Placements, func(a, b snapshot.Placement) int { return a.JobID - b.JobID })
	slices.Sort(d.Unscheduled)
	return d
}

// countingBound is a lower bound on the objective (without its constant)
// from capacity alone: J GPUs offer J x 840 units of compute and of memory,
// so when the least needs of the jobs exceed that, at least kmin jobs stay
// pending (dropping the largest needs first gives the fewest), each at
// penalty P, and the rest need ceil(sum/840) GPUs. Jobs with no fitting
// option are always pending. In strict mode (penalty 0) every job is placed
// and only the GPU term remains.
func countingBound(needC, needM []int64, xs [][]int, gpus int, e1, penalty int64) int64 {
	var c, m []int64
	forced := int64(0)
	for i := range needC {
		if len(xs[i]) == 0 {
			forced++
			continue
		}
		c, m = append(c, needC[i]), append(m, needM[i])
	}
	slices.Sort(c)
	slices.Sort(m)
	capacity := int64(gpus) * cutUnits
	// kmin: fewest jobs to drop so that both dimensions fit.
	kmin := 0
	if penalty > 0 {
		for _, need := range [][]int64{c, m} {
			sum := int64(0)
			for _, v := range need {
				sum += v
			}
			k := 0
			for sum > capacity && k < len(need) {
				sum -= need[len(need)-1-k] // drop the largest first
				k++
			}
			kmin = max(kmin, k)
		}
	}
	used := int64(0)
	for _, need := range [][]int64{c, m} {
		sum := int64(0)
		for _, v := range need[:len(need)-kmin] {
			sum += v
		}
		used = max(used, (sum+cutUnits-1)/cutUnits)
	}
	return (forced+int64(kmin))*penalty + e1*min(used, int64(gpus))
}

package conspirator

import (
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Config holds the policy's arguments (see the package documentation).
type Config struct {
	E1, E2      float64
	OpenCost    float64
	Migrate     bool
	MaxMoves    int
	MaxSlowdown float64
	// MIG false runs every GPU whole (fractions time-shared, as
	// naive-share does): the ablation that shows what MIG packing adds.
	MIG bool
	// ConsolidateAll visits every GPU in use at every call instead of the
	// GPUs a job left since the previous one (argument consolidate).
	ConsolidateAll bool
}

// DefaultConfig returns the defaults of the package documentation.
func DefaultConfig() Config {
	return Config{E1: 1, E2: 0.1, OpenCost: 1, Migrate: true, MaxMoves: 4, MIG: true}
}

// Policy is the Conspirator heuristic.
type Policy struct{ cfg Config }

var _ snapshot.Policy = (*Policy)(nil)

// New returns the policy with cfg.
func New(cfg Config) *Policy { return &Policy{cfg: cfg} }

// Name implements snapshot.Policy.
func (*Policy) Name() string { return "conspirator" }

// UsesMIG reports whether the policy partitions MIG GPUs (argument mig).
func (p *Policy) UsesMIG() bool { return p.cfg.MIG }

// spot is a candidate placement.
type spot struct {
	gi, t, start int
	cost, free   float64
	share        float64
}

// cost scores option t of j on GPU gi (see the package documentation).
func (p *Policy) cost(v *pack.View, gi int, j *snapshot.Job, t int) (cost, freeAfter float64) {
	g := &v.GPUs[gi]
	o := j.Options[t]
	share := pack.Share(g.Model, o)
	charge := share
	if g.Jobs == 0 {
		charge += p.cfg.OpenCost * (1 - share)
	}
	return charge / pack.Speed(o), g.Free() - share
}

// best returns the cheapest spot for j over the GPUs in gis; ok is false
// when nothing fits. allowed, when not nil, says which of j's options may
// be used (one flag per option: the filter depends on the option only, so
// it is worked out once per job, not once per GPU).
func (p *Policy) best(v *pack.View, j *snapshot.Job, gis []int, allowed []bool) (spot, bool) {
	var b spot
	found := false
	for _, gi := range gis {
		if v.GPUs[gi].NoRoom() {
			continue // a full MIG GPU: no option fits (most GPUs of a loaded cluster)
		}
		for t := range j.Options {
			if allowed != nil && !allowed[t] {
				continue
			}
			st := v.Starts(gi, j, t)
			if st == nil {
				continue
			}
			c, free := p.cost(v, gi, j, t)
			share := pack.Share(v.GPUs[gi].Model, j.Options[t])
			better := !found || c < b.cost-1e-12
			if !better && c < b.cost+1e-12 {
				// Ties: the smaller instance (room for others), then the
				// fuller GPU (best fit).
				better = share < b.share-1e-12 || (share < b.share+1e-12 && free < b.free-1e-12)
			}
			if better {
				b = spot{gi: gi, t: t, cost: c, free: free, share: share, start: v.BestStart(gi, j, t, st)}
				found = true
			}
		}
	}
	return b, found
}

// Schedule implements snapshot.Policy.
func (p *Policy) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	return pack.Decide(s, p.decide)
}

// Begin implements snapshot.Incremental: the same rule on a view kept
// for the whole replay.
func (p *Policy) Begin(c *snapshot.Cluster) snapshot.Session { return pack.NewSession(c, p.decide) }

// decide is one call: place the pending jobs, then consolidate.
func (p *Policy) decide(v *pack.View) error {
	v.PlacePending(func(j *snapshot.Job) bool {
		b, ok := p.best(v, j, v.CandidatesFor(j, nil), nil)
		if ok {
			v.Place(b.gi, j, b.t, b.start)
		}
		return ok
	})
	if p.cfg.Migrate {
		p.consolidate(v)
	}
	return nil
}

// consolidate tries to empty each GPU that lost a job since the previous
// call (where room appeared) onto the other GPUs in use, and keeps the
// moves when the GPU saved outweighs their migration cost.
func (p *Policy) consolidate(v *pack.View) {
	var srcs []int
	from := v.Freed()
	if p.cfg.ConsolidateAll {
		from = nil
		for gi := range v.GPUs {
			from = append(from, gi)
		}
	}
	for _, gi := range from {
		if n := v.GPUs[gi].Jobs; n > 0 && n <= p.cfg.MaxMoves {
			srcs = append(srcs, gi)
		}
	}
	slices.SortStableFunc(srcs, func(a, b int) int {
		ga, gb := &v.GPUs[a], &v.GPUs[b]
		if ga.Jobs != gb.Jobs {
			return ga.Jobs - gb.Jobs
		}
		switch fa, fb := ga.Free(), gb.Free(); {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return a - b
	})
	var allowed []bool // per option of the job being moved
	var ids, targets []int
	for _, src := range srcs {
		ids = append(ids[:0], v.OnGPU(src)...)
		if len(ids) == 0 || len(ids) > p.cfg.MaxMoves {
			continue // emptied or filled by an earlier move of this call
		}
		// Move the largest jobs first: they are the hardest to fit.
		slices.SortStableFunc(ids, func(a, b int) int {
			pa, _ := v.Placed(a)
			pb, _ := v.Placed(b)
			sa := pack.Share(v.GPUs[src].Model, v.Job(a).Options[pa.Option])
			sb := pack.Share(v.GPUs[src].Model, v.Job(b).Options[pb.Option])
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return a - b
		})
		orig := make([]snapshot.Placement, len(ids))
		for k, id := range ids {
			orig[k], _ = v.Placed(id)
			v.Remove(id)
		}
		moved := make([]snapshot.Placement, 0, len(ids))
		cost := 0.0
		ok := true
		for k, id := range ids {
			j := v.Job(id)
			// A move may slow the job by at most MaxSlowdown.
			curSpeed := pack.Speed(j.Options[orig[k].Option])
			allowed = allowed[:0]
			for t := range j.Options {
				allowed = append(allowed, pack.Speed(j.Options[t]) >= curSpeed*(1-p.cfg.MaxSlowdown)-1e-12)
			}
			// Only GPUs in use: src, now empty, and every other empty GPU
			// are left out.
			targets = targets[:0]
			for _, gi := range v.CandidatesFor(j, allowed) {
				if v.GPUs[gi].Jobs > 0 {
					targets = append(targets, gi)
				}
			}
			b, found := p.best(v, j, targets, allowed)
			if !found {
				ok = false
				break
			}
			moved = append(moved, v.Place(b.gi, j, b.t, b.start))
			if j.Current != nil && !snapshot.SameInstance(*j.Current, moved[len(moved)-1]) {
				cost += j.MigrationCost
			}
		}
		if ok && p.cfg.E1 > p.cfg.E2*cost {
			continue
		}
		for _, m := range moved {
			v.Remove(m.JobID)
		}
		for k, id := range ids {
			v.Put(src, v.Job(id), orig[k])
		}
	}
}

func init() {
	snapshot.MustRegister("conspirator", func(raw map[string]string) (snapshot.Policy, error) {
		d := DefaultConfig()
		a := snapshot.NewArgs(raw)
		cfg := Config{
			E1:          a.Float("e1", d.E1, 0, math.MaxFloat64),
			E2:          a.Float("e2", d.E2, 0, math.MaxFloat64),
			OpenCost:    a.Float("open_cost", d.OpenCost, 0, 1),
			Migrate:     a.Bool("migrate", d.Migrate),
			MaxMoves:    a.Int("max_moves", d.MaxMoves, 0, 64),
			MaxSlowdown: a.Float("max_slowdown", d.MaxSlowdown, 0, 0.999),
			MIG:         a.Bool("mig", d.MIG),
		}
		cfg.ConsolidateAll = a.Choice("consolidate", "freed", "freed", "all") == "all"
		if err := a.Err(); err != nil {
			return nil, err
		}
		return New(cfg), nil
	})
}

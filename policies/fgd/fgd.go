package fgd

import (
	"slices"
	"sort"

	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Class is one task class of the target workload.
type Class = snapshot.WorkloadClass

// Policy is the FGD policy.
type Policy struct {
	workload []Class
}

var _ snapshot.Policy = (*Policy)(nil)

// Name implements snapshot.Policy.
func (*Policy) Name() string { return "fgd" }

// UsesMIG reports that FGD shares GPUs by fractions, without MIG.
func (*Policy) UsesMIG() bool { return false }

// SetWorkload fixes the target workload (copied).
func (p *Policy) SetWorkload(classes []Class) {
	p.workload = nil
	for _, c := range classes {
		c.Types = slices.Clone(c.Types)
		p.workload = append(p.workload, c)
	}
}

// fragTable is W_g for one GPU type: sorted compatible demands with suffix
// sums of their weight, plus the weight of incompatible classes.
type fragTable struct {
	demands  []float64 // ascending
	suffix   []float64 // suffix[k] = weight of demands[k:]
	incompat float64
}

// weightAbove returns the weight of classes that cannot use a free share f.
func (t *fragTable) weightAbove(f float64) float64 {
	k := sort.Search(len(t.demands), func(i int) bool { return t.demands[i] > f+1e-12 })
	return t.incompat + t.suffix[k]
}

// frag is F_g(M) for a GPU with free share f.
func (t *fragTable) frag(f float64) float64 {
	if f <= 1e-12 {
		return 0
	}
	return f * t.weightAbove(f)
}

func buildTable(model string, classes []Class) *fragTable {
	type dw struct{ d, w float64 }
	var comp []dw
	total := 0.0
	t := &fragTable{}
	for _, c := range classes {
		total += c.Weight
	}
	if total <= 0 {
		total = 1
	}
	for _, c := range classes {
		w := c.Weight / total
		if len(c.Types) > 0 && !slices.Contains(c.Types, model) {
			t.incompat += w
			continue
		}
		comp = append(comp, dw{c.Demand, w})
	}
	sort.Slice(comp, func(a, b int) bool { return comp[a].d < comp[b].d })
	t.demands = make([]float64, len(comp))
	t.suffix = make([]float64, len(comp)+1)
	for k := len(comp) - 1; k >= 0; k-- {
		t.demands[k] = comp[k].d
		t.suffix[k] = t.suffix[k+1] + comp[k].w
	}
	return t
}

// snapshotClasses derives the target workload from the jobs in view: one
// class per distinct (smallest fraction, GPU types) with its count.
func snapshotClasses(jobs []*snapshot.Job) []Class {
	var out []Class
	for _, j := range jobs {
		d, types := 1.0, []string(nil)
		anyType := false
		for _, o := range j.Options {
			if o.Profile == "" && o.Fraction > 0 {
				d = min(d, o.Fraction)
			}
			if o.GPUType == "" {
				anyType = true
			} else if !slices.Contains(types, o.GPUType) {
				types = append(types, o.GPUType)
			}
		}
		if anyType {
			types = nil
		}
		slices.Sort(types)
		found := false
		for c := range out {
			if out[c].Demand == d && slices.Equal(out[c].Types, types) {
				out[c].Weight++
				found = true
				break
			}
		}
		if !found {
			out = append(out, Class{Demand: d, Types: types, Weight: 1})
		}
	}
	return out
}

// Schedule implements snapshot.Policy.
func (p *Policy) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	return pack.Decide(s, p.decide)
}

// Begin implements snapshot.Incremental.
func (p *Policy) Begin(c *snapshot.Cluster) snapshot.Session { return pack.NewSession(c, p.decide) }

func (p *Policy) decide(v *pack.View) error {
	classes := p.workload
	if classes == nil {
		classes = snapshotClasses(v.Jobs())
	}
	tables := map[string]*fragTable{}
	v.PlacePending(func(j *snapshot.Job) bool {
		bestG, bestT, bestStart := -1, -1, 0
		bestDelta := 0.0
		for _, gi := range v.Candidates() {
			g := &v.GPUs[gi]
			tab := tables[g.Model.Name]
			if tab == nil {
				tab = buildTable(g.Model.Name, classes)
				tables[g.Model.Name] = tab
			}
			free := g.Free()
			before := tab.frag(free)
			for t := range j.Options {
				st := v.Starts(gi, j, t)
				if st == nil {
					continue
				}
				delta := tab.frag(free-pack.Share(g.Model, j.Options[t])) - before
				if bestG < 0 || delta < bestDelta-1e-12 {
					bestG, bestT, bestDelta, bestStart = gi, t, delta, st[0]
				}
			}
		}
		if bestG >= 0 {
			v.Place(bestG, j, bestT, bestStart)
		}
		return bestG >= 0
	})
	return nil
}

func init() {
	snapshot.MustRegister("fgd", func(raw map[string]string) (snapshot.Policy, error) {
		if err := snapshot.NewArgs(raw).Err(); err != nil {
			return nil, err
		}
		return &Policy{}, nil
	})
}

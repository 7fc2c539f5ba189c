package fit

import (
	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Policy is first-fit (Best false) or best-fit (Best true).
type Policy struct {
	Best bool
	MIG  bool
}

var _ snapshot.Policy = Policy{}

// Name implements snapshot.Policy.
func (p Policy) Name() string {
	if p.Best {
		return "best-fit"
	}
	return "first-fit"
}

// UsesMIG reports whether the policy partitions MIG GPUs.
func (p Policy) UsesMIG() bool { return p.MIG }

// Schedule implements snapshot.Policy.
func (p Policy) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	return pack.Decide(s, p.decide)
}

// Begin implements snapshot.Incremental.
func (p Policy) Begin(c *snapshot.Cluster) snapshot.Session { return pack.NewSession(c, p.decide) }

func (p Policy) decide(v *pack.View) error {
	v.PlacePending(func(j *snapshot.Job) bool {
		if p.Best {
			return bestFit(v, j)
		}
		return firstFit(v, j)
	})
	return nil
}

func firstFit(v *pack.View, j *snapshot.Job) bool {
	for gi := range v.GPUs {
		for t := range j.Options {
			if st := v.Starts(gi, j, t); st != nil {
				v.Place(gi, j, t, st[0])
				return true
			}
		}
	}
	return false
}

func bestFit(v *pack.View, j *snapshot.Job) bool {
	bestG, bestT := -1, -1
	var bestFree float64
	var bestMem int
	var bestStarts []int
	for _, gi := range v.Candidates() {
		g := &v.GPUs[gi]
		// On each GPU the job takes its first (smallest) option that fits:
		// a larger one would only waste the GPU.
		for t := range j.Options {
			st := v.Starts(gi, j, t)
			if st == nil {
				continue
			}
			free := g.Free() - pack.Share(g.Model, j.Options[t])
			mem := g.FreeMem()
			if g.Model.IsMIG() {
				pr, _ := g.Model.Profile(j.Options[t].Profile)
				mem -= pr.MemSlices
			}
			if bestG < 0 || free < bestFree-1e-12 || (free < bestFree+1e-12 && mem < bestMem) {
				// Copy: st is the view's scratch, reused by the next Starts.
				bestG, bestT, bestFree, bestMem = gi, t, free, mem
				bestStarts = append(bestStarts[:0], st...)
			}
			break
		}
	}
	if bestG >= 0 {
		v.Place(bestG, j, bestT, v.BestStart(bestG, j, bestT, bestStarts))
	}
	return bestG >= 0
}

func init() {
	for _, best := range []bool{false, true} {
		snapshot.MustRegister(Policy{Best: best}.Name(), func(raw map[string]string) (snapshot.Policy, error) {
			a := snapshot.NewArgs(raw)
			p := Policy{Best: best, MIG: a.Bool("mig", true)}
			if err := a.Err(); err != nil {
				return nil, err
			}
			return p, nil
		})
	}
}

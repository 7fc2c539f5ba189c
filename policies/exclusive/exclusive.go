package exclusive

import (
	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Policy is the exclusive policy.
type Policy struct{}

var _ snapshot.Policy = Policy{}

// Name implements snapshot.Policy.
func (Policy) Name() string { return "exclusive" }

// UsesMIG reports that the policy wants whole, unpartitioned GPUs.
func (Policy) UsesMIG() bool { return false }

// Schedule implements snapshot.Policy.
func (p Policy) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	return pack.Decide(s, p.decide)
}

// Begin implements snapshot.Incremental.
func (p Policy) Begin(c *snapshot.Cluster) snapshot.Session { return pack.NewSession(c, p.decide) }

func (Policy) decide(v *pack.View) error {
	v.PlacePending(func(j *snapshot.Job) bool { return placeAlone(v, j) })
	return nil
}

func placeAlone(v *pack.View, j *snapshot.Job) bool {
	for gi := range v.GPUs {
		if v.GPUs[gi].Jobs > 0 {
			continue
		}
		bestT, bestShare, bestStart := -1, -1.0, 0
		for t := range j.Options {
			st := v.Starts(gi, j, t)
			if st == nil {
				continue
			}
			if sh := pack.Share(v.GPUs[gi].Model, j.Options[t]); sh > bestShare {
				bestT, bestShare, bestStart = t, sh, st[0]
			}
		}
		if bestT >= 0 {
			v.Place(gi, j, bestT, bestStart)
			return true
		}
	}
	return false
}

func init() {
	snapshot.MustRegister("exclusive", func(raw map[string]string) (snapshot.Policy, error) {
		if err := snapshot.NewArgs(raw).Err(); err != nil {
			return nil, err
		}
		return Policy{}, nil
	})
}

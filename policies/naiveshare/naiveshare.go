package naiveshare

import (
	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Policy is the naive-share policy.
type Policy struct{}

var _ snapshot.Policy = Policy{}

// Name implements snapshot.Policy.
func (Policy) Name() string { return "naive-share" }

// UsesMIG reports that the policy does not partition GPUs with MIG.
func (Policy) UsesMIG() bool { return false }

// Schedule implements snapshot.Policy.
func (p Policy) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	return pack.Decide(s, p.decide)
}

// Begin implements snapshot.Incremental.
func (p Policy) Begin(c *snapshot.Cluster) snapshot.Session { return pack.NewSession(c, p.decide) }

func (Policy) decide(v *pack.View) error {
	v.PlacePending(func(j *snapshot.Job) bool {
		for gi := range v.GPUs {
			for t := range j.Options {
				if st := v.Starts(gi, j, t); st != nil {
					v.Place(gi, j, t, st[0])
					return true
				}
			}
		}
		return false
	})
	return nil
}

func init() {
	snapshot.MustRegister("naive-share", func(raw map[string]string) (snapshot.Policy, error) {
		if err := snapshot.NewArgs(raw).Err(); err != nil {
			return nil, err
		}
		return Policy{}, nil
	})
}

package conspirator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// randomCluster is a snapshot of servers mixing MIG A100s, A30s and
// non-MIG V100s and T4s (with CPU and memory, or none), and jobs with
// random options, tenants, gangs and demands, all pending.
func randomCluster(r *rand.Rand, servers, jobs int) *snapshot.Snapshot {
	models := []string{"a100-40gb", "a30-24gb", "v100", "t4"}
	s := &snapshot.Snapshot{}
	withSrv := r.IntN(4) > 0
	id := 0
	for sv := range servers {
		m, _ := snapshot.LookupModel(models[r.IntN(len(models))])
		if withSrv {
			srv := snapshot.Server{ID: 100 + sv}
			if r.IntN(3) > 0 {
				srv.CPUMilli, srv.MemoryMiB = int64(8000+r.IntN(24000)), int64(16000+r.IntN(48000))
			}
			s.Servers = append(s.Servers, srv)
		}
		for range 1 + r.IntN(4) {
			s.GPUs = append(s.GPUs, snapshot.GPU{ID: id, Model: m, Server: 100 + sv})
			id++
		}
	}
	profiles := []string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", "1g.6gb", "2g.12gb", "4g.24gb"}
	fractions := []float64{0.1, 0.25, 0.3, 0.5, 0.6, 1}
	tenants := []string{"a", "b", "c"}
	for k := 0; k < jobs; k++ {
		var opts []snapshot.Option
		for range 1 + r.IntN(4) {
			o := snapshot.Option{Speed: 0.2 + r.Float64()}
			if r.IntN(2) == 0 {
				o.Profile = profiles[r.IntN(len(profiles))]
			} else {
				o.Fraction = fractions[r.IntN(len(fractions))]
			}
			if r.IntN(3) == 0 {
				o.GPUType = models[r.IntN(len(models))]
			}
			opts = append(opts, o)
		}
		n, gang := 1, 0
		if r.IntN(6) == 0 {
			n, gang = 2+r.IntN(2), 1000+k
		}
		tenant := tenants[r.IntN(len(tenants))]
		for t := 0; t < n; t++ {
			s.Jobs = append(s.Jobs, snapshot.Job{ID: len(s.Jobs), Tenant: tenant, Options: opts, Gang: gang,
				CPUMilli: int64(r.IntN(4000)), MemoryMiB: int64(r.IntN(8000)), MigrationCost: 1})
		}
		k += n - 1
	}
	return s
}

// The heuristic's best spot found among CandidatesFor (the free-capacity
// index) is the one found among every candidate GPU, at every step of
// random placements and removals that keep the index up to date, with and
// without an option filter: the index is an exact shortcut, not a change
// of the rule.
func TestIndexFindsTheSameBestSpot(t *testing.T) {
	p := New(DefaultConfig())
	for seed := range 60 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		s := randomCluster(r, 3+r.IntN(12), 40)
		v := pack.New(s)
		v.CandidatesFor(&s.Jobs[0], nil) // build the index: later steps update it
		placed := map[int]bool{}
		for step := range 300 {
			j := v.Job(r.IntN(len(s.Jobs)))
			if placed[j.ID] {
				v.Remove(j.ID)
				delete(placed, j.ID)
				continue
			}
			var allowed []bool
			if r.IntN(3) == 0 {
				for range j.Options {
					allowed = append(allowed, r.IntN(2) == 0)
				}
			}
			want, okW := p.best(v, j, v.Candidates(), allowed)
			got, okG := p.best(v, j, v.CandidatesFor(j, allowed), allowed)
			if okW != okG || okW && (got.gi != want.gi || got.t != want.t || got.start != want.start) {
				t.Fatalf("seed %d step %d job %d: index gives %s, every candidate %s", seed, step, j.ID, spotString(got, okG), spotString(want, okW))
			}
			if okW && j.Gang == 0 {
				v.Place(want.gi, j, want.t, want.start)
				placed[j.ID] = true
			}
		}
		v.Release()
	}
}

func spotString(b spot, ok bool) string {
	if !ok {
		return "nothing"
	}
	return fmt.Sprintf("GPU %d option %d start %d (cost %.4f)", b.gi, b.t, b.start, b.cost)
}

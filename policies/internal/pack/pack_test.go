package pack

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Hand-derived A100 layouts: with 4g.20gb@0 in use, 3g.20gb fits only at
// start 4 (memory 4-7); a second 4g does not fit (MaxCount 1 and 8
// compute slices); on a non-MIG GPU at 0.6 used, 0.4 fits and 0.5 does not,
// and another tenant never fits.
func TestStartsFollowMIGAndTenantRules(t *testing.T) {
	a100, _ := snapshot.LookupModel("a100-40gb")
	v100, _ := snapshot.LookupModel("v100")
	s := &snapshot.Snapshot{
		GPUs: []snapshot.GPU{{ID: 0, Model: a100}, {ID: 1, Model: v100}},
		Jobs: []snapshot.Job{
			{ID: 1, Tenant: "a", Options: []snapshot.Option{{Profile: "4g.20gb"}}},
			{ID: 2, Tenant: "a", Options: []snapshot.Option{{Profile: "3g.20gb"}, {Profile: "4g.20gb"}}},
			{ID: 3, Tenant: "a", Options: []snapshot.Option{{Fraction: 0.6}}},
			{ID: 4, Tenant: "a", Options: []snapshot.Option{{Fraction: 0.4}, {Fraction: 0.5}}},
			{ID: 5, Tenant: "b", Options: []snapshot.Option{{Fraction: 0.1}}},
		},
	}
	v := New(s)
	v.Place(0, v.Job(1), 0, 0)
	if got := v.Starts(0, v.Job(2), 0); len(got) != 1 || got[0] != 4 {
		t.Errorf("3g starts = %v, want [4]", got)
	}
	if got := v.Starts(0, v.Job(2), 1); got != nil {
		t.Errorf("second 4g starts = %v, want none", got)
	}
	v.Place(1, v.Job(3), 0, 0)
	if !v.Fits(1, v.Job(4), 0) || v.Fits(1, v.Job(4), 1) || v.Fits(1, v.Job(5), 0) {
		t.Errorf("non-MIG fits: 0.4 %v (want true), 0.5 %v (false), other tenant %v (false)",
			v.Fits(1, v.Job(4), 0), v.Fits(1, v.Job(4), 1), v.Fits(1, v.Job(5), 0))
	}
	v.Place(0, v.Job(2), 0, 4)
	if err := snapshot.CheckDecision(s, v.Decision()); err != nil {
		t.Error(err)
	}
	v.Remove(1)
	if g := &v.GPUs[0]; g.Occ.Compute != 3 || g.FreeMem() != 4 {
		t.Errorf("after removing the 4g: compute %d free memory %d, want 3 and 4", g.Occ.Compute, g.FreeMem())
	}
}

// A 1g.5gb at start 6 keeps more places open than at 0 (14 against 12,
// hw/mig's TestOpenness), so BestStart picks 6.
func TestOpennessPrefersEdgeForSmallInstance(t *testing.T) {
	a100, _ := snapshot.LookupModel("a100-40gb")
	s := &snapshot.Snapshot{GPUs: []snapshot.GPU{{ID: 0, Model: a100}},
		Jobs: []snapshot.Job{{ID: 1, Options: []snapshot.Option{{Profile: "1g.5gb"}}}}}
	v := New(s)
	if st := v.BestStart(0, v.Job(1), 0, v.Starts(0, v.Job(1), 0)); st != 6 {
		t.Errorf("best start of 1g.5gb = %d, want 6", st)
	}
}

// NoRoom is exact where it says true: on every MIG model of the catalog,
// filled with 1-slice instances until no compute slice is free, it holds
// and no profile has a start; one slice free again, it does not hold. On a
// GPU without MIG it never holds (the fit depends on the job's fraction).
func TestNoRoom(t *testing.T) {
	n := 0
	for _, name := range gpu.Names() {
		m, _ := snapshot.LookupModel(name)
		if !m.IsMIG() {
			g := GPU{Model: &m, Used: 1}
			if g.NoRoom() {
				t.Errorf("%s: NoRoom on a GPU without MIG", name)
			}
			continue
		}
		n++
		geo := m.MIG
		var small *mig.Profile
		for k := range geo.Profiles {
			if p := &geo.Profiles[k]; p.Compute == 1 && (small == nil || p.MemSlices < small.MemSlices) {
				small = p
			}
		}
		if small == nil {
			t.Fatalf("%s: no 1-slice profile", name)
		}
		var occ mig.Occupancy
		for occ.FreeCompute(geo) > 0 {
			st := geo.AppendStarts(nil, &occ, small)
			if len(st) == 0 {
				occ.Compute++ // no start left for this profile: take a slice by hand
				continue
			}
			occ.Add(geo, small, st[0])
		}
		g := GPU{Model: &m, Occ: occ}
		if !g.NoRoom() {
			t.Errorf("%s: every compute slice taken but NoRoom false", name)
		}
		for k := range geo.Profiles {
			if st := geo.AppendStarts(nil, &occ, &geo.Profiles[k]); len(st) != 0 {
				t.Errorf("%s: NoRoom, yet %s has starts %v", name, geo.Profiles[k].Name, st)
			}
		}
		g.Occ.Compute--
		if g.NoRoom() {
			t.Errorf("%s: a compute slice free but NoRoom true", name)
		}
	}
	if n < 3 {
		t.Errorf("only %d MIG models checked", n)
	}
}

// The candidate list updated server by server as GPUs turn busy or empty
// equals the list built from scratch, after every step of random
// placements and removals on servers of mixed models: servers listed
// contiguously (updated in place) and a server listed in two pieces
// (rebuilt: Candidates' rule for it depends on the servers in between).
func TestCandidatesUpdatedInPlace(t *testing.T) {
	a100, _ := snapshot.LookupModel("a100-40gb")
	v100, _ := snapshot.LookupModel("v100")
	for _, c := range []struct {
		srvOf  []int
		splice bool
	}{
		{[]int{10, 10, 10, 10, 11, 11, 11, 12, 12, 12}, true},
		{[]int{10, 10, 10, 10, 11, 11, 11, 12, 12, 10}, false},
	} {
		s := &snapshot.Snapshot{Servers: []snapshot.Server{{ID: 10}, {ID: 11}, {ID: 12}}}
		for k, sv := range c.srvOf {
			m := a100
			if k%3 == 1 {
				m = v100
			}
			s.GPUs = append(s.GPUs, snapshot.GPU{ID: k, Model: m, Server: sv})
		}
		for id := 1; id <= 30; id++ {
			s.Jobs = append(s.Jobs, snapshot.Job{ID: id, Tenant: "a", Options: []snapshot.Option{{Profile: "1g.5gb"}, {Fraction: 0.25}}})
		}
		v := New(s)
		if v.srvSplice != c.splice {
			t.Fatalf("servers %v: splice %v, want %v", c.srvOf, v.srvSplice, c.splice)
		}
		fresh := func() []int {
			v.candsOK = false
			return append([]int(nil), v.Candidates()...)
		}
		r := rand.New(rand.NewPCG(1, 2))
		placed := map[int]bool{}
		for step := range 400 {
			v.Candidates() // the cached list the next change updates
			id := 1 + r.IntN(30)
			if placed[id] {
				v.Remove(id)
				delete(placed, id)
			} else {
				gi := r.IntN(len(s.GPUs))
				t0 := 0
				if !v.GPUs[gi].Model.IsMIG() {
					t0 = 1
				}
				st := v.Starts(gi, v.Job(id), t0)
				if st == nil {
					continue
				}
				v.Place(gi, v.Job(id), t0, st[0])
				placed[id] = true
			}
			got := append([]int(nil), v.Candidates()...)
			if want := fresh(); !slices.Equal(got, want) {
				t.Fatalf("servers %v, step %d (job %d): updated %v, from scratch %v", c.srvOf, step, id, got, want)
			}
		}
		v.Release()
	}
}

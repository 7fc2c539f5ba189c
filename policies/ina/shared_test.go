package ina

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// A window larger than the slots its hash can reach ends: on a pool of
// 100 a window of 150 takes every slot once and leaves the rest out
// (before, the salt loop searched for a new slot forever).
func TestCRCSetEndsPastThePool(t *testing.T) {
	b := crcSet(7, 150, 100)
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	if n != 100 {
		t.Errorf("%d slots set, want all 100", n)
	}
}

// Every Enter and Leave leaves atp's and esa's holdings at their fixed
// point: each job's collided share is what the others' holdings (as they
// end the call) give it, and its slots follow from that. Before the
// fixed point an entrant was priced against the holdings the others had
// before it entered and never revisited (first come, first served).
// Random phases of jobs with windows of 50 to 2,800 and needs of 20 to
// 400 on ATP's hash over a pool of 3,000, where collisions are large.
func TestSharedHoldingsAreAFixedPoint(t *testing.T) {
	for _, name := range []string{"atp", "esa"} {
		pol, err := New(name, Pool{Slots: 3000, Seed: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := pol.(*shared)
		r := rand.New(rand.NewPCG(7, 9))
		in := map[int]bool{}
		for step := range 400 {
			job := r.IntN(12)
			if in[job] {
				s.Leave(job)
				delete(in, job)
			} else {
				s.Enter(Demand{Job: job, Window: 50 + r.IntN(2751), Need: 20 + r.IntN(381), RemainingIterations: r.IntN(5), Arrival: job})
				in[job] = true
			}
			if s.Unsettled() > 0 {
				continue // counted, and checked below
			}
			for i := range s.active {
				a := s.active[i]
				p := s.collided(&a)
				if p != a.ps || a.slots != int(math.Round((1-p)*float64(min(a.d.Need, a.w)))) {
					t.Fatalf("%s, step %d: job %d holds %d at %.6f collided; the others' holdings give %.6f", name, step, a.d.Job, a.slots, a.ps, p)
				}
			}
		}
		if u := s.Unsettled(); u > 0 {
			t.Errorf("%s: %d calls did not settle in %d passes", name, u, SettlePasses)
		}
	}
}

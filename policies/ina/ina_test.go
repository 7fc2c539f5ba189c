package ina

import (
	"math"
	"testing"
)

// ATP's collisions follow the hash-collision closed form: jobs already
// holding h_1, h_2, ... slots of a pool of A (disjoint sets: a job takes
// only free slots), a job whose window of W distinct slots is hashed
// uniformly finds a given slot of it held with probability
// (h_1 + h_2 + ...)/A (the hypergeometric mean). Over 400 seeds (each its
// own hashing), the mean collision fraction of the second and the third
// job entering lies within 4 standard errors of it. CRC-32 hashing, as
// ATP's code has it, fails this (linear: sets are XOR-translates).
func TestATPCollisionsMatchClosedForm(t *testing.T) {
	const A, W, seeds = 20000, 2800, 400
	var sum2, sq2, sum3, sq3, held2 float64
	for s := range seeds {
		p := newATP(Pool{Slots: A, PerJob: W, Seed: uint64(s)})
		g1 := p.Enter(Demand{Job: 1, Window: W})[0]
		if g1.Slots != W || g1.PSFraction != 0 {
			t.Fatalf("seed %d: the first job gets %+v, want its whole window", s, g1)
		}
		g2 := p.Enter(Demand{Job: 2, Window: W})[0]
		g3 := p.Enter(Demand{Job: 3, Window: W})[0]
		sum2 += g2.PSFraction
		sq2 += g2.PSFraction * g2.PSFraction
		sum3 += g3.PSFraction
		sq3 += g3.PSFraction * g3.PSFraction
		held2 += float64(g2.Slots)
	}
	check := func(name string, sum, sq, want float64) {
		mean := sum / seeds
		se := math.Sqrt((sq/seeds - mean*mean) / seeds)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%s: mean collision fraction %.5f ± %.5f (se), closed form %.5f", name, mean, se, want)
		}
		t.Logf("%s: %.5f ± %.5f, closed form %.5f", name, mean, se, want)
	}
	check("second job", sum2, sq2, float64(W)/A)
	h2 := held2 / seeds
	check("third job", sum3, sq3, (W+h2)/A)
}

// esa by hand: a pool of 1000, windows of 600. A (priority 5) enters
// alone: 600. B (priority 1, more urgent) enters: it takes 600, A keeps
// 400 (preempted by 200). C (priority 3) enters: B 600, C 400, A 0 (sent
// to its parameter server). B leaves: C 600, A 400.
func TestESAByHand(t *testing.T) {
	e := newESA(1000, false)
	got := e.Enter(Demand{Job: 1, Window: 600, Priority: 5})
	if len(got) != 1 || got[0].Slots != 600 {
		t.Fatalf("A alone: %+v", got)
	}
	got = e.Enter(Demand{Job: 2, Window: 600, Priority: 1, Arrival: 1})
	if len(got) != 2 || got[0] != (Grant{Job: 2, Slots: 600}) || got[1] != (Grant{Job: 1, Slots: 400}) {
		t.Fatalf("B enters: %+v, want B 600 then A 400", got)
	}
	got = e.Enter(Demand{Job: 3, Window: 600, Priority: 3, Arrival: 2})
	if len(got) != 2 || got[0] != (Grant{Job: 3, Slots: 400}) || got[1] != (Grant{Job: 1, Slots: 0, PSFraction: 1}) {
		t.Fatalf("C enters: %+v, want C 400 then A 0", got)
	}
	got = e.Leave(2)
	if len(got) != 2 || got[0] != (Grant{Job: 3, Slots: 600}) || got[1] != (Grant{Job: 1, Slots: 400}) {
		t.Fatalf("B leaves: %+v, want C 600 and A 400 (in priority order)", got)
	}
	if p := e.Peek(Demand{Job: 9, Window: 600, Priority: 0}); p.Slots != 600 {
		t.Errorf("peek of the most urgent job: %+v, want its whole window", p)
	}
}

// static by hand: a pool of 1024 in partitions of 512: two jobs get one
// each, the third runs its ring until the first ends, then takes its
// partition.
func TestStaticByHand(t *testing.T) {
	s := newStatic(1024, 512)
	for j := 1; j <= 3; j++ {
		s.Start(j)
	}
	if g := s.Enter(Demand{Job: 3, Window: 512})[0]; !g.Ring {
		t.Errorf("third job: %+v, want the ring", g)
	}
	s.End(1)
	if g := s.Enter(Demand{Job: 3, Window: 512})[0]; g.Ring || g.Slots != 512 {
		t.Errorf("third job after the first ended: %+v, want a partition of 512", g)
	}
}

// New refuses unknown policies and arguments, naming what is known.
func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"esb", nil, `did you mean "esa"`},
		{"esa", map[string]string{"priority": "random"}, "remaining"},
		{"static", map[string]string{"size": "3"}, "unknown argument"},
		{"static", map[string]string{"partition": "0"}, "partition"},
	} {
		if _, err := New(c.name, Pool{Slots: 100, PerJob: 10}, c.args); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%s %v: err %v, want one saying %q", c.name, c.args, err, c.want)
		}
	}
	if _, err := New("atp", Pool{Slots: 0}, nil); err == nil {
		t.Errorf("a pool of 0 slots accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

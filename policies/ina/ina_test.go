package ina

import (
	"math"
	"testing"
)

// ATP's hash, by hand: CRC-32 (IEEE) of the six bytes appID, index, salt
// (little-endian 16 bits each), truncated to 16 bits, modulo the pool.
// The expected slots were computed apart from this code, with Python's
// zlib.crc32: (crc32(bytes([1,0,0,0,0,0])) & 0xffff) % 20000 = 9190 and
// index 1 (bytes [1,0,1,0,0,0]) 5475; app 2, index 0: 168. A window
// holds distinct slots, as many as asked (salted until new).
func TestATPHashByHand(t *testing.T) {
	for _, c := range []struct {
		app   uint16
		slots []int
	}{{1, []int{9190, 5475}}, {2, []int{168}}} {
		b := crcSet(c.app, len(c.slots), 20000)
		for _, want := range c.slots {
			if !b.has(want) {
				t.Errorf("app %d: slot %d not in its window", c.app, want)
			}
		}
	}
	b := crcSet(7, 2800, 20000)
	n := 0
	for _, w := range b {
		n += popcount(w)
	}
	if n != 2800 {
		t.Errorf("a window of 2800 holds %d distinct slots", n)
	}
	// A pool no larger than the window: every slot (the salt walks on).
	b = crcSet(7, 1400, 1400)
	n = 0
	for _, w := range b {
		n += popcount(w)
	}
	if n != 1400 {
		t.Errorf("a window of the whole 1400-slot pool holds %d slots", n)
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// atp with uniform hashing, by hand: a pool of P = 20,000, windows of
// 2,800, a need of 252 in flight. A enters alone: 252, nothing collides.
// B enters: its aggregator is held by A with probability (expected
// overlap W^2/P over W) x (A's 252 of W) = 252/P = 0.0126, so it holds
// round(0.9874 x 252) = 249; A is then collided 249/P = 0.01245: 249;
// B, against A's 249, 0.01245 too: round(0.98755 x 252) = 249, settled.
// B leaves: A is back to 252 (its collisions end with B's phase).
func TestATPUniformByHand(t *testing.T) {
	p, err := New("atp", Pool{Slots: 20000, Hash: HashUniform}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := func(job int) Demand { return Demand{Job: job, Window: 2800, Need: 252, Arrival: job} }
	if g := p.Enter(d(1)); len(g) != 1 || g[0] != (Grant{Job: 1, Slots: 252}) {
		t.Fatalf("A alone: %+v", g)
	}
	g := p.Enter(d(2))
	if len(g) != 2 || g[0].Job != 2 || g[0].Slots != 249 || math.Abs(g[0].PSFraction-0.01245) > 1e-12 || g[1].Slots != 249 || math.Abs(g[1].PSFraction-0.01245) > 1e-12 {
		t.Fatalf("B enters: %+v, want B 249 then A 249, both 0.01245 collided", g)
	}
	if g[1].Evicted != 0 {
		t.Errorf("atp preempts nothing: %+v", g[1])
	}
	if g := p.Leave(2); len(g) != 1 || g[0] != (Grant{Job: 1, Slots: 252}) {
		t.Fatalf("B leaves: %+v, want A back to 252", g)
	}
}

// atp with ATP's hash: B's collided share is A's window overlap with B's,
// counted slot by slot here by a second implementation (maps of
// HashNew_crc's loop), over W, times A's held share s/W, where s is where
// the two settle: s = round((1 - overlap/W x s/W) x 252) (for apps 2 and
// 3, 361 slots shared: 252, then 249, then 249).
func TestATPCRCOverlap(t *testing.T) {
	const P, W, need = 20000, 2800, 252
	ref := func(app uint16) map[int]bool {
		m := map[int]bool{}
		for i := range W {
			for salt := 0; ; salt++ {
				lo, hi := byte(salt%255), byte(salt/255)
				v := int(uint16(crc32IEEE([]byte{byte(app), byte(app >> 8), byte(i), byte(i >> 8), lo, hi}))) % P
				if !m[v] {
					m[v] = true
					break
				}
			}
		}
		return m
	}
	pol, _ := New("atp", Pool{Slots: P, Seed: 0}, nil)
	s := pol.(*shared)
	a, b := ref(s.appID(1)), ref(s.appID(2))
	shared := 0
	for k := range a {
		if b[k] {
			shared++
		}
	}
	pol.Enter(Demand{Job: 1, Window: W, Need: need})
	g := pol.Enter(Demand{Job: 2, Window: W, Need: need})[0]
	held := need
	for range 10 {
		held = int(math.Round((1 - float64(shared)/W*float64(held)/W) * need))
	}
	want := float64(shared) / W * float64(held) / W
	if math.Abs(g.PSFraction-want) > 1e-12 {
		t.Errorf("collided %.6f, want %d shared / %d x %d / %d = %.6f", g.PSFraction, shared, W, held, W, want)
	}
	t.Logf("apps %d and %d share %d of %d slots", s.appID(1), s.appID(2), shared, W)
}

// crc32IEEE is ATP's crc32_le(0xffffffff, p, len), bit by bit.
func crc32IEEE(p []byte) uint32 {
	crc := uint32(0xffffffff)
	for _, b := range p {
		crc ^= uint32(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xedb88320
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

// esa by hand (uniform hashing, a pool of 1000 = every window, a need of
// 300): A (500 iterations left) alone: 300. B (100 left) enters and
// outranks A: nothing blocks B (300); A's chunks find B's aggregators
// 300/1000 of the time on arrival (t = 0.3), and B's chunks take the
// admitted ones in flight as often (e = 0.3): 0.3 + 0.7 x 0.3 = 0.51, so
// A holds 147, the 153 it lost evicted. C (300 left) enters between
// them: by B, 0.51: 147; A by B and C, t = e = 0.3 + 0.147 = 0.447:
// 0.447 + 0.553 x 0.447 = 0.694191, round(0.305809 x 300) = 92 (55
// evicted). B leaves: C 300 (nothing outranks it), A by C 0.51: 147.
func TestESAByHand(t *testing.T) {
	e, err := New("esa", Pool{Slots: 1000, Hash: HashUniform}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := func(job, left int) Demand {
		return Demand{Job: job, Window: 1000, Need: 300, RemainingIterations: left, Arrival: job}
	}
	if g := e.Enter(d(1, 500)); len(g) != 1 || g[0].Slots != 300 {
		t.Fatalf("A alone: %+v", g)
	}
	g := e.Enter(d(2, 100))
	if len(g) != 2 || g[0] != (Grant{Job: 2, Slots: 300}) || g[1].Job != 1 || g[1].Slots != 147 || g[1].Evicted != 153 || math.Abs(g[1].PSFraction-0.51) > 1e-12 {
		t.Fatalf("B enters: %+v, want B 300, then A 147 with 153 evicted", g)
	}
	g = e.Enter(d(3, 300))
	if len(g) != 2 || g[0].Job != 3 || g[0].Slots != 147 || g[1].Job != 1 || g[1].Slots != 92 || g[1].Evicted != 55 || math.Abs(g[1].PSFraction-0.694191) > 1e-12 {
		t.Fatalf("C enters: %+v, want C 147, then A 92 with 55 evicted", g)
	}
	g = e.Leave(2)
	if len(g) != 2 || g[0].Job != 3 || g[0].Slots != 300 || g[1].Job != 1 || g[1].Slots != 147 || g[1].Evicted != 0 {
		t.Fatalf("B leaves: %+v, want C 300 then A 147", g)
	}
	if p := e.Peek(d(9, 1)); p.Slots != 300 {
		t.Errorf("peek of the most urgent job: %+v, want its whole need", p)
	}
}

// esa-oracle by hand: a pool of 1000, needs of 600. A (work 5) enters
// alone: 600. B (work 1, more urgent) enters: it takes 600, A keeps 400
// (200 evicted). C (work 3) enters: B 600, C 400, A 0 (sent to its
// fallback). B leaves: C 600, A 400.
func TestESAOracleByHand(t *testing.T) {
	e := newESAOracle(1000, false)
	got := e.Enter(Demand{Job: 1, Need: 600, Work: 5})
	if len(got) != 1 || got[0].Slots != 600 {
		t.Fatalf("A alone: %+v", got)
	}
	got = e.Enter(Demand{Job: 2, Need: 600, Work: 1, Arrival: 1})
	if len(got) != 2 || got[0] != (Grant{Job: 2, Slots: 600}) || got[1] != (Grant{Job: 1, Slots: 400, Evicted: 200}) {
		t.Fatalf("B enters: %+v, want B 600 then A 400", got)
	}
	got = e.Enter(Demand{Job: 3, Need: 600, Work: 3, Arrival: 2})
	if len(got) != 2 || got[0] != (Grant{Job: 3, Slots: 400}) || got[1] != (Grant{Job: 1, Slots: 0, PSFraction: 1, Evicted: 400}) {
		t.Fatalf("C enters: %+v, want C 400 then A 0", got)
	}
	got = e.Leave(2)
	if len(got) != 2 || got[0] != (Grant{Job: 3, Slots: 600}) || got[1] != (Grant{Job: 1, Slots: 400}) {
		t.Fatalf("B leaves: %+v, want C 600 and A 400 (in priority order)", got)
	}
	if p := e.Peek(Demand{Job: 9, Need: 600, Work: 0}); p.Slots != 600 {
		t.Errorf("peek of the most urgent job: %+v, want its whole need", p)
	}
}

// static by hand: a pool of 1024 in partitions of 512: two jobs get one
// each, the third runs its ring until the first ends, then takes its
// partition.
func TestStaticByHand(t *testing.T) {
	s := newStatic(1024, 512, 1)
	for j := 1; j <= 3; j++ {
		s.Start(j)
	}
	if g := s.Enter(Demand{Job: 3, Need: 512})[0]; !g.Ring {
		t.Errorf("third job: %+v, want the ring", g)
	}
	s.End(1)
	if g := s.Enter(Demand{Job: 3, Need: 512})[0]; g.Ring || g.Slots != 512 {
		t.Errorf("third job after the first ended: %+v, want a partition of 512", g)
	}
}

// static's shadow copies by hand: on a pool that does not count them
// (ATP's 700 aggregators), a partition of 189 SwitchML slots takes 378,
// so one fits where three would without them; the job streams at its
// 189 slots and reserves 378 of the pool.
func TestStaticShadowCopies(t *testing.T) {
	for _, c := range []struct {
		cost, partitions int
	}{{1, 3}, {2, 1}} {
		p, err := New("static", Pool{Slots: 700, PerJob: 189, StaticCost: c.cost}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := 1; j <= 4; j++ {
			p.Start(j)
		}
		got := 0
		for j := 1; j <= 4; j++ {
			g := p.Enter(Demand{Job: j, Need: 189})[0]
			if !g.Ring {
				got++
				if g.Slots != 189 {
					t.Errorf("cost %d: job %d streams at %d slots, want 189", c.cost, j, g.Slots)
				}
				if r := p.(Reserver).Reserved(j); r != 189*c.cost {
					t.Errorf("cost %d: job %d reserves %d of the pool, want %d", c.cost, j, r, 189*c.cost)
				}
			}
		}
		if got != c.partitions {
			t.Errorf("cost %d: %d jobs got a partition, want %d", c.cost, got, c.partitions)
		}
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
		{"esa", map[string]string{"priority": "random"}, "remaining-iterations, size-class, fifo"},
		{"esa-oracle", map[string]string{"priority": "remaining-iterations"}, "remaining"},
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
	if _, err := New("atp", Pool{Slots: 10, Hash: "md5"}, nil); err == nil || !contains(err.Error(), "crc or uniform") {
		t.Errorf("hash md5: err %v, want one naming crc or uniform", err)
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

// The size classes by hand: log2 of the remaining gigabytes, 4 bits.
func TestSizeClassByHand(t *testing.T) {
	for _, c := range []struct {
		bytes float64
		want  int
	}{
		{0, 0}, {1.5e9, 0}, {2e9, 1}, {20e9, 4}, {1.36e9 * 200, 8}, {2.7e12, 11}, {32e12, 14}, {33e12, 15}, {1e18, 15},
	} {
		if got := SizeClass(c.bytes); got != c.want {
			t.Errorf("SizeClass(%g) = %d, want %d", c.bytes, got, c.want)
		}
	}
}

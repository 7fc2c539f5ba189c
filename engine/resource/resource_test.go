package resource

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

const (
	ms = engine.Millisecond
	s  = engine.Second
)

func TestConstructorErrors(t *testing.T) {
	sim := engine.New(nil)
	cases := []struct {
		name string
		err  error
		want string // part of the message naming the parameter and range
	}{
		{"queue 0 servers", second(NewQueue(sim, 0)), "servers is 0: it must be >= 1"},
		{"queue nil sim", second(NewQueue(nil, 1)), "needs a simulator"},
		{"ps zero capacity", second(NewPS(sim, 0, 1)), "PS capacity is 0: it must be > 0"},
		{"ps NaN capacity", second(NewPS(sim, math.NaN(), 1)), "PS capacity is NaN: it must be a finite number"},
		{"ps inf capacity", second(NewPS(sim, math.Inf(1), 1)), "finite"},
		{"ps NaN cap", second(NewPS(sim, 1, math.NaN())), "perJobCap is NaN"},
		{"bandwidth negative", second(NewBandwidth(sim, -5)), "bandwidth capacity (bytes per second) is -5: it must be > 0"},
		{"bandwidth NaN", second(NewBandwidth(sim, math.NaN())), "finite number"},
		{"pool zero", second(NewPool(sim, 0)), "pool capacity is 0: it must be > 0"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	if _, err := NewPS(sim, 1, 0); err != nil {
		t.Errorf("NewPS(1, 0) (uncapped): %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// log records "name@time" strings in callback order.
type log struct {
	sim *engine.Simulator
	ev  []string
}

func (l *log) mark(name string) func() {
	return func() { l.ev = append(l.ev, name+"@"+l.sim.Now().String()) }
}

func TestQueueFIFO(t *testing.T) {
	cases := []struct {
		name    string
		servers int
		want    []string
	}{
		// One server, A(3ms) B(1ms) C(2ms) submitted at 0: served in
		// order, done at 3, 3+1 = 4 and 4+2 = 6ms. B starts when A ends,
		// after A's done (documented order: done, then the next start).
		{"one server", 1, []string{"startA@0s", "A@3ms", "startB@3ms", "B@4ms", "startC@4ms", "C@6ms"}},
		// Two servers: A on one [0,3], B on the other [0,1], then C on
		// B's server [1,3]. A and C both end at 3ms; A's completion was
		// scheduled first, so it runs first.
		{"two servers", 2, []string{"startA@0s", "startB@0s", "B@1ms", "startC@1ms", "A@3ms", "C@3ms"}},
	}
	for _, c := range cases {
		sim := engine.New(nil)
		l := &log{sim: sim}
		q, err := NewQueue(sim, c.servers)
		if err != nil {
			t.Fatal(err)
		}
		q.SubmitFunc(3*ms, l.mark("startA"), l.mark("A"))
		q.SubmitFunc(1*ms, l.mark("startB"), l.mark("B"))
		q.SubmitFunc(2*ms, l.mark("startC"), l.mark("C"))
		sim.Run()
		if !slices.Equal(l.ev, c.want) {
			t.Errorf("%s: events %v, want %v", c.name, l.ev, c.want)
		}
		if q.Completed() != 3 || q.InService() != 0 || q.Waiting() != 0 {
			t.Errorf("%s: completed %d in service %d waiting %d, want 3 0 0", c.name, q.Completed(), q.InService(), q.Waiting())
		}
	}
}

func TestQueueStats(t *testing.T) {
	// One server, A(3ms) B(1ms) C(2ms) at 0. Waits 0, 3, 4ms (mean 7/3);
	// responses 3, 4, 6ms. In system: 3 on [0,3), 2 on [3,4), 1 on
	// [4,6): L = (9+2+2)/6 = 13/6. Waiting: 2 on [0,3), 1 on [3,4):
	// Lq = 7/6. Busy all of [0,6]: utilisation 1.
	sim := engine.New(nil)
	q, _ := NewQueue(sim, 1)
	q.Submit(3*ms, nil)
	q.Submit(1*ms, nil)
	q.Submit(2*ms, nil)
	sim.Run()
	now := sim.Now()
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean wait", q.Waits().Mean(), 7.0 / 3 * 1e-3},
		{"max wait", q.Waits().Max(), 4e-3},
		{"mean response", q.Responses().Mean(), 13.0 / 3 * 1e-3},
		{"L", q.InSystem().Mean(now), 13.0 / 6},
		{"Lq", q.QueueLength().Mean(now), 7.0 / 6},
		{"utilisation", q.Utilisation(), 1},
		{"max queue", q.QueueLength().Max(), 2},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	q.ResetStats()
	if q.Waits().Count() != 0 || !math.IsNaN(q.Utilisation()) {
		t.Errorf("after ResetStats: %d waits, utilisation %v; want 0 and NaN", q.Waits().Count(), q.Utilisation())
	}
}

// Work submitted from a done callback must queue behind jobs already
// waiting, not take the server that done's job just freed.
func TestQueueDoneCannotOvertake(t *testing.T) {
	sim := engine.New(nil)
	l := &log{sim: sim}
	q, _ := NewQueue(sim, 1)
	q.Submit(1*ms, func() {
		l.mark("A")()
		q.Submit(1*ms, l.mark("D"))
	})
	q.Submit(1*ms, l.mark("B"))
	sim.Run()
	want := []string{"A@1ms", "B@2ms", "D@3ms"}
	if !slices.Equal(l.ev, want) {
		t.Errorf("events %v, want %v", l.ev, want)
	}
}

func TestQueueNegativeServicePanics(t *testing.T) {
	q, _ := NewQueue(engine.New(nil), 1)
	defer func() {
		if recover() == nil {
			t.Error("Submit(-1ns) did not panic")
		}
	}()
	q.Submit(-1, nil)
}

// Hand-derived processor-sharing timelines, including capacity changes in
// the middle of service.
func TestPSExact(t *testing.T) {
	type job struct {
		at   engine.Time
		work float64
		name string
	}
	type capChange struct {
		at engine.Time
		c  float64
	}
	cases := []struct {
		name           string
		capacity, cap_ float64
		jobs           []job
		changes        []capChange
		want           []string
	}{
		{
			// Two cores, single-threaded jobs (cap 1). J1 (3 core-s) and
			// J2 (1) at 0 run at 1 each: J2 done at 1s, J1 has 2 left.
			// At 1.5s J1 has 1.5 left; capacity drops to 0.5: J1 runs at
			// 0.5. J3 (0.25) arrives at 2s, when J1 has 1.5-0.25 = 1.25
			// left; both run at 0.25: J3 done at 2+0.25/0.25 = 3s, J1 then
			// has 1.0 left at 0.5: done at 5s.
			name: "capacity drop mid-service", capacity: 2, cap_: 1,
			jobs:    []job{{0, 3, "J1"}, {0, 1, "J2"}, {2 * s, 0.25, "J3"}},
			changes: []capChange{{1500 * ms, 0.5}},
			want:    []string{"J2@1s", "J3@3s", "J1@5s"},
		},
		{
			// Capacity 4, cap 1: two jobs of 1 core-s run at 1 each (not
			// 2), both done at 1s, in submission order.
			name: "per-job cap", capacity: 4, cap_: 1,
			jobs: []job{{0, 1, "A"}, {0, 1, "B"}},
			want: []string{"A@1s", "B@1s"},
		},
		{
			// Uncapped, capacity 1: A (2) alone for 1s (1 left), then B
			// (0.5) joins at 1s: both at 0.5; B done at 2s (A has 0.5
			// left), A alone at 1: done at 2.5s.
			name: "uncapped sharing", capacity: 1, cap_: 0,
			jobs: []job{{0, 2, "A"}, {1 * s, 0.5, "B"}},
			want: []string{"B@2s", "A@2.5s"},
		},
		{
			// Capacity 0 pauses: A (1) runs at 1 until 0.5s, paused until
			// 2s. A zero-work job Z submitted at 1s, during the pause,
			// completes when service resumes at 2s (a paused server
			// completes nothing). Then A alone has 0.5 left at rate 2:
			// done at 2.25s.
			name: "pause and resume", capacity: 1, cap_: 0,
			jobs:    []job{{0, 1, "A"}, {1 * s, 0, "Z"}},
			changes: []capChange{{500 * ms, 0}, {2 * s, 2}},
			want:    []string{"Z@2s", "A@2.25s"},
		},
		{
			// Long busy period: the per-job service clock passes the
			// rebase threshold (2^20) and is shifted back at B's
			// completion without moving A's finish. A (2e6) alone until
			// 1.5e6s (0.5e6 left); B (1) joins, both at 0.5: B done at
			// 1.5e6+2 s, A has 0.5e6-1 left at rate 1: done at 2000001s.
			name: "rebase of the service clock", capacity: 1, cap_: 0,
			jobs: []job{{0, 2e6, "A"}, {1500000 * s, 1, "B"}},
			want: []string{"B@1500002s", "A@2000001s"},
		},
	}
	for _, c := range cases {
		sim := engine.New(nil)
		l := &log{sim: sim}
		p, err := NewPS(sim, c.capacity, c.cap_)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range c.jobs {
			sim.MustAt(j.at, func() { p.Submit(j.work, l.mark(j.name)) })
		}
		for _, ch := range c.changes {
			sim.MustAt(ch.at, func() { p.SetCapacity(ch.c) })
		}
		sim.Run()
		if !slices.Equal(l.ev, c.want) {
			t.Errorf("%s: completions %v, want %v", c.name, l.ev, c.want)
		}
		if p.Active() != 0 {
			t.Errorf("%s: %d jobs left active", c.name, p.Active())
		}
	}
}

func TestPSUsedCoreSeconds(t *testing.T) {
	// Capacity 2, cap 1; jobs of 1 and 3 core-seconds at 0. Both at rate 1
	// until 1s, then one at 1 until 3s: used = 2 on [0,1), 1 on [1,3):
	// 4 core-seconds, the total work. L = (2*1 + 1*2)/3 = 4/3.
	sim := engine.New(nil)
	p, _ := NewPS(sim, 2, 1)
	p.Submit(1, nil)
	p.Submit(3, nil)
	sim.Run()
	if got := p.Used().Integral(sim.Now()); math.Abs(got-4) > 1e-9 {
		t.Errorf("busy core-seconds = %v, want 4", got)
	}
	if got := p.ActiveJobs().Mean(sim.Now()); math.Abs(got-4.0/3) > 1e-9 {
		t.Errorf("mean jobs = %v, want 4/3", got)
	}
	if sim.Now() != 3*s {
		t.Errorf("last completion at %v, want 3s", sim.Now())
	}
}

// Max-min fair sharing on one link, derived by progressive filling.
func TestBandwidthMaxMinExact(t *testing.T) {
	// Capacity 30 B/s. A capped at 4 B/s with 40 B, B with 26 B, C with
	// 52 B, all at 0. Fair share 30/3 = 10 > 4, so A gets 4 and B and C
	// split 26: rates 4, 13, 13.
	// B finishes at 26/13 = 2s. Then A has 40-8 = 32 B, C 52-26 = 26 B;
	// C's rate rises to 30-4 = 26 at that instant: C done at 2+1 = 3s.
	// A then has 32-4 = 28 B, alone but capped at 4: done at 3+7 = 10s.
	sim := engine.New(nil)
	l := &log{sim: sim}
	b, _ := NewBandwidth(sim, 30)
	a := b.Start(40, 4, l.mark("A"))
	bb := b.Start(26, 0, l.mark("B"))
	c := b.Start(52, -1, l.mark("C"))
	type want struct {
		at      engine.Time
		a, b, c float64
	}
	for _, w := range []want{
		{0, 4, 13, 13},
		{1 * s, 4, 13, 13},
		{2 * s, 4, 0, 26}, // just after B's completion (B's event ran first)
		{2500 * ms, 4, 0, 26},
		{3 * s, 4, 0, 0},
		{9 * s, 4, 0, 0},
	} {
		sim.RunUntil(w.at)
		if b.Rate(a) != w.a || b.Rate(bb) != w.b || b.Rate(c) != w.c {
			t.Errorf("at %v: rates %v %v %v, want %v %v %v", w.at, b.Rate(a), b.Rate(bb), b.Rate(c), w.a, w.b, w.c)
		}
	}
	if got := b.Remaining(a); math.Abs(got-4) > 1e-9 {
		t.Errorf("A remaining at 9s = %v, want 28-6*4 = 4", got)
	}
	sim.Run()
	if wantEv := []string{"B@2s", "C@3s", "A@10s"}; !slices.Equal(l.ev, wantEv) {
		t.Errorf("completions %v, want %v", l.ev, wantEv)
	}
	// Bytes carried = 40+26+52 = 118 over 10s.
	if got := b.Throughput().Integral(sim.Now()); math.Abs(got-118) > 1e-9 {
		t.Errorf("bytes carried = %v, want 118", got)
	}
}

func TestBandwidthCapsAndCapacity(t *testing.T) {
	cases := []struct {
		name     string
		capacity float64
		caps     []float64
		want     []float64
	}{
		// All caps below the fair share: everyone gets its cap.
		{"all capped", 100, []float64{10, 20, 30}, []float64{10, 20, 30}},
		// Share 12/3 = 4 > 2: capped at 2; 10 left over two: 5 each; the
		// second cap 6 > 5, so both get 5.
		{"mixed", 12, []float64{6, 2, 0}, []float64{5, 2, 5}},
		// Progressive filling twice: share 9/3 = 3 > 1 -> 1; 8/2 = 4 > 3
		// -> 3; the last gets 5.
		{"two levels", 9, []float64{0, 3, 1}, []float64{5, 3, 1}},
		{"equal split", 9, []float64{0, 0, 0}, []float64{3, 3, 3}},
		// The third flow's cap falls between the two before it, so it is
		// inserted mid-list: 8/3 > 1 -> 1; 7/2 = 3.5 > 3 -> 3; 4 left for
		// the cap-5 flow. Appended instead (caps 1, 5, 3 in that order) the
		// filling would give 3.5 to both of the others.
		{"mid insert", 8, []float64{5, 1, 3}, []float64{4, 1, 3}},
	}
	for _, c := range cases {
		sim := engine.New(nil)
		b, _ := NewBandwidth(sim, c.capacity)
		var ids []FlowID
		for _, cp := range c.caps {
			ids = append(ids, b.Start(1e6, cp, nil))
		}
		for i, id := range ids {
			if got := b.Rate(id); math.Abs(got-c.want[i]) > 1e-12 {
				t.Errorf("%s: flow %d rate %v, want %v", c.name, i, got, c.want[i])
			}
		}
	}

	// Capacity change mid-flow: 10 B at 10 B/s; at 0.5s the link drops to
	// 5 B/s with 5 B left: done at 0.5 + 1 = 1.5s. A zero-byte flow started
	// at 0.25s finishes at 0.25s without disturbing the other.
	sim := engine.New(nil)
	l := &log{sim: sim}
	b, _ := NewBandwidth(sim, 10)
	b.Start(10, 0, l.mark("F"))
	sim.MustAt(250*ms, func() { b.Start(0, 0, l.mark("Z")) })
	sim.MustAt(500*ms, func() { b.SetCapacity(5) })
	sim.Run()
	if want := []string{"Z@250ms", "F@1.5s"}; !slices.Equal(l.ev, want) {
		t.Errorf("completions %v, want %v", l.ev, want)
	}
}

func TestPoolFIFONoOvertaking(t *testing.T) {
	// Capacity 10. A takes 6 (granted from an event at 0). B asks 8: waits.
	// C asks 1: 4 units are free, but C must not overtake B; TryAcquire(1)
	// must fail for the same reason. At 1s A releases 6: B (8) then C (1)
	// fit and are granted in that order; 9 in use.
	sim := engine.New(nil)
	l := &log{sim: sim}
	p, _ := NewPool(sim, 10)
	for _, r := range []struct {
		n    int64
		name string
	}{{6, "A"}, {8, "B"}, {1, "C"}} {
		if err := p.Acquire(r.n, l.mark(r.name)); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.ev) != 0 {
		t.Errorf("granted ran inside Acquire: %v", l.ev)
	}
	if p.InUse() != 6 || p.Waiting() != 2 || p.TryAcquire(1) {
		t.Errorf("in use %d waiting %d (TryAcquire must fail), want 6 2", p.InUse(), p.Waiting())
	}
	sim.MustAt(1*s, func() { p.Release(6) })
	sim.Run()
	if want := []string{"A@0s", "B@1s", "C@1s"}; !slices.Equal(l.ev, want) {
		t.Errorf("grants %v, want %v", l.ev, want)
	}
	if p.InUse() != 9 || p.Waiting() != 0 || p.Occupancy().Max() != 9 {
		t.Errorf("in use %d waiting %d max %v, want 9 0 9", p.InUse(), p.Waiting(), p.Occupancy().Max())
	}
	// Mean wait: A 0, B 1s, C 1s.
	if got := p.Waits().Mean(); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("mean wait %v, want 2/3 s", got)
	}
	if !p.TryAcquire(1) || p.TryAcquire(1) {
		t.Errorf("TryAcquire: the 10th unit must be granted and an 11th refused")
	}

	for _, n := range []int64{0, -1, 11} {
		if err := p.Acquire(n, nil); err == nil || !strings.Contains(err.Error(), "between 1 and the pool capacity 10") {
			t.Errorf("Acquire(%d): error %v", n, err)
		}
		if p.TryAcquire(n) {
			t.Errorf("TryAcquire(%d) succeeded", n)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("releasing 11 of 10 in use did not panic")
		}
	}()
	p.Release(11)
}

// A random workload must never exceed the capacity and must grant requests
// in exactly the order they were made (TryAcquire only succeeds with no one
// waiting, so it cannot break the order).
func TestPoolRandomWorkload(t *testing.T) {
	const capacity = 1000
	sim := engine.New(nil)
	p, _ := NewPool(sim, capacity)
	rng := engine.NewStream(7, "pool")
	var requested, grantedOrder []int
	check := func(where string) {
		if p.InUse() > capacity || p.InUse() < 0 {
			t.Fatalf("%s at %v: %d in use of %d", where, sim.Now(), p.InUse(), capacity)
		}
	}
	var arrive func()
	next := 0
	tries := 0
	arrive = func() {
		check("arrival")
		n := int64(1 + rng.IntN(400))
		hold := engine.Microseconds(rng.Exp(50))
		if rng.IntN(4) == 0 {
			tries++
			if p.TryAcquire(n) {
				sim.MustAfter(hold, func() { check("release"); p.Release(n); check("after release") })
			}
		} else {
			id := next
			next++
			requested = append(requested, id)
			if err := p.Acquire(n, func() {
				check("grant")
				grantedOrder = append(grantedOrder, id)
				sim.MustAfter(hold, func() { check("release"); p.Release(n); check("after release") })
			}); err != nil {
				t.Fatal(err)
			}
		}
		if next < 20000 {
			sim.MustAfter(engine.Microseconds(rng.Exp(12)), arrive)
		}
	}
	sim.MustAt(0, arrive)
	sim.Run()
	if !slices.Equal(requested, grantedOrder) {
		t.Fatalf("grants out of FIFO order (or missing): %d requested, %d granted", len(requested), len(grantedOrder))
	}
	if p.InUse() != 0 || p.Occupancy().Max() > capacity {
		t.Errorf("end: %d in use (want 0), high-water mark %v of %d", p.InUse(), p.Occupancy().Max(), capacity)
	}
	// The workload is heavy enough to make requests wait (otherwise the
	// FIFO check proves nothing).
	if p.QueueLength().Max() < 5 {
		t.Errorf("longest queue only %v: the workload does not exercise waiting", p.QueueLength().Max())
	}
	t.Logf("pool: %d requests, %d TryAcquire, high-water %v/%d, longest queue %v, mean wait %.1fus",
		len(requested), tries, p.Occupancy().Max(), capacity, p.QueueLength().Max(), p.Waits().Mean()*1e6)
}

func TestKeepSamplesOff(t *testing.T) {
	// Same three jobs as TestQueueStats, moments only: the mean wait is
	// still (0+3+4)/3 ms, but no samples are stored.
	sim := engine.New(nil)
	q, _ := NewQueue(sim, 1)
	q.KeepSamples(false)
	q.Submit(3*ms, nil)
	q.Submit(1*ms, nil)
	q.Submit(2*ms, nil)
	sim.Run()
	if got := q.Waits().Mean(); math.Abs(got-7.0/3*1e-3) > 1e-15 || q.Waits().Samples() != nil || q.Responses().Count() != 3 {
		t.Errorf("mean wait %v (want 7/3 ms), samples %v (want nil), %d responses (want 3)", got, q.Waits().Samples(), q.Responses().Count())
	}
}

// StopStats changes nothing the simulation does, only what it records: the
// same mixed workload on a queue, a link, a PS server and a pool gives the
// same completions with statistics on and off, and once off the tallies
// are empty and the time-weighted statistics NaN (not a stale level that
// could pass for a measurement).
func TestStopStats(t *testing.T) {
	run := func(stop bool) ([]string, *Queue, *Bandwidth, *PS, *Pool) {
		sim := engine.New(nil)
		l := &log{sim: sim}
		q, _ := NewQueue(sim, 2)
		b, _ := NewBandwidth(sim, 100)
		p, _ := NewPS(sim, 2, 1)
		pl, _ := NewPool(sim, 10)
		if stop {
			q.StopStats()
			b.StopStats()
			p.StopStats()
			pl.StopStats()
		}
		for i, name := range []string{"a", "b", "c", "d"} {
			at := engine.Time(i) * ms
			sim.MustAt(at, func() {
				q.Submit(engine.Time(3-i)*ms, l.mark("q"+name))
				b.Start(float64(10*(i+1)), float64(20*i), l.mark("b"+name))
				p.Submit(0.002*float64(i+1), l.mark("p"+name))
				if err := pl.Acquire(int64(4+i), func() {
					l.mark("pool" + name)()
					sim.MustAfter(2*ms, func() { pl.Release(int64(4 + i)) })
				}); err != nil {
					t.Fatal(err)
				}
			})
		}
		sim.Run()
		return l.ev, q, b, p, pl
	}
	on, q, b, p, pl := run(false)
	off, qo, bo, po, plo := run(true)
	if !slices.Equal(on, off) {
		t.Fatalf("completions differ with statistics off:\n on: %v\noff: %v", on, off)
	}
	if len(on) != 16 {
		t.Fatalf("%d completions, want 16: %v", len(on), on)
	}
	// With statistics on, each resource measured something.
	now := engine.Time(1 << 40)
	if q.Responses().Count() != 4 || b.Durations().Count() != 4 || p.Responses().Count() != 4 || pl.Waits().Count() != 4 ||
		!(q.Utilisation() > 0) || !(b.Throughput().Integral(now) > 0) {
		t.Fatalf("statistics on: counts %d %d %d %d, utilisation %v, bytes %v",
			q.Responses().Count(), b.Durations().Count(), p.Responses().Count(), pl.Waits().Count(), q.Utilisation(), b.Throughput().Integral(now))
	}
	for name, n := range map[string]int{"queue waits": qo.Waits().Count(), "queue responses": qo.Responses().Count(),
		"link durations": bo.Durations().Count(), "ps responses": po.Responses().Count(), "pool waits": plo.Waits().Count()} {
		if n != 0 {
			t.Errorf("statistics off: %s holds %d samples, want 0", name, n)
		}
	}
	for name, v := range map[string]float64{"queue utilisation": qo.Utilisation(), "queue length": qo.QueueLength().Mean(now),
		"link throughput": bo.Throughput().Mean(now), "ps active": po.ActiveJobs().Mean(now), "pool occupancy": plo.Occupancy().Mean(now)} {
		if !math.IsNaN(v) {
			t.Errorf("statistics off: %s = %v, want NaN", name, v)
		}
	}
}

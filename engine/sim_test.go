package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// recorder collects "label@time" strings, the trace every test compares.
type recorder struct {
	s   *Simulator
	log []string
}

func (r *recorder) ev(label string) func() {
	return func() { r.log = append(r.log, fmt.Sprintf("%s@%v", label, r.s.Now())) }
}

func newRec(k QueueKind) *recorder { return &recorder{s: New(NewQueue(k))} }

func wantLog(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("trace = %v\n want %v", got, want)
	}
}

// forKinds runs a test body once per queue implementation.
func forKinds(t *testing.T, f func(t *testing.T, k QueueKind)) {
	for _, k := range QueueKinds {
		t.Run(string(k), func(t *testing.T) { f(t, k) })
	}
}

func TestTimeOrderAndNow(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		r.s.MustAt(30, r.ev("c"))
		r.s.MustAt(10, r.ev("a"))
		r.s.MustAfter(20, r.ev("b"))
		r.s.Run()
		wantLog(t, r.log, "a@10ns", "b@20ns", "c@30ns")
		if r.s.Now() != 30 || r.s.Fired() != 3 || r.s.Pending() != 0 {
			t.Errorf("after Run: Now=%v Fired=%d Pending=%d; want 30ns 3 0", r.s.Now(), r.s.Fired(), r.s.Pending())
		}
	})
}

// Equal-time events run in scheduling order, whether scheduled with At or
// After, and an event scheduled at Now from a callback runs after the
// equal-time events already pending (it was scheduled later).
func TestFIFOTies(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		r.s.MustAt(5, r.ev("a"))
		r.s.MustAfter(5, r.ev("b"))
		r.s.MustAt(5, func() {
			r.log = append(r.log, "c@5ns")
			r.s.MustAfter(0, r.ev("f"))
		})
		r.s.MustAt(5, r.ev("d"))
		r.s.MustAt(5, r.ev("e"))
		r.s.Run()
		wantLog(t, r.log, "a@5ns", "b@5ns", "c@5ns", "d@5ns", "e@5ns", "f@5ns")
	})
}

func TestCancel(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		if r.s.Cancel(Handle{}) {
			t.Error("Cancel(zero Handle) = true, want false")
		}
		a := r.s.MustAt(1, r.ev("a"))
		b := r.s.MustAt(2, r.ev("b"))
		c := r.s.MustAt(3, r.ev("c"))
		if !a.Valid() || !b.Valid() || (Handle{}).Valid() {
			t.Error("Valid: scheduled handles must be valid and the zero Handle not")
		}
		if !r.s.Cancel(b) {
			t.Error("Cancel before run = false, want true")
		}
		if r.s.Cancel(b) {
			t.Error("second Cancel = true, want false")
		}
		if r.s.Pending() != 2 {
			t.Errorf("Pending = %d after one cancel of three, want 2", r.s.Pending())
		}
		r.s.Run()
		wantLog(t, r.log, "a@1ns", "c@3ns")
		if r.s.Cancel(a) || r.s.Cancel(c) {
			t.Error("Cancel after run = true, want false")
		}
		if r.s.Pending() != 0 || r.s.Fired() != 2 {
			t.Errorf("Pending=%d Fired=%d, want 0 and 2", r.s.Pending(), r.s.Fired())
		}
	})
}

// A callback may cancel a later event, an equal-time event scheduled after
// it, and (without effect) itself.
func TestCancelFromCallback(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		var self, later, tie Handle
		var selfCancel bool
		self = r.s.MustAt(1, func() {
			r.log = append(r.log, "a@1ns")
			selfCancel = r.s.Cancel(self)
			r.s.Cancel(later)
			r.s.Cancel(tie)
		})
		tie = r.s.MustAt(1, r.ev("tie"))
		later = r.s.MustAt(2, r.ev("later"))
		r.s.MustAt(3, r.ev("z"))
		r.s.Run()
		wantLog(t, r.log, "a@1ns", "z@3ns")
		if selfCancel {
			t.Error("a running event cancelled itself: Cancel = true, want false")
		}
	})
}

// A handle whose event ran cancels nothing, even when a later event has
// the same time; nor does a handle from another simulator.
func TestStaleHandle(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		h1 := r.s.MustAt(1, r.ev("a"))
		r.s.Step()
		r.s.MustAt(1, r.ev("b")) // same time as h1's event, later seq
		r.s.MustAt(2, r.ev("c"))
		if r.s.Cancel(h1) {
			t.Error("Cancel(handle of an event that ran) = true, want false")
		}
		other := New(NewQueue(k))
		for range 5 {
			other.MustAt(3, func() {})
		}
		if h := other.MustAt(3, func() {}); r.s.Cancel(h) {
			t.Error("Cancel(another simulator's handle) = true, want false")
		}
		if r.s.Pending() != 2 {
			t.Errorf("Pending = %d, want 2", r.s.Pending())
		}
		r.s.Run()
		wantLog(t, r.log, "a@1ns", "b@1ns", "c@2ns")
	})
}

func TestStopThenRunContinues(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		r.s.MustAt(1, r.ev("a"))
		r.s.MustAt(2, func() { r.log = append(r.log, "b@2ns"); r.s.Stop() })
		r.s.MustAt(2, r.ev("b2")) // same time, after the Stop: must wait
		r.s.MustAt(3, r.ev("c"))
		r.s.Run()
		wantLog(t, r.log, "a@1ns", "b@2ns")
		if r.s.Now() != 2 || r.s.Pending() != 2 {
			t.Errorf("after Stop: Now=%v Pending=%d, want 2ns and 2", r.s.Now(), r.s.Pending())
		}
		r.s.Run()
		wantLog(t, r.log, "a@1ns", "b@2ns", "b2@2ns", "c@3ns")
	})
}

// Stop outside a run does not carry over: Run starts afresh.
func TestStopBeforeRunIsIgnored(t *testing.T) {
	r := newRec(QueueBinaryHeap)
	r.s.MustAt(1, r.ev("a"))
	r.s.Stop()
	r.s.Run()
	wantLog(t, r.log, "a@1ns")
}

func TestRunUntil(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		r := newRec(k)
		r.s.MustAt(10, r.ev("a"))
		r.s.MustAt(20, r.ev("b"))
		r.s.MustAt(30, r.ev("c"))
		r.s.RunUntil(20) // inclusive
		wantLog(t, r.log, "a@10ns", "b@20ns")
		r.s.RunUntil(25)
		if r.s.Now() != 25 || r.s.Pending() != 1 {
			t.Errorf("RunUntil(25): Now=%v Pending=%d, want 25ns 1", r.s.Now(), r.s.Pending())
		}
		r.s.RunUntil(5) // earlier than Now: no-op, time never goes back
		if r.s.Now() != 25 {
			t.Errorf("RunUntil(5) moved Now to %v, want 25ns", r.s.Now())
		}
		r.s.MustAfter(10, r.ev("d")) // 25+10 = 35
		r.s.Run()
		wantLog(t, r.log, "a@10ns", "b@20ns", "c@30ns", "d@35ns")
		// Run to the end does not jump to MaxTime.
		if r.s.Now() != 35 {
			t.Errorf("after Run: Now=%v, want 35ns", r.s.Now())
		}
	})
}

// A Stop inside RunUntil leaves Now at the stopping event, not at t.
func TestRunUntilStopped(t *testing.T) {
	r := newRec(QueueCalendar)
	r.s.MustAt(10, func() { r.s.Stop() })
	r.s.MustAt(20, r.ev("b"))
	r.s.RunUntil(100)
	if r.s.Now() != 10 || r.s.Pending() != 1 {
		t.Errorf("Now=%v Pending=%d, want 10ns 1", r.s.Now(), r.s.Pending())
	}
}

func TestStep(t *testing.T) {
	r := newRec(QueueQuadHeap)
	if r.s.Step() {
		t.Error("Step on an empty simulator = true")
	}
	r.s.MustAt(7, r.ev("a"))
	r.s.MustAt(9, r.ev("b"))
	if !r.s.Step() || r.s.Now() != 7 || len(r.log) != 1 {
		t.Errorf("first Step: Now=%v log=%v", r.s.Now(), r.log)
	}
	if !r.s.Step() || r.s.Now() != 9 || r.s.Step() {
		t.Errorf("second/third Step: Now=%v log=%v", r.s.Now(), r.log)
	}
}

func TestScheduleErrors(t *testing.T) {
	s := New(nil)
	s.MustAt(Milliseconds(1.5), func() {})
	s.Run() // Now = 1.5ms
	cases := []struct {
		name string
		call func() (Handle, error)
		want []string // substrings of the message
	}{
		{"At in the past", func() (Handle, error) { return s.At(Microseconds(250), func() {}) },
			[]string{"cannot schedule at 250us", "before now (1.5ms)"}},
		{"negative delay", func() (Handle, error) { return s.After(-Microseconds(1), func() {}) },
			[]string{"negative delay -1us at 1.5ms", "must be >= 0"}},
		{"nil callback At", func() (Handle, error) { return s.At(Second, nil) },
			[]string{"nil callback"}},
		{"nil callback After", func() (Handle, error) { return s.After(0, nil) },
			[]string{"nil callback"}},
	}
	for _, c := range cases {
		h, err := c.call()
		var se *ScheduleError
		if !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want *ScheduleError", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", c.name, err, w)
			}
		}
		if h.Valid() {
			t.Errorf("%s: returned a valid handle", c.name)
		}
	}
	if s.Pending() != 0 {
		t.Errorf("refused calls scheduled something: Pending = %d", s.Pending())
	}
	// At exactly Now and a zero delay are allowed.
	if _, err := s.At(s.Now(), func() {}); err != nil {
		t.Errorf("At(Now) = %v, want nil", err)
	}
	if _, err := s.After(0, func() {}); err != nil {
		t.Errorf("After(0) = %v, want nil", err)
	}
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", name)
		}
	}()
	f()
}

func TestMisusePanics(t *testing.T) {
	s := New(nil)
	s.MustAt(10, func() {})
	s.Run()
	mustPanic(t, "MustAfter(-1)", func() { s.MustAfter(-1, func() {}) })
	mustPanic(t, "MustAt(past)", func() { s.MustAt(5, func() {}) })
	s.MustAfter(1, func() { s.Run() })
	mustPanic(t, "Run inside a callback", s.Run)
	s.MustAfter(1, func() { s.Step() })
	mustPanic(t, "Step inside a callback", func() { s.Step() })
	// The simulator is usable after a recovered panic.
	ran := false
	s.MustAfter(1, func() { ran = true })
	s.Run()
	if !ran {
		t.Error("events did not run after a recovered panic")
	}
}

// Cancelling most of many far-future timeouts compacts the queue: the dead
// entries leave it, and the live ones still run in (time, seq) order.
// The "pop-push" case hides the in-place filter to test the fallback path
// for queues that lack it.
func TestCancelCompaction(t *testing.T) {
	kinds := append(slices.Clone(QueueKinds), "pop-push")
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) { testCancelCompaction(t, k) })
	}
}

func testCancelCompaction(t *testing.T, k QueueKind) {
	r := newRec(k)
	if k == "pop-push" {
		r.s = New(plainQueue{NewQueue(QueueCalendar)})
	}
	var hs []Handle
	for i := range 5000 {
		hs = append(hs, r.s.MustAt(Time(1_000_000-i%7), r.ev(fmt.Sprint(i))))
	}
	var want []string
	for i, h := range hs {
		if i%5 != 0 {
			r.s.Cancel(h)
		}
	}
	// 4000 cancelled against 1000 live: compaction ran when dead first
	// exceeded max(1024, live), so fewer than 5000 entries remain.
	if n := r.s.queue.Len(); n >= 5000 {
		t.Errorf("queue holds %d entries after 4000 cancels, want compaction", n)
	}
	if r.s.Pending() != 1000 {
		t.Errorf("Pending = %d, want 1000", r.s.Pending())
	}
	// Cancelling again, whether the entry was compacted away or is still
	// in the queue, reports false and changes nothing.
	for i, h := range hs {
		if i%5 != 0 && r.s.Cancel(h) {
			t.Fatalf("second Cancel of event %d = true, want false", i)
		}
	}
	if r.s.Pending() != 1000 {
		t.Errorf("Pending = %d after cancelling again, want 1000", r.s.Pending())
	}
	for off := 6; off >= 0; off-- { // expected order: time, then i
		for i := range 5000 {
			if i%5 == 0 && i%7 == off {
				want = append(want, fmt.Sprintf("%d@%v", i, Time(1_000_000-off)))
			}
		}
	}
	r.s.Run()
	wantLog(t, r.log, want...)
	if r.s.Pending() != 0 || r.s.queue.Len() != 0 || r.s.dead != 0 {
		t.Errorf("after Run: Pending=%d queue=%d dead=%d, want all 0", r.s.Pending(), r.s.queue.Len(), r.s.dead)
	}
}

// plainQueue hides the in-place filter of the queue it wraps.
type plainQueue struct{ EventQueue }

func TestNewNeedsEmptyQueue(t *testing.T) {
	q := NewQueue(QueueCalendar)
	q.Push(Event{At: 1, Seq: 1})
	mustPanic(t, "New(non-empty queue)", func() { New(q) })
	if s := New(nil); s.Now() != 0 || s.Pending() != 0 {
		t.Errorf("New(nil): Now=%v Pending=%d, want 0 and 0", s.Now(), s.Pending())
	}
}

// The engine's promise to hot models: once warmed up, scheduling, firing
// and cancelling (including the periodic compaction of cancelled entries)
// allocate nothing. simHold is the benchmark's workload.
func TestSimulatorSteadyStateAllocs(t *testing.T) {
	forKinds(t, func(t *testing.T, k QueueKind) {
		h := newSimHold(k, 1000, true)
		h.run(20000)
		if a := testing.AllocsPerRun(50, func() { h.run(200) }); a != 0 {
			t.Errorf("%v allocations per 200 fires with cancellation, want 0", a)
		}
	})
}

// An event past Horizon is not scheduled: the run stops where it was
// asked for, Err names it, Must* do not panic (user input, not a model
// bug), and a later Run does not resume past it.
func TestHorizonStopsTheRun(t *testing.T) {
	for _, c := range []struct {
		name     string
		schedule func(s *Simulator)
	}{
		{"After past the horizon", func(s *Simulator) { s.MustAfter(Horizon, func() { t.Error("ran past the horizon") }) }},
		{"After that would wrap", func(s *Simulator) { s.MustAfter(MaxTime, func() { t.Error("ran a wrapped event") }) }},
		{"At past the horizon", func(s *Simulator) { s.MustAt(Horizon+1, func() { t.Error("ran past the horizon") }) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(nil)
			ran := 0
			s.MustAfter(Second, func() {
				ran++
				c.schedule(s)
				s.MustAfter(Second, func() { ran++ }) // after the refusal: the run has stopped
			})
			s.Run()
			var he *HorizonError
			if err := s.Err(); !errors.As(err, &he) || he.Now != Second {
				t.Fatalf("Err() = %v, want a *HorizonError at 1s", err)
			}
			if ran != 1 || s.Now() != Second {
				t.Fatalf("ran %d events to %v, want 1 to 1s (stopped at the refusal)", ran, s.Now())
			}
			s.Run()
			if ran != 1 || s.Step() {
				t.Fatalf("a later Run or Step resumed past the refusal")
			}
			if !strings.Contains(s.Err().Error(), "100 years") {
				t.Errorf("message %q does not state the horizon", s.Err())
			}
		})
	}
	// Up to the horizon itself is allowed.
	s := New(nil)
	s.MustAt(Horizon, func() {})
	s.Run()
	if s.Err() != nil || s.Now() != Horizon {
		t.Fatalf("an event at the horizon: Err %v, Now %v", s.Err(), s.Now())
	}
}

// NextAt tells an outer loop when to run: the earliest pending event's
// time, none when nothing is pending, and at worst a cancelled event's
// time (RunUntil then runs nothing there).
func TestNextAt(t *testing.T) {
	s := New(nil)
	if _, ok := s.NextAt(); ok {
		t.Fatal("empty simulator: NextAt reports an event")
	}
	ran := 0
	h := s.MustAt(5, func() { ran++ })
	s.MustAt(9, func() { ran++ })
	if at, ok := s.NextAt(); !ok || at != 5 {
		t.Fatalf("NextAt %v %v, want 5", at, ok)
	}
	s.Cancel(h)
	if at, ok := s.NextAt(); !ok || (at != 5 && at != 9) {
		t.Fatalf("after cancelling the event at 5: NextAt %v %v, want 5 (lazily) or 9", at, ok)
	}
	s.RunUntil(5)
	if ran != 0 || s.Now() != 5 {
		t.Fatalf("RunUntil(5) ran %d events, now %v; want none run, now 5", ran, s.Now())
	}
	if at, ok := s.NextAt(); !ok || at != 9 {
		t.Fatalf("NextAt %v %v, want 9", at, ok)
	}
	s.RunUntil(9)
	if _, ok := s.NextAt(); ok || ran != 1 {
		t.Fatalf("after the last event: NextAt still reports one, or %d ran", ran)
	}
}

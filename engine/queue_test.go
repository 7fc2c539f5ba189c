package engine

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
)

// refQueue is the reference pending-event set: a slice kept sorted by
// (At, Seq), inserting at the first position whose event is not before the
// new one. It is too slow for a simulator and too simple to be wrong, which
// is what a reference is for.
type refQueue struct{ ev []Event }

func (r *refQueue) Push(e Event) {
	i := sort.Search(len(r.ev), func(i int) bool { return e.Before(r.ev[i]) })
	r.ev = slices.Insert(r.ev, i, e)
}

func (r *refQueue) Pop() (Event, bool) {
	if len(r.ev) == 0 {
		return Event{}, false
	}
	e := r.ev[0]
	r.ev = r.ev[1:]
	return e, true
}

func (r *refQueue) Peek() (Event, bool) {
	if len(r.ev) == 0 {
		return Event{}, false
	}
	return r.ev[0], true
}

func (r *refQueue) Len() int { return len(r.ev) }

// taggedFn returns a callback that records tag when run, so that a test
// can check that a queue hands each event back with its own callback.
func taggedFn(tag uint64) func() { return func() { lastTag = tag } }

var lastTag uint64

// fnTag runs e's callback and returns the tag it records (0 for none).
func fnTag(e Event) uint64 {
	lastTag = 0
	if e.Fn != nil {
		e.Fn()
	}
	return lastTag
}

// sameEvent reports whether a and b are the same event with the same
// callback (Events do not compare with ==: they hold a func).
func sameEvent(a, b Event) bool {
	return a.At == b.At && a.Seq == b.Seq && fnTag(a) == fnTag(b)
}

// timeSpread draws the offset of a new event from the time of the last pop.
// The spreads are chosen to hit each weak spot of a calendar queue: many
// equal times (one overfull bucket), a narrow spread (width estimate of 1ns),
// a wide log-uniform spread over 15 decades (sparse years, direct search), a
// mixture, and negative offsets (events earlier than the search position,
// which the interface allows even though the Simulator never does it).
type timeSpread struct {
	name string
	draw func(s *Stream) Time
}

var spreads = []timeSpread{
	{"equal", func(s *Stream) Time { return Time(s.IntN(2)) * 1000 }},
	{"narrow", func(s *Stream) Time { return Time(s.IntN(8)) }},
	{"exp-1us", func(s *Stream) Time { return Time(s.Exp(1000)) }},
	{"wide-log", func(s *Stream) Time { return Time(math.Pow(10, 15*s.Float64())) }},
	{"mixed", func(s *Stream) Time {
		switch s.IntN(4) {
		case 0:
			return 0
		case 1:
			return Time(s.IntN(10))
		case 2:
			return Time(s.Exp(1e6))
		}
		return Time(s.Exp(1e12))
	}},
	{"backwards", func(s *Stream) Time { return Time(s.IntN(2001) - 1000) }},
}

// queueWorkload pushes and pops random events on q and ref alike and fails
// at the first difference. The push probability follows phases (grow to
// about 3000 events, drain to empty, grow again) so that the calendar queue
// resizes up and down; a mid-run change of spread forces its width to be
// re-estimated.
func queueWorkload(t *testing.T, q EventQueue, spreadA, spreadB timeSpread, seed uint64, ops int) {
	t.Helper()
	ref := &refQueue{}
	s := NewStream(seed, "queue-workload")
	var seq uint64
	var now Time
	for i := range ops {
		spread := spreadA
		if i >= ops/2 {
			spread = spreadB
		}
		phase := (i / 4000) % 3
		pPush := []float64{0.7, 0.3, 0.55}[phase]
		if s.Float64() < pPush {
			seq++
			e := Event{At: now + spread.draw(s), Seq: seq, Fn: taggedFn(seq % 977)}
			q.Push(e)
			ref.Push(e)
		} else {
			if s.IntN(4) == 0 {
				pe, pok := q.Peek()
				re, rok := ref.Peek()
				if !sameEvent(pe, re) || pok != rok {
					t.Fatalf("op %d: Peek = %+v,%v; reference %+v,%v", i, pe, pok, re, rok)
				}
			}
			ge, gok := q.Pop()
			re, rok := ref.Pop()
			if !sameEvent(ge, re) || gok != rok {
				t.Fatalf("op %d (len %d): Pop = %+v,%v; reference %+v,%v", i, ref.Len(), ge, gok, re, rok)
			}
			if rok {
				now = re.At
			}
		}
		if q.Len() != ref.Len() {
			t.Fatalf("op %d: Len = %d, reference %d", i, q.Len(), ref.Len())
		}
	}
	// Drain: the rest must come out in the reference order too.
	for ref.Len() > 0 {
		ge, _ := q.Pop()
		re, _ := ref.Pop()
		if !sameEvent(ge, re) {
			t.Fatalf("drain: Pop = %+v, reference %+v", ge, re)
		}
	}
	if e, ok := q.Pop(); ok || !sameEvent(e, Event{}) {
		t.Fatalf("Pop on empty = %+v,%v; want zero,false", e, ok)
	}
	if e, ok := q.Peek(); ok || !sameEvent(e, Event{}) {
		t.Fatalf("Peek on empty = %+v,%v; want zero,false", e, ok)
	}
}

// Every implementation against the sorted-slice reference, for every pair
// of (first-half, second-half) time spreads.
func TestQueuesAgainstReference(t *testing.T) {
	ops := 20000
	if testing.Short() {
		ops = 6000
	}
	for _, k := range QueueKinds {
		for ia, a := range spreads {
			for ib, b := range spreads {
				if ia != ib && (ia+ib)%2 == 1 { // half the pairs keep the run short
					continue
				}
				t.Run(fmt.Sprintf("%s/%s-then-%s", k, a.name, b.name), func(t *testing.T) {
					queueWorkload(t, NewQueue(k), a, b, uint64(17*ia+ib), ops)
				})
			}
		}
	}
}

func TestNewQueueKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range QueueKinds {
		q := NewQueue(k)
		if q == nil {
			t.Fatalf("NewQueue(%q) = nil", k)
		}
		name := fmt.Sprintf("%T", q)
		if seen[name] {
			t.Errorf("NewQueue(%q) returns %s, already returned for another kind", k, name)
		}
		seen[name] = true
	}
	if len(QueueKinds) < 3 {
		t.Errorf("QueueKinds has %d entries, want at least 3 (two heaps and the calendar queue)", len(QueueKinds))
	}
	if NewQueue("splay") != nil {
		t.Error(`NewQueue("splay") != nil, want nil for an unknown kind`)
	}
	if got, want := fmt.Sprintf("%T", NewQueue("")), fmt.Sprintf("%T", NewQueue(QueueDefault)); got != want {
		t.Errorf(`NewQueue("") is a %s, want QueueDefault's %s`, got, want)
	}
	if got, want := fmt.Sprintf("%T", New(nil).queue), fmt.Sprintf("%T", NewQueue(QueueDefault)); got != want {
		t.Errorf(`New(nil) runs on a %s, want QueueDefault's %s`, got, want)
	}
}

// The calendar queue must reach a steady state without allocating: the
// node slab recycles through its free list.
func TestCalendarSteadyStateAllocs(t *testing.T) {
	for _, k := range QueueKinds {
		q := NewQueue(k)
		s := NewStream(1, "allocs")
		var seq uint64
		for range 10000 {
			seq++
			q.Push(Event{At: Time(s.Exp(1e9)), Seq: seq})
		}
		hold := func() {
			e, _ := q.Pop()
			seq++
			q.Push(Event{At: e.At + Time(s.Exp(1e9)), Seq: seq})
		}
		for range 50000 { // let the calendar settle its width
			hold()
		}
		if a := testing.AllocsPerRun(1000, hold); a != 0 {
			t.Errorf("%s: %v allocations per hold at 1e4 pending, want 0", k, a)
		}
	}
}

// estimateShift is Brown's rule rounded up to a power of two; cases derived
// by hand.
func TestEstimateShift(t *testing.T) {
	ev := func(ts ...Time) []Event {
		var out []Event
		for i, x := range ts {
			out = append(out, Event{At: x, Seq: uint64(i)})
		}
		return out
	}
	cases := []struct {
		name  string
		in    []Event
		shift uint
		ok    bool
	}{
		{"empty", nil, 0, false},
		{"all equal", ev(5, 5, 5), 0, false},
		// gaps 100,100,100: mean 100, width 300 -> next power of two 512 = 2^9
		{"even", ev(0, 100, 200, 300), 9, true},
		// gaps 10,10,10,1000: mean 257.5; drop 1000 > 515; mean 10, width 30 -> 32 = 2^5
		{"outlier", ev(0, 10, 20, 30, 1030), 5, true},
		// zero gaps ignored: gaps 0,4,0,4 -> mean 4, width 12 -> 16 = 2^4
		{"ties", ev(0, 0, 4, 4, 8), 4, true},
		// gap 1: width 3 -> 4 = 2^2
		{"unit", ev(0, 1), 2, true},
		// a gap beyond 2^62 clamps at 62
		{"huge", ev(-MaxTime, MaxTime), 62, true},
	}
	for _, c := range cases {
		s, ok := estimateShift(c.in)
		if s != c.shift || ok != c.ok {
			t.Errorf("%s: estimateShift = %d,%v; want %d,%v", c.name, s, ok, c.shift, c.ok)
		}
	}
}

// filter (used by the Simulator to purge cancelled events) must keep exactly
// the accepted events and leave a valid queue: checked against the
// reference, filtered the same way, with pushes and pops after the filter.
func TestQueueFilter(t *testing.T) {
	for _, k := range QueueKinds {
		for _, sp := range spreads {
			q := NewQueue(k)
			ref := &refQueue{}
			s := NewStream(5, "filter")
			var seq uint64
			push := func(n int) {
				for range n {
					seq++
					e := Event{At: 1_000_000 + sp.draw(s), Seq: seq, Fn: taggedFn(seq)}
					q.Push(e)
					ref.ev = append(ref.ev, e)
				}
				// Sort once rather than insert one by one: 5000 linear
				// inserts per case would dominate the package's test time.
				slices.SortFunc(ref.ev, func(a, b Event) int {
					if a.Before(b) {
						return -1
					}
					if b.Before(a) {
						return 1
					}
					return 0
				})
			}
			push(5000)
			keep := func(e Event) bool { return e.Seq%5 == 0 } // drop 80%: the calendar shrinks
			q.(filterer).filter(keep)
			var kept []Event
			for _, e := range ref.ev {
				if keep(e) {
					kept = append(kept, e)
				}
			}
			ref.ev = kept
			push(300)
			for ref.Len() > 0 {
				if q.Len() != ref.Len() {
					t.Fatalf("%s/%s: Len = %d, reference %d", k, sp.name, q.Len(), ref.Len())
				}
				g, _ := q.Pop()
				r, _ := ref.Pop()
				if !sameEvent(g, r) {
					t.Fatalf("%s/%s: after filter Pop = %+v, reference %+v", k, sp.name, g, r)
				}
			}
		}
	}
}

// FuzzQueues reads the input as a program of pushes and pops (byte b:
// b < 160 pushes an event at the last popped time plus b%16 scaled by
// 16^(b/16 % 10) ns, otherwise pops) and runs it on every queue against the
// reference. The scale spreads times over 10 orders of magnitude, so the
// fuzzer can reach the calendar queue's resizing and direct-search paths.
func FuzzQueues(f *testing.F) {
	f.Add([]byte{0, 1, 2, 200, 200, 3, 200})
	f.Add([]byte{159, 0, 159, 0, 255, 255, 255})
	f.Add(slices.Repeat([]byte{5, 80, 150, 7, 200}, 200))
	f.Fuzz(func(t *testing.T, prog []byte) {
		qs := make([]EventQueue, len(QueueKinds))
		for i, k := range QueueKinds {
			qs[i] = NewQueue(k)
		}
		ref := &refQueue{}
		var seq uint64
		var now Time
		for pc, b := range prog {
			if b < 160 {
				seq++
				d := Time(b%16) << (4 * (b / 16))
				e := Event{At: now + d, Seq: seq}
				ref.Push(e)
				for _, q := range qs {
					q.Push(e)
				}
				continue
			}
			r, rok := ref.Pop()
			if rok {
				now = r.At
			}
			for i, q := range qs {
				g, gok := q.Pop()
				if !sameEvent(g, r) || gok != rok {
					t.Fatalf("%s at byte %d: Pop = %+v,%v; reference %+v,%v", QueueKinds[i], pc, g, gok, r, rok)
				}
			}
		}
	})
}

// popUntil takes the earliest event only when it is at or before the
// limit, and otherwise leaves the queue as it was, for every kind; a
// simulator on a queue without it (the Peek-and-Pop path) runs the same
// events in the same order.
func TestPopUntil(t *testing.T) {
	for _, k := range QueueKinds {
		q := NewQueue(k)
		pu, ok := q.(popUntiler)
		if !ok {
			t.Fatalf("%s has no popUntil", k)
		}
		if _, ok := pu.popUntil(MaxTime); ok {
			t.Errorf("%s: popUntil on an empty queue", k)
		}
		for i, at := range []Time{30, 10, 20, 10} {
			q.Push(Event{At: at, Seq: uint64(i + 1)})
		}
		if _, ok := pu.popUntil(9); ok || q.Len() != 4 {
			t.Errorf("%s: popUntil(9) took an event at 10 (len %d)", k, q.Len())
		}
		var got []Event
		for {
			e, ok := pu.popUntil(20)
			if !ok {
				break
			}
			got = append(got, e)
		}
		if fmt.Sprint(got) != "[{10ns 2 <nil>} {10ns 4 <nil>} {20ns 3 <nil>}]" || q.Len() != 1 {
			t.Errorf("%s: popUntil(20) gave %v, %d left; want the events at 10, 10, 20 in Seq order, one left", k, got, q.Len())
		}
	}
	order := func(q EventQueue) string {
		s := New(q)
		var log []string
		for i, d := range []Time{5, 1, 5, 3} {
			s.MustAt(d, func() { log = append(log, fmt.Sprint(i, "@", s.Now())) })
		}
		s.RunUntil(4)
		s.Run()
		return fmt.Sprint(log)
	}
	if a, b := order(nil), order(peekPopOnly{&BinaryHeap{}}); a != b || a != "[1@1ns 3@3ns 0@5ns 2@5ns]" {
		t.Errorf("popUntil path %s, Peek-and-Pop path %s; want [1@1 3@3 0@5 2@5] from both", a, b)
	}
}

// peekPopOnly hides a queue's popUntil.
type peekPopOnly struct{ EventQueue }

// The adaptive queue moves its events from the calendar queue to the radix
// heap above adaptiveUp and back below adaptiveDown; the order must not
// change across either move, nor across a filter on either side. With the
// thresholds lowered to 64 and 16, the walk swings the size between 5 and
// 80 events ten times, with equal times mixed in (ties broken by Seq).
func TestAdaptiveQueueSwitches(t *testing.T) {
	defer func(up, down int) { adaptiveUp, adaptiveDown = up, down }(adaptiveUp, adaptiveDown)
	adaptiveUp, adaptiveDown = 64, 16
	q, ref := &AdaptiveQueue{}, &refQueue{}
	s := NewStream(3, "adaptive")
	var seq uint64
	var now Time
	up, down := 0, 0
	pop := func(what string) {
		t.Helper()
		was := q.big
		g, gok := q.Pop()
		r, rok := ref.Pop()
		if !sameEvent(g, r) || gok != rok {
			t.Fatalf("%s: Pop = %+v,%v; reference %+v,%v", what, g, gok, r, rok)
		}
		now = r.At
		if was && !q.big {
			down++
		}
	}
	for cycle := range 10 {
		for ref.Len() < 80 {
			was := q.big
			seq++
			e := Event{At: now + Time(s.IntN(4))*10, Seq: seq}
			q.Push(e)
			ref.Push(e)
			if q.big && !was {
				up++
			}
			if q.Len() != ref.Len() {
				t.Fatalf("cycle %d: Len = %d, reference %d", cycle, q.Len(), ref.Len())
			}
		}
		if cycle%2 == 1 { // drop every third event while in the radix heap
			keep := func(e Event) bool { return e.Seq%3 != 0 }
			q.filter(keep)
			ref.ev = slices.DeleteFunc(ref.ev, func(e Event) bool { return !keep(e) })
		}
		for ref.Len() > 5 {
			pop(fmt.Sprintf("cycle %d", cycle))
		}
	}
	for ref.Len() > 0 {
		pop("drain")
	}
	if up != 10 || down != 10 {
		t.Errorf("switches: %d to the radix heap and %d back, want 10 and 10", up, down)
	}
}

// Equal times leave in Seq order whatever order they were pushed in (the
// interface allows it; the simulator always pushes in Seq order), on every
// kind: the radix heap inserts such an event in place in its bucket 0.
func TestQueuesTiesAnyPushOrder(t *testing.T) {
	for _, k := range QueueKinds {
		q := NewQueue(k)
		q.Push(Event{At: 5, Seq: 1})
		q.Pop() // every queue has now taken a minimum at time 5
		for _, sq := range []uint64{7, 3, 9, 2, 8} {
			q.Push(Event{At: 5, Seq: sq})        // at the minimum taken: bucket 0
			q.Push(Event{At: 100, Seq: sq + 10}) // later: a higher bucket
		}
		var got []uint64
		for q.Len() > 0 {
			e, _ := q.Pop()
			got = append(got, e.Seq)
		}
		if want := []uint64{2, 3, 7, 8, 9, 12, 13, 17, 18, 19}; !slices.Equal(got, want) {
			t.Errorf("%s: Seq order %v, want %v", k, got, want)
		}
	}
}

// The adaptive queue with its thresholds lowered to 64 and 16 runs the
// reference workload on every spread (equal times, 15 decades, events
// earlier than the last one taken): it switches many times a run, and
// every Pop and Peek must still match the reference.
func TestAdaptiveQueueAgainstReference(t *testing.T) {
	defer func(up, down int) { adaptiveUp, adaptiveDown = up, down }(adaptiveUp, adaptiveDown)
	adaptiveUp, adaptiveDown = 64, 16
	ops := 20000
	if testing.Short() {
		ops = 6000
	}
	for i, sp := range spreads {
		t.Run(sp.name, func(t *testing.T) {
			queueWorkload(t, &AdaptiveQueue{}, sp, spreads[(i+3)%len(spreads)], uint64(100+i), ops)
		})
	}
}

package engine

// AdaptiveQueue is the default pending-event set: a CalendarQueue while at
// most adaptiveUp events are pending, a RadixHeap above. Measured through
// the simulator (HOLD, exponential increments, -cpu 1, two runs), the
// calendar queue is the fastest up to about 1e5 pending events (58
// against the radix heap's 84 ns per event at 3e4, 66-88 against 100-107
// at 1e5), and then falls off once its node slab no longer fits in cache
// (590-690 against 120 ns at 3e5; at 1e6, bench/hold.sh, 397 against 110,
// where the binary heap takes 399): the radix heap's buckets are filled
// and emptied in order, so its memory traffic stays sequential. The
// switch moves every event, in order, from one to the other, O(n); it
// goes back below adaptiveDown, half the threshold up, so that a queue
// hovering at the edge pays at most one move per event it pushes or pops
// in between. Both queues give the same order, so the switch changes
// speed only.
//
// The zero value is ready to use.
type AdaptiveQueue struct {
	cal CalendarQueue
	rad RadixHeap
	big bool // the events are in rad
}

// The thresholds are variables only so that a test can make the queue
// switch often on a small workload.
var (
	adaptiveUp   = 1 << 17
	adaptiveDown = 1 << 16
)

var (
	_ EventQueue = (*AdaptiveQueue)(nil)
	_ popUntiler = (*AdaptiveQueue)(nil)
	_ filterer   = (*AdaptiveQueue)(nil)
)

// Len returns the number of pending events.
func (q *AdaptiveQueue) Len() int {
	if q.big {
		return q.rad.Len()
	}
	return q.cal.Len()
}

// Push adds e.
func (q *AdaptiveQueue) Push(e Event) {
	if q.big {
		q.rad.Push(e)
		return
	}
	q.cal.Push(e)
	if q.cal.n > adaptiveUp {
		for q.cal.n > 0 {
			q.rad.Push(q.cal.removeMin())
		}
		q.big = true
	}
}

// Peek returns the earliest event without removing it.
func (q *AdaptiveQueue) Peek() (Event, bool) {
	if q.big {
		return q.rad.Peek()
	}
	return q.cal.Peek()
}

// Pop removes and returns the earliest event.
func (q *AdaptiveQueue) Pop() (Event, bool) {
	if !q.big {
		return q.cal.Pop()
	}
	e, ok := q.rad.Pop()
	q.shrink()
	return e, ok
}

func (q *AdaptiveQueue) popUntil(limit Time) (Event, bool) {
	if !q.big {
		return q.cal.popUntil(limit)
	}
	e, ok := q.rad.popUntil(limit)
	q.shrink()
	return e, ok
}

// shrink moves the events back to the calendar queue once few are left.
func (q *AdaptiveQueue) shrink() {
	if q.rad.n >= adaptiveDown {
		return
	}
	for {
		e, ok := q.rad.Pop()
		if !ok {
			break
		}
		q.cal.Push(e)
	}
	// A new radix heap: its buckets grew to the spike's size, which a
	// model back at its usual size need not keep (the calendar queue's
	// slab, 2^17 nodes at most, is kept for the next spike).
	q.rad = RadixHeap{}
	q.big = false
}

func (q *AdaptiveQueue) filter(keep func(Event) bool) {
	if !q.big {
		q.cal.filter(keep)
		return
	}
	q.rad.filter(keep)
	q.shrink()
}

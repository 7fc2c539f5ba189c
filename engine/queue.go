package engine

// Event is one entry of the pending-event set, stored by value. Events are
// ordered by (At, Seq): Seq is the simulator's scheduling counter, so events
// at equal times leave in the order they were scheduled (FIFO tie-breaking,
// as in ns-3 and SimPy). Fn is the simulator's callback, carried with the
// event so that running it needs no second lookup; the queue never looks
// at it. (A func value is one pointer: an Event stays 24 bytes.)
type Event struct {
	At  Time
	Seq uint64
	Fn  func()
}

// Before reports whether e leaves the pending-event set before o.
func (e Event) Before(o Event) bool {
	return e.At < o.At || (e.At == o.At && e.Seq < o.Seq)
}

// EventQueue is the pending-event set.
//
// Contract: Pop and Peek return the event that is smallest by Event.Before
// among those pushed and not yet popped; with Len() == 0 they return
// ok == false and a zero Event. Push never fails. An implementation holds
// events by value and may reuse its storage, so steady-state Push/Pop pairs
// must not allocate; storage it keeps for reuse must not hold a popped
// event's Fn, so that a callback and what it captures can be collected
// once it has run. Implementations need not be safe for concurrent use:
// one simulation runs on one goroutine.
type EventQueue interface {
	Push(e Event)
	Pop() (e Event, ok bool)
	Peek() (e Event, ok bool)
	Len() int
}

// QueueKind names an EventQueue implementation.
type QueueKind string

// The available pending-event-set implementations. They must give the same
// event order for the same pushes (a metamorphic test checks this), so the
// choice only affects speed.
const (
	QueueBinaryHeap QueueKind = "binary-heap"
	QueueQuadHeap   QueueKind = "4-ary-heap"
	QueueCalendar   QueueKind = "calendar"
	QueueRadix      QueueKind = "radix-heap"
	QueueAdaptive   QueueKind = "adaptive"
)

// QueueKinds lists every implementation, in a fixed order.
var QueueKinds = []QueueKind{QueueBinaryHeap, QueueQuadHeap, QueueCalendar, QueueRadix, QueueAdaptive}

// QueueDefault is what New(nil) and NewQueue("") use: the adaptive queue
// (a calendar queue, a radix heap above 2^17 pending events), chosen by
// measurement (issue 17 item 1): through the simulator's API
// (BenchmarkSimHold) the calendar queue is the fastest kind up to about
// 1e5 pending events, and the radix heap above, where the calendar
// queue's node slab leaves the cache; the openb cluster replay runs as
// fast or a little faster on it than on the heap (BenchmarkOpenBQueues).
// The figures, side by side with ns-3's, are in docs/testing.md (bench/hold.sh).
// The data-path model, a few pending events on scales from nanoseconds to
// milliseconds, runs faster on the binary heap and asks for it
// (datapath.EventQueue). Every kind gives the same event order (the
// golden results are byte-identical on each), so the choice changes speed
// only. It is a variable so that benchmarks can run the models on each
// kind side by side; nothing else sets it.
var QueueDefault = QueueAdaptive

// NewQueue returns an empty queue of the given kind ("" for QueueDefault),
// or nil if the kind is unknown.
func NewQueue(k QueueKind) EventQueue {
	if k == "" {
		k = QueueDefault
	}
	switch k {
	case QueueBinaryHeap:
		return &BinaryHeap{}
	case QueueQuadHeap:
		return &QuadHeap{}
	case QueueCalendar:
		return &CalendarQueue{}
	case QueueRadix:
		return &RadixHeap{}
	case QueueAdaptive:
		return &AdaptiveQueue{}
	}
	return nil
}

// BinaryHeap is an implicit binary min-heap of events stored by value in
// one slice: no per-event allocation and no pointer chasing.
type BinaryHeap struct {
	h []Event
}

var _ EventQueue = (*BinaryHeap)(nil)

// Len returns the number of pending events.
func (q *BinaryHeap) Len() int { return len(q.h) }

// Push adds e.
func (q *BinaryHeap) Push(e Event) {
	q.h = append(q.h, e)
	// sift up, moving the hole rather than swapping
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.Before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// Peek returns the earliest event without removing it.
func (q *BinaryHeap) Peek() (Event, bool) {
	if len(q.h) == 0 {
		return Event{}, false
	}
	return q.h[0], true
}

// Pop removes and returns the earliest event.
func (q *BinaryHeap) Pop() (Event, bool) {
	n := len(q.h)
	if n == 0 {
		return Event{}, false
	}
	h := q.h
	top := h[0]
	last := h[n-1]
	h[n-1] = Event{} // the slot past the end keeps no callback alive
	h = h[:n-1]
	q.h = h
	n--
	if n == 0 {
		return top, true
	}
	// sift the last element down from the root
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].Before(h[l]) {
			c = r
		}
		if !h[c].Before(last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top, true
}

// QuadHeap is an implicit 4-ary min-heap: half the depth of a binary heap,
// and the four children of a node are adjacent (4 x 24 bytes, at most two
// cache lines), so a sift-down touches fewer cache lines than the binary
// heap's twice-as-long path. Measured, it is about as fast as BinaryHeap:
// the extra comparisons per level eat the saving at the sizes we run.
type QuadHeap struct {
	h []Event
}

var _ EventQueue = (*QuadHeap)(nil)

// Len returns the number of pending events.
func (q *QuadHeap) Len() int { return len(q.h) }

// Push adds e.
func (q *QuadHeap) Push(e Event) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.Before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// Peek returns the earliest event without removing it.
func (q *QuadHeap) Peek() (Event, bool) {
	if len(q.h) == 0 {
		return Event{}, false
	}
	return q.h[0], true
}

// Pop removes and returns the earliest event.
func (q *QuadHeap) Pop() (Event, bool) {
	n := len(q.h)
	if n == 0 {
		return Event{}, false
	}
	h := q.h
	top := h[0]
	last := h[n-1]
	h[n-1] = Event{} // the slot past the end keeps no callback alive
	h = h[:n-1]
	q.h = h
	n--
	if n == 0 {
		return top, true
	}
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		c := first
		end := first + 4
		if end > n {
			end = n
		}
		for k := first + 1; k < end; k++ {
			if h[k].Before(h[c]) {
				c = k
			}
		}
		if !h[c].Before(last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top, true
}

// popUntiler is implemented by queues that can test and remove their
// earliest event in one step: popUntil removes and returns it when it is
// at or before limit, and otherwise returns ok == false and leaves the
// queue as it was. The simulator uses it, where present, instead of a Peek
// and a Pop (two calls and, for the calendar queue, two searches).
type popUntiler interface {
	popUntil(limit Time) (Event, bool)
}

func (q *BinaryHeap) popUntil(limit Time) (Event, bool) {
	if len(q.h) == 0 || q.h[0].At > limit {
		return Event{}, false
	}
	return q.Pop()
}

func (q *QuadHeap) popUntil(limit Time) (Event, bool) {
	if len(q.h) == 0 || q.h[0].At > limit {
		return Event{}, false
	}
	return q.Pop()
}

var (
	_ popUntiler = (*BinaryHeap)(nil)
	_ popUntiler = (*QuadHeap)(nil)
	_ popUntiler = (*CalendarQueue)(nil)
)

// filterer is implemented by queues that can drop events in place, in
// O(n), rather than by popping and re-pushing all of them in O(n log n).
// The Simulator uses it to purge cancelled events; keep is called once per
// event, in no particular order.
type filterer interface {
	filter(keep func(Event) bool)
}

var (
	_ filterer = (*BinaryHeap)(nil)
	_ filterer = (*QuadHeap)(nil)
	_ filterer = (*CalendarQueue)(nil)
)

// filterHeap keeps the events of h that keep accepts, in place, and returns
// the shortened slice (not yet a heap).
func filterHeap(h []Event, keep func(Event) bool) []Event {
	j := 0
	for _, e := range h {
		if keep(e) {
			h[j] = e
			j++
		}
	}
	clear(h[j:]) // the dropped events' callbacks
	return h[:j]
}

func (q *BinaryHeap) filter(keep func(Event) bool) {
	h := filterHeap(q.h, keep)
	q.h = h
	// Floyd's heap construction: sift down every internal node, last first.
	n := len(h)
	for i := n/2 - 1; i >= 0; i-- {
		e := h[i]
		j := i
		for {
			l := 2*j + 1
			if l >= n {
				break
			}
			c := l
			if r := l + 1; r < n && h[r].Before(h[l]) {
				c = r
			}
			if !h[c].Before(e) {
				break
			}
			h[j] = h[c]
			j = c
		}
		h[j] = e
	}
}

func (q *QuadHeap) filter(keep func(Event) bool) {
	h := filterHeap(q.h, keep)
	q.h = h
	n := len(h)
	for i := (n - 2) / 4; i >= 0; i-- {
		e := h[i]
		j := i
		for {
			first := 4*j + 1
			if first >= n {
				break
			}
			c := first
			for k := first + 1; k < min(first+4, n); k++ {
				if h[k].Before(h[c]) {
					c = k
				}
			}
			if !h[c].Before(e) {
				break
			}
			h[j] = h[c]
			j = c
		}
		h[j] = e
	}
}

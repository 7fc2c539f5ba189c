package engine

import (
	"cmp"
	"math/bits"
	"slices"
)

// RadixHeap is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
// algorithms for the shortest path problem", JACM 37(2), 1990), the
// priority queue for monotone keys: a discrete-event simulator never
// schedules before Now, which is the time of the last event popped. An
// event at time t sits in bucket bits.Len64(t XOR last), where last is the
// time of the last minimum taken: bucket 0 holds the events at last itself,
// and bucket b those that first differ from last at bit b-1. Push is an
// append. When bucket 0 is empty, Pop takes the lowest non-empty bucket,
// finds its minimum, makes that the new last and redistributes the bucket's
// events into strictly lower buckets; each event moves at most 64 times in
// all, and in practice a few. Every bucket is a slice filled and emptied in
// order, so the work is sequential in memory, where a heap or a calendar
// queue chases an index per operation.
//
// Ties: events at equal times must leave in Seq order. Events at one time
// always share a bucket, and buckets keep Push order, so with the
// simulator, whose Seq only grows, they come down to bucket 0 in Seq
// order. For any other caller a refill sorts bucket 0 by Seq (a pass over
// it when already sorted), and a Push at time last with a smaller Seq
// than bucket 0's last event is inserted in place.
//
// The EventQueue contract allows a Push earlier than last, which the
// simulator never does; the queue then rebuilds around the new time in
// O(n). Peek and popUntil find the minimum without moving last, so a
// RunUntil that stops before the next event does not make the events
// scheduled after it (earlier than that next event) rebuild the queue.
//
// The zero value is ready to use.
type RadixHeap struct {
	b    [65][]Event
	head int    // events of b[0] before head are already popped
	mask uint64 // bit i-1 set when bucket i (1..64) is non-empty
	last uint64 // radix key of the last minimum taken
	n    int
}

var (
	_ EventQueue = (*RadixHeap)(nil)
	_ popUntiler = (*RadixHeap)(nil)
	_ filterer   = (*RadixHeap)(nil)
)

// radixKey maps a Time to an unsigned key in the same order (the sign bit
// flipped), so negative times, which the interface allows, order right.
func radixKey(t Time) uint64 { return uint64(t) ^ (1 << 63) }

// Len returns the number of pending events.
func (q *RadixHeap) Len() int { return q.n }

// Push adds e.
func (q *RadixHeap) Push(e Event) {
	k := radixKey(e.At)
	if k < q.last {
		q.rebase(k)
	}
	q.n++
	if k != q.last {
		q.put(e, k)
		return
	}
	b0 := q.b[0]
	if n := len(b0); n > q.head && e.Seq < b0[n-1].Seq {
		// Not the simulator's order: insert in place.
		j, _ := slices.BinarySearchFunc(b0[q.head:], e, func(x, y Event) int {
			if x.Seq < y.Seq {
				return -1
			}
			return 1
		})
		q.b[0] = slices.Insert(b0, q.head+j, e)
		return
	}
	q.b[0] = append(b0, e)
}

// Peek returns the earliest event without removing it.
func (q *RadixHeap) Peek() (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	if q.head < len(q.b[0]) {
		return q.b[0][q.head], true
	}
	return q.lowest(), true
}

// Pop removes and returns the earliest event.
func (q *RadixHeap) Pop() (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	if q.head == len(q.b[0]) {
		q.refill()
	}
	b0 := q.b[0]
	e := b0[q.head]
	b0[q.head].Fn = nil // the popped slot keeps no callback alive
	q.head++
	if q.head == len(b0) {
		q.b[0], q.head = b0[:0], 0
	}
	q.n--
	return e, true
}

func (q *RadixHeap) popUntil(limit Time) (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	if q.head == len(q.b[0]) {
		if q.lowest().At > limit {
			return Event{}, false
		}
	} else if q.b[0][q.head].At > limit {
		return Event{}, false
	}
	return q.Pop()
}

// lowest returns the earliest event while bucket 0 is empty (q.n > 0): the
// minimum of the lowest non-empty bucket, which holds every event that
// agrees with last on more leading bits than any event elsewhere.
func (q *RadixHeap) lowest() Event {
	bk := q.b[bits.TrailingZeros64(q.mask)+1]
	m := bk[0]
	for _, e := range bk[1:] {
		if e.Before(m) {
			m = e
		}
	}
	return m
}

// refill moves the lowest non-empty bucket's events down, making its
// minimum time the new last; bucket 0 must be empty and q.n > 0.
func (q *RadixHeap) refill() {
	i := bits.TrailingZeros64(q.mask) + 1
	bk := q.b[i]
	m := radixKey(bk[0].At)
	for _, e := range bk[1:] {
		m = min(m, radixKey(e.At))
	}
	q.last = m
	q.b[i] = bk[:0]
	q.mask &^= 1 << (i - 1)
	for _, e := range bk {
		// Every event of bucket i agrees with m above bit i-1, so it
		// lands in a bucket below i: appending cannot overwrite bk.
		q.put(e, radixKey(e.At))
	}
	clear(bk) // moved: the old copies keep no callback alive
	sortSeq(q.b[0])
}

// put appends e, whose radix key is k, to its bucket relative to last.
func (q *RadixHeap) put(e Event, k uint64) {
	j := bits.Len64(k ^ q.last)
	q.b[j] = append(q.b[j], e)
	if j > 0 {
		q.mask |= 1 << (j - 1)
	}
}

// sortSeq sorts events at one time by Seq. A refill usually brings down
// one event, or a few nearly in order (a bucket fills in Push order), so
// an insertion sort; many at once (a thousand jobs arriving together)
// get an O(k log k) sort.
func sortSeq(s []Event) {
	if len(s) > 32 {
		slices.SortFunc(s, func(x, y Event) int { return cmp.Compare(x.Seq, y.Seq) })
		return
	}
	for i := 1; i < len(s); i++ {
		e := s[i]
		j := i
		for j > 0 && s[j-1].Seq > e.Seq {
			s[j] = s[j-1]
			j--
		}
		s[j] = e
	}
}

// rebase rebuilds the buckets around key k < last (a Push earlier than
// the last minimum taken; never from the simulator).
func (q *RadixHeap) rebase(k uint64) {
	var all []Event
	all = append(all, q.b[0][q.head:]...)
	for i := 1; i < len(q.b); i++ {
		all = append(all, q.b[i]...)
	}
	for i := range q.b {
		clear(q.b[i]) // copied to all: the old copies keep no callback alive
		q.b[i] = q.b[i][:0]
	}
	q.head = 0
	q.mask, q.last = 0, k
	for _, e := range all {
		q.put(e, radixKey(e.At))
	}
	sortSeq(q.b[0])
}

func (q *RadixHeap) filter(keep func(Event) bool) {
	q.b[0] = filterHeap(q.b[0][q.head:], keep) // keeps order: still sorted
	q.head = 0
	n := len(q.b[0])
	for i := 1; i < len(q.b); i++ {
		q.b[i] = filterHeap(q.b[i], keep)
		if len(q.b[i]) == 0 {
			q.mask &^= 1 << (i - 1)
		}
		n += len(q.b[i])
	}
	q.n = n
}

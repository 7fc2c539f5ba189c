package engine

import "math/bits"

// CalendarQueue is Brown's calendar queue (R. Brown, "Calendar queues: a fast
// O(1) priority queue implementation for the simulation event set problem",
// CACM 31(10), 1988): an array of buckets, each a "day" of fixed width, that
// together make a "year"; an event at time t lives in bucket
// (t/width) mod nbuckets, in a list sorted by (At, Seq). Pop scans forward
// from the current day for an event of the current year, so with a width
// near the typical gap between events both Push and Pop take O(1) expected
// time, against O(log n) for a heap.
//
// Departures from the paper, each for a reason:
//   - The width is a power of two nanoseconds, so the bucket of an event is a
//     shift and a mask rather than a 64-bit division.
//   - Events live by value in one node slab with a free list and the buckets
//     are singly linked lists of slab indices with a tail index, so steady
//     state allocates nothing, resizing relinks nodes without copying them,
//     and events at equal times (scheduled in Seq order) append in O(1).
//   - Besides Brown's resizing when the count doubles or halves, the queue
//     watches its own work (buckets scanned per Pop, nodes walked per Push)
//     and re-estimates the width when the average exceeds a small bound. It
//     checks at most once per max(n, 256) operations, so the O(n) rebuild
//     stays O(1) amortised even if the time distribution keeps changing.
//
// The zero value is ready to use.
type CalendarQueue struct {
	nodes   []calNode
	free    int32 // head of the free-node list, or -1
	buckets []calBucket
	mask    int64 // len(buckets) - 1; len is a power of two
	shift   uint  // bucket width is 1<<shift nanoseconds
	cur     int64 // virtual day (At>>shift) where the next search starts
	n       int

	// Self-monitoring for width re-estimation.
	ops, work int

	sample []Event // scratch for width estimation, reused
}

// calNode is one event in the slab and its link, 32 bytes: two to a
// 64-byte cache line.
type calNode struct {
	at   Time
	seq  uint64
	fn   func()
	next int32 // next node in the bucket, or -1
}

func (n *calNode) event() Event { return Event{At: n.at, Seq: n.seq, Fn: n.fn} }

func (n *calNode) before(at Time, seq uint64) bool {
	return n.at < at || (n.at == at && n.seq < seq)
}

type calBucket struct{ head, tail int32 }

const (
	calMinBuckets   = 16
	calInitialShift = 10 // 1.024us until the first estimate
	calSample       = 32 // events sampled to estimate the width
	calMaxWork      = 6  // average buckets/nodes touched per op before re-estimating
)

var _ EventQueue = (*CalendarQueue)(nil)

func (q *CalendarQueue) init() {
	q.buckets = make([]calBucket, calMinBuckets)
	for i := range q.buckets {
		q.buckets[i] = calBucket{-1, -1}
	}
	q.mask = calMinBuckets - 1
	q.shift = calInitialShift
	q.free = -1
}

// Len returns the number of pending events.
func (q *CalendarQueue) Len() int { return q.n }

// Push adds e.
func (q *CalendarQueue) Push(e Event) {
	if q.buckets == nil {
		q.init()
	}
	q.insert(e)
	q.n++
	q.tick()
	if q.n > 2*len(q.buckets) {
		q.resize(2 * len(q.buckets))
	}
}

// Peek returns the earliest event without removing it.
func (q *CalendarQueue) Peek() (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	b := q.find()
	nd := &q.nodes[q.buckets[b].head]
	return nd.event(), true
}

// Pop removes and returns the earliest event.
func (q *CalendarQueue) Pop() (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	e := q.removeMin()
	q.tick()
	if q.n < len(q.buckets)/2 && len(q.buckets) > calMinBuckets {
		q.resize(len(q.buckets) / 2)
	}
	return e, true
}

// insert links e into its bucket, keeping the list sorted by (At, Seq).
func (q *CalendarQueue) insert(e Event) {
	day := int64(e.At) >> q.shift
	if q.n == 0 || day < q.cur {
		// The search position may not pass any pending event: an event
		// earlier than it moves it back.
		q.cur = day
	}
	i := q.free
	if i >= 0 {
		q.free = q.nodes[i].next
	} else {
		q.nodes = append(q.nodes, calNode{})
		i = int32(len(q.nodes) - 1)
	}
	q.nodes[i] = calNode{at: e.At, seq: e.Seq, fn: e.Fn, next: -1}
	b := &q.buckets[day&q.mask]
	switch {
	case b.head < 0:
		b.head, b.tail = i, i
	case !q.nodes[i].before(q.nodes[b.tail].at, q.nodes[b.tail].seq):
		// The common case in simulation: a new event is later than
		// everything already in its bucket (always so for equal times).
		q.nodes[b.tail].next = i
		b.tail = i
	case q.nodes[i].before(q.nodes[b.head].at, q.nodes[b.head].seq):
		q.nodes[i].next = b.head
		b.head = i
	default:
		// Strictly between head and tail, so the walk ends before the tail.
		p := b.head
		for {
			nx := q.nodes[p].next
			if q.nodes[i].before(q.nodes[nx].at, q.nodes[nx].seq) {
				break
			}
			p = nx
			q.work++
		}
		q.nodes[i].next = q.nodes[p].next
		q.nodes[p].next = i
	}
}

// find returns the bucket whose head is the earliest event (q.n > 0) and
// leaves q.cur at that event's day, so a Pop right after a Peek is O(1).
func (q *CalendarQueue) find() int64 {
	// Invariant: every pending event's day is >= q.cur. Scanning one year
	// from q.cur, the first bucket whose head falls on the day being
	// scanned holds the minimum: an earlier event would sit in an earlier
	// bucket of this year, and a bucket's head is its earliest event.
	nb := int64(len(q.buckets))
	cur := q.cur
	for k := int64(0); k < nb; k++ {
		b := cur & q.mask
		if h := q.buckets[b].head; h >= 0 && int64(q.nodes[h].at)>>q.shift == cur {
			q.cur = cur
			q.work += int(k)
			return b
		}
		cur++
	}
	// A whole year without an event: the events are sparse for this width.
	// Search the bucket heads directly (Brown's fallback).
	q.work += int(2 * nb)
	best := int32(-1)
	var bestB int64
	for b := range q.buckets {
		h := q.buckets[b].head
		if h < 0 {
			continue
		}
		if best < 0 || q.nodes[h].before(q.nodes[best].at, q.nodes[best].seq) {
			best, bestB = h, int64(b)
		}
	}
	q.cur = int64(q.nodes[best].at) >> q.shift
	return bestB
}

// popUntil is Pop for an event at or before limit only (see popUntiler):
// one search for the minimum serves both the test and the removal.
func (q *CalendarQueue) popUntil(limit Time) (Event, bool) {
	if q.n == 0 {
		return Event{}, false
	}
	b := q.find()
	if q.nodes[q.buckets[b].head].at > limit {
		return Event{}, false
	}
	e := q.removeFrom(b)
	q.tick()
	if q.n < len(q.buckets)/2 && len(q.buckets) > calMinBuckets {
		q.resize(len(q.buckets) / 2)
	}
	return e, true
}

// removeMin unlinks and returns the earliest event; q.n must be > 0.
func (q *CalendarQueue) removeMin() Event { return q.removeFrom(q.find()) }

// removeFrom unlinks and returns the head of bucket bi, which find
// returned.
func (q *CalendarQueue) removeFrom(bi int64) Event {
	b := &q.buckets[bi]
	i := b.head
	nd := &q.nodes[i]
	e := nd.event()
	nd.fn = nil // a free node keeps no callback alive
	b.head = nd.next
	if b.head < 0 {
		b.tail = -1
	}
	nd.next = q.free
	q.free = i
	q.n--
	return e
}

// tick counts one operation and re-estimates the width when the recent
// average work per operation says it is badly off.
func (q *CalendarQueue) tick() {
	q.ops++
	if q.ops < max(q.n, 256) {
		return
	}
	if q.work > calMaxWork*q.ops {
		q.resize(len(q.buckets))
	}
	q.ops, q.work = 0, 0
}

// resize rebuilds the calendar with nb buckets and a width estimated from
// the earliest events, as in Brown's paper: the average gap between the
// first events, ignoring gaps more than twice the first average (so a few
// far-future events do not inflate it), times three.
func (q *CalendarQueue) resize(nb int) {
	// Take the earliest events out in order to measure their gaps.
	k := min(q.n, calSample)
	q.sample = q.sample[:0]
	for range k {
		q.sample = append(q.sample, q.removeMin())
	}
	if s, ok := estimateShift(q.sample); ok {
		q.shift = s
	}

	// Chain all nodes first; then the bucket array can be reused in place
	// (its capacity never shrinks, so a queue that oscillates in size
	// stops allocating once it has seen its largest size).
	heads := q.collect(q.buckets)
	if cap(q.buckets) >= nb {
		q.buckets = q.buckets[:nb]
	} else {
		q.buckets = make([]calBucket, nb)
	}
	for i := range q.buckets {
		q.buckets[i] = calBucket{-1, -1}
	}
	q.mask = int64(nb - 1)

	// Relink the remaining nodes. insert allocates a node, so free the
	// chain first and re-insert by value; the slab does not grow.
	n := q.n
	q.n = 0
	for i := heads; i >= 0; {
		nd := q.nodes[i]
		q.nodes[i].next = q.free
		q.free = i
		q.insert(nd.event())
		q.n++
		i = nd.next
	}
	if q.n != n {
		panic("engine: calendar queue lost events while resizing")
	}
	for _, e := range q.sample {
		q.insert(e)
		q.n++
	}
	clear(q.sample) // drop the callbacks
	q.ops, q.work = 0, 0
}

// collect concatenates the bucket lists into one chain, in bucket order,
// and returns its head. Within a bucket the order is (At, Seq), so events
// that land in one new bucket mostly arrive in order and append in O(1).
func (q *CalendarQueue) collect(bs []calBucket) int32 {
	head, tail := int32(-1), int32(-1)
	for _, b := range bs {
		if b.head < 0 {
			continue
		}
		if head < 0 {
			head = b.head
		} else {
			q.nodes[tail].next = b.head
		}
		tail = b.tail
	}
	return head
}

// estimateShift returns log2 of the bucket width for the sorted sample:
// three times the mean positive gap, after dropping gaps larger than twice
// the first mean, rounded up to a power of two. Zero gaps (equal times) are
// ignored: they say nothing about the spacing of distinct days, and equal
// times append to one bucket in O(1) anyway. ok is false when the sample
// has fewer than two distinct times.
func estimateShift(s []Event) (shift uint, ok bool) {
	var sum float64
	var cnt int
	for i := 1; i < len(s); i++ {
		// Floats, so that gaps across a huge range cannot overflow.
		if g := float64(s[i].At) - float64(s[i-1].At); g > 0 {
			sum += g
			cnt++
		}
	}
	if cnt == 0 {
		return 0, false
	}
	mean := sum / float64(cnt)
	sum, cnt = 0, 0
	for i := 1; i < len(s); i++ {
		if g := float64(s[i].At) - float64(s[i-1].At); g > 0 && g <= 2*mean {
			sum += g
			cnt++
		}
	}
	if cnt > 0 {
		mean = sum / float64(cnt)
	}
	w := 3 * mean
	if w >= 1<<62 {
		return 62, true
	}
	if w <= 1 {
		return 0, true
	}
	return uint(bits.Len64(uint64(w+0.5) - 1)), true
}

// filter unlinks the events keep rejects, bucket by bucket, then shrinks
// the calendar if it became too sparse. Removing events cannot break the
// search invariant (no pending event before q.cur).
func (q *CalendarQueue) filter(keep func(Event) bool) {
	for b := range q.buckets {
		bk := &q.buckets[b]
		prev := int32(-1)
		for i := bk.head; i >= 0; {
			nd := &q.nodes[i]
			next := nd.next
			if keep(nd.event()) {
				prev = i
			} else {
				if prev < 0 {
					bk.head = next
				} else {
					q.nodes[prev].next = next
				}
				nd.fn = nil
				nd.next = q.free
				q.free = i
				q.n--
			}
			i = next
		}
		bk.tail = prev
	}
	nb := len(q.buckets)
	for q.n < nb/2 && nb > calMinBuckets {
		nb /= 2
	}
	if nb != len(q.buckets) {
		q.resize(nb)
	}
}

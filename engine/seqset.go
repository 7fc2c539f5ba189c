package engine

// seqSet is the simulator's set of cancelled events, keyed by Seq: a bitmap
// over Seq in pages of seqPageBits, each page allocated (or taken from a
// free list) when its first event is cancelled and given back when its
// last entry leaves. Seqs only grow, and a model cancels mostly events it
// scheduled recently, so the live pages are few and adjacent: has, add and
// remove are a bounds check, a load and a bit operation, where a hash set
// would probe a table that outgrows the cache. A page also records the
// latest time of the events cancelled in it, so that entries the
// simulator has passed can be dropped a page at a time (dropPassed).
//
// Entries for events already taken from the queue may linger until then:
// the simulator asks about an event only while it can still be in the
// queue (Simulator.after), so a stale entry is never read.
//
// The zero value is an empty set.
type seqSet struct {
	base  uint64     // page number of pages[head]
	head  int        // pages[:head] are unused (nil)
	pages []*seqPage // page number base+i-head at index i; nil when empty
	free  []*seqPage // empty pages for reuse
}

const (
	seqPageShift = 12
	seqPageBits  = 1 << seqPageShift
)

type seqPage struct {
	bits  [seqPageBits / 64]uint64
	n     int  // bits set
	maxAt Time // the latest time of an event cancelled in this page
}

// page returns the page holding seq, or nil.
func (s *seqSet) page(seq uint64) *seqPage {
	p := seq >> seqPageShift
	if p < s.base {
		return nil
	}
	i := uint64(s.head) + (p - s.base)
	if i >= uint64(len(s.pages)) {
		return nil
	}
	return s.pages[i]
}

// bit returns the word of a page holding seq and seq's bit in it.
func bit(seq uint64) (word int, b uint64) { return int(seq % seqPageBits / 64), 1 << (seq % 64) }

// has reports whether seq is in the set.
func (s *seqSet) has(seq uint64) bool {
	pg := s.page(seq)
	if pg == nil {
		return false
	}
	w, b := bit(seq)
	return pg.bits[w]&b != 0
}

// add inserts seq, the seq of an event at time at, and reports whether it
// was new (false: it was in the set already, which is left as it was).
func (s *seqSet) add(seq uint64, at Time) bool {
	p := seq >> seqPageShift
	if s.head == len(s.pages) { // empty: start at p
		s.pages, s.head, s.base = s.pages[:0], 0, p
	}
	if p < s.base { // an older page than any held: make room in front
		k := int(s.base - p)
		if k > s.head {
			grown := make([]*seqPage, len(s.pages)-s.head+k)
			copy(grown[k:], s.pages[s.head:])
			s.pages, s.head = grown, k
		}
		s.head -= k
		s.base = p
	}
	i := s.head + int(p-s.base)
	for i >= len(s.pages) {
		s.pages = append(s.pages, nil)
	}
	pg := s.pages[i]
	if pg == nil {
		if n := len(s.free); n > 0 {
			pg = s.free[n-1]
			s.free = s.free[:n-1]
		} else {
			pg = new(seqPage)
		}
		pg.maxAt = at
		s.pages[i] = pg
	}
	w, b := bit(seq)
	if pg.bits[w]&b != 0 {
		return false
	}
	pg.bits[w] |= b
	pg.n++
	pg.maxAt = max(pg.maxAt, at)
	return true
}

// remove deletes seq and reports whether it was there.
func (s *seqSet) remove(seq uint64) bool {
	pg := s.page(seq)
	if pg == nil {
		return false
	}
	w, b := bit(seq)
	if pg.bits[w]&b == 0 {
		return false
	}
	pg.bits[w] &^= b
	if pg.n--; pg.n == 0 {
		s.release(s.head + int(seq>>seqPageShift-s.base))
		s.trim()
	}
	return true
}

// dropPassed drops every page whose events are all at or before at: the
// simulator has taken them from the queue, or compaction dropped them.
func (s *seqSet) dropPassed(at Time) {
	for i := s.head; i < len(s.pages); i++ {
		if pg := s.pages[i]; pg != nil && pg.maxAt < at {
			s.release(i)
		}
	}
	s.trim()
}

// release gives the page at index i back to the free list.
func (s *seqSet) release(i int) {
	pg := s.pages[i]
	*pg = seqPage{}
	s.free = append(s.free, pg)
	s.pages[i] = nil
}

// trim drops the unused (nil) pages at both ends.
func (s *seqSet) trim() {
	for s.head < len(s.pages) && s.pages[s.head] == nil {
		s.head++
		s.base++
	}
	for len(s.pages) > s.head && s.pages[len(s.pages)-1] == nil {
		s.pages = s.pages[:len(s.pages)-1]
	}
	// Move the pages to the front once the unused front is the larger
	// part, so that the slice does not creep forward and reallocate.
	if s.head > 0 && s.head >= len(s.pages)-s.head {
		n := copy(s.pages, s.pages[s.head:])
		clear(s.pages[n:])
		s.pages, s.head = s.pages[:n], 0
	}
}

package engine

// seqSet is the simulator's set of cancelled events, keyed by Seq: a bitmap
// over Seq in pages of seqPageBits, each page allocated (or taken from a
// free list) when its first event is cancelled and given back when its
// last entry leaves. Seqs only grow, and a model cancels mostly events it
// scheduled recently, so the live pages are few and adjacent: they sit in
// a window, a slice indexed by page number, and has, add and remove are a
// bounds check, a load and a bit operation, where a hash set would probe
// a table that outgrows the cache. A page also records the latest time of
// the events cancelled in it, so that entries the simulator has passed
// can be dropped a page at a time (dropPassed).
//
// The window spans at most seqWindowPages pages. A page behind it (an
// old event cancelled late, such as a fast-forwarded job's end), or one
// it leaves behind as it moves on, waits in a map instead (far): a window
// stretched from such a page to the newest was walked nil by nil across
// the gap at every page added or given back, a third of a replay.
//
// Entries for events already taken from the queue may linger until then:
// the simulator asks about an event only while it can still be in the
// queue (Simulator.after), so a stale entry is never read.
//
// The zero value is an empty set. Nothing iterates the map: far pages are
// also listed in farList, in the order they went there.
type seqSet struct {
	base  uint64     // page number of pages[head]
	head  int        // pages[:head] are unused (nil)
	pages []*seqPage // page number base+i-head at index i; nil when empty

	far     map[uint64]*seqPage // live pages outside the window
	farList []*seqPage          // the same pages (each knows its place)

	free []*seqPage // empty pages for reuse
}

const (
	seqPageShift = 12
	seqPageBits  = 1 << seqPageShift
	// seqWindowPages bounds the window: a gap walked is at most this.
	seqWindowPages = 64
)

type seqPage struct {
	bits  [seqPageBits / 64]uint64
	n     int    // bits set
	maxAt Time   // the latest time of an event cancelled in this page
	num   uint64 // its page number
	at    int    // its place in farList while far; -1 in the window
}

// page returns the page holding seq, or nil.
func (s *seqSet) page(seq uint64) *seqPage {
	p := seq >> seqPageShift
	if p >= s.base {
		if i := uint64(s.head) + (p - s.base); i < uint64(len(s.pages)) && s.pages[i] != nil {
			return s.pages[i]
		}
	}
	// A far page may lie in the window's span: the window restarts
	// wherever the next page is once it is empty.
	if len(s.farList) == 0 {
		return nil
	}
	return s.far[p]
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
	pg := s.page(seq)
	if pg == nil {
		pg = s.newPage(seq>>seqPageShift, at)
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

// newPage makes an empty page for page number p, in the window when p is
// at or ahead of its base (moving the window on if p is past its reach),
// else far.
func (s *seqSet) newPage(p uint64, at Time) *seqPage {
	var pg *seqPage
	if n := len(s.free); n > 0 {
		pg = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		pg = new(seqPage)
	}
	pg.num, pg.maxAt, pg.at = p, at, -1
	if s.head == len(s.pages) { // empty window: start it at p
		s.pages, s.head, s.base = s.pages[:0], 0, p
	}
	if p < s.base {
		s.toFar(pg)
		return pg
	}
	if p-s.base >= seqWindowPages {
		// Move the window on so that p is its last page; its pages
		// left behind go far.
		newBase := p - seqWindowPages + 1
		for s.head < len(s.pages) && s.base < newBase {
			if old := s.pages[s.head]; old != nil {
				s.pages[s.head] = nil
				s.toFar(old)
			}
			s.head++
			s.base++
		}
		if s.head == len(s.pages) {
			s.pages, s.head, s.base = s.pages[:0], 0, p
		}
		s.compactFront()
	}
	i := s.head + int(p-s.base)
	for i >= len(s.pages) {
		s.pages = append(s.pages, nil)
	}
	s.pages[i] = pg
	return pg
}

// toFar puts pg in the far map.
func (s *seqSet) toFar(pg *seqPage) {
	if s.far == nil {
		s.far = map[uint64]*seqPage{}
	}
	pg.at = len(s.farList)
	s.far[pg.num] = pg
	s.farList = append(s.farList, pg)
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
		s.release(pg)
		s.trim()
	}
	return true
}

// dropPassed drops every page whose events are all at or before at: the
// simulator has taken them from the queue, or compaction dropped them.
func (s *seqSet) dropPassed(at Time) {
	for i := s.head; i < len(s.pages); i++ {
		if pg := s.pages[i]; pg != nil && pg.maxAt < at {
			s.release(pg)
		}
	}
	for i := 0; i < len(s.farList); {
		if pg := s.farList[i]; pg.maxAt < at {
			s.release(pg) // moves the last far page to i
			continue
		}
		i++
	}
	s.trim()
}

// release gives page pg back to the free list.
func (s *seqSet) release(pg *seqPage) {
	if pg.at >= 0 {
		delete(s.far, pg.num)
		last := len(s.farList) - 1
		moved := s.farList[last]
		s.farList[pg.at], moved.at = moved, pg.at
		s.farList[last] = nil
		s.farList = s.farList[:last]
	} else {
		s.pages[s.head+int(pg.num-s.base)] = nil
	}
	*pg = seqPage{}
	s.free = append(s.free, pg)
}

// trim drops the unused (nil) pages at both ends of the window.
func (s *seqSet) trim() {
	for s.head < len(s.pages) && s.pages[s.head] == nil {
		s.head++
		s.base++
	}
	for len(s.pages) > s.head && s.pages[len(s.pages)-1] == nil {
		s.pages = s.pages[:len(s.pages)-1]
	}
	s.compactFront()
}

// compactFront moves the window's pages to the front of its slice once
// the unused front is the larger part, so that the slice does not creep
// forward and reallocate.
func (s *seqSet) compactFront() {
	if s.head > 0 && s.head >= len(s.pages)-s.head {
		n := copy(s.pages, s.pages[s.head:])
		clear(s.pages[n:])
		s.pages, s.head = s.pages[:n], 0
	}
}

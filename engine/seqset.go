package engine

// seqSet is the simulator's set of cancelled events, keyed by Seq: a bitmap
// over Seq in pages of seqPageBits, each page allocated (or taken from a
// free list) when its first event is cancelled and given back when its
// last entry leaves. A model cancels mostly events it scheduled recently,
// so the live pages are few and the two looked up last are usually the
// ones asked for next: has, add and remove are then a compare, a load and
// a bit operation, where a hash set of seqs would probe a table that
// outgrows the cache. Other pages are found in a map of the live pages,
// not a slice from the oldest live page to the newest: a cancelled event
// far in the future (a fast-forwarded job's end) keeps an old page alive
// while millions of seqs pass, and a slice across that gap cost a pass
// over it per page added or given back (a third of a replay). A page also
// records the latest time of the events cancelled in it, so that entries
// the simulator has passed can be dropped a page at a time (dropPassed).
//
// Entries for events already taken from the queue may linger until then:
// the simulator asks about an event only while it can still be in the
// queue (Simulator.after), so a stale entry is never read.
//
// The zero value is an empty set. Nothing iterates the map: the order of
// the live pages is their slice's.
type seqSet struct {
	pages map[uint64]*seqPage // page number -> its page, while it holds any
	live  []*seqPage          // the pages of the map (each knows its place)
	free  []*seqPage          // empty pages for reuse
	// The two pages looked up last (nil: none), the newer first: a
	// cancel adds to the newest page while the simulator removes from
	// the page of the events it pops, so each finds its own.
	last [2]*seqPage
}

const (
	seqPageShift = 12
	seqPageBits  = 1 << seqPageShift
)

type seqPage struct {
	bits  [seqPageBits / 64]uint64
	n     int    // bits set
	maxAt Time   // the latest time of an event cancelled in this page
	num   uint64 // its page number
	at    int    // its place in live
}

// page returns the page holding seq, or nil.
func (s *seqSet) page(seq uint64) *seqPage {
	p := seq >> seqPageShift
	if pg := s.last[0]; pg != nil && pg.num == p {
		return pg
	}
	if pg := s.last[1]; pg != nil && pg.num == p {
		s.last[0], s.last[1] = pg, s.last[0]
		return pg
	}
	pg := s.pages[p]
	if pg != nil {
		s.last[0], s.last[1] = pg, s.last[0]
	}
	return pg
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
		if n := len(s.free); n > 0 {
			pg = s.free[n-1]
			s.free = s.free[:n-1]
		} else {
			pg = new(seqPage)
		}
		pg.num, pg.maxAt, pg.at = seq>>seqPageShift, at, len(s.live)
		if s.pages == nil {
			s.pages = map[uint64]*seqPage{}
		}
		s.pages[pg.num] = pg
		s.live = append(s.live, pg)
		s.last[0], s.last[1] = pg, s.last[0]
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
		s.release(pg)
	}
	return true
}

// dropPassed drops every page whose events are all at or before at: the
// simulator has taken them from the queue, or compaction dropped them.
func (s *seqSet) dropPassed(at Time) {
	for i := 0; i < len(s.live); {
		if pg := s.live[i]; pg.maxAt < at {
			s.release(pg) // moves the last page to i
			continue
		}
		i++
	}
}

// release gives page pg back to the free list.
func (s *seqSet) release(pg *seqPage) {
	delete(s.pages, pg.num)
	last := len(s.live) - 1
	moved := s.live[last]
	s.live[pg.at], moved.at = moved, pg.at
	s.live[last] = nil
	s.live = s.live[:last]
	for i, l := range s.last {
		if l == pg {
			s.last[i] = nil
		}
	}
	*pg = seqPage{}
	s.free = append(s.free, pg)
}

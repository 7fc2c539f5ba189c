package engine

import "testing"

// The cancelled-event set against a map: random adds, removes and lookups
// over a window of seqs that moves forward as a simulation's does, with
// now and then a seq far behind the window (a model cancelling an old
// timeout, which puts its page far), now and then a jump of more than
// the window (whose live pages then go far) and a dropPassed,
// after which every entry at or after the cut must still be there.
func TestSeqSetAgainstMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		var s seqSet
		ref := map[uint64]Time{}
		rng := NewStream(seed, "seqset")
		var hi uint64 = 1
		for op := range 200_000 {
			hi += uint64(rng.IntN(3))
			if rng.IntN(2000) == 0 {
				hi += uint64(seqWindowPages+rng.IntN(seqWindowPages)) * seqPageBits // the window moves on past live pages
			}
			back := uint64(rng.IntN(3 * seqPageBits))
			if rng.IntN(500) == 0 {
				back = uint64(rng.IntN(int(hi)))
			}
			seq := uint64(1)
			if back < hi {
				seq = hi - back
			}
			switch r := rng.IntN(10); {
			case r < 4:
				at := Time(seq) + Time(rng.IntN(1000))
				if rng.IntN(100) == 0 {
					at = MaxTime - Time(rng.IntN(1000)) // a far-future timeout: kept by every dropPassed
				}
				_, had := ref[seq]
				if got := s.add(seq, at); got == had {
					t.Fatalf("seed %d op %d: add(%d) = %v, want %v", seed, op, seq, got, !had)
				}
				if !had {
					ref[seq] = at
				}
			case r < 8:
				_, want := ref[seq]
				if got := s.remove(seq); got != want {
					t.Fatalf("seed %d op %d: remove(%d) = %v, want %v", seed, op, seq, got, want)
				}
				delete(ref, seq)
			default:
				_, want := ref[seq]
				if got := s.has(seq); got != want {
					t.Fatalf("seed %d op %d: has(%d) = %v, want %v", seed, op, seq, got, want)
				}
			}
			if op%5000 == 4999 {
				cut := Time(hi) - Time(rng.IntN(2*seqPageBits))
				s.dropPassed(cut)
				for seq, at := range ref {
					if at >= cut && !s.has(seq) {
						t.Fatalf("seed %d op %d: dropPassed(%d) dropped %d at %d", seed, op, cut, seq, at)
					}
					if !s.has(seq) { // dropped with its page: gone for good
						delete(ref, seq)
					}
				}
			}
		}
		for seq := range ref {
			if !s.remove(seq) {
				t.Fatalf("seed %d: remove(%d) at the end = false, want true", seed, seq)
			}
		}
		// Every page went back: nothing is held for entries that left.
		if s.head != len(s.pages) || len(s.farList) != 0 || len(s.far) != 0 {
			t.Errorf("seed %d: %d window slots and %d far pages still in use after removing everything", seed, len(s.pages)-s.head, len(s.farList))
		}
		if s.has(1) || s.has(hi) {
			t.Errorf("seed %d: has on the empty set = true", seed)
		}
	}
}

// A set that keeps a few entries in a window moving forward through
// millions of seqs holds a bounded number of pages and, once warm,
// allocates nothing.
func TestSeqSetBoundedAndAllocFree(t *testing.T) {
	var s seqSet
	var seq uint64 = 1
	step := func() {
		s.add(seq, Time(seq))
		if seq > 5000 {
			s.remove(seq - 5000)
		}
		seq++
	}
	for range 100_000 {
		step()
	}
	if a := testing.AllocsPerRun(20, func() {
		for range 10_000 {
			step()
		}
	}); a != 0 {
		t.Errorf("%v allocations per 10,000 add/remove pairs, want 0", a)
	}
	if n := len(s.pages); n > 8 {
		t.Errorf("%d pages for a window of 5,000 seqs, want at most 8", n)
	}
}

// One entry far behind (an old event cancelled after millions of seqs
// have passed, due far in the future: a fast-forwarded job's end) while a
// window moves on through millions more: the set holds that entry's page
// and the window's, and adding and giving back the window's pages
// allocates nothing (a slice from the oldest page to the newest grew and
// was walked across the gap).
func TestSeqSetOldEntryAndMovingWindow(t *testing.T) {
	var s seqSet
	var seq uint64 = 2
	step := func() {
		s.add(seq, Time(seq))
		if seq > 5001 { // from 2 on: 1 stays
			s.remove(seq - 5000)
		}
		seq++
	}
	for range 1_000_000 {
		step()
	}
	s.add(1, MaxTime) // its page stays until the end
	if a := testing.AllocsPerRun(20, func() {
		for range 100_000 {
			step()
		}
	}); a != 0 {
		t.Errorf("%v allocations per 100,000 add/remove pairs, want 0", a)
	}
	if n, f := len(s.pages)-s.head, len(s.farList); n > 8 || f != 1 {
		t.Errorf("%d window slots and %d far pages for one old entry and a window of 5,000 seqs, want at most 8 and 1", n, f)
	}
	if !s.has(1) || !s.remove(1) || s.has(1) {
		t.Error("the old entry is not kept, or not removed")
	}
}

// A page the window left behind is found again after the window emptied
// and restarted below it: seq a in page 100 goes far when page 164 opens,
// page 164 empties, and a window restarted at page 90 reaches page 120.
func TestSeqSetFarPageInsideARestartedWindow(t *testing.T) {
	var s seqSet
	page := func(p uint64) uint64 { return p << seqPageShift }
	a := page(100) + 7
	s.add(a, 10)
	s.add(page(100+seqWindowPages), 20)
	if len(s.farList) != 1 {
		t.Fatalf("%d far pages after the window moved past page 100, want 1", len(s.farList))
	}
	s.remove(page(100 + seqWindowPages))
	s.add(page(90)+1, 30)
	s.add(page(120)+1, 40)
	if !s.has(a) {
		t.Fatal("the far entry is lost once the window spans its page")
	}
	if s.add(a, 10) {
		t.Error("adding the far entry again reports it new")
	}
	if !s.remove(a) || s.has(a) || len(s.farList) != 0 {
		t.Errorf("removing the far entry: has %v, %d far pages left", s.has(a), len(s.farList))
	}
}

package resource

// Progressive filling: the max-min fair rates of a component's flows, by
// passes for a small component and by a heap of links for a large one.

import (
	"math"
	"slices"
)

// fill finds the max-min fair rates of a component's flows (into fill):
// by passes (fillByLevels) for a small component, by a heap of links
// (fillByHeap) for a large one, where a pass per level over every link
// and flow costs more than the heap's bookkeeping. The two are the same
// rule; a test holds them to the same rates.
func (n *Network) fill(flows []*netFlow, links []LinkID) {
	if len(flows)+len(links) > heapFillAbove {
		n.fillByHeap(flows, links)
		return
	}
	n.fillByLevels(flows, links)
}

// heapFillAbove is the component size (flows + links) above which fill
// uses the heap: on the 5,335-job replay the passes alone were faster on
// the small components of a job's servers, the heap alone slower overall.
const heapFillAbove = 64

// fillByLevels is progressive filling by passes: every unfrozen flow's
// rate rises by the tightest increment (a link's fair share of what it
// has left, or a flow's distance to its cap), which freezes the flows
// concerned, until all are frozen.
//
// Every unfrozen flow has the same rate, level (each pass adds the same
// increment to all of them), so a pass adds the increment to level once;
// the nearest cap is the least cap less level (rounding is monotone);
// and a link's capacity left loses the increment once per unfrozen flow
// crossing it, as when each flow took it off its links in turn: the
// same operations on the same numbers as a pass over every flow. A pass
// goes over the links that still have unfrozen flows and the unfrozen
// flows; a saturated link freezes the flows on it.
func (n *Network) fillByLevels(flows []*netFlow, links []LinkID) {
	unf := append(n.unfrozen[:0], flows...)
	for _, f := range flows {
		f.fill, f.frozen = 0, false
	}
	act := n.active[:0]
	for _, l := range links {
		lk := &n.links[l]
		lk.left = lk.capacity
		lk.unfrozen = len(lk.flows)
		if lk.unfrozen > 0 {
			act = append(act, l)
		}
	}
	const eps = 1e-9
	level := 0.0
	freeze := func(f *netFlow) {
		f.fill, f.frozen = level, true
		for _, l := range f.path {
			n.links[l].unfrozen--
		}
	}
	for len(unf) > 0 {
		inc := math.Inf(1)
		for _, l := range act {
			lk := &n.links[l]
			inc = min(inc, lk.left/float64(lk.unfrozen))
		}
		minCap := math.Inf(1)
		for _, f := range unf {
			minCap = min(minCap, f.cap)
		}
		inc = min(inc, minCap-level)
		if math.IsInf(inc, 1) {
			break // cannot happen: every flow crosses a finite link
		}
		level += inc
		for _, l := range act {
			lk := &n.links[l]
			for range lk.unfrozen {
				lk.left -= inc
			}
		}
		// Freeze the flows on saturated links and those at their caps.
		for _, l := range act {
			if lk := &n.links[l]; lk.left <= lk.capacity*eps {
				for _, f := range lk.flows {
					if !f.frozen {
						freeze(f)
					}
				}
			}
		}
		kept := unf[:0]
		for _, f := range unf {
			if f.frozen {
				continue
			}
			if level >= f.cap*(1-eps) {
				freeze(f)
				continue
			}
			kept = append(kept, f)
		}
		unf = kept
		live := act[:0]
		for _, l := range act {
			if n.links[l].unfrozen > 0 {
				live = append(live, l)
			}
		}
		act = live
	}
	for _, f := range unf {
		f.fill = level
	}
	clear(unf)
	n.unfrozen, n.active = unf[:0], act[:0]
}

// fillTogether is fillByLevels for flows that all cross every link of
// path, which no other flow crosses: the same operations on the same
// numbers, without the lists of links and flows still active (every link
// has every unfrozen flow, so one saturated link freezes them all).
func (n *Network) fillTogether(flows []*netFlow, path []LinkID) {
	for _, f := range flows {
		f.fill, f.frozen = 0, false
	}
	for _, l := range path {
		lk := &n.links[l]
		lk.left = lk.capacity
	}
	const eps = 1e-9
	level := 0.0
	u := len(flows) // unfrozen, on every link
	for u > 0 {
		inc := math.Inf(1)
		for _, l := range path {
			inc = min(inc, n.links[l].left/float64(u))
		}
		minCap := math.Inf(1)
		for _, f := range flows {
			if !f.frozen {
				minCap = min(minCap, f.cap)
			}
		}
		inc = min(inc, minCap-level)
		if math.IsInf(inc, 1) {
			break // cannot happen: every flow crosses a finite link
		}
		level += inc
		saturated := false
		for _, l := range path {
			lk := &n.links[l]
			for range u {
				lk.left -= inc
			}
			saturated = saturated || lk.left <= lk.capacity*eps
		}
		for _, f := range flows {
			if !f.frozen && (saturated || level >= f.cap*(1-eps)) {
				f.fill, f.frozen = level, true
				u--
			}
		}
	}
	for _, f := range flows {
		if !f.frozen {
			f.fill = level
		}
	}
}

// fillByHeap is the bottleneck form of progressive filling: all unfrozen
// flows share one level; the next link to saturate is the one whose
// capacity left over its unfrozen flows is least (a flow's cap is a link
// of its own), and its flows freeze at that level. Each flow freezes
// once, and a freeze moves the links on its path in an indexed heap, so a
// component of F flows on paths of P links costs O(F P log L) instead of
// a pass over every link and flow per level.
func (n *Network) fillByHeap(flows []*netFlow, links []LinkID) {
	h := fillHeap{e: n.heap[:0], links: n.links}
	for _, l := range links {
		lk := &n.links[l]
		lk.left = lk.capacity
		lk.unfrozen = len(lk.flows)
		lk.hpos = -1
		if lk.unfrozen > 0 {
			lk.hpos = len(h.e)
			h.e = append(h.e, fillEntry{key: lk.left / float64(lk.unfrozen), at: int32(l)})
		}
	}
	// The flows' caps never move: they wait in a sorted list beside the
	// heap of links, and the next entry is the lesser of the two heads
	// (the order of one heap of both).
	caps := n.caps[:0]
	for i, f := range flows {
		f.fill, f.frozen = 0, false
		if !math.IsInf(f.cap, 1) {
			caps = append(caps, fillEntry{key: f.cap, at: ^int32(i)})
		}
	}
	slices.SortFunc(caps, func(a, b fillEntry) int {
		switch {
		case entryLess(a, b):
			return -1
		case entryLess(b, a):
			return 1
		}
		return 0
	})
	for i := len(h.e)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	// A freeze takes the level off the links of the flow's path; their
	// keys are moved in the heap once all the flows frozen together
	// are (settle): nothing is taken from the heap in between, so the
	// entries taken next, and the levels, are those of moving each key
	// at each freeze.
	dirty := n.dirty[:0]
	freeze := func(f *netFlow, level float64) {
		f.fill, f.frozen = level, true
		for _, l := range f.path {
			lk := &n.links[l]
			lk.left -= level
			lk.unfrozen--
			if !lk.dirty {
				lk.dirty = true
				dirty = append(dirty, l)
			}
		}
	}
	settle := func() {
		for _, l := range dirty {
			lk := &n.links[l]
			lk.dirty = false
			if lk.unfrozen == 0 {
				h.remove(lk.hpos)
				continue
			}
			h.e[lk.hpos].key = lk.left / float64(lk.unfrozen)
			h.fix(lk.hpos)
		}
		dirty = dirty[:0]
	}
	next := 0 // caps[next:] are still to come
	for {
		for next < len(caps) && flows[^caps[next].at].frozen {
			next++ // frozen on a link already: nothing to do
		}
		if len(h.e) == 0 {
			break // every flow crosses a link, so every flow is frozen
		}
		if next < len(caps) && entryLess(caps[next], h.e[0]) {
			f := flows[^caps[next].at]
			next++
			freeze(f, f.cap)
			settle()
			continue
		}
		e := h.e[0]
		level := max(e.key, 0)
		for _, f := range n.links[e.at].flows {
			if !f.frozen {
				freeze(f, level)
			}
		}
		settle() // takes the link out
	}
	n.heap, n.dirty, n.caps = h.e[:0], dirty, caps[:0]
}

// fillEntry is an entry of fillByHeap's heap: a link (at >= 0) or a
// flow's cap (at = ^index into the component's flows), keyed by share.
type fillEntry struct {
	key float64
	at  int32
}

// fillHeap is a binary min-heap of entries by (key, at); a link's entry
// knows its place (netLink.hpos), so its key moves in place.
type fillHeap struct {
	e     []fillEntry
	links []netLink
}

func (h *fillHeap) less(i, j int) bool { return entryLess(h.e[i], h.e[j]) }

// entryLess orders entries by key, then link or flow.
func entryLess(a, b fillEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.at < b.at
}

func (h *fillHeap) swap(i, j int) {
	h.e[i], h.e[j] = h.e[j], h.e[i]
	if a := h.e[i].at; a >= 0 {
		h.links[a].hpos = i
	}
	if a := h.e[j].at; a >= 0 {
		h.links[a].hpos = j
	}
}

func (h *fillHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *fillHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.e) {
			return
		}
		m := l
		if r := l + 1; r < len(h.e) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// fix restores the heap after entry i's key changed.
func (h *fillHeap) fix(i int) {
	h.up(i)
	h.down(i)
}

// remove takes entry i out.
func (h *fillHeap) remove(i int) {
	last := len(h.e) - 1
	if a := h.e[i].at; a >= 0 {
		h.links[a].hpos = -1
	}
	if i != last {
		h.e[i] = h.e[last]
		if a := h.e[i].at; a >= 0 {
			h.links[a].hpos = i
		}
	}
	h.e = h.e[:last]
	if i < last {
		h.fix(i)
	}
}

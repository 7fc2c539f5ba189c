package resource

import (
	"math"
	"slices"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// The two fills give, bit for bit, the rates of their first forms (kept
// here as refFillByLevels and refFillByHeap: a flow at a time per pass,
// a key moved at every freeze), whatever the component: random ones of
// up to 60 flows over up to 24 links, caps and capacities drawn from a
// few values so that levels and keys tie. A replay's results rest on
// these numbers to the last bit (an event's nanosecond is rounded from
// them), so the faster forms must not move one.
func TestFillsEqualTheirFirstFormsBitForBit(t *testing.T) {
	r := engine.NewStream(41, "fill-exact")
	for trial := range 2000 {
		_, n, _ := newNet(t)
		ls := tyingLinks(r, n, 1+r.IntN(24))
		var flows []*netFlow
		for range 1 + r.IntN(60) {
			path := randomPath(r, ls)
			flows = append(flows, n.add(Transfer{Bytes: 100, Path: path, Cap: randomCap(r)}))
		}
		n.component(ls)
		fl, lk := slices.Clone(n.compFlows), slices.Clone(n.compLinks)
		for _, form := range []struct {
			name      string
			ref, fast func([]*netFlow, []LinkID)
		}{
			{"levels", func(f []*netFlow, l []LinkID) { refFillByLevels(n, f, l) }, n.fillByLevels},
			{"heap", func(f []*netFlow, l []LinkID) { refFillByHeap(n, f, l) }, n.fillByHeap},
		} {
			form.ref(fl, lk)
			want := make([]float64, len(flows))
			for i, f := range flows {
				want[i] = f.fill
			}
			form.fast(fl, lk)
			for i, f := range flows {
				if math.Float64bits(f.fill) != math.Float64bits(want[i]) || !f.frozen {
					t.Fatalf("trial %d, %s, flow %d: %v (frozen %v), first form %v", trial, form.name, i, f.fill, f.frozen, want[i])
				}
			}
		}
	}
}

// tyingLinks adds nl links to n, their capacities drawn from a few
// values half the time, so that levels and keys tie.
func tyingLinks(r *engine.Stream, n *Network, nl int) []LinkID {
	var ls []LinkID
	for range nl {
		c := 1 + 20*r.Float64()
		if r.IntN(2) == 0 {
			c = float64(1 + r.IntN(4))
		}
		l, _ := n.AddLink(c)
		ls = append(ls, l)
	}
	return ls
}

// refFillByLevels is fillByLevels as first written.
func refFillByLevels(n *Network, flows []*netFlow, links []LinkID) {
	for _, f := range flows {
		f.fill, f.frozen = 0, false
	}
	for _, l := range links {
		lk := &n.links[l]
		lk.left = lk.capacity
		lk.unfrozen = len(lk.flows)
	}
	left := len(flows)
	for left > 0 {
		inc := math.Inf(1)
		for _, l := range links {
			if lk := &n.links[l]; lk.unfrozen > 0 {
				inc = min(inc, lk.left/float64(lk.unfrozen))
			}
		}
		for _, f := range flows {
			if !f.frozen {
				inc = min(inc, f.cap-f.fill)
			}
		}
		if math.IsInf(inc, 1) {
			break // cannot happen: every flow crosses a finite link
		}
		for _, f := range flows {
			if f.frozen {
				continue
			}
			f.fill += inc
			for _, l := range f.path {
				n.links[l].left -= inc
			}
		}
		// Freeze the flows at their caps and those on saturated links.
		const eps = 1e-9
		for _, f := range flows {
			if f.frozen {
				continue
			}
			saturated := f.fill >= f.cap*(1-eps)
			for _, l := range f.path {
				if lk := &n.links[l]; lk.left <= lk.capacity*eps {
					saturated = true
				}
			}
			if saturated {
				f.frozen = true
				left--
				for _, l := range f.path {
					n.links[l].unfrozen--
				}
			}
		}
	}
}

// refFillByHeap is fillByHeap as first written.
func refFillByHeap(n *Network, flows []*netFlow, links []LinkID) {
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
	for i, f := range flows {
		f.fill, f.frozen = 0, false
		if !math.IsInf(f.cap, 1) {
			h.e = append(h.e, fillEntry{key: f.cap, at: ^int32(i)})
		}
	}
	for i := len(h.e)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	freeze := func(f *netFlow, level float64) {
		f.fill, f.frozen = level, true
		for _, l := range f.path {
			lk := &n.links[l]
			lk.left -= level
			lk.unfrozen--
			if lk.unfrozen == 0 {
				h.remove(lk.hpos)
				continue
			}
			h.e[lk.hpos].key = lk.left / float64(lk.unfrozen)
			h.fix(lk.hpos)
		}
	}
	for len(h.e) > 0 {
		e := h.e[0]
		if e.at < 0 {
			h.remove(0)
			if f := flows[^e.at]; !f.frozen {
				freeze(f, f.cap)
			}
			continue
		}
		level := max(e.key, 0)
		for _, f := range n.links[e.at].flows {
			if !f.frozen {
				freeze(f, level) // the last one takes the link out
			}
		}
	}
	n.heap = h.e[:0]
}

// The shortcuts of recomputeNow for the commonest components of a replay
// with every job in the pool give, bit for bit, the first form's rates:
// a flow alone on its links (the least of its links' capacities and its
// cap), and flows that all cross the same links and no others
// (fillTogether). together finds only such components: one more flow on
// one of their links, or a flow crossing a link besides, is not one.
func TestComponentShortcutsEqualTheFirstForm(t *testing.T) {
	r := engine.NewStream(43, "fill-together")
	for trial := range 2000 {
		_, n, _ := newNet(t)
		nl := 1 + r.IntN(4)
		ls := tyingLinks(r, n, nl)
		nf := 1 + r.IntN(12)
		var flows []*netFlow
		for range nf {
			path := slices.Clone(ls)
			for i := len(path) - 1; i > 0; i-- { // shuffled: order is no part of a path's links
				k := r.IntN(i + 1)
				path[i], path[k] = path[k], path[i]
			}
			flows = append(flows, n.add(Transfer{Bytes: 100, Path: path, Cap: randomCap(r)}))
		}
		seed := ls[r.IntN(len(ls))]
		refFillByLevels(n, flows, ls)
		want := make([]float64, nf)
		for i, f := range flows {
			want[i] = f.fill
		}
		switch nf {
		case 1:
			if n.alone(seed) != flows[0] {
				t.Fatalf("trial %d: a flow alone on its links not found alone", trial)
			}
			got := flows[0].cap
			for _, l := range flows[0].path {
				got = min(got, n.links[l].capacity)
			}
			if math.Float64bits(got) != math.Float64bits(want[0]) {
				t.Fatalf("trial %d: alone %v, first form %v", trial, got, want[0])
			}
		default:
			path := n.together(seed)
			if path == nil {
				t.Fatalf("trial %d: %d flows on the same %d links not found together", trial, nf, nl)
			}
			n.fillTogether(n.links[seed].flows, path)
			for i, f := range flows {
				if math.Float64bits(f.fill) != math.Float64bits(want[i]) || !f.frozen {
					t.Fatalf("trial %d, flow %d of %d on %d links: %v (frozen %v), first form %v", trial, i, nf, nl, f.fill, f.frozen, want[i])
				}
			}
		}
		// One flow more, on one of the links only or on them and another
		// link: no longer a shortcut's component.
		other, _ := n.AddLink(5)
		extra := []LinkID{ls[r.IntN(len(ls))]}
		if nl == 1 || r.IntN(2) == 0 {
			extra = append(slices.Clone(ls), other)
		}
		n.add(Transfer{Bytes: 100, Path: extra, Cap: 0})
		if n.alone(seed) != nil || n.together(seed) != nil {
			t.Fatalf("trial %d: a component with a flow on %v besides taken for a shortcut's", trial, extra)
		}
	}
}

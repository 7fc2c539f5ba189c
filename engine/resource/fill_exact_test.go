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
		_, n, ls := newNet(t)
		nl := 1 + r.IntN(24)
		for range nl {
			c := 1 + 20*r.Float64()
			if r.IntN(2) == 0 {
				c = float64(1 + r.IntN(4))
			}
			l, _ := n.AddLink(c)
			ls = append(ls, l)
		}
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

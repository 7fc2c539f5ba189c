package resource

// The flows' ends: a heap of them with one engine event at the earliest,
// and the recomputation after the flows ending at one instant.

import (
	"github.com/conspirator-sim/conspirator/engine"
)

// schedule moves f's end to when it finishes at its rate (the caller
// arms the network's event).
func (n *Network) schedule(f *netFlow, now engine.Time) {
	done := f.remaining <= f.rate*completionSlack
	if !done && !(f.rate > 0) {
		n.unqueue(f)
		return // stalled: moved again when its share changes
	}
	secs := 0.0
	if !done {
		secs = f.remaining / f.rate
	}
	at := engine.AddSat(now, delayFor(secs, done))
	if at > engine.Horizon {
		// Past the engine's clock: asked for, the engine stops the run
		// with its error, as it would for the flow's own event.
		n.sim.MustAt(at, f.finishFn)
		n.unqueue(f)
		return
	}
	n.endSeq++
	f.endAt, f.endSeq = at, n.endSeq
	if f.hasEv {
		n.ends.fix(f.epos)
		return
	}
	f.hasEv = true
	n.ends.push(f)
}

// unqueue takes f's end out of the heap, if it is there.
func (n *Network) unqueue(f *netFlow) {
	if !f.hasEv {
		return
	}
	f.hasEv = false
	n.ends.remove(f.epos)
}

// arm moves the network's event to the earliest end, if it moved.
func (n *Network) arm() {
	if n.firing {
		return
	}
	if len(n.ends.e) == 0 {
		if n.hasEv {
			n.sim.Cancel(n.ev)
			n.hasEv = false
		}
		return
	}
	at := n.ends.e[0].at
	if n.hasEv {
		if n.evAt == at {
			return
		}
		n.sim.Cancel(n.ev)
	}
	n.ev, n.evAt, n.hasEv = n.sim.MustAt(at, n.fireFn), at, true
}

// fire ends every flow due now, earliest first (ties in the order their
// ends were set, as their own events ran), then arms the next end.
func (n *Network) fire() {
	n.hasEv = false
	now := n.sim.Now()
	n.firing = true
	for len(n.ends.e) > 0 && n.ends.e[0].at <= now {
		n.ends.e[0].f.finish()
	}
	n.firing = false
	n.arm()
}

// endHeap is the network's flow ends, a binary min-heap by (endAt,
// endSeq), a total order, so the flows come out in one order whatever
// the heap's shape. Each entry carries its flow's key, so that a
// comparison reads the heap's own array, not two flows (container/heap's
// interface calls and the flows' pointers cost a fifth of a replay with
// every job in the pool); each flow knows its place (epos).
type endHeap struct {
	e []endEntry
}

type endEntry struct {
	at  engine.Time
	seq uint64
	f   *netFlow
}

func (a endEntry) less(b endEntry) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// set puts x at place i.
func (h *endHeap) set(i int, x endEntry) {
	h.e[i] = x
	x.f.epos = i
}

func (h *endHeap) push(f *netFlow) {
	h.e = append(h.e, endEntry{})
	h.up(len(h.e)-1, endEntry{at: f.endAt, seq: f.endSeq, f: f})
}

// fix restores the order after the key of the entry at i (its flow's
// endAt and endSeq) changed.
func (h *endHeap) fix(i int) {
	f := h.e[i].f
	h.place(i, endEntry{at: f.endAt, seq: f.endSeq, f: f})
}

// remove takes the entry at i out.
func (h *endHeap) remove(i int) {
	last := len(h.e) - 1
	x := h.e[last]
	h.e[last] = endEntry{}
	h.e = h.e[:last]
	if i < last {
		h.place(i, x)
	}
}

// place puts x in the hole at i, moving it up or down as its key says.
func (h *endHeap) place(i int, x endEntry) {
	if i > 0 && x.less(h.e[(i-1)/2]) {
		h.up(i, x)
		return
	}
	h.down(i, x)
}

// up places x, moving from the hole at i towards the root.
func (h *endHeap) up(i int, x endEntry) {
	for i > 0 {
		p := (i - 1) / 2
		if !x.less(h.e[p]) {
			break
		}
		h.set(i, h.e[p])
		i = p
	}
	h.set(i, x)
}

// down places x, moving from the hole at i towards the leaves.
func (h *endHeap) down(i int, x endEntry) {
	n := len(h.e)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h.e[r].less(h.e[c]) {
			c = r
		}
		if !h.e[c].less(x) {
			break
		}
		h.set(i, h.e[c])
		i = c
	}
	h.set(i, x)
}

// finish takes f off its links. The rates of the rest of its component
// are recomputed once for all flows that end at this instant, from an
// event after theirs (flush): the flows of a synchronisation often end
// together, and each recomputing the component cost most of a replay.
// Their done functions run there, in the order they ended.
func (f *netFlow) finish() {
	n := f.net
	n.drop(f)
	n.ended = append(n.ended, f)
	if !n.flushing {
		n.flushing = true
		n.sim.MustAfter(0, n.flushFn)
	}
}

// flush recomputes the components of the flows that ended and runs their
// done functions, in one batch: the flows those start (a next stage of
// the same synchronisation) share the recomputation.
func (n *Network) flush() {
	n.flushing = false
	ended := n.ended
	n.ended = n.endedSpare[:0]
	n.BeginBatch()
	for _, f := range ended {
		n.recompute(f.path)
	}
	for i, f := range ended {
		d := f.done
		f.done, f.path = nil, nil
		n.spare = append(n.spare, f)
		ended[i] = nil
		if d != nil {
			d()
		}
	}
	n.EndBatch()
	n.endedSpare = ended[:0]
}

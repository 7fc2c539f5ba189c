package resource

// The flows' ends: a heap of them with one engine event at the earliest,
// and the recomputation after the flows ending at one instant.

import (
	"container/heap"

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
		heap.Fix(&n.ends, f.epos)
		return
	}
	f.hasEv = true
	heap.Push(&n.ends, f)
}

// unqueue takes f's end out of the heap, if it is there.
func (n *Network) unqueue(f *netFlow) {
	if !f.hasEv {
		return
	}
	f.hasEv = false
	heap.Remove(&n.ends, f.epos)
}

// arm moves the network's event to the earliest end, if it moved.
func (n *Network) arm() {
	if n.firing {
		return
	}
	if len(n.ends) == 0 {
		if n.hasEv {
			n.sim.Cancel(n.ev)
			n.hasEv = false
		}
		return
	}
	at := n.ends[0].endAt
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
	for len(n.ends) > 0 && n.ends[0].endAt <= now {
		n.ends[0].finish()
	}
	n.firing = false
	n.arm()
}

// endHeap is the network's flow ends as container/heap orders them:
// by endAt, then endSeq; each flow knows its place (epos).
type endHeap []*netFlow

func (h endHeap) Len() int { return len(h) }

func (h endHeap) Less(i, j int) bool {
	return h[i].endAt < h[j].endAt || h[i].endAt == h[j].endAt && h[i].endSeq < h[j].endSeq
}

func (h endHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].epos, h[j].epos = i, j
}

func (h *endHeap) Push(x any) {
	f := x.(*netFlow)
	f.epos = len(*h)
	*h = append(*h, f)
}

func (h *endHeap) Pop() any {
	old := *h
	f := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return f
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

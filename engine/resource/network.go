package resource

import (
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
)

// LinkID names a link of a Network.
type LinkID int

// Network is a set of links (NIC ports in each direction, an SoC's
// summation engine, a switch port) whose capacities in bytes per second
// are shared max-min fairly among flows, each crossing a path of links and
// optionally capped: SimGrid's flow-level model over many links, of which
// Bandwidth is the one-link case. Rates are found by progressive filling:
// every unfrozen flow's rate rises together until a link saturates or a
// flow reaches its cap, which freezes the flows concerned, until all are
// frozen.
//
// Flows that share no link (directly or through other flows) do not affect
// each other, so a start, an end or a cap change recomputes only the
// connected component of links and flows it touches: a rack of jobs on
// their own servers costs per event the size of one job, not of the rack.
// Each flow's end is kept in a heap and moved when its rate changes; the
// engine holds one event for the network, at the earliest end.
// No map is iterated: the order of every pass follows from the events
// so far, so results are deterministic.
type Network struct {
	sim   *engine.Simulator
	links []netLink
	// Flows by slot: a flow's ID is its start's sequence number over
	// its slot (flowSlotBits), so that a lookup is an index and a check,
	// not a map's hash (a map cost a tenth of a replay). A slot is
	// reused once its flow ended; the sequence number keeps IDs unique.
	slots  []*netFlow
	live   int
	lastID uint64

	// scratch for a component: reused so that an event allocates nothing
	// in steady state.
	compFlows []*netFlow
	compLinks []LinkID
	mark      []uint64 // per link: the component pass that visited it
	pass      uint64
	stack     []LinkID
	seeds     []LinkID
	heap      []fillEntry
	unfrozen  []*netFlow // fillByLevels' scratch
	active    []LinkID   // fillByLevels' scratch
	dirty     []LinkID   // fillByHeap's scratch
	caps      []fillEntry
	spare     []*netFlow // finished flows, reused

	// A batch (BeginBatch to EndBatch, nested to depth batch): the seeds
	// of the recomputations deferred to its end.
	batch    int
	deferred []LinkID

	// Flows that ended at this instant, their rates recomputed and done
	// functions run together by flush.
	ended, endedSpare []*netFlow
	flushing          bool
	flushFn           func()

	// The flows' ends: a binary heap by (endAt, endSeq), and one engine
	// event at the earliest (ev at evAt, while hasEv), moved only when
	// the earliest end moves. A flow's own event, moved at every change
	// of its rate, cost a cancellation and an insertion into the engine's
	// queue per flow of a recomputed component (most of a replay with
	// every job in the pool).
	ends   endHeap
	endSeq uint64
	ev     engine.Handle
	evAt   engine.Time
	hasEv  bool
	firing bool // fire is ending the flows due now: it arms once, after them
	fireFn func()
}

type netLink struct {
	capacity float64
	flows    []*netFlow // crossing it, in start order
	left     float64    // scratch: capacity left during filling
	unfrozen int        // scratch: its flows not yet frozen
	hpos     int        // scratch: its place in fillByHeap's heap, -1 when out
	dirty    bool       // scratch: fillByHeap has its key to move
}

type netFlow struct {
	id        FlowID
	slot      int
	running   bool // on its links: started, not finished or cancelled
	path      []LinkID
	cap       float64 // +Inf when uncapped
	remaining float64 // bytes at time at
	at        engine.Time
	rate      float64
	fill      float64 // scratch: the rate being filled
	frozen    bool    // scratch
	mark      uint64  // scratch: the component pass that collected it
	// Its end: queued in the network's ends at endAt (hasEv), ordered
	// among flows ending at one instant by endSeq, when it was set.
	endAt    engine.Time
	endSeq   uint64
	epos     int // its place in ends while hasEv
	hasEv    bool
	reset    bool // Reset gave it new bytes: its end moves at the next recomputation
	done     func()
	finishFn func() // f.finish, bound once
	net      *Network
}

// Transfer is one flow for StartAll: bytes over path (kept, not copied:
// it must not change while the flow runs), at most Cap bytes per second
// (<= 0: uncapped), then Done (may be nil).
type Transfer struct {
	Bytes float64
	Path  []LinkID
	Cap   float64
	Done  func()
}

// NewNetwork returns an empty network on sim.
func NewNetwork(sim *engine.Simulator) (*Network, error) {
	if sim == nil {
		return nil, fmt.Errorf("resource: NewNetwork needs a simulator, got nil")
	}
	n := &Network{sim: sim}
	n.flushFn = n.flush
	n.fireFn = n.fire
	return n, nil
}

// AddLink adds a link of the given capacity (> 0 bytes per second).
func (n *Network) AddLink(bytesPerSec float64) (LinkID, error) {
	if err := checkRate("link capacity (bytes per second)", bytesPerSec, false); err != nil {
		return -1, err
	}
	n.links = append(n.links, netLink{capacity: bytesPerSec})
	n.mark = append(n.mark, 0)
	return LinkID(len(n.links) - 1), nil
}

// Capacity is link l's capacity in bytes per second.
func (n *Network) Capacity(l LinkID) float64 { return n.links[l].capacity }

// Start begins a transfer of bytes over path (at least one link, none
// twice; kept, not copied: it must not change while the flow runs), at
// most capBytesPerSec (<= 0: uncapped); done (may be nil) runs when the
// last byte has crossed. A transfer of zero bytes finishes at the current
// time, from an event. Bad arguments are model bugs and panic.
func (n *Network) Start(bytes float64, path []LinkID, capBytesPerSec float64, done func()) FlowID {
	f := n.add(Transfer{Bytes: bytes, Path: path, Cap: capBytesPerSec, Done: done})
	n.recompute(f.path)
	return f.id
}

// StartAll starts the transfers at once, with one recomputation of the
// rates for all of them (the flows of a synchronisation start together:
// started one by one, k flows would recompute a growing component k
// times), and appends their IDs to ids.
func (n *Network) StartAll(ts []Transfer, ids []FlowID) []FlowID {
	seeds := n.seeds[:0]
	for _, t := range ts {
		f := n.add(t)
		ids = append(ids, f.id)
		seeds = append(seeds, f.path...)
	}
	n.seeds = seeds
	if len(ts) > 0 {
		n.recompute(seeds)
	}
	return ids
}

// add checks t and puts its flow on its links, without recomputing.
func (n *Network) add(t Transfer) *netFlow {
	bytes, path := t.Bytes, t.Path
	checkBytes(bytes)
	capBytesPerSec := flowCap(t.Cap)
	if len(path) == 0 {
		panic("resource: network flow with an empty path")
	}
	for i, l := range path {
		if l < 0 || int(l) >= len(n.links) {
			panic(fmt.Sprintf("resource: network flow over unknown link %d", l))
		}
		if slices.Contains(path[:i], l) {
			panic(fmt.Sprintf("resource: network flow crosses link %d twice", l))
		}
	}
	n.lastID++
	var f *netFlow
	if k := len(n.spare); k > 0 {
		f = n.spare[k-1]
		n.spare = n.spare[:k-1]
	} else {
		f = &netFlow{net: n, slot: len(n.slots)}
		f.finishFn = f.finish
		n.slots = append(n.slots, f)
	}
	f.id = FlowID(n.lastID<<flowSlotBits | uint64(f.slot))
	f.path, f.cap, f.remaining, f.at, f.done = path, capBytesPerSec, bytes, n.sim.Now(), t.Done
	f.rate, f.fill, f.frozen, f.hasEv, f.running, f.reset = 0, 0, false, false, true, false
	n.live++
	for _, l := range f.path {
		n.links[l].flows = append(n.links[l].flows, f)
	}
	return f
}

// flowSlotBits is the low bits of a FlowID that name its slot.
const flowSlotBits = 24

// flow is the running flow id names, or nil.
func (n *Network) flow(id FlowID) *netFlow {
	s := uint64(id) & (1<<flowSlotBits - 1)
	if s >= uint64(len(n.slots)) {
		return nil
	}
	if f := n.slots[s]; f.running && f.id == id {
		return f
	}
	return nil
}

// SetCap changes flow id's cap from now on (<= 0: uncapped); bytes sent so
// far are kept. Unknown or finished flows are ignored.
func (n *Network) SetCap(id FlowID, capBytesPerSec float64) {
	f := n.flow(id)
	if f == nil {
		return
	}
	f.cap = flowCap(capBytesPerSec)
	n.recompute(f.path)
}

// checkBytes panics on a flow's bytes that are negative, infinite or
// NaN: a model bug.
func checkBytes(bytes float64) {
	if !(bytes >= 0) || math.IsInf(bytes, 1) {
		panic(fmt.Sprintf("resource: network flow of %v bytes: bytes must be a finite number >= 0", bytes))
	}
}

// flowCap is a flow's cap as the fill reads it: +Inf for none (<= 0). A
// NaN cap is a model bug and panics.
func flowCap(capBytesPerSec float64) float64 {
	if math.IsNaN(capBytesPerSec) {
		panic("resource: network flow cap is NaN")
	}
	if capBytesPerSec <= 0 {
		return math.Inf(1)
	}
	return capBytesPerSec
}

// Reset gives running flow id bytes left to send from now and a new cap
// (<= 0: uncapped), keeping its path, its done function and its place
// on its links: a cancel and a start of the same transfer without the
// links' bookkeeping (a regrant re-splits every flow of a job whose
// share of an aggregator pool moved, most of a replay with many jobs
// synchronising at once). It reports whether id was running; one that
// was not is left alone.
func (n *Network) Reset(id FlowID, bytes, capBytesPerSec float64) bool {
	f := n.flow(id)
	if f == nil {
		return false
	}
	checkBytes(bytes)
	f.remaining, f.at, f.cap = bytes, n.sim.Now(), flowCap(capBytesPerSec)
	// Its end moves even where its rate does not (recomputeNow keeps
	// the end of a flow whose rate stayed, unless reset): in place in
	// the heap, which one move costs less than a removal and a push.
	f.reset = true
	n.recompute(f.path)
	return true
}

// Cancel stops flow id without running its done function and returns the
// bytes it had left (0 for an unknown or finished flow).
func (n *Network) Cancel(id FlowID) float64 {
	f := n.flow(id)
	if f == nil {
		return 0
	}
	left := n.remainingAt(f, n.sim.Now())
	n.drop(f)
	n.recompute(f.path)
	f.done, f.path = nil, nil
	n.spare = append(n.spare, f)
	return left
}

// CancelAll cancels the flows of ids that are still running, as Cancel
// does, with one recomputation of rates for all of them (a regrant stops
// a synchronisation's flows together). It appends to left what each flow
// of ids had left (0 for one finished or unknown) and returns it.
func (n *Network) CancelAll(ids []FlowID, left []float64) []float64 {
	seeds := n.seeds[:0]
	now := n.sim.Now()
	for _, id := range ids {
		f := n.flow(id)
		if f == nil {
			left = append(left, 0)
			continue
		}
		left = append(left, n.remainingAt(f, now))
		n.drop(f)
		seeds = append(seeds, f.path...)
		f.done, f.path = nil, nil
		n.spare = append(n.spare, f)
	}
	n.seeds = seeds
	if len(seeds) > 0 {
		n.recompute(seeds)
	}
	return left
}

// Rate is flow id's rate now (0 when finished or unknown).
func (n *Network) Rate(id FlowID) float64 {
	if f := n.flow(id); f != nil {
		return f.rate
	}
	return 0
}

// Remaining is what flow id has left to send now (0 when finished or
// unknown).
func (n *Network) Remaining(id FlowID) float64 {
	if f := n.flow(id); f != nil {
		return n.remainingAt(f, n.sim.Now())
	}
	return 0
}

// Running says whether flow id is still sending: false once it finished
// (even before its done function has run) or was cancelled, so that a
// caller cancelling flows knows which done functions will still run.
func (n *Network) Running(id FlowID) bool {
	return n.flow(id) != nil
}

// Flows is the number of flows in progress.
func (n *Network) Flows() int { return n.live }

func (n *Network) remainingAt(f *netFlow, now engine.Time) float64 {
	return max(0, f.remaining-f.rate*(now-f.at).Seconds())
}

// drop takes f off its links (it finished or was cancelled).
func (n *Network) drop(f *netFlow) {
	n.unqueue(f)
	f.running = false
	n.live--
	for _, l := range f.path {
		fl := n.links[l].flows
		i := slices.Index(fl, f)
		n.links[l].flows = slices.Delete(fl, i, i+1)
	}
}

// component collects the links and flows reachable from the links of
// seed (see walk), all of the components they touch together.
func (n *Network) component(seed []LinkID) {
	n.pass++
	n.compLinks, n.compFlows = n.compLinks[:0], n.compFlows[:0]
	for _, l := range seed {
		n.walk(l)
	}
}

// walk appends to compLinks and compFlows the links and flows reachable
// from link l not yet met in this pass, in the order a depth-first walk
// meets them: each link's flows in start order. That order is a
// function of the events so far, so results are deterministic without
// sorting (which cost a tenth of a replay).
func (n *Network) walk(l LinkID) {
	if n.mark[l] == n.pass {
		return
	}
	links, flows := n.compLinks, n.compFlows
	n.mark[l] = n.pass
	stack := append(n.stack[:0], l)
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		links = append(links, l)
		for _, f := range n.links[l].flows {
			if f.mark == n.pass {
				// Its path was pushed when it was first met: every
				// link of it is marked already.
				continue
			}
			f.mark = n.pass
			flows = append(flows, f)
			for _, m := range f.path {
				if n.mark[m] != n.pass {
					n.mark[m] = n.pass
					stack = append(stack, m)
				}
			}
		}
	}
	n.compLinks, n.compFlows, n.stack = links, flows, stack
}

// recompute finds the max-min fair rates of the flows of the component
// of seed by progressive filling, or, in a batch, defers that to its end
// (see BeginBatch).
func (n *Network) recompute(seed []LinkID) {
	if n.batch > 0 {
		n.deferred = append(n.deferred, seed...)
		return
	}
	n.recomputeNow(seed)
}

// recomputeNow finds the max-min fair rates of the flows of the
// component of seed; a flow whose rate changed is brought up to now and
// its end moved. One whose rate did not keeps its end where it was, and
// a component of many flows (every job's flows through one SmartNIC)
// costs a move only for those that changed.
func (n *Network) recomputeNow(seed []LinkID) {
	now := n.sim.Now()
	// Each connected component of the seeds' is filled on its own: a
	// batch's seeds (every job a regrant touched) span many components,
	// and one fill over their union costs the large form's sort and heap
	// where each alone takes the passes of a small one.
	n.pass++
	for _, l := range seed {
		if n.mark[l] == n.pass {
			continue // in a component filled already
		}
		if len(n.links[l].flows) == 0 {
			n.mark[l] = n.pass // no flow left on it: nothing to fill
			continue
		}
		if f := n.alone(l); f != nil {
			// A flow alone on its links (a worker's own NIC both ways,
			// most of a replay's components with every job in the
			// pool) gets the least of their capacities and its cap:
			// the rate fill gives it, without the walk and passes.
			f.fill = f.cap
			for _, m := range f.path {
				n.mark[m] = n.pass
				f.fill = min(f.fill, n.links[m].capacity)
			}
			f.mark = n.pass
			n.takeFill(f, now)
			continue
		}
		n.compLinks, n.compFlows = n.compLinks[:0], n.compFlows[:0]
		var flows []*netFlow
		if path := n.together(l); path != nil {
			// Flows that all cross the same links and share them with
			// no other (a worker's own NIC both ways, carrying its
			// flow through the device and its parameter-server shard's
			// leg): the walk would collect them in link l's order.
			flows = append(n.compFlows, n.links[l].flows...)
			for _, m := range path {
				n.mark[m] = n.pass
			}
			for _, f := range flows {
				f.mark = n.pass
			}
			n.compFlows = flows
			n.fillTogether(flows, path)
		} else {
			n.walk(l)
			flows = n.compFlows
			n.fill(flows, n.compLinks)
		}
		for _, f := range flows {
			f.frozen = false
			n.takeFill(f, now)
		}
		// The component's scratch slices are reused; the flows keep
		// nothing of them.
		clear(n.compFlows)
	}
	n.arm()
}

// takeFill makes f's filled rate its rate: a flow whose rate changed,
// or whose bytes Reset changed, is brought up to now and its end moved;
// one whose rate stayed keeps its end where it was.
func (n *Network) takeFill(f *netFlow, now engine.Time) {
	if f.fill == f.rate && !f.reset && (f.hasEv || !(f.rate > 0)) {
		return
	}
	f.reset = false
	f.remaining = n.remainingAt(f, now)
	f.at = now
	f.rate = f.fill
	n.schedule(f, now)
}

// alone is the flow on link l when it is the only flow on every link of
// its path (its component is itself), else nil.
func (n *Network) alone(l LinkID) *netFlow {
	fl := n.links[l].flows
	if len(fl) != 1 {
		return nil
	}
	f := fl[0]
	for _, m := range f.path {
		if len(n.links[m].flows) != 1 {
			return nil
		}
	}
	return f
}

// together is the path of the flows on link l when there are several and
// each crosses exactly the links of the first's path, which carry no
// other flow (their component is those flows on those links), else nil.
func (n *Network) together(l LinkID) []LinkID {
	fl := n.links[l].flows
	if len(fl) < 2 {
		return nil
	}
	path := fl[0].path
	if len(fl)+len(path) > heapFillAbove {
		return nil // fill would take the heap's form
	}
	for _, m := range path {
		if len(n.links[m].flows) != len(fl) {
			return nil
		}
	}
	for _, f := range fl[1:] {
		if len(f.path) != len(path) {
			return nil
		}
		for _, m := range f.path {
			if !slices.Contains(path, m) {
				return nil
			}
		}
	}
	return path
}

// BeginBatch defers the recomputation of rates that starts, ends,
// cancellations and cap changes would each make until the matching
// EndBatch, which makes one for all of them (batches nest; the outermost
// EndBatch recomputes). A caller batches the network calls it makes at
// one instant: a job entering its synchronisation regrants every job
// whose share of the pool it changes, and each regrant cancels and
// restarts that job's flows, which unbatched recomputed their component
// twice per regrant (most of a replay).
//
// Inside a batch, Rate reports the rates from before it; Remaining,
// Running and Cancel's bytes left are exact (bytes sent up to now do not
// depend on the rates set now). A flow's end is moved once,
// at the end, if its rate changed over the batch: a rate that changed and
// came back keeps its end where it was.
func (n *Network) BeginBatch() { n.batch++ }

// EndBatch ends a batch (see BeginBatch) and reports whether one was open.
func (n *Network) EndBatch() bool {
	if n.batch == 0 {
		return false
	}
	n.batch--
	if n.batch == 0 && len(n.deferred) > 0 {
		seeds := n.deferred
		n.recomputeNow(seeds)
		n.deferred = seeds[:0]
	}
	return true
}

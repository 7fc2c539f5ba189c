package training

import (
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/policies/ina"
)

// flowSpec is one transfer of a synchronisation.
type flowSpec struct {
	bytes float64
	path  []resource.LinkID
	cap   float64 // bytes/s; 0: uncapped
	ina   bool    // an in-network flow (its cap follows the job's slots)
	// legAt is a parameter server's leg's place among the job's leg
	// servers (legServers, resultsViaPS), -1 for any other flow: set
	// through leg, so that a flowSpec left unset is no leg.
	legAt int
	leg   bool
}

// phaseFlow is a running flow of a job's phase and the spec it was
// started or last reset with.
type phaseFlow struct {
	id   resource.FlowID
	spec flowSpec
}

// syncPlan is one synchronisation phase of a spanning job: its flows
// start together (a parameter server's push and pull too, pipelined),
// then, once all are done, a fixed tail of latencies and the work inside
// the servers.
type syncPlan struct {
	flows []flowSpec
	tail  engine.Time
}

// need is the slots a synchronising job holds in flight (its
// bandwidth-delay product, setup.inFlight).
func (r *rack) need() int { return r.st.need }

// inaCap is the rate a window of slots streams at on the wire: slots x
// a chunk's packet (its slot bytes and headers) per chunk round trip.
func (r *rack) inaCap(slots int) float64 {
	return float64(slots) * (r.dev.SlotBytes + r.dev.ChunkHeaderBytes) / r.dev.ChunkRTT.Seconds()
}

// inaPath is a worker server's path through the aggregating device: its
// own NIC both ways (a switch sums at line rate on every port), and for a
// SmartNIC the SmartNIC's port in, its summation and its port out.
// The path is built once per server and shared by its flows (the
// network keeps paths, and none changes).
func (r *rack) inaPath(s int) []resource.LinkID {
	sv := &r.servers[s]
	if sv.ina == nil {
		if r.smartNIC {
			sv.ina = []resource.LinkID{sv.tx, r.nicIn, r.nicSum, r.nicOut, sv.rx}
		} else {
			sv.ina = []resource.LinkID{sv.tx, sv.rx}
		}
	}
	return sv.ina
}

// psPath is the path of job j's i-th server to a parameter server on its
// first server and back (fallback ps-single): built once per job.
func (r *rack) psPath(j *jobState, i int) []resource.LinkID {
	if j.psPaths == nil {
		ps := j.servers[0]
		j.psPaths = make([][]resource.LinkID, len(j.servers))
		for x, s := range j.servers[1:] {
			j.psPaths[x+1] = []resource.LinkID{r.servers[s].tx, r.servers[ps].rx, r.servers[ps].tx, r.servers[s].rx}
		}
	}
	return j.psPaths[i]
}

// shardPath is job j's i-th server to its successor among the job's
// servers (fallback ps-sharded, see fallback); built once per job.
func (r *rack) shardPath(j *jobState, i int) []resource.LinkID {
	if j.shardPaths == nil {
		k := len(j.servers)
		j.shardPaths = make([][]resource.LinkID, k)
		for x, s := range j.servers {
			j.shardPaths[x] = []resource.LinkID{r.servers[s].tx, r.servers[j.servers[(x+1)%k]].rx}
		}
	}
	return j.shardPaths[i]
}

// fallbackBytes is what one fallback flow carries on the wire for f
// bytes of each worker's gradient not aggregated in the network (in the
// chunks' packets, which the device forwards as they came): ps-single, f from
// each of the k-1 other servers to the first and the sum back (one flow
// over both directions: push and pull pipeline chunk by chunk);
// ps-sharded, a parameter-server shard co-located on each of the k
// servers (BytePS's co-located mode): each server pushes (k-1)/k f to
// the others' shards and sends its own shard's sums, (k-1)/k f, back to
// each, so every NIC carries 2(k-1)/k f each way, the bytes of a ring
// all-reduce of f. One flow per server to its successor carries them,
// loading every link as the k(k-1) push and pull flows would.
func (r *rack) fallbackBytes(j *jobState, f float64) float64 {
	f *= r.st.inaWire
	if r.cfg.INA.Fallback == FallbackSingle {
		return f
	}
	k := float64(len(j.servers))
	return 2 * (k - 1) / k * f
}

// fallback appends the flows of f bytes of each worker's gradient sent to
// job j's fallback.
func (r *rack) fallback(j *jobState, f float64, fl []flowSpec) []flowSpec {
	if !(f > 0) {
		return fl
	}
	b := r.fallbackBytes(j, f)
	if r.cfg.INA.Fallback == FallbackSingle {
		for i := 1; i < len(j.servers); i++ {
			fl = append(fl, flowSpec{bytes: b, path: r.psPath(j, i)})
		}
		return fl
	}
	for i := range j.servers {
		fl = append(fl, flowSpec{bytes: b, path: r.shardPath(j, i)})
	}
	return fl
}

// plan lays out job j's synchronisation under grant g. The host
// all-reduce's plan is built once per job; an in-network one into the
// job's buffers, valid until its next plan.
func (r *rack) plan(j *jobState, g ina.Grant) syncPlan {
	if g.Ring {
		k := len(j.servers)
		if j.ringPlan.flows != nil {
			return j.ringPlan
		}
		switch r.cfg.Sync.AllReduce {
		case AllReducePS:
			// Push and pull pipelined chunk by chunk, as BytePS runs its
			// servers: each worker's push and pull are one flow over
			// both directions (its NIC out, the PS's in and out, its NIC
			// in), so the pull of a chunk keeps pace with its push and
			// can never run ahead of the sums (psPath, as the fallback
			// ps-single). No pipeline fill or PS summation time is
			// counted: the first partition's (k-1) P/B before its pull
			// starts (P: BytePS's partition bytes, a setting) is left
			// out.
			var flows []flowSpec
			b := j.grad * r.st.hostWire
			for i := 1; i < len(j.servers); i++ {
				flows = append(flows, flowSpec{bytes: b, path: r.psPath(j, i)})
			}
			j.ringPlan = syncPlan{flows: flows, tail: 2*r.cfg.Cluster.NetLatency.Time() + j.ringLocal}
		default:
			bytes, lat := r.ringBytes(j)
			bytes *= r.st.hostWire
			var ring []flowSpec
			for i, s := range j.servers {
				next := j.servers[(i+1)%k]
				ring = append(ring, flowSpec{bytes: bytes, path: []resource.LinkID{r.servers[s].tx, r.servers[next].rx}})
			}
			j.ringPlan = syncPlan{flows: ring, tail: lat + j.ringLocal}
		}
		return j.ringPlan
	}
	fl := r.inaFlows(j, g, j.grad, 0, nil, j.specBuf[:0])
	j.specBuf = fl
	return syncPlan{flows: fl, tail: r.dev.ChunkRTT + j.local}
}

// inaFlows appends the flows of an in-network synchronisation of left
// bytes of each worker's gradient under grant g: the share g.PSFraction
// (all of it without slots) and extra bytes (evicted partial aggregates)
// to the fallback, the rest through the device at the rate its slots
// allow (slots x chunk bytes per round trip). Under ATP's protocol
// (resultsViaPS) every aggregated chunk also goes from the device to the
// job's parameter server and its result back (psLegs); lag is what each
// leg had left beyond its share of the workers' in-network bytes when a
// regrant re-split them (nil at a phase's start).
func (r *rack) inaFlows(j *jobState, g ina.Grant, left, extra float64, lag []float64, fl []flowSpec) []flowSpec {
	fb := g.PSFraction * left
	if g.Slots == 0 {
		fb = left
	}
	in := max(0, left-fb)
	if in > 0 {
		for _, s := range j.servers {
			fl = append(fl, flowSpec{bytes: in * r.st.inaWire, path: r.inaPath(s), cap: r.inaCap(g.Slots), ina: true})
		}
	}
	if r.resultsViaPS {
		fl = r.psLegs(j, in, r.inaCap(g.Slots), lag, fl)
	}
	return r.fallback(j, fb+extra, fl)
}

// psLegs appends the parameter server's legs of in bytes of each
// worker's gradient aggregated in the device at a chunk rate of cap (wire
// bytes per second): the device sends each aggregated chunk to the PS
// and the PS's reply carries the result back to the device, which
// multicasts it to the workers (their in-network flows carry that). PS
// shards on each of the job's k servers (ps-sharded) each take 1/k of
// the chunks; ps-single's PS on the job's first server takes them all.
// A leg crosses its server's NIC both ways (and a SmartNIC aggregator's
// port out and in). A leg does not keep pace with its workers' flows (it
// takes another share of its NIC), so a regrant carries each leg's own
// progress over: lag[i], wire bytes it had left beyond its share of what
// the workers had left, is added to its share of the new in-network
// bytes (a leg that ran ahead has a negative lag). Without slots (cap 0)
// a leg still owes the results of chunks already aggregated: uncapped.
func (r *rack) psLegs(j *jobState, in, cap float64, lag []float64, fl []flowSpec) []flowSpec {
	servers, share := r.legServers(j)
	for i, s := range servers {
		b := share * in * r.st.inaWire
		if i < len(lag) {
			b += lag[i]
		}
		if b > 0 {
			fl = append(fl, flowSpec{bytes: b, path: r.legPath(s), cap: share * cap, ina: true, leg: true, legAt: i})
		}
	}
	return fl
}

// legServers is the servers of job j's PS legs and each one's share of
// the aggregated chunks: a shard on each (ps-sharded), or ps-single's PS
// on the first.
func (r *rack) legServers(j *jobState) ([]int, float64) {
	if r.cfg.INA.Fallback == FallbackSingle {
		return j.servers[:1], 1
	}
	return j.servers, 1 / float64(len(j.servers))
}

// legPath is a parameter server's leg on server s (see psLegs), built
// once per server.
func (r *rack) legPath(s int) []resource.LinkID {
	sv := &r.servers[s]
	if sv.leg == nil {
		if r.smartNIC {
			sv.leg = []resource.LinkID{r.nicOut, sv.rx, sv.tx, r.nicIn}
		} else {
			sv.leg = []resource.LinkID{sv.rx, sv.tx}
		}
	}
	return sv.leg
}

// planFresh is plan into slices of its own, for timing a phase (planTime)
// while the job's buffers may hold the plan in flight.
func (r *rack) planFresh(j *jobState, g ina.Grant) syncPlan {
	spec := j.specBuf
	j.specBuf = nil
	p := r.plan(j, g)
	j.specBuf = spec
	return p
}

// planTime is how long plan p takes on links of the rack's capacities
// with no other traffic: the same flows on a network of its own, so that
// it equals a lone job's simulated phase to the nanosecond.
func (r *rack) planTime(p syncPlan) engine.Time {
	sim := engine.New(nil)
	net, _ := resource.NewNetwork(sim)
	for l := range r.linkCount() {
		net.AddLink(r.net.Capacity(resource.LinkID(l)))
	}
	for _, f := range p.flows {
		net.Start(f.bytes, f.path, f.cap, nil)
	}
	sim.Run()
	return sim.Now() + p.tail
}

func (r *rack) linkCount() int {
	n := 2 * len(r.servers)
	if r.smartNIC {
		n += 3
	}
	return n
}

// demand is what job k asks the policy for.
func (r *rack) demand(k int) ina.Demand {
	j := &r.jobs[k]
	n := j.spec.Iterations - j.iters
	work := float64(n) * (j.compute.Seconds() + r.idealSync(j).Seconds())
	return ina.Demand{Job: k, Window: r.dev.PerJobSlots, Need: r.need(), RemainingIterations: n,
		RemainingBytes: float64(n) * j.grad, Work: work, Arrival: k}
}

// idealSync is a phase of job j with its whole window and nothing else on
// its links (what it takes when it waits for nothing).
func (r *rack) idealSync(j *jobState) engine.Time {
	if len(j.servers) == 1 {
		return j.local
	}
	if j.ideal == 0 {
		j.ideal = r.planTime(r.planFresh(j, ina.Grant{Slots: r.need()}))
	}
	return j.ideal
}

// beginIteration starts job k's next iteration phase by phase, or, when
// nothing can change its pace, all its remaining iterations at once.
func (r *rack) beginIteration(k int) {
	j := &r.jobs[k]
	if r.isolatedNow(k) {
		r.fastForward(k)
		return
	}
	j.phase = phaseCompute
	r.stepped++
	r.sim.MustAfter(j.compute, j.onCompute)
}

// computeDone ends an iteration's compute: its synchronisation starts,
// or, with overlap full and the previous one still in flight, waits for it.
func (r *rack) computeDone(k int) {
	j := &r.jobs[k]
	j.computeEnd = true
	if !j.syncBusy {
		r.startSync(k)
	}
}

// startSync begins job k's synchronisation phase (with overlap full, the
// next iteration's compute starts beside it).
func (r *rack) startSync(k int) {
	j := &r.jobs[k]
	j.phase, j.syncStart = phaseSync, r.sim.Now()
	j.computeEnd, j.syncBusy = false, true
	if r.cfg.Sync.Overlap == "full" && j.iters+1 < j.spec.Iterations {
		r.stepped++
		r.sim.MustAfter(j.compute, j.onCompute)
	}
	if len(j.servers) == 1 {
		r.sim.MustAfter(j.local, j.onEndSync)
		return
	}
	// A job on its host ring (ina.use) asks the pool for nothing.
	r.ringGrant[0] = ina.Grant{Job: k, Ring: true}
	gs := r.ringGrant[:]
	if !j.hostRing {
		gs = r.pol.Enter(r.demand(k))
	}
	j.grant = gs[0]
	j.waitMark, j.waitNow, j.waitAcc = r.sim.Now(), r.waitShare(j, j.grant), 0
	r.setHeld(k, j.grant)
	// The regrants and the job's flows at this instant recompute the
	// rates once, at the batch's end (see resource.Network.BeginBatch).
	r.net.BeginBatch()
	for _, g := range gs[1:] {
		r.regrant(g)
	}
	r.beginPhase(j, r.plan(j, j.grant))
	r.runPhase(k)
	r.net.EndBatch()
}

// beginPhase makes p job j's phase in flight, its flows not yet started.
func (r *rack) beginPhase(j *jobState, p syncPlan) {
	j.tail, j.planned, j.flowsOn, j.pending = p.tail, p.flows, false, 0
}

// runPhase runs job k's phase in flight: its flows start together; once
// the last of them is done (j.pending reaches 0 in flowDone), or at once
// without any, the tail.
func (r *rack) runPhase(k int) {
	j := &r.jobs[k]
	if !j.flowsOn && len(j.planned) > 0 {
		j.flowsOn = true
		r.startFlows(j, j.planned)
		return
	}
	r.sim.MustAfter(j.tail, j.onEndSync)
}

// startFlows starts a phase's flows, recording them (j.flows) for a
// regrant.
func (r *rack) startFlows(j *jobState, st []flowSpec) {
	j.flows = j.flows[:0]
	r.startBeside(j, st)
}

// startBeside starts the flows of st beside job j's running ones.
func (r *rack) startBeside(j *jobState, st []flowSpec) {
	j.transfers = j.transfers[:0]
	for _, f := range st {
		j.transfers = append(j.transfers, resource.Transfer{Bytes: f.bytes, Path: f.path, Cap: f.cap, Done: j.onFlow})
	}
	j.ids = r.net.StartAll(j.transfers, j.ids[:0])
	for i, id := range j.ids {
		j.flows = append(j.flows, phaseFlow{id: id, spec: st[i]})
	}
	j.pending += len(st)
}

// flowDone is called when one of job k's flows has finished.
func (r *rack) flowDone(k int) {
	j := &r.jobs[k]
	j.pending--
	if j.pending == 0 {
		r.runPhase(k)
	}
}

// regrant applies a changed grant to a job in its synchronisation. A
// chunk holds its aggregator for one round trip, so a new grant applies
// from the next chunk on: the bytes each worker has left are split anew
// between the device (at the rate of its new slots) and the fallback
// (its new collided share), and the partial aggregates evicted from it
// (esa) go to the fallback too. Collided aggregators are tried again by
// the next chunks: a job whose collisions end comes back to the device
// within its phase.
func (r *rack) regrant(g ina.Grant) {
	j := &r.jobs[g.Job]
	r.setHeld(g.Job, g)
	if j.phase != phaseSync || j.grant.Ring || g.Ring || j.pending == 0 || len(j.flows) == 0 {
		j.grant.Slots, j.grant.PSFraction = g.Slots, g.PSFraction
		return
	}
	r.regrants++
	r.markWait(j, g)
	j.grant.Slots, j.grant.PSFraction = g.Slots, g.PSFraction
	// What each worker has left: the most any of its flows through the
	// device has left, plus the fallback's, in gradient bytes (the flows
	// carry wire bytes).
	var in, fb float64
	running := 0
	j.left = j.left[:0]
	for _, f := range j.flows {
		b := 0.0
		if r.net.Running(f.id) {
			running++
			b = r.net.Remaining(f.id)
		}
		j.left = append(j.left, b)
	}
	if running == 0 {
		return // the phase's flows have all ended; their done functions end it
	}
	for i, f := range j.flows {
		if j.left[i] == 0 || f.spec.leg {
			continue // a PS leg carries its own progress over (psLegs)
		}
		if f.spec.ina {
			in = max(in, j.left[i])
		} else {
			fb = max(fb, j.left[i])
		}
	}
	// Each PS leg's lag behind its share of the workers' bytes, by its
	// place among the leg servers (a leg that had ended, or was not
	// started since it was ahead, has 0 left: a negative lag).
	j.legLag = j.legLag[:0]
	if r.resultsViaPS {
		servers, share := r.legServers(j)
		for range servers {
			j.legLag = append(j.legLag, -share*in)
		}
		for i, f := range j.flows {
			if f.spec.leg {
				j.legLag[f.spec.legAt] += j.left[i]
			}
		}
	}
	left := in/r.st.inaWire + fb/r.fallbackBytes(j, 1)
	extra := float64(g.Evicted) * r.dev.SlotBytes
	fl := r.inaFlows(j, g, left, extra, j.legLag, j.specBuf[:0])
	j.specBuf = fl
	r.reshape(j, fl)
	if j.pending == 0 {
		r.runPhase(g.Job)
	}
}

// reshape makes job j's running flows those of fl: a running flow on the
// path of one of fl's is reset to its bytes and cap in place (each path
// is built once, for one kind of flow of one server or pair, so the same
// slice is the same flow), the flows of fl without one start, and the
// running flows left over are cancelled (their done functions never
// run).
func (r *rack) reshape(j *jobState, fl []flowSpec) {
	if len(fl) == 0 {
		// Nothing left to send: the running flows stop, and stay listed,
		// so that another regrant at this instant still finds the job in
		// its phase (its wait is marked) until its last done function
		// starts the tail (runPhase).
		for _, f := range j.flows {
			if r.net.Running(f.id) {
				r.net.Cancel(f.id)
				j.pending--
			}
		}
		return
	}
	n := len(j.flows)
	used := j.used[:0]
	for range n {
		used = append(used, false)
	}
	j.used = used
	j.fresh = j.fresh[:0]
	next := 0 // fl lists its flows in the order they were made: look there first
	for _, f := range fl {
		found := false
		for c := range n {
			i := (next + c) % n
			if used[i] || j.left[i] == 0 || !samePath(j.flows[i].spec.path, f.path) {
				continue
			}
			if r.net.Reset(j.flows[i].id, f.bytes, f.cap) {
				j.flows[i].spec = f
				used[i], found, next = true, true, i+1
				break
			}
		}
		if !found {
			j.fresh = append(j.fresh, f)
		}
	}
	kept := j.flows[:0]
	for i, f := range j.flows {
		if used[i] {
			kept = append(kept, f)
		} else if r.net.Running(f.id) {
			r.net.Cancel(f.id)
			j.pending--
		}
	}
	j.flows = kept
	r.startBeside(j, j.fresh)
}

// samePath says whether a and b are the same path: paths are built once
// and shared, so the same slice.
func samePath(a, b []resource.LinkID) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// The split of a synchronisation into communication and waiting for
// aggregators. Waiting is the time a phase takes beyond what it would
// take with the job's whole window, other things equal; measured without
// a second simulation as a share of the phase's time: while the job holds
// grant g, a share 1 - ideal/alone(g) of it is waiting, where alone(g) is
// the phase on otherwise idle links under g and ideal under the whole
// window. Link contention slows both alike, so it is communication. The
// share is timed once per job and grant, the grant's slots and its
// parameter-server fraction rounded to 1/64 of the window.

// waitShare is the share of job j's synchronisation time spent waiting
// for aggregators while it holds grant g.
func (r *rack) waitShare(j *jobState, g ina.Grant) float64 {
	if g.Ring {
		return 0 // the host all-reduce waits for no aggregator
	}
	w := r.need()
	q := min(64, int(math.Round(64*float64(g.Slots)/float64(w))))
	if g.Slots > 0 {
		q = max(q, 1)
	}
	p := int(math.Round(64 * g.PSFraction))
	if q == 64 && p == 0 {
		return 0
	}
	key := q<<8 | p
	if v, ok := j.shares[key]; ok {
		return v
	}
	alone := r.planTime(r.planFresh(j, ina.Grant{Slots: q * w / 64, PSFraction: float64(p) / 64}))
	share := 0.0
	if ideal := r.idealSync(j); alone > ideal {
		share = 1 - float64(ideal)/float64(alone)
	}
	if j.shares == nil {
		j.shares = map[int]float64{}
	}
	j.shares[key] = share
	return share
}

// markWait adds the waiting since the last mark and starts a new
// interval under grant g.
func (r *rack) markWait(j *jobState, g ina.Grant) {
	now := r.sim.Now()
	j.waitAcc += engine.Time(math.Round(float64(now-j.waitMark) * j.waitNow))
	j.waitMark, j.waitNow = now, r.waitShare(j, g)
}

// endSync ends job k's synchronisation and its iteration.
func (r *rack) endSync(k int) {
	j := &r.jobs[k]
	now := r.sim.Now()
	took := now - j.syncStart
	if r.pooled(j) {
		gs := r.pol.Leave(k)
		r.setHeld(k, ina.Grant{})
		r.net.BeginBatch() // as in startSync
		for _, g := range gs {
			r.regrant(g)
		}
		r.net.EndBatch()
		r.markWait(j, j.grant)
		wait := min(j.waitAcc, took)
		j.commS += (took - wait).Seconds()
		j.waitS += wait.Seconds()
	} else {
		j.commS += took.Seconds()
	}
	j.computeS += j.compute.Seconds()
	j.phase = phaseCompute
	j.syncBusy = false
	j.iters++
	if j.iters >= j.spec.Iterations {
		r.finish(k)
		return
	}
	if r.cfg.Sync.Overlap == "full" {
		if j.computeEnd {
			r.startSync(k)
		}
		return
	}
	r.beginIteration(k)
}

// setHeld records job k's slots for the occupancy series (for a policy
// that reserves slots between phases, see holdReserved).
func (r *rack) setHeld(k int, g ina.Grant) {
	if _, ok := r.pol.(ina.Reserver); ok {
		return
	}
	n := float64(g.Slots)
	if g.Ring {
		n = 0
	}
	r.setHeldAvg(k, n)
}

// holdReserved records what every spanning job reserves now, after jobs
// started or ended (a partition freed by one is taken by a waiting one).
func (r *rack) holdReserved() {
	res, ok := r.pol.(ina.Reserver)
	if !ok {
		return
	}
	for _, k := range r.netJobs {
		r.setHeldAvg(k, float64(res.Reserved(k)))
	}
}

// setHeldAvg records job k's (average) slots for the occupancy series.
func (r *rack) setHeldAvg(k int, n float64) {
	if r.held[k] == n {
		return
	}
	if n == 0 {
		delete(r.held, k)
	} else {
		r.held[k] = n
	}
	if r.cfg.RecordJobs {
		r.occupancy = append(r.occupancy, OccupancyPoint{T: r.sim.Now().Seconds(), Job: k, Slots: n})
	}
}

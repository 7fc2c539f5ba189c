package training

// Running the phases: an iteration's compute, its synchronisation's
// flows, regrants when the pool moves under a job, its end, and the
// split of its time into communication and waiting for aggregators.

import (
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/policies/ina"
)

// phaseFlow is a running flow of a job's phase and the spec it was
// started or last reset with.
type phaseFlow struct {
	id   resource.FlowID
	spec flowSpec
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
	j.heldAny = j.heldAny || holds(j.grant)
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
// from the next chunk on: the chunks each worker has not yet sent are
// split anew between the device (at the rate of its new slots) and the
// fallback (its new collided share), and the partial aggregates evicted
// from it (esa) go to the fallback too. Collided aggregators are tried
// again by the next chunks: a job whose collisions end comes back to
// the device within its phase.
//
// Which chunks are not yet sent: a worker's chunks are one stream, of
// which a share p (the old grant's collided share, 1 without slots)
// went to the fallback and the rest to the device, as two flows that
// keep no common pace. The part further along marks the stream's
// position (what it has left, over its share, is the stream's remaining
// R); what the other part has left beyond its share of R was committed
// to its path and stays there (its backlog: collided chunks queued for
// the parameter server, or aggregated ones behind). So a regrant that
// changes nothing moves no byte where the job's workers run in step (a
// re-split of all that was left by the new share, as before, moved the
// fallback's backlog onto the device at every regrant, and charged the
// job the more often it was regranted).
//
// What this reading leaves (a review, docs/decisions/training.md): ATP's window
// holds the two parts within a window of each other, so the slower part
// gates the stream, where here the faster marks it: once the fallback
// has finished, the device's remaining bytes are all backlog and a
// rising collided share moves none of them (taking the slower part
// instead moves esa over atp at 700 slots by 1 to 5 points); one
// position serves every worker (the most any has left), so workers out
// of step (another job on some of their NICs) are set to the slowest's
// bytes; and a grant through p = 0 or no slots forgets the backlog. A
// coupled stream per worker would answer all three.
func (r *rack) regrant(g ina.Grant) {
	j := &r.jobs[g.Job]
	r.setHeld(g.Job, g)
	j.heldAny = j.heldAny || holds(g)
	if j.phase != phaseSync || j.grant.Ring || g.Ring || j.pending == 0 || len(j.flows) == 0 {
		j.grant.Slots, j.grant.PSFraction = g.Slots, g.PSFraction
		return
	}
	r.regrants++
	r.markWait(j, g)
	pOld := j.grant.PSFraction
	if j.grant.Slots == 0 {
		pOld = 1
	}
	j.grant.Slots, j.grant.PSFraction = g.Slots, g.PSFraction
	// What each worker has left on each path, in gradient bytes: the most
	// any of its flows through the device has left (wire bytes, over
	// inaWire), and the most any fallback flow has left (over its per).
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
			fb = max(fb, j.left[i]/f.spec.per)
		}
	}
	// The stream's remaining and the device's backlog (see above).
	inG := in / r.st.inaWire
	var rest, inBack float64
	switch {
	case pOld >= 1:
		rest, inBack = fb, inG
	case pOld <= 0:
		rest = inG
	default:
		rest = min(inG/(1-pOld), fb/pOld)
		inBack = max(0, inG-(1-pOld)*rest)
	}
	// Each fallback path's lag behind its share of the stream (its
	// backlog; negative where it ran ahead, or ended).
	paths, per := r.fallbackPaths(j)
	j.fbLag = j.fbLag[:0]
	for i := range paths {
		j.fbLag = append(j.fbLag, -per[i]*pOld*rest)
	}
	for i, f := range j.flows {
		if !f.spec.ina && !f.spec.leg {
			j.fbLag[f.spec.fbAt] += j.left[i]
		}
	}
	// Each PS leg's lag behind its share of the workers' bytes, by its
	// place among the legs (a leg that had ended, or was not started
	// since it was ahead, has 0 left: a negative lag). The partial
	// aggregates evicted from the job (esa) go from the device to its PS
	// once each, a chunk's packet per evicted aggregator: they ride its
	// legs, spread as the chunks are over the shards (the legs' way back
	// carries them too, an overcharge of one crossing; charged to every
	// worker's fallback they crossed k times, and as flows of their own
	// they cost esa twice the events).
	evicted := float64(g.Evicted) * r.dev.SlotBytes * r.st.inaWire
	j.legLag = j.legLag[:0]
	if r.resultsViaPS {
		lp, share := r.legs(j)
		for range lp {
			j.legLag = append(j.legLag, -share*in+evicted/float64(len(lp)))
		}
		for i, f := range j.flows {
			if f.spec.leg {
				j.legLag[f.spec.legAt] += j.left[i]
			}
		}
	}
	// (Only esa evicts, and it runs ATP's protocol: there are legs.)
	fl := r.inaFlows(j, g, rest, inBack, j.legLag, j.fbLag, j.specBuf[:0])
	j.specBuf = fl
	r.reshape(j, fl)
	if j.pending == 0 {
		r.runPhase(g.Job)
	}
}

// holds says whether grant g gives its job aggregators.
func holds(g ina.Grant) bool { return !g.Ring && g.Slots > 0 }

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
			if len(kept) < i {
				kept = append(kept, f)
			} else {
				kept = kept[:i+1] // in place already: no copy
			}
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
	if key == j.shareKey && j.shares != nil {
		return j.shareLast // a regrant moves a grant by less than the rounding most often
	}
	if v, ok := j.shares[key]; ok {
		j.shareKey, j.shareLast = key, v
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
	j.shareKey, j.shareLast = key, share
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
	r.held[k] = n
	if r.cfg.RecordJobs {
		r.occupancy = append(r.occupancy, OccupancyPoint{T: r.sim.Now().Seconds(), Job: k, Slots: n})
	}
}

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
}

// syncPlan is one synchronisation phase of a spanning job: stages of
// flows run one after the other (a parameter server's push, then its
// pull), then a fixed tail of latencies and the work inside the servers.
type syncPlan struct {
	stages [][]flowSpec
	tail   engine.Time
}

// window is the slots a job's window asks for.
func (r *rack) window() int { return r.dev.PerJobSlots }

// inaCap is the rate a window of slots streams at: slots x slot bytes per
// chunk round trip.
func (r *rack) inaCap(slots int) float64 {
	return float64(slots) * r.dev.SlotBytes / r.dev.ChunkRTT.Seconds()
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

// psPath is the path of job j's i-th server to its parameter server (its
// first) and back: the host path of chunks not aggregated in the network;
// built once per job.
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

// plan lays out job j's synchronisation under grant g. The host
// all-reduce's plan is built once per job; an in-network one into the
// job's buffers, valid until its next plan.
func (r *rack) plan(j *jobState, g ina.Grant) syncPlan {
	k := len(j.servers)
	if g.Ring {
		if j.ringPlan.stages != nil {
			return j.ringPlan
		}
		switch r.cfg.Sync.AllReduce {
		case AllReducePS:
			ps := j.servers[0]
			var push, pull []flowSpec
			for _, s := range j.servers[1:] {
				push = append(push, flowSpec{bytes: j.grad, path: []resource.LinkID{r.servers[s].tx, r.servers[ps].rx}})
				pull = append(pull, flowSpec{bytes: j.grad, path: []resource.LinkID{r.servers[ps].tx, r.servers[s].rx}})
			}
			j.ringPlan = syncPlan{stages: [][]flowSpec{push, pull}, tail: 2*r.cfg.Cluster.NetLatency.Time() + j.local}
		default:
			bytes, lat := r.ringBytes(j)
			var ring []flowSpec
			for i, s := range j.servers {
				next := j.servers[(i+1)%k]
				ring = append(ring, flowSpec{bytes: bytes, path: []resource.LinkID{r.servers[s].tx, r.servers[next].rx}})
			}
			j.ringPlan = syncPlan{stages: [][]flowSpec{ring}, tail: lat + j.local}
		}
		return j.ringPlan
	}
	fl := j.specBuf[:0]
	psBytes := g.PSFraction * j.grad
	if g.Slots == 0 {
		psBytes = j.grad
	}
	if inaBytes := j.grad - psBytes; inaBytes > 0 && g.Slots > 0 {
		for _, s := range j.servers {
			fl = append(fl, flowSpec{bytes: inaBytes, path: r.inaPath(s), cap: r.inaCap(g.Slots), ina: true})
		}
	}
	if psBytes > 0 {
		for i := 1; i < k; i++ {
			fl = append(fl, flowSpec{bytes: psBytes, path: r.psPath(j, i)})
		}
	}
	j.specBuf = fl
	j.stageBuf = append(j.stageBuf[:0], fl)
	return syncPlan{stages: j.stageBuf, tail: r.dev.ChunkRTT + j.local}
}

// planFresh is plan into slices of its own, for timing a phase (planTime)
// while the job's buffers may hold the plan in flight.
func (r *rack) planFresh(j *jobState, g ina.Grant) syncPlan {
	spec, stage := j.specBuf, j.stageBuf
	j.specBuf, j.stageBuf = nil, nil
	p := r.plan(j, g)
	j.specBuf, j.stageBuf = spec, stage
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
	for _, st := range p.stages {
		for _, f := range st {
			net.Start(f.bytes, f.path, f.cap, nil)
		}
		sim.Run()
	}
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
	left := float64(j.spec.Iterations-j.iters) * (j.compute.Seconds() + r.idealSync(j).Seconds())
	return ina.Demand{Job: k, Window: r.window(), Priority: left, Arrival: k}
}

// idealSync is a phase of job j with its whole window and nothing else on
// its links (what it takes when it waits for nothing).
func (r *rack) idealSync(j *jobState) engine.Time {
	if len(j.servers) == 1 {
		return j.local
	}
	if j.ideal == 0 {
		j.ideal = r.planTime(r.planFresh(j, ina.Grant{Slots: r.window()}))
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
	j.phase, j.syncStart, j.onPS = phaseSync, r.sim.Now(), false
	j.computeEnd, j.syncBusy = false, true
	if r.cfg.Sync.Overlap == "full" && j.iters+1 < j.spec.Iterations {
		r.stepped++
		r.sim.MustAfter(j.compute, j.onCompute)
	}
	if len(j.servers) == 1 {
		r.sim.MustAfter(j.local, j.onEndSync)
		return
	}
	gs := r.pol.Enter(r.demand(k))
	j.grant = gs[0]
	j.waitMark, j.waitNow, j.waitAcc = r.sim.Now(), r.waitShare(j, j.grant), 0
	r.setHeld(k, j.grant)
	for _, g := range gs[1:] {
		r.regrant(g)
	}
	p := r.plan(j, j.grant)
	j.tail, j.stages, j.stage, j.pending = p.tail, p.stages, 0, 0
	r.runStages(k)
}

// runStages runs the stages of job k's synchronisation from its stage
// j.stage on: each stage's flows start together; when the last of them is
// done (j.pending reaches 0 in flowDone), the next stage, and after the
// last the tail.
func (r *rack) runStages(k int) {
	j := &r.jobs[k]
	for j.stage < len(j.stages) && len(j.stages[j.stage]) == 0 {
		j.stage++
	}
	if j.stage >= len(j.stages) {
		r.sim.MustAfter(j.tail, j.onEndSync)
		return
	}
	st := j.stages[j.stage]
	j.stage++
	j.inaFlows = j.inaFlows[:0]
	j.transfers = j.transfers[:0]
	for _, f := range st {
		j.transfers = append(j.transfers, resource.Transfer{Bytes: f.bytes, Path: f.path, Cap: f.cap, Done: j.onFlow})
	}
	j.pending += len(st)
	ids := r.net.StartAll(j.transfers, j.ids[:0])
	j.ids = ids
	for i, f := range st {
		if f.ina {
			j.inaFlows = append(j.inaFlows, ids[i])
		}
	}
}

// flowDone is called when one of job k's flows has finished.
func (r *rack) flowDone(k int) {
	j := &r.jobs[k]
	j.pending--
	if j.pending == 0 {
		r.runStages(k)
	}
}

// startExtra starts a flow outside the plan (partial aggregates sent to
// the parameter server), counted with the stage in flight.
func (r *rack) startExtra(k int, bytes float64, path []resource.LinkID) {
	j := &r.jobs[k]
	j.pending++
	r.net.Start(bytes, path, 0, j.onFlow)
}

// regrant applies a changed grant to a job in its synchronisation: more or
// fewer slots move its in-network flows' caps; slots it lost had partial
// aggregates in them, which go to its parameter server; with none left,
// the rest of its phase goes there too (it does not come back within the
// phase).
func (r *rack) regrant(g ina.Grant) {
	j := &r.jobs[g.Job]
	if j.phase != phaseSync || j.grant.Ring || j.onPS || len(j.inaFlows) == 0 {
		r.setHeld(g.Job, g)
		j.grant.Slots = g.Slots
		return
	}
	lost := j.grant.Slots - g.Slots
	j.grant.Slots = g.Slots
	r.markWait(j, g)
	r.setHeld(g.Job, g)
	if g.Slots == 0 {
		j.onPS = true
		// The in-network flows stop: each worker's bytes left, with its
		// share of the partial aggregates, go to the parameter server; the
		// parameter server's own flow has nowhere to go and ends.
		ids := append([]resource.FlowID(nil), j.inaFlows...)
		j.inaFlows = j.inaFlows[:0]
		for i, id := range ids {
			left := r.net.Cancel(id)
			j.pending--
			if i > 0 && left > 0 {
				r.startExtra(g.Job, left+float64(lost)*r.dev.SlotBytes, r.psPath(j, i))
			}
		}
		if j.pending == 0 {
			r.runStages(g.Job)
		}
		return
	}
	for _, id := range j.inaFlows {
		r.net.SetCap(id, r.inaCap(g.Slots))
	}
	if lost > 0 {
		for i := 1; i < len(j.servers); i++ {
			r.startExtra(g.Job, float64(lost)*r.dev.SlotBytes, r.psPath(j, i))
		}
	}
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
	w := r.window()
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
	if len(j.servers) > 1 {
		gs := r.pol.Leave(k)
		r.setHeld(k, ina.Grant{})
		for _, g := range gs {
			r.regrant(g)
		}
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

package training

// A synchronisation's plan: the flows of a phase (through the device,
// the parameter server's legs, the fallback, or the host all-reduce),
// their paths, and how long a phase takes alone.

import (
	"slices"

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
	// legAt is a parameter server's leg's place among the job's legs
	// (legs, resultsViaPS), -1 for any other flow: set
	// through leg, so that a flowSpec left unset is no leg.
	legAt int
	leg   bool
	// per is a fallback flow's wire bytes per byte of each worker's
	// gradient it carries, and fbAt its place among the job's fallback
	// paths (see fallback); 0 for any other flow.
	per  float64
	fbAt int
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

// toPS is the paths of job j's servers to its parameter server and
// back, built once per job: to ps-single's PS on its first server from
// the k-1 others, or (machine) to its PS machine from all k (ps-dedicated).
func (r *rack) toPS(j *jobState, machine bool) [][]resource.LinkID {
	if machine {
		if j.dedPaths == nil {
			tx, rx := r.psMachine(j)
			for _, s := range j.servers {
				j.dedPaths = append(j.dedPaths, []resource.LinkID{r.servers[s].tx, rx, tx, r.servers[s].rx})
			}
		}
		return j.dedPaths
	}
	if j.psPaths == nil {
		ps := j.servers[0]
		for _, s := range j.servers[1:] {
			j.psPaths = append(j.psPaths, []resource.LinkID{r.servers[s].tx, r.servers[ps].rx, r.servers[ps].tx, r.servers[s].rx})
		}
	}
	return j.psPaths
}

// psMachine is the NIC links (to and from the switch) of job j's
// parameter-server machine (fallback or all-reduce ps-dedicated): added
// to the network when the job's plan first names them (the when-faster
// check's plan included, so a job that then keeps its ring has two idle
// links, which no event visits), at the cluster's NIC rate, one machine
// per job, shared with no other job.
func (r *rack) psMachine(j *jobState) (tx, rx resource.LinkID) {
	if !j.hasPS {
		rate := r.net.Capacity(r.servers[j.servers[0]].rx)
		j.psTx, _ = r.net.AddLink(rate)
		j.psRx, _ = r.net.AddLink(rate)
		j.hasPS = true
	}
	return j.psTx, j.psRx
}

// The fallback under ATP's protocol (in-ATP/ATP p4src/p4ml.p4): every
// worker sends every chunk to the switch; a chunk whose aggregator
// another job holds is tagged and forwarded to the job's parameter
// server (outPort_table), which sums the k workers' copies and replies
// once through the switch, which multicasts the result to every worker
// (multicast_table). So for f bytes of each worker's gradient not
// aggregated in the device, every worker's NIC sends f and receives the
// f of results; a PS receives its share of the k workers' f and sends
// its share of the results once. A worker's chunk for a PS on its own
// server crosses its NIC both ways too: the switch, not the host,
// decides the collision. Each fallback flow's bytes per byte of f (on
// the wire) are its per (flowSpec.per):
//   - ps-sharded: a shard on each of the k servers takes 1/k of the
//     chunks, so every NIC receives f of pushes and f of results (2f)
//     and sends f of pushes and f/k of results. One flow per server to
//     its successor, of 2f, loads each NIC's receive side as that; its
//     send side by 2f, f (1-1/k) more than ATP sends, which binds only
//     where another job's traffic leaves the server without arriving
//     there (BytePS's co-located mode, which keeps a worker's own shard
//     off its NIC and has no multicast, moves 2(k-1)/k f each way).
//   - ps-single: the PS on the job's first server receives the k
//     workers' f and its own worker's result (k+1)f; a flow of f from
//     each other server through the PS and back (push and pull
//     pipelined chunk by chunk), and one of 2f on the first server's own
//     NIC (its worker's chunks and the results, out to the switch and
//     back), load it so (its send side too, symmetric with its binding
//     receive side).
//   - ps-dedicated: the PS machine receives kf: a flow of f from each
//     server through it and back (its send side carries kf where ATP
//     sends f, on a NIC no other job uses, symmetric with its receive
//     side).

// fallbackPaths is job j's fallback's paths and each one's per (see
// above), built once per job: ps-sharded, each server to its successor;
// ps-single, the first server's own NIC and then each other server
// through the PS and back; ps-dedicated, each server through its PS
// machine and back.
func (r *rack) fallbackPaths(j *jobState) ([][]resource.LinkID, []float64) {
	if j.fbPaths == nil {
		w := r.st.inaWire
		switch r.cfg.INA.Fallback {
		case FallbackSharded:
			k := len(j.servers)
			for x, s := range j.servers {
				p := []resource.LinkID{r.servers[s].tx, r.servers[j.servers[(x+1)%k]].rx}
				j.fbPaths, j.fbPer = append(j.fbPaths, p), append(j.fbPer, 2*w)
			}
		case FallbackSingle:
			s0 := &r.servers[j.servers[0]]
			if s0.self == nil {
				s0.self = []resource.LinkID{s0.tx, s0.rx}
			}
			j.fbPaths, j.fbPer = append(j.fbPaths, s0.self), append(j.fbPer, 2*w)
			fallthrough
		default:
			for _, p := range r.toPS(j, r.cfg.INA.Fallback == FallbackDedicated) {
				j.fbPaths, j.fbPer = append(j.fbPaths, p), append(j.fbPer, w)
			}
		}
	}
	return j.fbPaths, j.fbPer
}

// fallback appends the flows of f bytes of each worker's gradient sent to
// job j's fallback (see above), each path's flow carrying besides its lag
// (lag[i], wire bytes: what a regrant found it had left beyond its share
// of the workers' stream, negative where it ran ahead; nil at a phase's
// start). A flow left with nothing to send is not started.
func (r *rack) fallback(j *jobState, f float64, lag []float64, fl []flowSpec) []flowSpec {
	if !(f > 0) && lag == nil {
		return fl
	}
	paths, per := r.fallbackPaths(j)
	for i, p := range paths {
		b := per[i] * max(f, 0)
		if i < len(lag) {
			b += lag[i]
		}
		if b > 0 {
			fl = append(fl, flowSpec{bytes: b, path: p, per: per[i], fbAt: i})
		}
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
		case AllReducePS, AllReducePSDedicated:
			// Push and pull pipelined chunk by chunk, as BytePS runs its
			// servers: each worker's push and pull are one flow over
			// both directions (its NIC out, the PS's in and out, its NIC
			// in), so the pull of a chunk keeps pace with its push and
			// can never run ahead of the sums (toPS, as the fallbacks
			// ps-single and, on the job's PS machine, ps-dedicated). No
			// pipeline fill or PS summation time is counted: the first
			// partition's (k-1) P/B before its pull starts (P: BytePS's
			// partition bytes, a setting) is left out.
			var flows []flowSpec
			b := j.grad * r.st.hostWire
			for _, p := range r.toPS(j, r.cfg.Sync.AllReduce == AllReducePSDedicated) {
				flows = append(flows, flowSpec{bytes: b, path: p})
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
	fl := r.inaFlows(j, g, j.grad, 0, nil, nil, j.specBuf[:0])
	j.specBuf = fl
	return syncPlan{flows: fl, tail: r.dev.ChunkRTT + j.local}
}

// inaFlows appends the flows of an in-network synchronisation of left
// bytes of each worker's gradient under grant g: the share g.PSFraction
// (all of it without slots) to the fallback, the rest through the device
// at the rate its slots allow (slots x chunk bytes per round trip), and
// besides them inBack bytes already committed to the device (a regrant's
// backlog, see regrant; to the fallback without slots). Under ATP's
// protocol (resultsViaPS) every aggregated chunk also goes from the
// device to the job's parameter server and its result back (psLegs); lag
// and fbLag are what each leg and each fallback path had left beyond its
// share when a regrant re-split the bytes (nil at a phase's start).
func (r *rack) inaFlows(j *jobState, g ina.Grant, left, inBack float64, lag, fbLag []float64, fl []flowSpec) []flowSpec {
	fb := g.PSFraction * left
	in := max(0, left-fb) + inBack
	if g.Slots == 0 {
		fb, in = left+inBack, 0
	}
	if in > 0 {
		for _, s := range j.servers {
			fl = append(fl, flowSpec{bytes: in * r.st.inaWire, path: r.inaPath(s), cap: r.inaCap(g.Slots), ina: true})
		}
	}
	if r.resultsViaPS {
		fl = r.psLegs(j, in, r.inaCap(g.Slots), lag, fl)
	}
	return r.fallback(j, fb, fbLag, fl)
}

// psLegs appends the parameter server's legs of in bytes of each
// worker's gradient aggregated in the device at a chunk rate of cap (wire
// bytes per second): the device sends each aggregated chunk to the PS
// and the PS's reply carries the result back to the device, which
// multicasts it to the workers (their in-network flows carry that). PS
// shards on each of the job's k servers (ps-sharded) each take 1/k of
// the chunks; ps-single's PS on the job's first server, or
// ps-dedicated's on its machine, takes them all. A leg crosses its
// server's (or machine's) NIC both ways (and a SmartNIC aggregator's
// port out and in). A leg does not keep pace with its workers' flows (it
// takes another share of its NIC), so a regrant carries each leg's own
// progress over: lag[i], wire bytes it had left beyond its share of what
// the workers had left, is added to its share of the new in-network
// bytes (a leg that ran ahead has a negative lag). Without slots (cap 0)
// a leg still owes the results of chunks already aggregated: uncapped.
func (r *rack) psLegs(j *jobState, in, cap float64, lag []float64, fl []flowSpec) []flowSpec {
	paths, share := r.legs(j)
	for i, p := range paths {
		b := share * in * r.st.inaWire
		if i < len(lag) {
			b += lag[i]
		}
		if b > 0 {
			fl = append(fl, flowSpec{bytes: b, path: p, cap: share * cap, ina: true, leg: true, legAt: i})
		}
	}
	return fl
}

// legs is the paths of job j's PS legs and each one's share of the
// aggregated chunks: a shard on each of its servers (ps-sharded),
// ps-single's PS on the first, or ps-dedicated's on its machine; built
// once per job.
func (r *rack) legs(j *jobState) ([][]resource.LinkID, float64) {
	if j.legPaths == nil {
		switch r.cfg.INA.Fallback {
		case FallbackSingle:
			j.legPaths = [][]resource.LinkID{r.legPath(j.servers[0])}
		case FallbackDedicated:
			tx, rx := r.psMachine(j)
			leg := []resource.LinkID{rx, tx}
			if r.smartNIC {
				leg = []resource.LinkID{r.nicOut, rx, tx, r.nicIn}
			}
			j.legPaths = [][]resource.LinkID{leg}
		default:
			for _, s := range j.servers {
				j.legPaths = append(j.legPaths, r.legPath(s))
			}
		}
	}
	return j.legPaths, 1 / float64(len(j.legPaths))
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
// it equals a lone job's simulated phase to the nanosecond. That network
// has only the links the flows cross, numbered in the rack's order (the
// fill breaks ties by link number), not the rack's every link: jobs'
// PS machines (ps-dedicated) add two each.
func (r *rack) planTime(p syncPlan) engine.Time {
	sim := engine.New(nil)
	net, _ := resource.NewNetwork(sim)
	var ids []resource.LinkID
	for _, f := range p.flows {
		ids = append(ids, f.path...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, l := range ids {
		net.AddLink(r.net.Capacity(l))
	}
	for _, f := range p.flows {
		path := make([]resource.LinkID, len(f.path))
		for i, l := range f.path {
			k, _ := slices.BinarySearch(ids, l)
			path[i] = resource.LinkID(k)
		}
		net.Start(f.bytes, path, f.cap, nil)
	}
	sim.Run()
	return sim.Now() + p.tail
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

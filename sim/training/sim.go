package training

import (
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// Job states.
const (
	queued = iota
	running
	done
)

// phase of a running job in stepped mode.
const (
	phaseCompute = iota
	phaseSync
)

// server is one GPU server: its free GPUs, the links of its NIC (each
// direction) and the jobs with GPUs on it.
type server struct {
	free   int
	tx, rx resource.LinkID
	jobs   []int
	ina    []resource.LinkID // the path of its in-network flows
	leg    []resource.LinkID // the path of a PS leg on it (psLegs)
	self   []resource.LinkID // its NIC out and back in, for a ps-single PS's own worker (fallback)
}

// jobState is one job of one replay.
type jobState struct {
	spec    train.Job
	model   train.Model
	compute engine.Time // one iteration's forward and backward
	grad    float64     // bytes of one worker's gradient
	state   int

	servers []int // placement: distinct servers, ascending
	gpusOn  []int // GPUs on each of them
	gpus    int
	local   engine.Time // the sync inside one server (single-server job), or the intra part of a spanning one's in-network phase
	// ringLocal is the intra part of a spanning job's host all-reduce:
	// no SmartNIC sums for it, whatever the placement (intraTime).
	ringLocal engine.Time

	started, finished engine.Time
	iters             int // iterations finished

	// Stepped mode: the phase in flight.
	phase    int
	planned  []flowSpec // the phase's flows (beginPhase)
	flowsOn  bool       // runPhase has started them
	pending  int        // flows of the phase in flight
	ringPlan syncPlan
	// psPaths and dedPaths: each server to the job's PS and back (toPS),
	// on its first server or on its PS machine, whose NIC's links are
	// psTx and psRx (added when first needed: hasPS).
	psPaths    [][]resource.LinkID
	dedPaths   [][]resource.LinkID
	psTx, psRx resource.LinkID
	hasPS      bool
	// legPaths: the paths of the PS legs (psLegs), built once per job.
	legPaths [][]resource.LinkID
	// fbPaths and fbPer: the fallback's paths and their bytes per byte
	// (fallbackPaths), built once per job.
	fbPaths [][]resource.LinkID
	fbPer   []float64
	// buffers reused from phase to phase
	specBuf   []flowSpec
	transfers []resource.Transfer
	ids       []resource.FlowID // StartAll's scratch
	flows     []phaseFlow       // the phase's flows
	legLag    []float64         // regrant's scratch: each PS leg's lag (psLegs)
	fbLag     []float64         // regrant's scratch: each fallback path's lag (fallback)
	left      []float64         // regrant's scratch: what each had left
	used      []bool            // reshape's scratch: which flows it kept
	fresh     []flowSpec        // reshape's scratch: the flows it starts
	// callbacks bound once per job (a closure per event would allocate)
	onCompute, onEndSync, onFlow, onBegin func()
	grant                                 ina.Grant
	syncStart                             engine.Time
	ideal                                 engine.Time // the phase with its whole window, links as they were
	tail                                  engine.Time // fixed latency after the flows
	computeEnd                            bool        // overlap full: the next compute is done
	syncBusy                              bool        // overlap full: a synchronisation is in flight

	// hostRing: a spanning job that runs its host all-reduce under a
	// pool's policy (ina.use when-faster), outside the pool.
	hostRing bool
	// heldAny: the job held aggregators in some phase (see
	// PolicyResult.NoAggregatorJobs).
	heldAny bool

	// Fast-forward: an isolated job runs whole iterations of a fixed
	// length from ffStart, from ffIter on.
	isolated bool
	ffStart  engine.Time
	ffIter   int
	ffLen    engine.Time
	ffComm   engine.Time // one fast-forwarded iteration's communication
	ffWait   engine.Time // and its waiting for aggregators
	ffEv     engine.Handle
	hasFF    bool

	// Time split of the finished iterations, and of the synchronisation
	// in flight: waiting accrued, since waitMark at share waitNow (see
	// waitShare), with the shares by grant cached.
	computeS, commS, waitS float64
	waitMark               engine.Time
	waitNow                float64
	waitAcc                engine.Time
	shares                 map[int]float64
	shareKey               int     // the key last looked up
	shareLast              float64 // and its share
}

// rack is one policy's replay of one seed.
type rack struct {
	// report is told the share of jobs finished, each time it moves by
	// a thousandth (nil: nobody watches); nDone counts them.
	report   func(frac float64)
	nDone    int
	reported int

	cfg     Config
	st      *setup
	dev     hw.AggregatorSpec
	intra   hw.IntraServerLinkSpec
	sim     *engine.Simulator
	net     *resource.Network
	pol     ina.Policy
	polName string
	servers []server
	nicRate float64
	// The SmartNIC aggregator's links: its port in and out and its
	// summation engine, crossed by every in-network flow (none for a
	// switch, which sums at line rate on every port).
	nicIn, nicSum, nicOut resource.LinkID
	smartNIC              bool
	// resultsViaPS: the policy runs ATP's protocol (ina.ResultsViaPS).
	resultsViaPS bool
	// ringGrant is startSync's grant for a job on its host ring.
	ringGrant [1]ina.Grant

	jobs    []jobState
	queue   []int // arrived, not placed, in arrival order
	next    int   // the next arrival
	netJobs []int // running jobs that span servers, ascending

	occupancy []OccupancyPoint
	held      []float64 // by job: slots held now (occupancy)
	stepped   int64     // iterations simulated phase by phase
	// regrants counts grant changes to jobs in their synchronisation.
	regrants int64
	// hostRingJobs counts the jobs that ran their host all-reduce by
	// ina.use when-faster.
	hostRingJobs int
	// noAggJobs counts the pooled jobs that finished without holding an
	// aggregator in any phase.
	noAggJobs int
	ffIters   int64 // iterations fast-forwarded
	jct       stats.Tally
}

// newRack builds the rack of st for one replay of jobs under policy.
func newRack(st *setup, jobs []train.Job, pol ina.Policy, name string) (*rack, error) {
	cfg, dev, intra := st.cfg, st.dev, st.intra
	sim := engine.New(nil)
	net, err := resource.NewNetwork(sim)
	if err != nil {
		return nil, err
	}
	r := &rack{cfg: cfg, st: st, dev: dev, intra: intra, sim: sim, net: net, pol: pol, polName: name, nicRate: float64(cfg.Cluster.NIC), held: make([]float64, len(jobs)),
		resultsViaPS: ina.ResultsViaPS(name)}
	for range cfg.Cluster.Servers {
		tx, err := net.AddLink(r.nicRate)
		if err != nil {
			return nil, err
		}
		rx, _ := net.AddLink(r.nicRate)
		r.servers = append(r.servers, server{free: cfg.Cluster.GPUsPerServer, tx: tx, rx: rx})
	}
	if dev.Ports == 0 {
		r.smartNIC = true
		port := dev.PortBitsPerSec / 8
		r.nicIn, _ = net.AddLink(port)
		r.nicOut, _ = net.AddLink(port)
		sum := dev.SumBytesPerSec
		if !(sum > 0) {
			sum = port
		}
		// The flows carry wire bytes; the cores sum the values in them.
		r.nicSum, _ = net.AddLink(sum * st.inaWire)
	}
	for _, j := range jobs {
		m, ok := st.models[j.Model]
		if !ok {
			return nil, fmt.Errorf("job %s: model %q was not resolved", j.ID, j.Model)
		}
		r.jobs = append(r.jobs, jobState{spec: j, model: m.model, compute: m.compute, grad: m.grad})
	}
	return r, nil
}

// run replays every job and returns the policy's result.
func (r *rack) run() (PolicyResult, error) {
	if len(r.jobs) > 0 {
		r.sim.MustAt(r.jobs[0].spec.Arrival, r.arrive)
	}
	r.sim.Run()
	if err := r.sim.Err(); err != nil {
		return PolicyResult{}, err // stopped at the horizon: no clipped result
	}
	return r.result(), nil
}

// arrive queues the next job and tries to place the queue.
func (r *rack) arrive() {
	k := r.next
	r.next++
	r.queue = append(r.queue, k)
	if r.next < len(r.jobs) {
		r.sim.MustAt(r.jobs[r.next].spec.Arrival, r.arrive)
	}
	r.place()
}

// place starts queued jobs in arrival order while the head fits (FIFO,
// no backfilling: a large job at the head holds the ones behind it, as a
// gang scheduler without reservations does); a job larger than the rack
// never runs.
func (r *rack) place() {
	total := len(r.servers) * r.cfg.Cluster.GPUsPerServer
	for len(r.queue) > 0 {
		k := r.queue[0]
		j := &r.jobs[k]
		if j.spec.GPUs > total {
			r.queue = r.queue[1:] // reported as never run
			continue
		}
		servers, gpus, ok := r.fit(j.spec.GPUs)
		if !ok {
			return
		}
		r.queue = r.queue[1:]
		r.start(k, servers, gpus)
	}
}

// fit chooses servers for n GPUs: the fullest single server that holds
// them all (best fit); else the servers with the most free GPUs first, so
// that a job spans as few servers as it can; ties to the lower index.
func (r *rack) fit(n int) ([]int, []int, bool) {
	best := -1
	for s := range r.servers {
		if f := r.servers[s].free; f >= n && (best < 0 || f < r.servers[best].free) {
			best = s
		}
	}
	if best >= 0 {
		return []int{best}, []int{n}, true
	}
	order := make([]int, len(r.servers))
	for s := range order {
		order[s] = s
	}
	slices.SortStableFunc(order, func(a, b int) int { return r.servers[b].free - r.servers[a].free })
	var ss, gs []int
	left := n
	for _, s := range order {
		if left == 0 || r.servers[s].free == 0 {
			break
		}
		take := min(left, r.servers[s].free)
		ss, gs = append(ss, s), append(gs, take)
		left -= take
	}
	if left > 0 {
		return nil, nil, false
	}
	// Ascending server order: the ring's order and a stable PS.
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return ss[a] - ss[b] })
	so, g := make([]int, len(ss)), make([]int, len(ss))
	for i, x := range idx {
		so[i], g[i] = ss[x], gs[x]
	}
	return so, g, true
}

// start runs job k on the given servers.
func (r *rack) start(k int, servers, gpus []int) {
	j := &r.jobs[k]
	j.state, j.started, j.servers, j.gpusOn, j.gpus = running, r.sim.Now(), servers, gpus, j.spec.GPUs
	for i, s := range servers {
		r.servers[s].free -= gpus[i]
		r.servers[s].jobs = append(r.servers[s].jobs, k)
	}
	j.local = r.intraTime(j, true)
	j.ringLocal = r.intraTime(j, false)
	j.onCompute = func() { r.computeDone(k) }
	j.onEndSync = func() { r.endSync(k) }
	j.onFlow = func() { r.flowDone(k) }
	j.onBegin = func() { r.beginIteration(k) }
	if len(servers) > 1 && r.cfg.INA.Use == UseWhenFaster && ina.BaseName(r.polName) != "none" && r.ringFaster(j) {
		j.hostRing = true
		r.hostRingJobs++
	}
	if r.pooled(j) {
		r.netJobs = append(r.netJobs, k)
		slices.Sort(r.netJobs)
		r.pol.Start(k)
		r.holdReserved()
	}
	r.reviewIsolation()
	// From an event at the same instant: the jobs placed at this instant
	// (arrivals at one time, or those a finishing job made room for) are
	// all placed before any of them decides whether it runs alone.
	r.sim.MustAfter(0, j.onBegin)
}

// ringFaster says whether job j's host all-reduce alone is faster than
// its in-network phase alone, with what a job alone on the device holds
// in flight: its need, at most its window and the pool (ina.use
// when-faster).
func (r *rack) ringFaster(j *jobState) bool {
	alone := ina.Grant{Slots: min(r.need(), r.dev.PerJobSlots, r.dev.Slots)}
	return r.planTime(r.planFresh(j, alone)) > r.planTime(r.planFresh(j, ina.Grant{Ring: true}))
}

// pooled says whether job j synchronises through the policy's pool: it
// spans servers and aggregates in the network (see hostRing).
func (r *rack) pooled(j *jobState) bool { return len(j.servers) > 1 && !j.hostRing }

// intraTime is the part of a synchronisation inside the servers: for a
// single-server job its whole ring over the GPU link, 2(g-1) alpha +
// 2(g-1)/g S/B; for a spanning one the reduce before the crossing of the
// servers and the broadcast after, on its largest server, over the GPU
// link or, in an in-network phase (inNetwork) under placement server,
// through the server's SmartNIC (nicReduceTime). An in-network phase
// always has that part, whatever the host all-reduce (sync.all_reduce):
// each server sends the device one sum of its GPUs' gradients. A host
// all-reduce has it too (hierarchical, parameter server), but for a
// flat ring (0), whose GPU-link steps run in step with the NIC's; it
// never sums at a SmartNIC (none is no in-network aggregation anywhere,
// so that every placement is measured against the same host ring).
func (r *rack) intraTime(j *jobState, inNetwork bool) engine.Time {
	g := slices.Max(j.gpusOn)
	if g < 2 {
		return 0
	}
	if len(j.servers) > 1 {
		switch {
		case inNetwork && r.cfg.INA.Placement == PlacementServer:
			return r.nicReduceTime(g, j.grad)
		case !inNetwork && r.cfg.Sync.AllReduce == AllReduceRing:
			return 0
		}
	}
	steps := engine.Time(2 * (g - 1))
	return steps*r.intra.Latency + resource.TransferTime(2*float64(g-1)/float64(g)*j.grad, r.intra.BytesPerSec)
}

// nicReduceTime is the part inside a server of g GPUs under placement
// server: its SmartNIC takes every GPU's gradient of grad bytes over its
// DMA engine and sums them (pipelined chunk by chunk, at the slower of
// the two: g S / min(DMA, sum)), then returns the sum to each GPU over
// the DMA engine (g S / DMA). Before and after the crossing of the
// servers, as the hierarchical all-reduce's reduce and broadcast are; a
// server with one GPU has nothing to sum (0). The jobs on one server
// do not share its SmartNIC's engines, as they do not share its NVLink.
func (r *rack) nicReduceTime(g int, grad float64) engine.Time {
	if g < 2 {
		return 0
	}
	n := r.st.snic
	b := float64(g) * grad
	return resource.TransferTime(b, min(n.dma, n.sum)) + resource.TransferTime(b, n.dma)
}

// ringBytes is what each inter-server edge of job j's ring carries in one
// all-reduce: 2(n-1)/n S over n GPUs (flat) or 2(k-1)/k S over k servers
// (hierarchical), and its latency 2(n-1) or 2(k-1) alphas.
func (r *rack) ringBytes(j *jobState) (float64, engine.Time) {
	n := float64(j.gpus)
	if r.cfg.Sync.AllReduce != AllReduceRing {
		n = float64(len(j.servers))
	}
	return 2 * (n - 1) / n * j.grad, engine.Time(2*(n-1)) * r.cfg.Cluster.NetLatency.Time()
}

// finish ends job k.
func (r *rack) finish(k int) {
	j := &r.jobs[k]
	j.state, j.finished = done, r.sim.Now()
	r.jct.Add((j.finished - j.spec.Arrival).Seconds())
	r.nDone++
	if r.report != nil {
		if pm := r.nDone * 1000 / len(r.jobs); pm != r.reported {
			r.reported = pm
			r.report(float64(r.nDone) / float64(len(r.jobs)))
		}
	}
	for i, s := range j.servers {
		r.servers[s].free += j.gpusOn[i]
		r.servers[s].jobs = slices.DeleteFunc(r.servers[s].jobs, func(x int) bool { return x == k })
	}
	if r.pooled(j) {
		if !j.heldAny && ina.BaseName(r.polName) != "none" {
			r.noAggJobs++
		}
		r.pol.End(k)
		r.setHeldAvg(k, 0)
		i, _ := slices.BinarySearch(r.netJobs, k)
		r.netJobs = slices.Delete(r.netJobs, i, i+1)
		r.holdReserved()
	}
	r.place()
	r.reviewIsolation()
}

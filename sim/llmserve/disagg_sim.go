package llmserve

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/hw/llm"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// Pool roles.
const (
	roleColocated = iota
	rolePrefill
	roleDecode
)

// handoff is one request's KV moving from its prefill replica to a decode
// replica. The decode replica reserves the blocks the KV fills before the
// transfer starts (as vLLM's NIXL connector and Mooncake's decode side
// do); the prefill replica holds its own until the transfer ends.
type handoff struct {
	q        *request
	src, dst *replica
	// stepEnd is the end of the prefill step that computes the prompt's
	// last chunk: under layerwise transfer, KV sent before it is
	// produced at the step's pace.
	stepEnd engine.Time
	// srcShared and srcPrivate are the prefill replica's blocks, moved
	// off the request when its prefill ended; dstBlocks the decode
	// replica's reservation.
	srcShared  []int32
	srcPrivate int
	srcHeld    bool
	dstBlocks  int

	plan    kvpath.Plan
	bytes   float64
	t0      engine.Time // transfer start
	flows   int         // flows not yet ended
	tail    float64     // bytes sent after stepEnd (the last layer's share)
	first   resource.FlowID
	path2   []resource.LinkID
	rate    float64
	started bool
}

// pd runs a disaggregated cluster: prefill replicas (c.replicas, behind
// the router) and decode replicas, event by event. Unlike the colocated
// loop, a replica's steps depend on others (a decode replica's work comes
// from transfers that end at any time, a prefill replica's blocks come
// back when its transfers end), so every step end, arrival and transfer
// end is an engine event; replicas still time their steps with the same
// scheduler and step model.
type pd struct {
	c      *cluster
	dp     *DisaggPlan
	sim    *engine.Simulator
	net    *resource.Network
	links  map[linkKey]resource.LinkID
	decode []*replica
	err    error

	// transfer statistics
	times    []float64 // seconds, transfer start to KV on the decode side
	tails    []float64 // seconds, first token (prefill end) to KV on the decode side
	waits    []float64 // seconds, prefill end to transfer start (decode blocks)
	bytes    float64
	gpus     int // physical GPUs the pools take (MIG slices packed)
	nvlink   int
	hostCopy int
	crossed  int
}

type linkKey struct {
	where int // server, or replica for a per-GPU resource (offset by 1<<20)
	res   kvpath.Resource
	path  string // host_dram's capacity differs by path
}

func (c *cluster) runPD(tr wllm.Trace) (*Result, error) {
	x := c.pd
	x.sim, x.links = engine.New(nil), map[linkKey]resource.LinkID{}
	var err error
	if x.net, err = resource.NewNetwork(x.sim); err != nil {
		return nil, err
	}
	reqs := tr.Requests
	c.records = make([]RequestRecord, len(reqs))
	var events int64
	i := 0
	var arrive func()
	arrive = func() {
		t := x.sim.Now()
		for ; i < len(reqs) && reqs[i].Arrival == t; i++ {
			events++
			if r := c.arrive(i, reqs[i]); r != nil {
				x.wake(r)
			}
		}
		if i < len(reqs) {
			x.sim.MustAt(reqs[i].Arrival, arrive)
		}
	}
	if len(reqs) > 0 {
		x.sim.MustAt(reqs[0].Arrival, arrive)
	}
	x.sim.Run()
	if x.err != nil {
		return nil, x.err
	}
	if err := x.sim.Err(); err != nil {
		return nil, err
	}
	for _, r := range append(append([]*replica{}, c.replicas...), x.decode...) {
		if r.busy || len(r.running)+r.waiting.len()+len(r.inbox) > 0 {
			return nil, fmt.Errorf("llmserve: replica %d ended with work left (%d running, %d waiting, %d transfers waiting, %d hand-offs holding blocks, %d of %d blocks free, decode inbox %d, decode free %d, decode running %d waiting %d busy %v, net live %d; a bug)", r.id, len(r.running), r.waiting.len(), len(r.inbox), r.heldForHandoff, r.kv.available(), r.kv.total, len(x.decode[0].inbox), x.decode[0].kv.available(), len(x.decode[0].running), x.decode[0].waiting.len(), x.decode[0].busy, x.net.Flows())
		}
	}
	res := c.result(events)
	res.Disagg = x.stats()
	return res, nil
}

// addPDPools builds the prefill and decode pools and their replicas: the
// prefill replicas behind the router (c.replicas), the decode replicas
// on the GPUs after them, gpus_per_server to a server.
func (c *cluster) addPDPools() error {
	dp := c.p.Disagg
	pp, err := newPool(dp.Prefill)
	if err != nil {
		return fmt.Errorf("prefill pool: %w", err)
	}
	dpl, err := newPool(dp.Decode)
	if err != nil {
		return fmt.Errorf("decode pool: %w", err)
	}
	pp.role, dpl.role = rolePrefill, roleDecode
	c.pools = []*pool{pp, dpl}
	// Requests are checked against the smaller cache.
	c.p.KVBlocks = min(pp.p.KVBlocks, dpl.p.KVBlocks)
	c.pd = &pd{c: c, dp: dp}
	prio := c.p.Priority == PriorityShortest
	var g gpuCursor
	for i := range dp.Prefill.Replicas {
		r := &replica{id: i, c: c, pl: pp, kv: newKVCache(pp.p.KVBlocks), waiting: waitQueue{priority: prio}}
		g.place(r, dp.Prefill.Placement)
		r.server = r.gpu / dp.GPUsPerServer
		c.replicas = append(c.replicas, r)
	}
	// The decode pool's slices fill the prefill pool's last GPU first:
	// MIG is how one GPU serves both.
	for i := range dp.Decode.Replicas {
		r := &replica{id: dp.Prefill.Replicas + i, c: c, pl: dpl, kv: newKVCache(dpl.p.KVBlocks), waiting: waitQueue{priority: prio}}
		g.place(r, dp.Decode.Placement)
		r.server = r.gpu / dp.GPUsPerServer
		c.pd.decode = append(c.pd.decode, r)
	}
	g.next()
	c.pd.gpus = g.gpu
	return nil
}

// gpuCursor packs replicas onto GPUs in order: a whole-GPU replica takes
// tp GPUs from the next free one; MIG slices share a GPU while both its
// compute slices and its memory slices last (NVIDIA's layouts: an H100
// holds a 4g.40gb and a 3g.40gb, 7 compute and 8 memory slices).
type gpuCursor struct {
	gpu             int // the GPU being filled
	compute, memory int // its slices taken
}

func (g *gpuCursor) next() {
	if g.compute > 0 || g.memory > 0 {
		g.gpu++
		g.compute, g.memory = 0, 0
	}
}

func (g *gpuCursor) place(r *replica, pl llm.Placement) {
	if s := pl.Slice; s != nil {
		geo := pl.GPU.MIG
		if g.compute+s.Compute > geo.ComputeSlices || g.memory+s.MemSlices > geo.MemorySlices {
			g.next()
		}
		r.gpu, r.slice = g.gpu, true
		g.compute += s.Compute
		g.memory += s.MemSlices
		return
	}
	g.next()
	r.gpu = g.gpu
	g.gpu += pl.TP
}

func (x *pd) fail(err error) {
	if x.err == nil {
		x.err = err
	}
	x.sim.Stop()
}

// wake schedules r's next step at this instant, after the events already
// due now (arrivals at the same time join it, as at a colocated step).
func (x *pd) wake(r *replica) {
	if r.busy || r.wakeQueued {
		return
	}
	r.wakeQueued = true
	x.sim.MustAfter(0, func() {
		r.wakeQueued = false
		x.step(r)
	})
}

func (x *pd) step(r *replica) {
	if r.busy || x.err != nil {
		return
	}
	ran, err := r.schedule(max(r.readyAt, x.sim.Now()))
	if err != nil {
		x.fail(err)
		return
	}
	if !ran {
		return
	}
	if r.pl.role == rolePrefill && x.dp.Layerwise {
		for _, q := range r.batch {
			if q.gen == 0 && q.computed+q.sched == q.total() && q.output > 1 && q.ho == nil {
				x.begin(r, q, r.end)
			}
		}
	}
	x.sim.MustAt(r.end, func() {
		handed := r.finishStep()
		if x.c.itl.over {
			x.fail(ErrTooManyGaps)
			return
		}
		for _, q := range handed {
			x.prefilled(r, q)
		}
		if r.pl.role == roleDecode {
			x.drain(r)
		}
		x.wake(r)
	})
}

// prefilled is q's prefill ending on r: its blocks move onto the
// hand-off, which begins now unless it began with the step (layerwise).
func (x *pd) prefilled(r *replica, q *request) {
	if q.ho == nil {
		x.begin(r, q, 0)
	}
	ho := q.ho
	ho.srcShared, ho.srcPrivate, ho.srcHeld = q.shared, q.private, true
	r.heldForHandoff++
	q.shared, q.private, q.registered = nil, 0, 0
	if ho.started {
		x.stepEnded(ho)
	}
	x.drain(ho.dst)
}

// begin picks q's decode replica and queues the hand-off there.
func (x *pd) begin(src *replica, q *request, stepEnd engine.Time) {
	dst := x.choose(src, q)
	dst.outstanding += int64(q.output - 1)
	ho := &handoff{q: q, src: src, dst: dst, stepEnd: stepEnd}
	q.ho = ho
	dst.inbox = append(dst.inbox, ho)
	x.drain(dst)
}

// choose is the decode replica for q by the plan's policy; ties to the
// lowest index.
func (x *pd) choose(src *replica, q *request) *replica {
	var best *replica
	for _, d := range x.decode {
		if x.dp.Policy == PolicyKVLocality {
			if d.server != src.server || d.kv.available() < d.blocksFor(q.prompt+1) {
				continue
			}
		}
		if best == nil || d.outstanding < best.outstanding {
			best = d
		}
	}
	if best != nil {
		return best
	}
	best = x.decode[0]
	for _, d := range x.decode[1:] {
		if d.outstanding < best.outstanding {
			best = d
		}
	}
	return best
}

// drain starts the transfers queued on decode replica d, in order, while
// its free blocks hold each one's KV.
func (x *pd) drain(d *replica) {
	for len(d.inbox) > 0 {
		ho := d.inbox[0]
		need := d.blocksFor(ho.q.prompt)
		if need > d.kv.available() {
			return
		}
		d.inbox = d.inbox[1:]
		d.kv.allocate(need)
		ho.dstBlocks = need
		x.start(ho)
	}
}

func (x *pd) start(ho *handoff) {
	now := x.sim.Now()
	m := x.dp.Prefill.Model
	ho.bytes = float64(int64(ho.q.prompt) * m.KVBytesPerToken())
	path := x.dp.Path
	switch {
	case ho.src.server == ho.dst.server && (ho.src.slice || ho.dst.slice):
		// MIG instances have no peer-to-peer path: through host memory.
		path = kvpath.HostCopy
		x.hostCopy++
	case ho.src.server == ho.dst.server:
		path = kvpath.NVLink
		x.nvlink++
	default:
		x.crossed++
	}
	plan, err := x.dp.HW.Plan(path, kvpath.Transfer{Bytes: ho.bytes, Ops: kvOps(m, x.c.p.BlockSize, ho.q.prompt)})
	if err != nil {
		x.fail(fmt.Errorf("llmserve: request %d's KV transfer: %w", ho.q.rec.ID, err))
		return
	}
	ho.plan, ho.t0, ho.started = plan, now, true
	x.bytes += ho.bytes
	if q := ho.q; ho.stepEnd == 0 || ho.stepEnd <= now {
		x.waits = append(x.waits, (now - q.rec.FirstToken).Seconds())
	} else {
		x.waits = append(x.waits, 0)
	}
	// The tensor-parallel shards move in parallel, each over its own
	// GPU's link: the per-GPU hops and the flow's cap scale with the
	// smaller TP (a re-shard to a different TP is not modelled beyond
	// that).
	tp := min(ho.src.pl.p.Placement.TP, ho.dst.pl.p.Placement.TP)
	path2 := make([]resource.LinkID, 0, len(plan.Hops))
	for _, h := range plan.Hops {
		path2 = append(path2, x.link(ho, h, path))
	}
	rate := plan.CapBytesPerSec * float64(tp)
	if ho.stepEnd > now {
		// Layerwise: every layer but the last streams at the pace the
		// step computes them; the last layer's share follows the step.
		ho.tail = ho.bytes / float64(m.Layers)
		body := ho.bytes - ho.tail
		pace := body / (ho.stepEnd - now).Seconds()
		ho.flows = 1
		ho.first = x.net.Start(body, path2, min(rate, pace), func() { x.flowDone(ho) })
		ho.path2 = path2
		ho.rate = rate
		return
	}
	ho.flows = 1
	x.net.Start(ho.bytes, path2, rate, func() { x.flowDone(ho) })
}

// stepEnded lifts a layerwise transfer's pace at the end of the prefill
// step and sends the last layer's share.
func (x *pd) stepEnded(ho *handoff) {
	if ho.tail == 0 {
		return
	}
	if ho.flows > 0 && x.net.Remaining(ho.first) > 0 {
		x.net.SetCap(ho.first, ho.rate)
	}
	ho.flows++
	x.net.Start(ho.tail, ho.path2, ho.rate, func() { x.flowDone(ho) })
	ho.tail = 0
}

func (x *pd) flowDone(ho *handoff) {
	ho.flows--
	if ho.flows > 0 || ho.tail > 0 {
		return
	}
	now := x.sim.Now()
	end := max(now, ho.t0+ho.plan.Control) + ho.plan.Latency
	x.sim.MustAt(end, func() { x.delivered(ho) })
}

// delivered: the KV is on the decode replica. The prefill replica's
// blocks are freed; the request joins the decode replica's running set
// with its prompt computed and its first token sampled.
func (x *pd) delivered(ho *handoff) {
	now := x.sim.Now()
	q, src, dst := ho.q, ho.src, ho.dst
	x.times = append(x.times, (now - ho.t0).Seconds())
	x.tails = append(x.tails, (now - q.rec.FirstToken).Seconds())
	if ho.srcHeld {
		src.freeHeld(ho.srcShared, ho.srcPrivate)
		src.heldForHandoff--
	}
	q.ho, q.handed = nil, false
	q.private, q.shared, q.registered = ho.dstBlocks, nil, 0
	q.keyBlocks = 0 // the decode side caches no prefixes
	q.computed = q.prompt
	dst.running = append(dst.running, q)
	x.wake(dst)
	x.wake(src)
}

// link is the network link of hop h of ho: per server, or per replica for
// a GPU's own resource (its capacity times the replica's TP: each GPU
// has its own).
func (x *pd) link(ho *handoff, h kvpath.Hop, path string) resource.LinkID {
	r := ho.src
	if h.Side == kvpath.Dst {
		r = ho.dst
	}
	k := linkKey{where: r.server, res: h.Resource}
	capacity := h.BytesPerSec
	switch {
	case h.Resource.PerGPU() && r.slice:
		// The slices of one GPU share its PCIe link.
		k.where = 1<<21 + r.gpu
	case h.Resource.PerGPU():
		k.where = 1<<20 + r.id
		capacity *= float64(r.pl.p.Placement.TP)
	}
	if h.Resource == kvpath.HostDRAM {
		k.path = path
	}
	if id, ok := x.links[k]; ok {
		return id
	}
	id, err := x.net.AddLink(capacity)
	if err != nil {
		x.fail(err)
	}
	x.links[k] = id
	return id
}

// DisaggStats are a disaggregated run's KV transfers.
type DisaggStats struct {
	Transfers int
	// GPUs is the physical GPUs the two pools take, MIG slices packed.
	GPUs int
	// Within a server (NVLink; host memory where a MIG slice is one end)
	// and across servers (the path).
	NVLink, HostCopy, Crossed int
	// Time is a transfer's time from its start (the decode blocks
	// reserved) to its KV on the decode side, seconds; Wait from the
	// prefill's end to the start (decode blocks not yet free).
	Time, Wait Quantiles
	// Tail is from the first token (the prefill's end) to the KV on the
	// decode side: the part of the transfer the prefill did not hide
	// (Splitwise's non-overlapped transfer), waits included.
	Tail  Quantiles
	Bytes float64
	// Times are the transfers' times (as Time), seconds, ascending: what
	// a share under a bound is counted from (DistServe reports the share
	// of transfers under 30 ms).
	Times []float64
}

func (x *pd) stats() *DisaggStats {
	// quantilesOf sorts x.times in place: Times is that sorted slice.
	return &DisaggStats{Transfers: len(x.times), GPUs: x.gpus, NVLink: x.nvlink, HostCopy: x.hostCopy, Crossed: x.crossed, Time: quantilesOf(x.times), Wait: quantilesOf(x.waits), Tail: quantilesOf(x.tails), Bytes: x.bytes, Times: x.times}
}

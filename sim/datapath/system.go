package datapath

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// system is one path's simulated server, network and clients. Each path
// runs in its own system and simulator, with the same seed and stream
// names, so the four paths see the same arrivals and think times (common
// random numbers: their differences are sharper than their levels).
type system struct {
	cfg    Config
	path   string
	stages []stage
	sim    *engine.Simulator

	host      *hw.HostCPU
	tcp       hw.TCPStack // the server's kernel TCP costs
	clientTCP hw.TCPStack // the clients' (their own CPUs, not contended)
	inbound   *hw.Link    // clients -> server (host NIC or SmartNIC port)
	outbound  *hw.Link    // server -> clients
	snic      *hw.SmartNIC
	gpus      []*hw.GPUInstance
	compute   []engine.Time // per instance: compute time of one request

	// Per-request costs, resolved once from the configuration.
	clientCap     float64 // a client's own NIC goodput
	p2pCap        float64 // GPUDirect rate into a GPU
	gpuLinkRate   float64 // pinned rate into a GPU (caps the SoC's DMA)
	decision      engine.Time
	poll          engine.Time
	post          engine.Time
	launch        engine.Time
	notify        engine.Time
	copyCPU       engine.Time // host CPU time of the input cudaMemcpy
	pinned        bool
	syncAndResult engine.Time // sync wait + CPU side of the result's cudaMemcpy
	memcpyRate    float64     // loopback path: one thread's memcpy, bytes/s
	cpuCompute    engine.Time // loopback path: the request's compute on the CPU
	// spread draws each host job's excess over its fixed cost, per kind
	// (nil: constant).
	spread [numSpreads]*spreadDraw
	// spreadRho couples one request's draws (HostSpreads.Correlation):
	// each request draws spreadZ from spreadCommon, and a draw mixes it
	// with its own normal, sqrt(rho) and sqrt(1 - rho).
	spreadRho, spreadShared, spreadOwn float64
	spreadCommon                       *engine.Stream

	clients []*client
	free    []*request
	nextID  int

	// Statistics.
	gpuBusy    float64 // GPU-seconds of compute finished, all instances
	inFlight   int
	inFlightTW *stats.TimeWeighted
	rec        recorder
}

type client struct {
	id       int
	sent     int
	rr       int // next GPU for round-robin gpudirect
	hashGPU  int
	arrivals *engine.Stream // open loop inter-arrivals, closed loop think times
	issueFn  func()
}

// request is one inference request moving through a pipeline. Requests are
// reused through a free list; their callbacks are bound once, when the
// struct is first made, so moving through a stage allocates nothing.
type request struct {
	s       *system
	id      int
	client  *client
	in, out float64 // bytes
	gpu     *hw.GPUInstance
	gpuIdx  int
	compute engine.Time
	start   engine.Time
	stage   int
	since   engine.Time // start of the current stage
	pending int         // callbacks the current stage still waits for
	dropped bool
	times   []engine.Time // per-stage durations
	spreadZ float64       // the request's shared normal of its spread draws

	next      func() // bound r.advance
	sendReply func() // bound r.replyWire
}

// EventQueue is the pending-event set the data-path model runs on: the
// binary heap, which its own benchmark finds fastest for its three to five
// pending events on scales from nanoseconds to milliseconds
// (BenchmarkConspirator, the kinds side by side, median of four: 751 ns
// per request against the calendar queue's 887 and the default adaptive
// queue's 914; the 4-ary heap is within noise of the binary heap).
// engine.QueueDefault is faster on the HOLD model and the cluster replay.
// Every kind gives the same results (TestSameResultOnEveryQueue);
// benchmarks set it to compare them.
var EventQueue = engine.QueueBinaryHeap

func newSystem(cfg Config, path string, seed uint64) (*system, error) {
	sim := engine.New(engine.NewQueue(EventQueue))
	s := &system{cfg: cfg, path: path, stages: stagesOf(path), sim: sim}
	h := cfg.Host
	var err error
	s.host, err = hw.NewHostCPU(sim, hw.HostCPUConfig{
		Cores:           h.Cores,
		Background:      float64(h.BackgroundLoad),
		Model:           hw.BackgroundModel(h.BackgroundModel),
		Interference:    float64(h.Interference),
		Slice:           h.SchedSlice.Time(),
		WakeupMiss:      float64(h.WakeupMiss),
		WakeupMissFloor: float64(h.WakeupMissFloor),
		IdleWake:        h.IdleWake.Time(),
		Rand:            engine.NewStream(seed, "host/wakeups"),
	})
	if err != nil {
		return nil, err
	}
	s.tcp = hw.TCPStack{
		ClockHz:         float64(h.Clock),
		RxCyclesPerByte: h.TCPRxCyclesPerByte,
		TxCyclesPerByte: h.TCPTxCyclesPerByte,
		RxPerMessage:    h.TCPRxPerMessage.Time(),
		TxPerMessage:    h.TCPTxPerMessage.Time(),
	}
	s.clientTCP = s.tcp // E: clients run the same kernel stack on similar cores

	n := cfg.Network
	goodput := float64(n.LineRate) * float64(n.Efficiency)
	s.clientCap = goodput
	serverRate := goodput
	if path == PathConspirator {
		serverRate = math.Min(goodput, float64(cfg.SmartNIC.LineRate)*float64(n.Efficiency))
	}
	link := hw.LinkConfig{BytesPerSec: serverRate, Latency: n.Latency.Time(), PerMessage: n.PerMessage.Time()}
	if s.inbound, err = hw.NewLink(sim, link); err != nil {
		return nil, err
	}
	if s.outbound, err = hw.NewLink(sim, link); err != nil {
		return nil, err
	}

	pcie, err := hw.LookupPCIe(h.GPULink)
	if err != nil {
		return nil, err
	}
	pcie.PinnedH2DBytesPerSec = float64(h.PinnedH2D)
	s.gpuLinkRate = pcie.PinnedH2DBytesPerSec
	factor := float64(n.CrossRootComplexFactor)
	s.p2pCap = math.Min(goodput, hw.P2PBytesPerSec(pcie, n.SameRootComplex, factor))

	for gi, g := range cfg.GPUs {
		ct := cfg.Request.ComputeTime.Time()
		if ct == 0 {
			cm := gpu.ComputeModel{Stack: gpu.Stack(cfg.Request.Stack)}
			if ct, err = cm.Time(g.Type, g.Profile, cfg.Request.Model, cfg.Request.Batch); err != nil {
				return nil, fmt.Errorf("datapath.gpus[%d]: %w", gi, err)
			}
		}
		for k := 0; k < g.Count; k++ {
			name := "gpu" + strconv.Itoa(len(s.gpus))
			inst, err := hw.NewGPUInstance(sim, name, g.Type, g.Profile, pcie)
			if err != nil {
				return nil, err
			}
			s.gpus = append(s.gpus, inst)
			s.compute = append(s.compute, ct)
		}
	}

	if path == PathConspirator {
		spec, err := hw.LookupSmartNIC(cfg.SmartNIC.Model)
		if err != nil {
			return nil, err
		}
		sn := cfg.SmartNIC
		spec.ArmCores, spec.ArmSpeed = sn.ArmCores, float64(sn.ArmSpeed)
		spec.DMABytesPerSec, spec.DMAPerOp = float64(sn.DMABandwidth), sn.DMAPerOp.Time()
		s.snic, err = hw.NewSmartNIC(sim, hw.SmartNICConfig{Spec: spec, BufferBytes: int64(sn.BufferBytes), Policy: hw.BufferPolicy(sn.BufferPolicy)})
		if err != nil {
			return nil, err
		}
	}
	s.stopResourceStats()

	s.decision = h.DecisionTime.Time()
	s.poll = h.PollCompletion.Time()
	s.post = h.PostSend.Time()
	s.launch = h.KernelLaunch.Time()
	s.notify = cfg.SmartNIC.NotifyLatency.Time()
	costs := hw.HostCosts{MemcpyIssue: h.MemcpyIssue.Time(), PageableFactor: float64(h.PageableFactor), PageableD2HFactor: float64(h.PageableD2HFactor)}
	in := float64(int64(cfg.Request.InputBytesPerItem) * int64(cfg.Request.Batch))
	out := float64(int64(cfg.Request.OutputBytesPerItem) * int64(cfg.Request.Batch))
	s.pinned = h.InputCopy == CopyPinned
	s.copyCPU, _ = costs.CopyWork(in, s.gpuLinkRate, !s.pinned)
	// The result is copied back into a fresh (pageable) CPU tensor on every
	// path, as out.cpu() does, at the pageable D2H rate.
	resultCPU, _ := costs.CopyBackWork(out, s.gpuLinkRate, true)
	s.syncAndResult = h.SyncWait.Time() + resultCPU
	s.memcpyRate = float64(h.MemcpyBandwidth)
	s.cpuCompute = cfg.Request.ComputeTime.Time()
	s.spread = newSpreadDraws(h.Spread, seed)
	if rho := float64(h.Spread.Correlation); rho > 0 && s.spread != [numSpreads]*spreadDraw{} {
		s.spreadRho, s.spreadShared, s.spreadOwn = rho, math.Sqrt(rho), math.Sqrt(1-rho)
		s.spreadCommon = engine.NewStream(seed, "host/spread/common")
	}

	s.inFlightTW = stats.NewTimeWeighted(0, 0)
	s.rec = newRecorder(cfg, path, len(s.stages))
	for i := 0; i < cfg.Clients.Count; i++ {
		c := &client{
			id:       i,
			rr:       i % len(s.gpus),
			arrivals: engine.NewStream(seed, "client/"+strconv.Itoa(i)+"/arrivals"),
		}
		c.hashGPU = hashClient(i) % len(s.gpus)
		c.issueFn = func() { s.issue(c) }
		s.clients = append(s.clients, c)
	}
	return s, nil
}

// memcpy is the host CPU time of copying n bytes on one thread.
func (s *system) memcpy(n float64) engine.Time { return engine.Seconds(n / s.memcpyRate) }

func hashClient(id int) int {
	h := fnv.New32a()
	h.Write([]byte(strconv.Itoa(id)))
	return int(h.Sum32() & 0x7fffffff)
}

// start schedules every client's first request.
func (s *system) start() {
	for _, c := range s.clients {
		s.sim.MustAfter(s.gap(c), c.issueFn)
	}
}

// gap is the time until a client's next request: an exponential
// inter-arrival (open loop) or think time (closed loop).
func (s *system) gap(c *client) engine.Time {
	if s.cfg.Clients.Mode == ModeOpen {
		return engine.Seconds(c.arrivals.Exp(1 / float64(s.cfg.Clients.Rate)))
	}
	return engine.Seconds(c.arrivals.Exp(s.cfg.Clients.ThinkTime.Time().Seconds()))
}

// issue sends client c's next request into the pipeline.
func (s *system) issue(c *client) {
	if c.sent >= s.cfg.Clients.Requests {
		return
	}
	c.sent++
	r := s.newRequest(c)
	if s.path == PathGPUDirect {
		// The client picks the GPU it writes into, without load information.
		i := c.hashGPU
		if s.cfg.Clients.GPUChoice == ChoiceRoundRobin {
			i = c.rr
			c.rr = (c.rr + 1) % len(s.gpus)
		}
		r.assign(s, i)
	}
	s.setInFlight(+1)
	if s.cfg.Clients.Mode == ModeOpen {
		if c.sent < s.cfg.Clients.Requests {
			s.sim.MustAfter(s.gap(c), c.issueFn)
		} else {
			s.rec.arrivalsDone(s)
		}
	}
	r.run()
}

func (s *system) setInFlight(d int) {
	s.inFlight += d
	if s.cfg.Clients.Mode == ModeOpen { // only the open-loop stability check reads it
		s.inFlightTW.Set(s.sim.Now(), float64(s.inFlight))
	}
	if s.inFlight > s.cfg.MaxInFlight {
		s.rec.overflow = true
		s.sim.Stop()
	}
}

func (s *system) newRequest(c *client) *request {
	var r *request
	if n := len(s.free); n > 0 {
		r = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		r = &request{s: s, times: make([]engine.Time, len(s.stages))}
		r.next = r.advance
		r.sendReply = r.replyWire
	}
	r.id = s.nextID
	s.nextID++
	r.client = c
	r.in = float64(int64(s.cfg.Request.InputBytesPerItem) * int64(s.cfg.Request.Batch))
	r.out = float64(int64(s.cfg.Request.OutputBytesPerItem) * int64(s.cfg.Request.Batch))
	r.gpu, r.gpuIdx, r.compute = nil, -1, 0
	r.start = s.sim.Now()
	r.stage = 0
	r.dropped = false
	clear(r.times)
	if s.spreadCommon != nil {
		r.spreadZ = s.spreadCommon.NormFloat64()
	}
	return r
}

// assign binds the request to GPU instance i and counts it in that
// instance's load.
func (r *request) assign(s *system, i int) {
	r.gpu, r.gpuIdx, r.compute = s.gpus[i], i, s.compute[i]
	r.gpu.Assign(r.compute)
}

// run starts the first stage.
func (r *request) run() {
	r.since = r.s.sim.Now()
	r.pending = 1
	r.s.stages[0].start(r.s, r)
}

// join makes the current stage wait for n callbacks of r.next.
func (r *request) join(n int) { r.pending = n }

// advance is r.next: it closes the current stage once all its callbacks
// have run and starts the next one, or finishes the request.
func (r *request) advance() {
	r.pending--
	if r.pending > 0 {
		return
	}
	s := r.s
	now := s.sim.Now()
	st := &s.stages[r.stage]
	r.times[r.stage] = now - r.since
	if st.end != nil {
		st.end(s, r)
	}
	r.stage++
	if r.dropped || r.stage == len(s.stages) {
		s.finish(r)
		return
	}
	r.since = now
	r.pending = 1
	s.stages[r.stage].start(s, r)
}

// replyWire sends the result to the client once the host has posted it.
func (r *request) replyWire() { r.s.outbound.Send(r.out, r.s.clientCap, r.next) }

// finish records a request that has returned to its client (or was
// dropped) and schedules the client's next one.
func (s *system) finish(r *request) {
	s.setInFlight(-1)
	s.rec.record(s, r)
	c := r.client
	s.free = append(s.free, r)
	if s.cfg.Clients.Mode == ModeClosed {
		s.sim.MustAfter(s.gap(c), c.issueFn)
	}
}

// stopResourceStats turns off the resources' own statistics (waiting and
// response times, time-weighted occupancies), which this package does not
// read: its figures come from the recorder and from counters of work done
// (CPUSeconds, ArmSeconds, gpuBusy). Gathering them cost about 15% of a
// request's simulation (BenchmarkConspirator), and their samples grew with
// the run. What the simulation does is the same either way.
func (s *system) stopResourceStats() {
	s.host.PS().StopStats()
	s.inbound.Wire().StopStats()
	s.outbound.Wire().StopStats()
	for _, g := range s.gpus {
		g.Queue().StopStats()
		g.H2D.StopStats()
	}
	if s.snic != nil {
		s.snic.Cores().StopStats()
		s.snic.Buffer().StopStats()
		s.snic.DMA.Bandwidth().StopStats()
	}
}

package datapath

import "github.com/conspirator-sim/conspirator/engine"

// The four request pipelines of the Conspirator paper, each a sequence of
// stages read top to bottom. A stage starts work on one or more resources
// and arranges for r.next to run when it is over (once per r.join count);
// its optional end hook runs when it is over, before the next stage starts.
// Every stage's duration is recorded per request under its name. Stages
// marked [host] run on the host CPU (stretched by background load), [soc]
// on the SmartNIC's Arm cores.
//
// All host-side costs are core-time of one unloaded host core (see
// HostConfig); hw.HostCPU stretches them under background load. The
// closed forms of these pipelines, for one request alone in the system,
// are in closedform_test.go.

type stage struct {
	name  string
	kind  StageKind
	start func(s *system, r *request)
	end   func(s *system, r *request) // may be nil
}

// tcpPath: client -> NIC -> host kernel TCP stack -> host memory ->
// CPU-issued copy -> GPU. Scheduling on the host CPU.
var tcpPath = []stage{
	// The client's send, the wire and the host's receive processing
	// overlap (TCP streams): the stage ends when the last of the three does.
	{name: "network", kind: KindNetwork, start: func(s *system, r *request) {
		r.join(3)
		s.inbound.Send(r.in, s.clientCap, r.next)
		s.sim.MustAfter(s.clientTCP.TxWork(r.in), r.next)                  // client CPU, not shared
		s.host.Wake(s.tcp.RxWork(r.in)+s.excess(spreadNetwork, r), r.next) // [host] the receiving thread wakes
	}},
	{name: "decide", kind: KindHostCPU, start: hostWork(func(s *system) engine.Time { return s.decision }), end: pickLeastLoaded}, // [host]
	{name: "copy-h2d", kind: KindHostCopy, start: copyCPU},                                                                        // [host] cudaMemcpy: issue, and staging when pageable
	{name: "copy-dma", kind: KindDMA, start: copyDMA},                                                                             // pinned copies only: the copy engine over PCIe
	{name: "launch", kind: KindLaunch, start: hostWork(func(s *system) engine.Time { return s.launch })},                          // [host]
	{name: "gpu", kind: KindCompute, start: runOnGPU, end: finishOnGPU},
	{name: "sync+d2h", kind: KindSync, start: hostWork(func(s *system) engine.Time { return s.syncAndResult })},                                        // [host] wait for the GPU, copy the result back
	{name: "reply-tx", kind: KindHostCPU, start: func(s *system, r *request) { s.host.Execute(s.tcp.TxWork(r.out)+s.excess(spreadReply, r), r.next) }}, // [host]
	{name: "reply", kind: KindReply, start: func(s *system, r *request) {
		r.join(2)
		s.outbound.Send(r.out, s.clientCap, r.next)
		s.sim.MustAfter(s.clientTCP.RxWork(r.out), r.next) // client CPU, overlaps the wire
	}},
}

// gpudirectPath: the client RDMA-writes straight into a buffer in the GPU
// it chose itself (round-robin or hash: it cannot see the server's load);
// the host sees the completion and launches the kernel.
var gpudirectPath = []stage{
	{name: "network", kind: KindNetwork, start: func(s *system, r *request) {
		// NIC -> PCIe peer-to-peer -> GPU: the wire, capped by the P2P
		// rate into the GPU (lower across root complexes).
		s.inbound.Send(r.in, s.p2pCap, r.next)
	}},
	{name: "poll", kind: KindHostCPU, start: hostWork(func(s *system) engine.Time { return s.poll })}, // [host] write-with-immediate completion
	{name: "launch", kind: KindLaunch, start: hostWork(func(s *system) engine.Time { return s.launch })},
	{name: "gpu", kind: KindCompute, start: runOnGPU, end: finishOnGPU},
	{name: "sync+d2h", kind: KindSync, start: hostWork(func(s *system) engine.Time { return s.syncAndResult })},
	{name: "reply", kind: KindReply, start: rdmaReply}, // [host] post the send; the NIC moves the bytes
}

// hostRDMAPath ("Conspirator without SmartNIC"): the client RDMA-writes
// into host memory; a host thread polls the completion, decides the GPU,
// copies the input to it and launches the kernel.
var hostRDMAPath = []stage{
	{name: "network", kind: KindNetwork, start: func(s *system, r *request) { s.inbound.Send(r.in, s.clientCap, r.next) }},
	{name: "poll+decide", kind: KindHostCPU, start: hostWork(func(s *system) engine.Time { return s.poll + s.decision }), end: pickLeastLoaded}, // [host]
	{name: "copy-h2d", kind: KindHostCopy, start: copyCPU},
	{name: "copy-dma", kind: KindDMA, start: copyDMA},
	{name: "launch", kind: KindLaunch, start: hostWork(func(s *system) engine.Time { return s.launch })},
	{name: "gpu", kind: KindCompute, start: runOnGPU, end: finishOnGPU},
	{name: "sync+d2h", kind: KindSync, start: hostWork(func(s *system) engine.Time { return s.syncAndResult })},
	{name: "reply", kind: KindReply, start: rdmaReply},
}

// conspiratorPath: the client RDMA-writes into the SmartNIC's buffer; the
// SoC polls the completion, decides the GPU and DMAs the data into GPU
// memory the host pre-allocated; it then tells the host, which only
// launches the kernel and returns the result.
var conspiratorPath = []stage{
	// A request needs buffer space on the card before its write can land
	// (pre-posted receive slots): it waits, or is dropped, when full.
	{name: "buffer", kind: KindNIC, start: func(s *system, r *request) {
		if s.snic.TryReserve(int64(r.in)) {
			r.next() // free space: no wait
			return
		}
		if ok, _ := s.snic.Reserve(int64(r.in), r.next); !ok { // size checked by Validate
			r.dropped = true
			r.next()
		}
	}},
	{name: "network", kind: KindNetwork, start: func(s *system, r *request) { s.inbound.Send(r.in, s.clientCap, r.next) }},
	{name: "soc-decide", kind: KindSoC, start: func(s *system, r *request) { // [soc] poll + decide + post the DMA
		s.snic.Compute(s.poll+s.decision+s.post, r.next)
	}, end: pickLeastLoaded},
	{name: "dma", kind: KindDMA, start: func(s *system, r *request) {
		// SoC memory -> GPU memory, at most the GPU link's rate.
		s.snic.DMA.Copy(r.in, s.gpuLinkRate, r.next)
	}, end: func(s *system, r *request) { s.snic.Release(int64(r.in)) }},
	{name: "soc-notify", kind: KindSoC, start: func(s *system, r *request) { // [soc] DMA completion, post the notification
		s.snic.Compute(s.poll+s.post, r.next)
	}},
	{name: "notify", kind: KindNIC, start: func(s *system, r *request) { s.sim.MustAfter(s.notify, r.next) }}, // PCIe write into the host's ring
	{name: "poll", kind: KindHostCPU, start: hostWork(func(s *system) engine.Time { return s.poll })},         // [host]
	{name: "launch", kind: KindLaunch, start: hostWork(func(s *system) engine.Time { return s.launch })},
	{name: "gpu", kind: KindCompute, start: runOnGPU, end: finishOnGPU},
	{name: "sync+d2h", kind: KindSync, start: hostWork(func(s *system) engine.Time { return s.syncAndResult })},
	{name: "reply", kind: KindReply, start: rdmaReply},
}

// loopbackPath is the request path of realhw/host's testbed, which a
// plain Linux host runs for real: a client thread and a server thread on
// the host's own cores exchange the request and the reply over loopback
// TCP; the server copies the request into its destination buffer
// (memcpy) and computes on the CPU. No NIC, no GPU. calibrate --validate
// runs it here and for real, so that the host-CPU model (background load,
// wake-ups) is checked against the machine. On loopback the sender's CPU
// does the transfer and the receive protocol processing, and the two
// threads take turns on a pinned core, so a message is one host job of
// TxWork + RxWork that starts with the receiver's wake-up.
var loopbackPath = []stage{
	{name: "network", kind: KindNetwork, start: func(s *system, r *request) {
		s.host.Wake(s.tcp.TxWork(r.in)+s.tcp.RxWork(r.in)+s.excess(spreadNetwork, r), r.next)
	}}, // [host]
	{name: "copy", kind: KindHostCopy, start: func(s *system, r *request) { s.host.Execute(s.memcpy(r.in)+s.excess(spreadCopy, r), r.next) }}, // [host]
	{name: "compute", kind: KindCompute, start: func(s *system, r *request) { s.host.Execute(s.cpuCompute+s.excess(spreadCPU, r), r.next) }},  // [host] on the CPU
	{name: "reply", kind: KindReply, start: func(s *system, r *request) {
		s.host.Wake(s.tcp.TxWork(r.out)+s.tcp.RxWork(r.out)+s.excess(spreadReply, r), r.next)
	}}, // [host]
}

// stagesOf returns the pipeline of a path name.
func stagesOf(path string) []stage {
	switch path {
	case PathTCP:
		return tcpPath
	case PathGPUDirect:
		return gpudirectPath
	case PathHostRDMA:
		return hostRDMAPath
	case PathConspirator:
		return conspiratorPath
	case PathLoopback:
		return loopbackPath
	}
	return nil
}

// Stage helpers shared by the paths.

// hostWork runs host CPU work: its fixed cost plus the CPU work spread.
func hostWork(work func(s *system) engine.Time) func(s *system, r *request) {
	return func(s *system, r *request) { s.host.Execute(work(s)+s.excess(spreadCPU, r), r.next) }
}

// copyCPU is the CPU side of the host's cudaMemcpy of the input.
func copyCPU(s *system, r *request) { s.host.Execute(s.copyCPU+s.excess(spreadCopy, r), r.next) }

// copyDMA is the copy engine's transfer of a pinned copy over the GPU's
// link (shared by concurrent copies into that GPU). A pageable copy has
// already moved its data while the CPU staged it: nothing left to do.
func copyDMA(s *system, r *request) {
	if !s.pinned {
		r.next()
		return
	}
	r.gpu.H2D.Start(r.in, 0, r.next)
}

// rdmaReply posts the result on the host and sends it to the client.
func rdmaReply(s *system, r *request) {
	s.host.Execute(s.post+s.excess(spreadCPU, r), r.sendReply) // then the wire: see request.sendReply
}

func runOnGPU(s *system, r *request) { r.gpu.Run(r.compute, r.next) }
func finishOnGPU(s *system, r *request) {
	r.gpu.Finish(r.compute)
	s.gpuBusy += r.compute.Seconds()
}

// pickLeastLoaded is the load-aware scheduling decision of the tcp,
// host-rdma and conspirator paths: the instance that would finish this
// request first, counting the compute time already assigned to it and not
// finished (ties to the lowest index). On identical GPUs that is the least
// loaded one; on heterogeneous ones it weighs their speeds.
func pickLeastLoaded(s *system, r *request) {
	best := 0
	for i, g := range s.gpus {
		if g.Backlog()+s.compute[i] < s.gpus[best].Backlog()+s.compute[best] {
			best = i
		}
	}
	r.assign(s, best)
}

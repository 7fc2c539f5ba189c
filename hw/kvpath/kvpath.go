package kvpath

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// The paths. The first four are the paper's data paths between two
// servers, named as sim/datapath names them; NVLink joins two GPUs of one
// server.
const (
	TCP         = "tcp"
	GPUDirect   = "gpudirect"
	HostRDMA    = "host-rdma"
	Conspirator = "conspirator"
	NVLink      = "nvlink"
	// HostCopy joins two GPUs of one server through host memory: a copy
	// out over the source GPU's PCIe, a copy in over the destination's.
	// It is the only path between MIG instances, which have no
	// peer-to-peer path (not even within one GPU).
	HostCopy = "host-copy"
)

// Paths lists the paths, the paper's four first (a fresh slice).
func Paths() []string { return []string{TCP, GPUDirect, HostRDMA, Conspirator, NVLink, HostCopy} }

// Side says which end of a transfer a hop belongs to: the prefill (source)
// server or GPU, or the decode (destination) one.
type Side int

const (
	Src Side = iota
	Dst
)

func (s Side) String() string {
	if s == Src {
		return "src"
	}
	return "dst"
}

// Resource names a shared resource a transfer's bytes cross. One instance
// exists per server, or per GPU where PerGPU says so; concurrent transfers
// crossing the same instance share its capacity.
type Resource string

const (
	NICTx Resource = "nic_tx" // the server's network port, sending
	NICRx Resource = "nic_rx" // receiving; with a SmartNIC, its port
	// PCIeD2H and PCIeH2D are one GPU's PCIe link, out of and into the
	// GPU. MIG slices of one GPU share them.
	PCIeD2H Resource = "pcie_d2h"
	PCIeH2D Resource = "pcie_h2d"
	// HostDRAM is the host memory a staged transfer passes through: each
	// byte is written and read back (twice more for tcp's kernel copy),
	// so its capacity is the DRAM bandwidth over those passes.
	HostDRAM Resource = "host_dram"
	// TCPCPUTx and TCPCPURx are the host's cores doing the TCP stack's
	// per-byte work, as bytes per second of all cores under load.
	TCPCPUTx Resource = "tcp_cpu_tx"
	TCPCPURx Resource = "tcp_cpu_rx"
	// SmartNICDMA is the SmartNIC's DMA engine writing into the GPU;
	// SmartNICDRAM its DRAM, which the bytes cross in and out.
	SmartNICDMA  Resource = "snic_dma"
	SmartNICDRAM Resource = "snic_dram"
	// SmartNICArm is the SmartNIC's Arm cores posting the transfers'
	// operations, as bytes per second of all its cores: one transfer posts
	// on one core (Plan.Control), concurrent ones share the cores.
	SmartNICArm Resource = "snic_arm"
	// NVLinkTx and NVLinkRx are one GPU's NVLink bandwidth to its peers,
	// each direction.
	NVLinkTx Resource = "nvlink_tx"
	NVLinkRx Resource = "nvlink_rx"
)

// PerGPU reports whether r belongs to one GPU (its PCIe link, its NVLink)
// rather than to the server: a caller keys such a resource's link by GPU,
// so that two GPUs of a server do not share a PCIe link they do not share.
func (r Resource) PerGPU() bool {
	switch r {
	case PCIeD2H, PCIeH2D, NVLinkTx, NVLinkRx:
		return true
	}
	return false
}

// Hop is one resource a transfer's bytes cross, at the source or the
// destination, and the resource's capacity. A resource appears at most
// once per Plan (resource.Network refuses a flow that crosses a link
// twice), and has the same capacity in every Plan of one path on the
// same Hardware, so that a caller can create its link from the first Plan
// that names it. Across paths host_dram differs (tcp passes each byte
// through host memory four times, host-rdma twice): a Network that mixes
// the two gives each path its own host_dram link.
type Hop struct {
	Side        Side
	Resource    Resource
	BytesPerSec float64
}

// Hardware is what one server has; the source and destination servers of
// a transfer are alike. Zero-valued optional parts mean the part is
// absent; Validate says which paths need which.
type Hardware struct {
	// NICBytesPerSec is the network port's goodput per direction, line
	// rate times efficiency. With a SmartNIC it is the SmartNIC's port
	// (set it from SmartNIC.NIC), since that is where the bytes arrive.
	NICBytesPerSec float64
	// NICLatency is the one-way latency NIC to NIC, wire and switch
	// included (hw.NICSpec.OneWayLatency).
	NICLatency engine.Time
	// GPUDirect says that the NIC can read and write GPU memory peer to
	// peer (GPUDirect RDMA); gpudirect needs it, and conspirator's sender
	// uses it when present.
	GPUDirect bool
	// PCIe is each GPU's link. Its pinned rate is taken for both
	// directions: a pinned D2H copy runs at the H2D rate (an H200
	// measured 55 GB/s each way at 256 MiB, A).
	PCIe hw.PCIeSpec
	// SameRootComplex and CrossFactor give the GPUDirect rate through
	// hw.P2PBytesPerSec: the pinned rate when NIC and GPU share a root
	// complex, CrossFactor of it otherwise.
	SameRootComplex bool
	CrossFactor     float64
	// HostDRAMBytesPerSec is the host memory bandwidth available to
	// staging KV (what the serving engine and the background load leave):
	// Figures' kvpath.host_dram_peak times kvpath.host_dram_staging_share.
	HostDRAMBytesPerSec float64
	// TCP is the kernel stack's cost; its ClockHz turns cycles into time.
	TCP hw.TCPStack
	// Host is the host CPU and its background load: host-side work
	// stretches by Host.Stretch(), and its cores bound tcp's per-byte
	// work. Only Cores, Background, Model and Interference are read.
	Host hw.HostCPUConfig
	// Pageable says the host staging buffers are pageable, not pinned:
	// every copy between GPU and host memory goes through a pinned bounce
	// buffer that a host core fills, at PageableFactor of the pinned rate
	// (stretched by the host's load) and with two more passes over host
	// DRAM per byte (the core's read and write). It concerns the paths
	// that stage in host memory (host-rdma, tcp, host-copy, and
	// conspirator's sender without GPUDirect).
	Pageable       bool
	PageableFactor float64 // pageable over pinned cudaMemcpy rate, (0, 1]
	// SmartNIC is the receiving server's SmartNIC, nil when it has none.
	SmartNIC *hw.SmartNICSpec
	// SmartNICDRAMBytesPerSec is the SmartNIC DRAM's sustained bandwidth
	// (kvpath.bluefield3.dram_bandwidth): the bytes land in it and are
	// read out by the DMA engine.
	SmartNICDRAMBytesPerSec float64
	// NotifyLatency is the SmartNIC telling the host (the serving
	// engine) that a KV cache has landed: a posted PCIe write it polls.
	NotifyLatency engine.Time
	// NVLinkBytesPerSec is one GPU's NVLink bandwidth per direction (0:
	// none), gpu.Spec.NVLinkBandwidth or hw's intra.nvlink* figures.
	NVLinkBytesPerSec float64
	// NVLinkLatency is the fixed cost of one NVLink copy.
	NVLinkLatency engine.Time
	// PostPerOp is the host core-time to post one RDMA work request and
	// reap its completion (kvpath.post_per_op), unloaded; the SmartNIC's
	// Arm takes PostPerOp / ArmSpeed for the same work.
	PostPerOp engine.Time
	// MemcpyIssue is the host core-time of one cudaMemcpy call, whatever
	// its size (hw.DefaultHostCosts.MemcpyIssue).
	MemcpyIssue engine.Time
	// SliceBytes is the transfer engine's slice (Mooncake: 64 KiB): a
	// Transfer with Ops 0 posts one RDMA operation per slice.
	SliceBytes int64
	// StageChunkBytes is what one cudaMemcpy (and, on tcp, one send or
	// recv) moves when a transfer is staged through host memory: the
	// staging pipeline's unit, which sets the host's per-chunk work and
	// the pipeline's fill and drain.
	StageChunkBytes int64
}

// Transfer is one KV hand-off.
type Transfer struct {
	// Bytes is the KV cache: tokens times KV bytes per token.
	Bytes float64
	// Ops is the RDMA operations it takes: a paged KV cache scattered in
	// blocks costs about layers x blocks x 2 (K and V), one per
	// contiguous region. 0 derives it from Hardware.SliceBytes, as a
	// transfer engine slicing a contiguous buffer would.
	Ops int
}

// Plan is the cost of one transfer on one path.
type Plan struct {
	// Path is the path planned.
	Path string
	// Hops are the resources crossed, source side first, each with its
	// capacity (shared among concurrent transfers).
	Hops []Hop
	// CapBytesPerSec is the flow's own limit, whatever the links leave
	// it: the GPUDirect peer-to-peer rate, a pinned copy's rate, or on
	// tcp one core's stream rate under load (one connection is served by
	// one core).
	CapBytesPerSec float64
	// Latency is paid once, after the flow and the control work: the
	// wire's one-way latency (twice for a pull), the staging pipeline's
	// fill and drain, a SmartNIC's notification.
	Latency engine.Time
	// HostCPU is the host CPU time the transfer costs, both servers
	// together, stretched by the hosts' background load (wall time of a
	// thread under that load): posting and reaping RDMA operations,
	// cudaMemcpy calls, and on tcp the stack's per-byte and per-message
	// work.
	HostCPU engine.Time
	// ArmCPU is the SmartNIC Arm core time (conspirator only): host-core
	// work over ArmSpeed, not stretched by the host's load.
	ArmCPU engine.Time
	// Control is the longest chain of that work on one thread (the
	// source's or the destination's), which runs concurrently with the
	// flow: the transfer ends at max(flow end, start + Control) +
	// Latency.
	Control engine.Time
	// Ops is the RDMA operations the plan counts (Transfer.Ops, or as
	// derived from SliceBytes); 0 on tcp and nvlink.
	Ops int
}

// Rate is the flow's rate alone: its cap and every hop's capacity, the
// smallest.
func (p Plan) Rate() float64 {
	r := p.CapBytesPerSec
	if !(r > 0) {
		r = math.Inf(1)
	}
	for _, h := range p.Hops {
		r = min(r, h.BytesPerSec)
	}
	return r
}

// Alone is the transfer's time with nothing else in the system:
// max(bytes / Rate, Control) + Latency, the bytes' time rounded up to the
// nanosecond as resource.Network rounds a flow's end.
func (p Plan) Alone(bytes float64) engine.Time {
	return max(hw.SerializationTime(bytes, p.Rate(), 0), p.Control) + p.Latency
}

// armPostsPerOp is the Arm's posts for one operation on the conspirator
// path: the RDMA READ that pulls it into SmartNIC DRAM, then the DMA
// descriptor that writes it into the GPU's (scattered) KV blocks, each
// posted and its completion reaped like one host RDMA operation. The
// host paths post once per operation: the NIC writes straight into its
// destination (gpudirect) or into a contiguous staging buffer that one
// cudaMemcpy per chunk spreads (host-rdma).
const armPostsPerOp = 2

// Plan returns the cost of moving t over path between two servers (or,
// for nvlink, two GPUs of one server) with this Hardware.
//
// The RDMA paths push: the source host posts RDMA WRITEs, as a transfer
// engine on the prefill side does. The conspirator path pulls: the
// destination's SmartNIC posts RDMA READs from the source GPU into its
// DRAM and DMAs the data into the decode GPU, so neither host's CPU is
// involved (the paper puts the SmartNIC on the receiving server).
func (h Hardware) Plan(path string, t Transfer) (Plan, error) {
	if err := h.Validate(path); err != nil {
		return Plan{}, err
	}
	if !(t.Bytes >= 0) || math.IsInf(t.Bytes, 1) {
		return Plan{}, fmt.Errorf("kvpath: transfer of %v bytes: bytes must be a finite number >= 0", t.Bytes)
	}
	if t.Ops < 0 {
		return Plan{}, fmt.Errorf("kvpath: transfer with %d RDMA operations: use 0 to derive them from Hardware.SliceBytes, or a count > 0", t.Ops)
	}
	p := Plan{Path: path}
	pinned := h.PCIe.PinnedH2DBytesPerSec
	stretch := h.Host.Stretch()
	// A staged byte crosses host DRAM twice (written, read back), and
	// moves between GPU and host at the pinned rate; pageable buffers
	// add a core's bounce copy (Hardware.Pageable).
	stage, passes := pinned, 2.0
	// bounce is one side's core time filling (or draining) the bounce
	// buffer: host CPU the transfer takes beside its flow, whose cap
	// (stage) it already sets.
	var bounce engine.Time
	if h.Pageable {
		stage, passes = pinned*h.PageableFactor/stretch, 4
		bounce = hw.SerializationTime(t.Bytes, stage, 0)
	}
	switch path {
	case NVLink:
		// GPU to GPU over NVLink: no host staging, no RDMA operations.
		p.Hops = []Hop{{Src, NVLinkTx, h.NVLinkBytesPerSec}, {Dst, NVLinkRx, h.NVLinkBytesPerSec}}
		p.Latency = h.NVLinkLatency
		return p, nil

	case HostCopy:
		// Two pinned cudaMemcpy per chunk, pipelined: out of the source
		// GPU into host DRAM and from there into the destination GPU.
		// Both sides are one server, so host DRAM is one resource (and
		// a flow may cross a link once): each byte is written and read,
		// half its bandwidth.
		p.Hops = []Hop{{Src, PCIeD2H, pinned}, {Src, HostDRAM, h.HostDRAMBytesPerSec / passes}, {Dst, PCIeH2D, pinned}}
		p.CapBytesPerSec = stage
		copies := engine.MulSat(2*h.chunks(t.Bytes), h.MemcpyIssue)
		p.HostCPU = engine.Scale(copies, stretch)
		p.Control = p.HostCPU
		p.HostCPU += 2 * bounce
		p.Latency = 2 * h.stageChunkTime(t.Bytes)
		return p, nil

	case GPUDirect:
		// The NIC reads the source GPU and the far NIC writes the
		// destination GPU; only the posting touches a host.
		p.Ops = h.ops(t)
		p.Hops = []Hop{
			{Src, PCIeD2H, pinned}, {Src, NICTx, h.NICBytesPerSec},
			{Dst, NICRx, h.NICBytesPerSec}, {Dst, PCIeH2D, pinned},
		}
		p.CapBytesPerSec = h.p2p()
		src := engine.MulSat(int64(p.Ops), h.PostPerOp)
		p.HostCPU = engine.Scale(src, stretch)
		p.Control = p.HostCPU
		p.Latency = h.NICLatency

	case HostRDMA:
		// GPU -> host DRAM -> NIC, and back on the far side: the copy
		// engines and the NICs pipeline chunk by chunk, so the flow runs
		// at the slowest stage and the first chunk's copy out (fill) and
		// the last one's copy in (drain) are not overlapped.
		p.Ops = h.ops(t)
		dram := h.HostDRAMBytesPerSec / passes
		p.Hops = []Hop{
			{Src, PCIeD2H, pinned}, {Src, HostDRAM, dram}, {Src, NICTx, h.NICBytesPerSec},
			{Dst, NICRx, h.NICBytesPerSec}, {Dst, HostDRAM, dram}, {Dst, PCIeH2D, pinned},
		}
		p.CapBytesPerSec = stage
		chunks := h.chunks(t.Bytes)
		copies := engine.MulSat(chunks, h.MemcpyIssue)
		src := engine.Scale(copies+engine.MulSat(int64(p.Ops), h.PostPerOp), stretch)
		dst := engine.Scale(copies, stretch)
		p.HostCPU, p.Control = src+dst+2*bounce, max(src, dst)
		p.Latency = h.NICLatency + 2*h.stageChunkTime(t.Bytes)

	case TCP:
		// host-rdma's staging, with the kernel stack moving the bytes:
		// each side's thread copies every byte between user and kernel
		// memory, so one connection runs at one core's rate under load
		// (the cap), and many connections share all the cores (the
		// tcp_cpu links). Host DRAM sees four passes per byte: the NIC's
		// DMA, the kernel copy's read and write, the GPU's copy.
		dram := h.HostDRAMBytesPerSec / (passes + 2) // and the kernel copy's read and write
		inflate := 1 + h.Host.Interference*h.Host.Background
		cores := hostCores(h.Host)
		p.Hops = []Hop{
			{Src, PCIeD2H, pinned}, {Src, HostDRAM, dram},
			{Src, TCPCPUTx, cores * h.TCP.ClockHz / h.TCP.TxCyclesPerByte / inflate},
			{Src, NICTx, h.NICBytesPerSec}, {Dst, NICRx, h.NICBytesPerSec},
			{Dst, TCPCPURx, cores * h.TCP.ClockHz / h.TCP.RxCyclesPerByte / inflate},
			{Dst, HostDRAM, dram}, {Dst, PCIeH2D, pinned},
		}
		perByte := max(h.TCP.RxCyclesPerByte, h.TCP.TxCyclesPerByte)
		p.CapBytesPerSec = min(stage, h.TCP.ClockHz/perByte/stretch)
		// One thread per side does the stack's work and issues the
		// copies, one send or recv per chunk: its work is a sum.
		chunks := h.chunks(t.Bytes)
		copies := engine.MulSat(chunks, h.MemcpyIssue)
		src := engine.Scale(copies+perChunk(t.Bytes, h.StageChunkBytes, h.TCP.TxWork), stretch)
		dst := engine.Scale(copies+perChunk(t.Bytes, h.StageChunkBytes, h.TCP.RxWork), stretch)
		p.HostCPU, p.Control = src+dst+2*bounce, max(src, dst)
		p.Latency = h.NICLatency + 2*h.stageChunkTime(t.Bytes)

	case Conspirator:
		// The destination SmartNIC's Arm pulls every operation into its
		// DRAM (RDMA READ: the request crosses the wire before the
		// data) and its DMA engine writes it into the GPU.
		s := h.SmartNIC
		p.Ops = h.ops(t)
		var src engine.Time
		if h.GPUDirect {
			// The sender's NIC serves the READs from GPU memory: no
			// host staging, no host CPU.
			p.Hops = []Hop{{Src, PCIeD2H, pinned}, {Src, NICTx, h.NICBytesPerSec}}
			p.CapBytesPerSec = h.p2p()
		} else {
			// Without GPUDirect the sender stages into host memory, as
			// host-rdma's sender does, and its host issues the copies.
			p.Hops = []Hop{{Src, PCIeD2H, pinned}, {Src, HostDRAM, h.HostDRAMBytesPerSec / passes}, {Src, NICTx, h.NICBytesPerSec}}
			p.CapBytesPerSec = stage
			src = engine.Scale(engine.MulSat(h.chunks(t.Bytes), h.MemcpyIssue), stretch)
			p.Latency += h.stageChunkTime(t.Bytes)
		}
		p.Hops = append(p.Hops,
			Hop{Dst, NICRx, h.NICBytesPerSec},
			Hop{Dst, SmartNICDRAM, h.SmartNICDRAMBytesPerSec / 2}, // written by the NIC, read by the DMA engine
			Hop{Dst, SmartNICDMA, s.DMABytesPerSec},
			Hop{Dst, PCIeH2D, pinned},
		)
		p.ArmCPU = engine.Scale(engine.MulSat(int64(armPostsPerOp*p.Ops), h.PostPerOp), 1/s.ArmSpeed)
		if p.ArmCPU > 0 && s.ArmCores > 0 && t.Bytes > 0 {
			// Each transfer posts on one core (Control); together they
			// post on all of them, at this transfer's bytes per
			// core-second: a shared resource, binding once more
			// transfers post at once than the SmartNIC has cores.
			p.Hops = append(p.Hops, Hop{Dst, SmartNICArm, float64(s.ArmCores) * t.Bytes / p.ArmCPU.Seconds()})
		}
		// The DMA engine's per-descriptor cost is device time that
		// overlaps the bytes like the Arm's work does.
		descriptors := engine.MulSat(int64(p.Ops), s.DMAPerOp)
		p.HostCPU = src
		if !h.GPUDirect {
			p.HostCPU += bounce
		}
		p.Control = max(src, p.ArmCPU, descriptors)
		// Drain: the last operation's DMA after its bytes have landed.
		var last engine.Time
		if p.Ops > 0 {
			last = hw.SerializationTime(t.Bytes/float64(p.Ops), s.DMABytesPerSec, pinned) + s.DMAPerOp
		}
		p.Latency += 2*h.NICLatency + last + h.NotifyLatency
	}
	return p, nil
}

// ops is t's RDMA operations: as given, or one per slice.
func (h Hardware) ops(t Transfer) int {
	if t.Ops > 0 {
		return t.Ops
	}
	return int(math.Ceil(t.Bytes / float64(h.SliceBytes)))
}

// chunks is the staging chunks of bytes (the last may be short).
func (h Hardware) chunks(bytes float64) int64 {
	return int64(math.Ceil(bytes / float64(h.StageChunkBytes)))
}

// stageChunkTime is one staging chunk's copy at the pinned rate: the fill
// (or drain) of the staging pipeline.
func (h Hardware) stageChunkTime(bytes float64) engine.Time {
	return hw.SerializationTime(min(bytes, float64(h.StageChunkBytes)), h.PCIe.PinnedH2DBytesPerSec, 0)
}

// p2p is the GPUDirect rate between the NIC and a GPU.
func (h Hardware) p2p() float64 {
	return hw.P2PBytesPerSec(h.PCIe, h.SameRootComplex, h.CrossFactor)
}

// perChunk is work (a TCP stack's RxWork or TxWork: per-message plus
// per-byte) over bytes sent in chunks of chunk bytes, the last one short.
func perChunk(bytes float64, chunk int64, work func(float64) engine.Time) engine.Time {
	c := float64(chunk)
	full := math.Floor(bytes / c)
	total := engine.MulSat(int64(full), work(c))
	if rest := bytes - full*c; rest > 0 {
		total += work(rest)
	}
	return total
}

// hostCores is how many cores' worth of time the host's foreground threads
// get when they have work for every core, as hw.HostCPU shares them: each
// core's lone-job share under the per-core and slice models; under the
// threads model the cores the background leaves idle (u*N threads keep
// u*N cores busy), at least one lone job's share.
func hostCores(c hw.HostCPUConfig) float64 {
	n := float64(c.Cores)
	if c.Model == hw.BackgroundThreads {
		return max(n*(1-c.Background), c.Share())
	}
	return n * c.Share()
}

// Validate reports everything path needs from h that is missing or
// impossible, each problem with the field to set.
func (h Hardware) Validate(path string) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("kvpath: path %q: "+format, append([]any{path}, args...)...))
	}
	rate := func(v float64, field, fix string) {
		if !(v > 0) || math.IsInf(v, 0) {
			bad("%s is %v: it must be a finite number > 0 (%s)", field, v, fix)
		}
	}
	nonNeg := func(v engine.Time, field string) {
		if v < 0 {
			bad("%s is %v: it must be >= 0", field, v)
		}
	}
	host := func() {
		c := h.Host
		switch {
		case c.Cores < 1:
			bad("Host.Cores is %d: the host CPU posts and copies, it needs at least 1 core", c.Cores)
		case !(c.Background >= 0 && c.Background < 1):
			bad("Host.Background is %v: it must be in [0, 1)", c.Background)
		case !(c.Interference >= 0) || math.IsInf(c.Interference, 0):
			bad("Host.Interference is %v: it must be a finite number >= 0 (hw.DefaultHostCosts.Interference)", c.Interference)
		case c.Model != hw.BackgroundPerCore && c.Model != hw.BackgroundThreads && c.Model != hw.BackgroundSlice:
			bad("Host.Model %q is unknown; use one of %v", c.Model, hw.BackgroundModels)
		}
	}
	staging := func() {
		rate(h.HostDRAMBytesPerSec, "HostDRAMBytesPerSec", "host memory bandwidth for staging; Default has kvpath.host_dram_peak x kvpath.host_dram_staging_share")
		if h.StageChunkBytes <= 0 {
			bad("StageChunkBytes is %d: staging through host memory needs a chunk > 0 (Default: kvpath.stage_chunk_bytes)", h.StageChunkBytes)
		}
		nonNeg(h.MemcpyIssue, "MemcpyIssue")
		if h.Pageable && !(h.PageableFactor > 0 && h.PageableFactor <= 1) {
			bad("PageableFactor is %v with pageable staging: it must be in (0, 1] (Default: host.pageable_factor)", h.PageableFactor)
		}
	}
	gpuDirect := func() {
		if !h.SameRootComplex && !(h.CrossFactor > 0 && h.CrossFactor <= 1) {
			bad("CrossFactor is %v with NIC and GPU on different root complexes: it must be in (0, 1] (hw.DefaultCrossRootComplexFactor), or set SameRootComplex", h.CrossFactor)
		}
	}
	rdma := func() {
		if h.SliceBytes <= 0 {
			bad("SliceBytes is %d: RDMA operations are counted per slice when a transfer gives none; use 65536 (Mooncake's slice)", h.SliceBytes)
		}
		nonNeg(h.PostPerOp, "PostPerOp")
	}

	switch path {
	case NVLink:
		rate(h.NVLinkBytesPerSec, "NVLinkBytesPerSec", "the GPU has no NVLink: use an inter-server path, or set it from gpu.Spec.NVLinkBandwidth")
		nonNeg(h.NVLinkLatency, "NVLinkLatency")
		return errors.Join(errs...)
	case HostCopy:
		rate(h.PCIe.PinnedH2DBytesPerSec, "PCIe.PinnedH2DBytesPerSec", `set PCIe from hw.LookupPCIe("gen4-x16")`)
		staging()
		host()
		return errors.Join(errs...)
	case TCP, GPUDirect, HostRDMA, Conspirator:
	default:
		hint := ""
		if near := suggest.Nearest(path, Paths()); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("kvpath: unknown path %q%s; use one of %s", path, hint, strings.Join(Paths(), ", "))
	}

	// Every path between servers crosses the network and the GPUs' PCIe.
	rate(h.NICBytesPerSec, "NICBytesPerSec", "line rate x efficiency, e.g. 200e9/8 x 0.95 = 23.75e9 B/s")
	nonNeg(h.NICLatency, "NICLatency")
	rate(h.PCIe.PinnedH2DBytesPerSec, "PCIe.PinnedH2DBytesPerSec", `set PCIe from hw.LookupPCIe("gen4-x16")`)
	switch path {
	case GPUDirect:
		if !h.GPUDirect {
			bad(`needs GPUDirect RDMA between the NIC and the GPU: set Hardware.GPUDirect, or use %q`, HostRDMA)
		}
		gpuDirect()
		rdma()
		host()
	case HostRDMA:
		staging()
		rdma()
		host()
	case TCP:
		staging()
		host()
		if !(h.TCP.ClockHz > 0) || math.IsInf(h.TCP.ClockHz, 0) {
			bad("TCP.ClockHz is %v: it must be a finite number > 0 (the host CPU's clock)", h.TCP.ClockHz)
		}
		if !(h.TCP.RxCyclesPerByte > 0) || !(h.TCP.TxCyclesPerByte > 0) {
			bad("TCP cycles per byte are %v (rx) and %v (tx): both must be > 0 (hw.DefaultHostCosts)", h.TCP.RxCyclesPerByte, h.TCP.TxCyclesPerByte)
		}
		nonNeg(h.TCP.RxPerMessage, "TCP.RxPerMessage")
		nonNeg(h.TCP.TxPerMessage, "TCP.TxPerMessage")
	case Conspirator:
		rdma()
		nonNeg(h.NotifyLatency, "NotifyLatency")
		if s := h.SmartNIC; s == nil {
			bad(`needs a SmartNIC on the receiving server: set Hardware.SmartNIC (hw.LookupSmartNIC("bluefield3")), or use %q`, GPUDirect)
		} else {
			rate(s.ArmSpeed, "SmartNIC.ArmSpeed", "Arm core speed relative to a host core")
			rate(s.DMABytesPerSec, "SmartNIC.DMABytesPerSec", "the SmartNIC's DMA engine rate")
			nonNeg(s.DMAPerOp, "SmartNIC.DMAPerOp")
			rate(h.SmartNICDRAMBytesPerSec, "SmartNICDRAMBytesPerSec", "the SmartNIC's sustained DRAM bandwidth; Default has kvpath.bluefield3.dram_bandwidth")
		}
		if h.GPUDirect {
			gpuDirect()
		} else {
			// The sender stages through its host.
			staging()
			host()
		}
	}
	return errors.Join(errs...)
}

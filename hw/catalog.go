package hw

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Grade says how far a default can be trusted, from a vendor datasheet down
// to an estimate with only reasoning behind it.
type Grade string

// Grades, as in ../shared/reference/hardware.md.
const (
	Vendor    Grade = "vendor"    // V: datasheet or vendor documentation
	Measured  Grade = "measured"  // M: published measurement (paper, MLPerf, artifact repository)
	Anecdotal Grade = "anecdotal" // A: a README, forum post or blog; setup not fully described
	Secondary Grade = "secondary" // S: a summary of a paper whose body was not read
	Paper     Grade = "paper"     // the Conspirator paper's own table (normalized prices and throughputs)
	Derived   Grade = "derived"   // D: arithmetic on sourced numbers
	Estimate  Grade = "estimate"  // E: no source; reasoning only
)

// Param is one sourced default: what the catalog (or a model default)
// uses, in SI units, and where the number came from.
type Param struct {
	Key    string  // e.g. "smartnic.bluefield3.arm_cores"
	Value  float64 // in Unit
	Unit   string  // SI unit or "1" for a count or factor
	Grade  Grade
	Source string
	// Low and High bound the values the sources leave plausible, in Unit,
	// for the estimates and anecdotes a result may rest on; both 0 where
	// no range is stated. The Source text says where the bounds come from.
	// `conspirator sensitivity` moves the parameter across this range.
	Low, High float64
}

// Plausible reports the stated plausible range, if any.
func (p Param) Plausible() (lo, hi float64, ok bool) {
	return p.Low, p.High, p.High > p.Low
}

// PCIeSpec is a PCIe link, one direction.
type PCIeSpec struct {
	Name  string
	Gen   int
	Lanes int
	// BytesPerSecPerDir is the theoretical payload bandwidth of one
	// direction (line rate after 128b/130b encoding).
	BytesPerSecPerDir float64
	// PinnedH2DBytesPerSec is what a pinned cudaMemcpy host->device
	// achieves on this link in practice (copy-engine DMA; TLP overheads).
	PinnedH2DBytesPerSec float64
}

// NICSpec is an RDMA-capable NIC (ConnectX).
type NICSpec struct {
	Name               string
	LineRateBitsPerSec float64
	// Efficiency is large-message goodput over line rate.
	Efficiency float64
	// OneWayLatency is the small-message RDMA WRITE latency NIC to NIC
	// (perftest ib_write_lat, which reports RTT/2), wire and switch
	// included.
	OneWayLatency engine.Time
	// PerMessage is the NIC's per-message processing cost (1 / message
	// rate): it bounds small-message rates, not latency.
	PerMessage engine.Time
	PCIe       PCIeSpec
}

// SmartNICSpec is an off-path SmartNIC (BlueField DPU): Arm SoC, DRAM
// buffer, DMA engine, plus its own ConnectX NIC.
type SmartNICSpec struct {
	Name     string
	ArmCores int
	// ArmSpeed is one Arm core's single-thread speed relative to one host
	// x86 core for control code: a decision that takes t on the host takes
	// t/ArmSpeed on the SoC.
	ArmSpeed  float64
	DRAMBytes float64
	NIC       NICSpec
	// DMABytesPerSec is the SoC DMA engine's large-transfer rate from SoC
	// memory to GPU (or host) memory.
	DMABytesPerSec float64
	// DMAPerOp is the engine's per-descriptor cost (1 / small-op rate).
	DMAPerOp  engine.Time
	MaxPowerW float64
	PriceUSD  float64
}

// HostCPUSpec is the server's host processor(s).
type HostCPUSpec struct {
	Name    string
	Sockets int
	Cores   int // physical cores over all sockets
	// ClockHz is the all-core operating frequency used to turn cycles into
	// time.
	ClockHz float64
	TDPW    float64 // sum of the sockets' TDP
	// PowerW and PriceUSD are the figures the Conspirator paper's cost
	// table charges to the host CPU (normalized, not a list price).
	PowerW   float64
	PriceUSD float64
}

// HostCosts are per-operation costs of the host software stack, in
// core-time of one unloaded host core (the host CPU model stretches them
// under background load).
type HostCosts struct {
	// TCP receive and send: cycles per payload byte (per-packet costs are
	// folded in: TSO/GRO on) and a per-message cost (system call, wake-up,
	// socket bookkeeping).
	TCPRxCyclesPerByte float64
	TCPTxCyclesPerByte float64
	TCPRxPerMessage    engine.Time
	TCPTxPerMessage    engine.Time
	// PollCompletion is one completion seen by a busy-polling thread
	// (ibv_poll_cq plus bookkeeping); PostSend one posted work request.
	PollCompletion engine.Time
	PostSend       engine.Time
	// MemcpyIssue is the fixed CPU cost of one cudaMemcpy (driver call,
	// synchronisation), whatever its size.
	MemcpyIssue engine.Time
	// PageableFactor is pageable over pinned cudaMemcpy bandwidth: a
	// pageable copy is staged by the CPU through a pinned bounce buffer,
	// so it runs at this fraction of the pinned rate and keeps a core busy.
	PageableFactor float64
	// PageableD2HFactor is PageableFactor for a copy from the GPU into
	// pageable host memory (cudaMemcpy device to host), which the driver
	// stages the other way round and which runs at its own rate (an H200:
	// 20% of pinned D2H, against 24% H2D). The catalog has no figure of
	// its own: sim/datapath takes PageableFactor where a scenario leaves
	// datapath.host.pageable_d2h_factor unset. CopyBackWork reads it.
	PageableD2HFactor float64
	// KernelLaunch is the CPU cost of one launch; SyncWait the extra time
	// from GPU completion until the host thread returns from its
	// synchronisation.
	KernelLaunch engine.Time
	SyncWait     engine.Time
	// Interference is alpha in the stretch 1 + alpha*u of host-side work
	// under background load u (cache and memory-bandwidth contention, on
	// top of time-sharing the cores).
	Interference float64
	// SchedSlice and WakeupMiss are BackgroundSlice's parameters: the
	// longest wait of a wake-up for a stressor's slice, and the fraction
	// of wake-ups onto a busy core that wait for it.
	SchedSlice engine.Time
	WakeupMiss float64
	// WakeupMissFloor is the share of wake-ups that wait for a slice
	// whenever any background load runs, whatever its level: a
	// duty-cycle stressor's threads wake every period and, having slept,
	// may preempt the foreground themselves (see hw.BackgroundSlice).
	WakeupMissFloor float64
	// IdleWake is the delay of a wake-up on a core with no background
	// load (hw.HostCPUConfig.IdleWake).
	IdleWake engine.Time
	// MemcpyBytesPerSec is one thread's host-to-host memcpy rate of large
	// buffers (the loopback path's copy).
	MemcpyBytesPerSec float64
}

// The catalog: every named part and the host software costs, each number
// written once, where it is defined, with its grade and source (param);
// Provenance lists them all, so reports, `conspirator explain` and the
// scenario-key reference read the same table.
var (
	pcieParts = map[string]PCIeSpec{
		"gen4-x16": {
			Name: "gen4-x16", Gen: 4, Lanes: 16,
			BytesPerSecPerDir:    param("pcie.gen4-x16.bytes_per_sec_per_dir", 31.5e9, "B/s", Derived, "16 GT/s x 16 x 128/130 / 8; glennklockwood A100 page \"32+32 GB/s\""),
			PinnedH2DBytesPerSec: param("pcie.gen4-x16.pinned_h2d", 25e9, "B/s", Anecdotal, "DGX A100 bandwidthTest pinned H2D 25.7 GB/s (gengwg notes); nvbandwidth 24.8 GB/s (NVIDIA forum t/352186); plausible 17.3 GB/s (a Dell A100 PCIe box, same notes) to 26.5 GB/s (0.84 of the link, the best ratio seen)", 17.3e9, 26.5e9),
		},
		"gen5-x16": {
			Name: "gen5-x16", Gen: 5, Lanes: 16,
			BytesPerSecPerDir:    param("pcie.gen5-x16.bytes_per_sec_per_dir", 63e9, "B/s", Secondary, "pingdo.net 63 GB/s per direction; hawkvelt H100 SXM \"128 GB/sec\" bidirectional"),
			PinnedH2DBytesPerSec: param("pcie.gen5-x16.pinned_h2d", 50e9, "B/s", Estimate, "0.8 x 63 GB/s, the Gen4 ratio 25/31.5; a weak anecdotal example shows 55.63 GB/s (nvbandwidth tutorial); plausible 35 GB/s (the Gen4 Dell box's ratio 17.3/31.5) to 56 GB/s", 35e9, 56e9),
		},
	}

	nicParts = map[string]NICSpec{
		"connectx6": {
			Name:               "connectx6",
			LineRateBitsPerSec: param("nic.connectx6.line_rate", 200e9, "bit/s", Vendor, "docs.nvidia.com/networking/display/ConnectX6EN/Introduction"),
			Efficiency:         param("nic.connectx6.efficiency", 0.95, "1", Estimate, "large-message goodput over line rate; perftest logs show 0.8-0.97 of the link (the plausible range)", 0.8, 0.97),
			OneWayLatency:      paramTime("nic.connectx6.one_way_latency", 1.3e-6, Estimate, "median of anecdotal perftest logs (ib_write_lat 2 B 1.33 us RoCE; ib_send_lat 1.27 us IB); plausible 1.0 us (back to back) to 2.5 us (RoCE through a switch)", 1.0e-6, 2.5e-6),
			PerMessage:         paramTime("nic.connectx6.per_message", 5e-9, Derived, "1 / 215 Mpps (vendor: ConnectX-6 EN \"215 million messages per second\") = 4.65 ns"),
			PCIe:               pcieParts["gen4-x16"], // V: a 200 Gb/s x16 card needs Gen4
		},
		"connectx7": {
			Name:               "connectx7",
			LineRateBitsPerSec: param("nic.connectx7.line_rate", 400e9, "bit/s", Vendor, "docs.nvidia.com/networking/display/ConnectX7VPI/Introduction"),
			Efficiency:         param("nic.connectx7.efficiency", 0.95, "1", Estimate, "as connectx6"),
			OneWayLatency:      paramTime("nic.connectx7.one_way_latency", 1.3e-6, Estimate, "no CX-7 latency figure found; the connectx6 value"),
			PerMessage:         paramTime("nic.connectx7.per_message", 5e-9, Estimate, "no CX-7 message rate found; the connectx6 value"),
			PCIe:               pcieParts["gen5-x16"], // V: same page (PCIe Gen5 x16)
		},
	}

	smartNICParts = map[string]SmartNICSpec{
		"bluefield3": {
			Name:           "bluefield3",
			ArmCores:       paramInt("smartnic.bluefield3.arm_cores", 16, Vendor, "DOCA Hardware Architecture page; BSP SKU table (B3210/B3220/B3240)"),
			ArmSpeed:       param("smartnic.bluefield3.arm_speed", 0.62, "1", Anecdotal, "NTHU-LSALAB/bf3-bench: x86 1.60x (BPE 332 vs 531 us) and 1.64x (WordPiece) faster single thread; 1/1.6; plausible 0.4 to 0.8: two text workloads, control code with more branches and cache misses may fare worse or better", 0.4, 0.8),
			DRAMBytes:      param("smartnic.bluefield3.dram", 32e9, "B", Vendor, "docs.nvidia.com/networking/display/bf3dpu/supported+interfaces"),
			NIC:            withRate(nicParts["connectx7"], param("smartnic.bluefield3.line_rate", 200e9, "bit/s", Vendor, "B3220 SKU: 2x200GbE, PCIe Gen5 x16")),
			DMABytesPerSec: param("smartnic.bluefield3.dma_bandwidth", 22e9, "B/s", Estimate, "bounded by the DMA engine (BF2 READ 25.6 GB/s, measured) and an A100 Gen4 link (25 GB/s, anecdotal); BF2 WRITE is only 15.1 GB/s; plausible 15.1 to 25.6 GB/s, those two bounds", 15.1e9, 25.6e9),
			DMAPerOp:       paramTime("smartnic.bluefield3.dma_per_op", 95e-9, Estimate, "the BF2 value, 1 / 10.5 M ops/s (smartnic-bench doca_dma.md), reused; plausible half to twice that", 47.5e-9, 190e-9),
			MaxPowerW:      param("smartnic.bluefield3.max_power", 150, "W", Vendor, "BF3 DPU Controller manual (\"up to 150W\"); the paper's table says 150 W too"),
			PriceUSD:       param("smartnic.bluefield3.price", 231, "USD", Paper, "Conspirator cost table (normalized; street price 2000-3000 USD, anecdotal: yobitel)"),
		},
		"bluefield2": {
			Name:           "bluefield2",
			ArmCores:       paramInt("smartnic.bluefield2.arm_cores", 8, Vendor, "docs.nvidia.com/networking/display/bluefield2dpuenug/introduction"),
			ArmSpeed:       param("smartnic.bluefield2.arm_speed", 0.64, "1", Anecdotal, "takashimakazuki/dpdk_compression: zstd 0.351 vs 0.226 s, zlib 9.027 vs 5.758 s against a Xeon E5-2630v4 (1.55-1.57x)"),
			DRAMBytes:      param("smartnic.bluefield2.dram", 16e9, "B", Vendor, "BlueField-2 user guide (8/16/32 GB options)"),
			NIC:            withRate(nicParts["connectx6"], param("smartnic.bluefield2.line_rate", 100e9, "bit/s", Measured, "up to 200 Gb/s (vendor); Liu et al. arXiv 2105.06619 tested 100 GbE")),
			DMABytesPerSec: param("smartnic.bluefield2.dma_bandwidth", 15.1e9, "B/s", Derived, "65536 B x 0.23 M/s, DOCA DMA WRITE SoC to host (measured: smartnic-bench doca_dma.md)"),
			DMAPerOp:       paramTime("smartnic.bluefield2.dma_per_op", 95e-9, Derived, "1 / 10.5 M ops/s (measured: smartnic-bench doca_dma.md)"),
			MaxPowerW:      param("smartnic.bluefield2.max_power", 75, "W", Estimate, "not found in the sources read; a typical x16 card budget"),
			PriceUSD:       param("smartnic.bluefield2.price", 231, "USD", Estimate, "no paper figure for BF2; the BF3 paper value reused"),
		},
	}

	hostCPUParts = map[string]HostCPUSpec{
		"xeon-8380-2s": {
			Name:     "xeon-8380-2s",
			Sockets:  paramInt("host_cpu.xeon-8380-2s.sockets", 2, Estimate, "a dual-socket server is what an 800 W CPU budget suggests"),
			Cores:    paramInt("host_cpu.xeon-8380-2s.cores", 80, Vendor, "Intel ARK, Xeon Platinum 8380: 40 cores per socket"),
			ClockHz:  param("host_cpu.xeon-8380-2s.clock", 3.0e9, "Hz", Estimate, "all-core turbo of an 8380 (ARK: base 2.3, max 3.4 GHz); hardware.md 3 uses ~3 GHz for cycles/byte; plausible 2.3 to 3.4 GHz, base to max", 2.3e9, 3.4e9),
			TDPW:     param("host_cpu.xeon-8380-2s.tdp", 540, "W", Anecdotal, "2 x 270 W (ilsoftware.it Ice Lake-SP launch article)"),
			PowerW:   param("host_cpu.xeon-8380-2s.power", 800, "W", Paper, "Conspirator cost table, host CPU 800 W"),
			PriceUSD: param("host_cpu.xeon-8380-2s.price", 1000, "USD", Paper, "Conspirator cost table, host CPU $1,000 (normalized)"),
		},
		"xeon-8380": {
			Name:     "xeon-8380",
			Sockets:  paramInt("host_cpu.xeon-8380.sockets", 1, Vendor, "one socket of the part"),
			Cores:    paramInt("host_cpu.xeon-8380.cores", 40, Vendor, "Intel ARK, Xeon Platinum 8380"),
			ClockHz:  param("host_cpu.xeon-8380.clock", 3.0e9, "Hz", Estimate, "as xeon-8380-2s"),
			TDPW:     param("host_cpu.xeon-8380.tdp", 270, "W", Anecdotal, "ilsoftware.it Ice Lake-SP launch article"),
			PowerW:   param("host_cpu.xeon-8380.power", 800, "W", Paper, "Conspirator cost table (charged to the host CPU whatever its sockets)"),
			PriceUSD: param("host_cpu.xeon-8380.price", 1000, "USD", Paper, "Conspirator cost table"),
		},
	}

	// DefaultHostCosts are the host software costs on an Ice Lake server
	// core with an A100.
	DefaultHostCosts = HostCosts{
		TCPRxCyclesPerByte: param("host.tcp_rx_cycles_per_byte", 0.6, "cycle/B", Derived, "f / (42e9/8 B/s) = 0.57 at 3.0 GHz; secondary: Cai et al. SIGCOMM'21, 42 Gb/s per core, one long flow"),
		TCPTxCyclesPerByte: param("host.tcp_tx_cycles_per_byte", 0.3, "cycle/B", Estimate, "half the receive cost: the user-to-kernel copy stays, GRO and interrupts go (secondary: \"sender side is not the bottleneck\"); plausible a quarter to all of the receive cost", 0.15, 0.6),
		TCPRxPerMessage:    paramTime("host.tcp_rx_per_message", 5e-6, Estimate, "about half of a kernel-TCP small-message RTT (~20-25 us) minus RDMA's; includes the wake-up of the reading thread; plausible 2.5 us (busy polling) to 12 us (the whole half RTT)", 2.5e-6, 12e-6),
		TCPTxPerMessage:    paramTime("host.tcp_tx_per_message", 3e-6, Estimate, "send() system call and segment setup; plausible 1 to 6 us", 1e-6, 6e-6),
		PollCompletion:     paramTime("host.poll_completion", 0.5e-6, Estimate, "ibv_poll_cq and request bookkeeping; no measurement found; plausible 0.1 to 2 us", 0.1e-6, 2e-6),
		PostSend:           paramTime("host.post_send", 0.3e-6, Estimate, "building a work request and ringing the doorbell (MMIO write); plausible 0.1 to 1 us", 0.1e-6, 1e-6),
		MemcpyIssue:        paramTime("host.memcpy_issue", 10e-6, Estimate, "about an A100 launch+sync, 9.65 us (measured: reframe kernel_latency.py); no cudaMemcpy latency source found; plausible 5 to 20 us", 5e-6, 20e-6),
		PageableFactor:     param("host.pageable_factor", 0.4, "1", Derived, "10.0/25.7 GB/s, DGX A100 bandwidthTest pageable vs pinned (anecdotal: gengwg notes); a Dell A100 PCIe box shows 3.3/17.3; plausible 0.19 (that box) to 0.5", 0.19, 0.5),
		KernelLaunch:       paramTime("host.kernel_launch", 2.7e-6, Measured, "reframe kernel_latency.py, A100 async launch"),
		SyncWait:           paramTime("host.sync_wait", 6.95e-6, Derived, "A100 launch+sync 9.65 us minus async launch 2.7 us (measured: reframe kernel_latency.py)"),
		SchedSlice:         paramTime("host.sched_slice", 3e-3, Derived, "Linux EEVDF base slice, sysctl_sched_base_slice 0.75 ms x (1 + log2 of the CPUs, at most 8) = 3 ms on a server (kernel/sched/fair.c, Linux 6.6+); plausible 0.75 ms (one CPU) to 12 ms (CFS: 24 ms latency target over two runnable threads)", 0.75e-3, 12e-3),
		WakeupMiss:         param("host.wakeup_miss", 0.02, "1", Measured, "realhw/host loopback TCP on one pinned core with a 10 ms duty-cycle stressor, 2-core VM (Linux 6.18): 1-3% of requests (two wake-ups each) waited 0.5-2.5 ms at 80% load, median unchanged; conspirator calibrate --validate refits it per machine; plausible 0.5% to 10%", 0.005, 0.10),
		WakeupMissFloor:    param("host.wakeup_miss_floor", 0, "1", Derived, "0: the catalog's wakeup_miss is a share proportional to load; conspirator calibrate --validate fits a floor per machine from two loaded runs (the 2-core VM: 0.76% of requests waited at 10% load, 1.07% at 20%, 1.65% at 58%; not proportional); plausible 0 to 1%", 0, 0.01),
		IdleWake:           paramTime("host.idle_wake", 0, Derived, "0: no idle-state exit cost is sourced for a server core (C-state exit latencies are platform-specific, C1 about 1-2 us, deeper states tens of us); not fitted by conspirator calibrate --validate, which reports the wake-up stages' drop from 0% to 10% load (wake_stage_drop_us): one 16-core H200 VM's were 2.4-5.9 us faster at 20-60% load than unloaded, ten other runs' 0-2.6 us or none at 10%, within run-to-run noise; set it for a machine that shows it; plausible 0 to 50 us", 0, 50e-6),
		MemcpyBytesPerSec:  param("host.memcpy_bandwidth", 10e9, "B/s", Estimate, "one thread's memcpy of 64 KiB-4 MiB buffers on a server core, 8-12 GB/s in STREAM-copy single-thread figures; conspirator calibrate measures it (host-memcpy); plausible 5 to 20 GB/s", 5e9, 20e9),
		Interference:       param("host.interference", 0.10, "1", Estimate, "fit to a blog's stress-ng -8.8% GPU inference throughput (anecdotal: eunomia.dev 2026-05-24); 0.25 with network and disk noise; plausible 0 to 0.25", 0, 0.25),
	}
)

// provenance holds every param of the catalog, appended as the catalog
// above is built (package initialisation runs its initialisers in
// dependency order, all before any caller).
var provenance []Param

// param records one sourced number of the catalog and returns its value.
// A plausible range may follow the source: param(..., source, low, high).
func param(key string, v float64, unit string, g Grade, source string, plausible ...float64) float64 {
	p := Param{Key: key, Value: v, Unit: unit, Grade: g, Source: source}
	if len(plausible) == 2 {
		p.Low, p.High = plausible[0], plausible[1]
	}
	provenance = append(provenance, p)
	return v
}

// paramTime is param for a duration given in seconds (the range too).
func paramTime(key string, seconds float64, g Grade, source string, plausible ...float64) engine.Time {
	return engine.Time(math.Round(param(key, seconds, "s", g, source, plausible...) * 1e9))
}

// paramInt is param for a count.
func paramInt(key string, n int, g Grade, source string) int {
	return int(param(key, float64(n), "1", g, source))
}

func withRate(n NICSpec, bitsPerSec float64) NICSpec {
	n.LineRateBitsPerSec = bitsPerSec
	return n
}

// LookupPCIe returns the named PCIe link ("gen4-x16", "gen5-x16").
func LookupPCIe(name string) (PCIeSpec, error) {
	return lookup(pcieParts, "PCIe link", name)
}

// LookupNIC returns the named RDMA NIC ("connectx6", "connectx7").
func LookupNIC(name string) (NICSpec, error) { return lookup(nicParts, "RDMA NIC", name) }

// LookupSmartNIC returns the named SmartNIC ("bluefield2", "bluefield3").
func LookupSmartNIC(name string) (SmartNICSpec, error) {
	return lookup(smartNICParts, "SmartNIC", name)
}

// LookupHostCPU returns the named host CPU ("xeon-8380-2s", "xeon-8380").
func LookupHostCPU(name string) (HostCPUSpec, error) {
	return lookup(hostCPUParts, "host CPU", name)
}

// SmartNICNames lists the catalog's SmartNICs, sorted.
func SmartNICNames() []string { return names(smartNICParts) }

func lookup[T any](m map[string]T, kind, name string) (T, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	var zero T
	hint := ""
	if near := suggest.Nearest(name, names(m)); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return zero, fmt.Errorf("unknown %s %q%s; known: %s", kind, name, hint, strings.Join(names(m), ", "))
}

func names[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Provenance lists every catalog default with its grade and source, sorted
// by key. Estimates (Grade Estimate) are the numbers to calibrate first.
func Provenance() []Param {
	ps := slices.Clone(provenance)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

package hw

import (
	"fmt"
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

// GoodputBytesPerSec is the NIC's large-message payload rate.
func (n NICSpec) GoodputBytesPerSec() float64 { return n.LineRateBitsPerSec / 8 * n.Efficiency }

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
	// KernelLaunch is the CPU cost of one launch; SyncWait the extra time
	// from GPU completion until the host thread returns from its
	// synchronisation.
	KernelLaunch engine.Time
	SyncWait     engine.Time
	// Interference is alpha in the stretch 1 + alpha*u of host-side work
	// under background load u (cache and memory-bandwidth contention, on
	// top of time-sharing the cores).
	Interference float64
}

// catalog holds every named part. Each value carries its grade and source
// in the comment beside it; provenance repeats them as data.
var (
	pcieParts = map[string]PCIeSpec{
		"gen4-x16": {
			Name: "gen4-x16", Gen: 4, Lanes: 16,
			BytesPerSecPerDir:    31.5e9, // D: 16 GT/s x 16 lanes x 128/130 / 8; S: glennklockwood A100 page "32+32 GB/s"
			PinnedH2DBytesPerSec: 25.0e9, // A: DGX A100 bandwidthTest pinned H2D 25.7 GB/s (gengwg notes); nvbandwidth 24.8 (NVIDIA forum t/352186)
		},
		"gen5-x16": {
			Name: "gen5-x16", Gen: 5, Lanes: 16,
			BytesPerSecPerDir:    63.0e9, // S: pingdo.net 63 GB/s per direction; hawkvelt H100 SXM "128 GB/sec" bidirectional
			PinnedH2DBytesPerSec: 50.0e9, // E: 0.8 x 63 (the Gen4 ratio 25/31.5); weak A example 55.63 GB/s (nvbandwidth tutorial)
		},
	}

	nicParts = map[string]NICSpec{
		"connectx6": {
			Name:               "connectx6",
			LineRateBitsPerSec: 200e9,                    // V: docs.nvidia.com/networking/display/ConnectX6EN/Introduction
			Efficiency:         0.95,                     // E: large-message goodput / line rate; perftest logs show 0.8-0.97
			OneWayLatency:      engine.Nanoseconds(1300), // E: median of A perftest logs (ib_write_lat 2 B 1.33 us RoCE; ib_send_lat 1.27 us IB)
			PerMessage:         engine.Nanoseconds(5),    // D: 1 / 215 Mpps (V: ConnectX-6 EN "215 million messages per second") = 4.65 ns
			PCIe:               pcieParts["gen4-x16"],    // V: a 200 Gb/s x16 card needs Gen4
		},
		"connectx7": {
			Name:               "connectx7",
			LineRateBitsPerSec: 400e9,                    // V: docs.nvidia.com/networking/display/ConnectX7VPI/Introduction
			Efficiency:         0.95,                     // E: as connectx6
			OneWayLatency:      engine.Nanoseconds(1300), // E: no CX-7 latency spec found; same as connectx6
			PerMessage:         engine.Nanoseconds(5),    // E: no CX-7 message rate found; same as connectx6
			PCIe:               pcieParts["gen5-x16"],    // V: same page (PCIe Gen5 x16)
		},
	}

	smartNICParts = map[string]SmartNICSpec{
		"bluefield3": {
			Name:           "bluefield3",
			ArmCores:       16,                                     // V: DOCA Hardware Architecture page; BSP SKU table (B3210/B3220/B3240)
			ArmSpeed:       0.62,                                   // A: NTHU-LSALAB/bf3-bench: x86 1.60x (BPE 332 vs 531 us), 1.64x (WordPiece) faster; D: 1/1.6
			DRAMBytes:      32e9,                                   // V: docs.nvidia.com/networking/display/bf3dpu/supported+interfaces
			NIC:            withRate(nicParts["connectx7"], 200e9), // V: B3220 2x200GbE, PCIe Gen5 x16 (SKU table)
			DMABytesPerSec: 22e9,                                   // E: bounded by the DMA engine (BF2 READ 25.6 GB/s, M) and an A100 Gen4 link (25 GB/s, A); BF2 WRITE is only 15.1 GB/s
			DMAPerOp:       engine.Nanoseconds(95),                 // E: BF2 value, D: 1 / 10.5 M ops/s (M: smartnic-bench doca_dma.md)
			MaxPowerW:      150,                                    // V: BF3 DPU Controller manual ("up to 150W"); the paper's table says 150 W too
			PriceUSD:       231,                                    // Paper: cost table (normalized; street price 2000-3000 USD, A: yobitel)
		},
		"bluefield2": {
			Name:           "bluefield2",
			ArmCores:       8,                                      // V: docs.nvidia.com/networking/display/bluefield2dpuenug/introduction
			ArmSpeed:       0.64,                                   // A: takashimakazuki/dpdk_compression zstd 0.351 vs 0.226 s, zlib 9.027 vs 5.758 s vs Xeon E5-2630v4
			DRAMBytes:      16e9,                                   // V: same page (8/16/32 GB options)
			NIC:            withRate(nicParts["connectx6"], 100e9), // V: up to 200 Gb/s; M: Liu et al. arXiv 2105.06619 tested 100 GbE
			DMABytesPerSec: 15.1e9,                                 // D: 65536 B x 0.23 M/s, DOCA DMA WRITE (SoC to host), M: smartnic-bench doca_dma.md
			DMAPerOp:       engine.Nanoseconds(95),                 // D: 1 / 10.5 M ops/s, M: same
			MaxPowerW:      75,                                     // E: not found in the sources read; typical x16 card budget
			PriceUSD:       231,                                    // E: no paper figure for BF2; the BF3 paper value reused
		},
	}

	hostCPUParts = map[string]HostCPUSpec{
		"xeon-8380-2s": {
			Name:     "xeon-8380-2s",
			Sockets:  2,     // E: a dual-socket server is what an 800 W CPU budget suggests
			Cores:    80,    // V: Intel ARK, Xeon Platinum 8380: 40 cores per socket
			ClockHz:  3.0e9, // E: all-core turbo of an 8380 (ARK: base 2.3, max 3.4 GHz); hardware.md §3 uses ~3 GHz for cycles/byte
			TDPW:     540,   // A: 2 x 270 W (ilsoftware.it Ice Lake-SP launch article)
			PowerW:   800,   // Paper: cost table, host CPU 800 W
			PriceUSD: 1000,  // Paper: cost table, host CPU $1,000 (normalized)
		},
		"xeon-8380": {
			Name:     "xeon-8380",
			Sockets:  1,
			Cores:    40,    // V: Intel ARK
			ClockHz:  3.0e9, // E: as above
			TDPW:     270,   // A: ilsoftware.it
			PowerW:   800,   // Paper: cost table
			PriceUSD: 1000,  // Paper: cost table
		},
	}

	// DefaultHostCosts are the host software costs on an Ice Lake server
	// core with an A100.
	DefaultHostCosts = HostCosts{
		TCPRxCyclesPerByte: 0.6,                      // D: f / (42e9/8 B/s) = 0.57 at 3.0 GHz; S: Cai et al. SIGCOMM'21 42 Gb/s per core, one long flow
		TCPTxCyclesPerByte: 0.3,                      // E: half the receive cost: the user-to-kernel copy stays, GRO and interrupts go (S: "sender side is not the bottleneck")
		TCPRxPerMessage:    engine.Microseconds(5),   // E: ~half of a kernel-TCP small-message RTT (~20-25 us) minus RDMA's; includes the wake-up of the reading thread
		TCPTxPerMessage:    engine.Microseconds(3),   // E: send() system call and segment setup
		PollCompletion:     engine.Nanoseconds(500),  // E: ibv_poll_cq and request bookkeeping; no measurement found
		PostSend:           engine.Nanoseconds(300),  // E: building a work request and ringing the doorbell (MMIO write)
		MemcpyIssue:        engine.Microseconds(10),  // E: ~ A100 launch+sync 9.65 us (M: reframe kernel_latency.py); no cudaMemcpy latency source found
		PageableFactor:     0.4,                      // D: 10.0 / 25.7 GB/s, A: DGX A100 bandwidthTest pageable vs pinned (gengwg notes); the Dell A100 PCIe box shows 3.3/17.3
		KernelLaunch:       engine.Nanoseconds(2700), // M: reframe-hpc cscs-checks kernel_latency.py, A100 async back-to-back launch 2.7 us
		SyncWait:           engine.Nanoseconds(6950), // D: A100 launch+sync 9.65 us minus async launch 2.7 us (M: same file)
		Interference:       0.10,                     // E: fit to A eunomia.dev 2026-05-24 (stress-ng costs GPU inference 8.8% throughput); 0.25 with network+disk noise
	}
)

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

// PCIeNames, NICNames, SmartNICNames and HostCPUNames list the catalog, sorted.
func PCIeNames() []string     { return names(pcieParts) }
func NICNames() []string      { return names(nicParts) }
func SmartNICNames() []string { return names(smartNICParts) }
func HostCPUNames() []string  { return names(hostCPUParts) }

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

// provenance repeats the comments of the catalog as data, so that a report
// can list the unsourced defaults and a test can check that the two agree.
var provenance = []Param{
	{"pcie.gen4-x16.bytes_per_sec_per_dir", 31.5e9, "B/s", Derived, "16 GT/s x 16 x 128/130 / 8; glennklockwood A100 page"},
	{"pcie.gen4-x16.pinned_h2d", 25e9, "B/s", Anecdotal, "DGX A100 bandwidthTest 25.7 GB/s; nvbandwidth 24.8 GB/s"},
	{"pcie.gen5-x16.bytes_per_sec_per_dir", 63e9, "B/s", Secondary, "pingdo.net; hawkvelt H100 SXM"},
	{"pcie.gen5-x16.pinned_h2d", 50e9, "B/s", Estimate, "0.8 x 63 GB/s, the Gen4 efficiency"},
	{"nic.connectx6.line_rate", 200e9, "bit/s", Vendor, "ConnectX-6 EN introduction"},
	{"nic.connectx6.efficiency", 0.95, "1", Estimate, "perftest logs show 0.8-0.97 of the link"},
	{"nic.connectx6.one_way_latency", 1.3e-6, "s", Estimate, "median of anecdotal perftest logs (1.27-1.34 us)"},
	{"nic.connectx6.per_message", 5e-9, "s", Derived, "1 / 215 Mpps (vendor message rate)"},
	{"nic.connectx7.line_rate", 400e9, "bit/s", Vendor, "ConnectX-7 VPI introduction"},
	{"nic.connectx7.one_way_latency", 1.3e-6, "s", Estimate, "no CX-7 figure found; CX-6 value"},
	{"nic.connectx7.per_message", 5e-9, "s", Estimate, "no CX-7 message rate found; CX-6 value"},
	{"smartnic.bluefield3.arm_cores", 16, "1", Vendor, "DOCA Hardware Architecture; BSP SKU table"},
	{"smartnic.bluefield3.arm_speed", 0.62, "1", Anecdotal, "NTHU-LSALAB/bf3-bench: x86 1.60-1.64x faster single thread"},
	{"smartnic.bluefield3.dram", 32e9, "B", Vendor, "BF3 supported interfaces"},
	{"smartnic.bluefield3.line_rate", 200e9, "bit/s", Vendor, "B3220 SKU"},
	{"smartnic.bluefield3.dma_bandwidth", 22e9, "B/s", Estimate, "between BF2 DMA READ 25.6 GB/s and A100 Gen4 25 GB/s; BF2 WRITE is 15.1"},
	{"smartnic.bluefield3.dma_per_op", 95e-9, "s", Estimate, "BF2 1/10.5 Mops reused"},
	{"smartnic.bluefield3.max_power", 150, "W", Vendor, "BF3 DPU controller manual"},
	{"smartnic.bluefield3.price", 231, "USD", Paper, "Conspirator cost table"},
	{"smartnic.bluefield2.arm_cores", 8, "1", Vendor, "BlueField-2 user guide"},
	{"smartnic.bluefield2.arm_speed", 0.64, "1", Anecdotal, "dpdk_compression README, 1.55-1.57x"},
	{"smartnic.bluefield2.dma_bandwidth", 15.1e9, "B/s", Derived, "smartnic-bench doca_dma.md WRITE 65536 B x 0.23 M/s"},
	{"smartnic.bluefield2.dma_per_op", 95e-9, "s", Derived, "1 / 10.5 Mops, smartnic-bench"},
	{"smartnic.bluefield2.max_power", 75, "W", Estimate, "not found"},
	{"smartnic.bluefield2.price", 231, "USD", Estimate, "BF3 paper value reused"},
	{"host_cpu.xeon-8380-2s.cores", 80, "1", Vendor, "Intel ARK: 40 cores per socket"},
	{"host_cpu.xeon-8380-2s.sockets", 2, "1", Estimate, "what an 800 W CPU budget suggests"},
	{"host_cpu.xeon-8380-2s.clock", 3.0e9, "Hz", Estimate, "8380 all-core turbo; ARK base 2.3 / max 3.4 GHz"},
	{"host_cpu.xeon-8380-2s.tdp", 540, "W", Anecdotal, "2 x 270 W, ilsoftware.it"},
	{"host_cpu.xeon-8380-2s.power", 800, "W", Paper, "Conspirator cost table"},
	{"host_cpu.xeon-8380-2s.price", 1000, "USD", Paper, "Conspirator cost table"},
	{"host.tcp_rx_cycles_per_byte", 0.6, "cycle/B", Derived, "Cai et al. SIGCOMM'21 (via notes): 42 Gb/s per core at ~3 GHz"},
	{"host.tcp_tx_cycles_per_byte", 0.3, "cycle/B", Estimate, "half of receive: copy stays, GRO and interrupts go"},
	{"host.tcp_rx_per_message", 5e-6, "s", Estimate, "half a kernel small-message RTT minus RDMA's"},
	{"host.tcp_tx_per_message", 3e-6, "s", Estimate, "send() system call"},
	{"host.poll_completion", 0.5e-6, "s", Estimate, "ibv_poll_cq plus bookkeeping"},
	{"host.post_send", 0.3e-6, "s", Estimate, "work request plus doorbell"},
	{"host.memcpy_issue", 10e-6, "s", Estimate, "~ A100 launch+sync 9.65 us (reframe)"},
	{"host.pageable_factor", 0.4, "1", Derived, "10.0/25.7 GB/s, DGX A100 bandwidthTest (anecdotal)"},
	{"host.kernel_launch", 2.7e-6, "s", Measured, "reframe kernel_latency.py, A100 async launch"},
	{"host.sync_wait", 6.95e-6, "s", Derived, "9.65 - 2.7 us, reframe kernel_latency.py"},
	{"host.interference", 0.10, "1", Estimate, "fit to a blog's stress-ng -8.8% GPU inference throughput"},
}

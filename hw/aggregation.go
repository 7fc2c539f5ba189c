package hw

import "github.com/conspirator-sim/conspirator/engine"

// AggregatorSpec is a device that sums the gradients of a training job's
// workers as they stream through it (in-network aggregation): a
// programmable switch, whose registers hold a pool of aggregator slots
// and whose pipeline sums at line rate, or a SmartNIC, whose Arm cores sum
// in its DRAM at their own rate behind one port.
type AggregatorSpec struct {
	Name string
	// PortBitsPerSec is one port's line rate. A switch gives every worker
	// its own port; a SmartNIC has one (its NIC's) for all of them.
	PortBitsPerSec float64
	// Ports is the switch's port count (the most workers on one switch);
	// 0 for a SmartNIC.
	Ports int
	// Slots is the aggregator pool: how many chunks can be summed at once;
	// SlotBytes the payload of one chunk (one packet's values).
	Slots     int
	SlotBytes float64
	// ChunkHeaderBytes is what a chunk's packet carries on the wire
	// besides its SlotBytes of values: its headers (Ethernet, IP, UDP and
	// the protocol's own) and Ethernet's per-frame cost (preamble and
	// start delimiter 8 B, frame check 4 B, inter-frame gap 12 B), so a
	// port streams SlotBytes / (SlotBytes + ChunkHeaderBytes) of its line
	// rate in gradient values.
	ChunkHeaderBytes float64
	// ChunkRTT is a chunk's round trip from a worker through the device
	// and back: a slot is held that long, so a job holding s slots
	// streams at most s x SlotBytes / ChunkRTT.
	ChunkRTT engine.Time
	// SumBytesPerSec bounds the device's summation, in contribution bytes
	// per second over all jobs (0: line rate, a switch pipeline).
	SumBytesPerSec float64
	// PerJobSlots is the slots one job's window asks for: ATP's per
	// application count, SwitchML's per-job pool.
	PerJobSlots int
	// ShadowCounted says that Slots are SwitchML's slots with their
	// shadow copies counted (SwitchML keeps each slot twice, alternating,
	// to recover from a lost packet): SwitchML's static partitions cost
	// their slots once on such a pool, and twice on any other (ATP's
	// aggregators, a SmartNIC's DRAM).
	ShadowCounted bool
}

// IntraServerLinkSpec is the GPU-to-GPU link inside a server (NVLink
// through NVSwitch, or PCIe), one direction of one GPU.
type IntraServerLinkSpec struct {
	Name        string
	BytesPerSec float64
	Latency     engine.Time
}

var (
	aggregatorParts = map[string]AggregatorSpec{
		"tofino-switchml": {
			Name:           "tofino-switchml",
			PortBitsPerSec: param("aggregator.tofino-switchml.port_rate", 100e9, "bit/s", Measured, "SwitchML (Sapio et al., NSDI'21) evaluation: Tofino switch, 100 Gb/s ports"),
			Ports:          paramInt("aggregator.tofino-switchml.ports", 32, Vendor, "Intel Tofino 1 (3.2 Tb/s): 32 x 100 GbE ports"),
			Slots:          paramInt("aggregator.tofino-switchml.slots", 8192, Vendor, "p4app-switchml configuration: register_size 16384, each slot two registers (a shadow copy): 8,192 slots"),
			SlotBytes:      param("aggregator.tofino-switchml.slot_bytes", 256, "B", Vendor, "p4app-switchml: 64 32-bit integers per packet, 256 bytes of payload"),
			ChunkHeaderBytes: param("aggregator.tofino-switchml.chunk_header_bytes", 76, "B", Derived,
				"p4app-switchml's P4 headers: Ethernet 14 + IPv4 20 + UDP 8 + switchml_h 8 (msg_type 4 bits, unused 1, size 3, job_number 8, tsi 32, pool_index 16) + exponents_h 2 (two 8-bit exponents) = 52 B, a 308 B frame; + Ethernet's 24 B per frame (preamble and SFD 8, FCS 4, inter-frame gap 12, IEEE 802.3): 332 B on the wire, 77% values"),
			ChunkRTT:      paramTime("aggregator.tofino-switchml.chunk_rtt", 5e-6, Estimate, "two 1 us hops (SwitchML-omnetpp's link delay) and a switch pipeline of about 1 us each way, plus serialization; plausible 2 to 10 us", 2e-6, 10e-6),
			PerJobSlots:   paramInt("aggregator.tofino-switchml.per_job_slots", 512, Anecdotal, "SwitchML-omnetpp's omnetpp.ini num_slots = 512 per job; 16 such pools fill the switch"),
			ShadowCounted: true,
		},
		"tofino-atp": {
			Name:           "tofino-atp",
			PortBitsPerSec: param("aggregator.tofino-atp.port_rate", 100e9, "bit/s", Measured, "ATP (Lao et al., NSDI'21) testbed: Tofino, 100 Gb/s"),
			Ports:          paramInt("aggregator.tofino-atp.ports", 32, Vendor, "Intel Tofino 1: 32 x 100 GbE"),
			Slots:          paramInt("aggregator.tofino-atp.slots", 20000, Vendor, "in-ATP/ATP common/utils.h: MAX_AGTR_COUNT 20000"),
			SlotBytes:      param("aggregator.tofino-atp.slot_bytes", 248, "B", Vendor, "in-ATP/ATP common/packet.h: P4ML_DATA_SIZE 248 (62 32-bit entries)"),
			ChunkHeaderBytes: param("aggregator.tofino-atp.chunk_header_bytes", 84, "B", Derived,
				"in-ATP/ATP common/packet.h: P4ML_PACKET_SIZE 308 = Ethernet and IPv4 34 + P4ML_HEADER_SIZE 26 + P4ML_DATA_SIZE 248, so 60 B of headers; + Ethernet's 24 B per frame (preamble and SFD 8, FCS 4, inter-frame gap 12, IEEE 802.3): 332 B on the wire, 75% values"),
			ChunkRTT:    paramTime("aggregator.tofino-atp.chunk_rtt", 5e-6, Estimate, "taken as tofino-switchml's 5 us, which likely understates ATP: its synchronous deallocation holds a slot until the parameter server's acknowledgement passes back through the switch, a longer round trip than SwitchML's; plausible 2 to 10 us (ina.chunk_rtt sets it; docs/training.md: esa over atp at 10 to 50 us)", 2e-6, 10e-6),
			PerJobSlots: paramInt("aggregator.tofino-atp.per_job_slots", 1200, Vendor, "the aggregators a job's chunks cycle over in ATP's code: 12 threads x 100 each, hashed at start (in-ATP/ATP client/main.cc thread_to_use 12 and client/p4ml_manager.cc init_threadPool max_agtr_size_per_thread 100; ATP-BytePS global.cc P4ML_THREAD 12, the same 100); common/utils.h's AGTR_TO_USE_PER_APPLICATION 2800 is read by no code"),
		},
		"bluefield3": {
			Name:             "bluefield3",
			PortBitsPerSec:   param("aggregator.bluefield3.port_rate", 400e9, "bit/s", Vendor, "BlueField-3 B3240: 2 x 200 GbE (400 Gb/s), PCIe Gen5 x16"),
			Slots:            paramInt("aggregator.bluefield3.slots", 1<<20, Derived, "a 256 MiB share of the 32 GB DRAM in 256-byte slots: memory is not what binds a SmartNIC aggregator"),
			SlotBytes:        param("aggregator.bluefield3.slot_bytes", 256, "B", Estimate, "the switch's chunk, so that policies compare on one unit"),
			ChunkHeaderBytes: param("aggregator.bluefield3.chunk_header_bytes", 5.125, "B", Estimate, "a SmartNIC summing in its DRAM takes RoCEv2 packets of 4,096 B, not a switch register's chunk: 82 B each (network.rocev2.packet_bytes), 5.125 B per 256 B slot"),
			ChunkRTT:         paramTime("aggregator.bluefield3.chunk_rtt", 10e-6, Estimate, "one hop to the SoC and back with DMA into DRAM and an Arm core's pass; plausible 5 to 30 us", 5e-6, 30e-6),
			SumBytesPerSec:   param("aggregator.bluefield3.sum_rate", 30e9, "B/s", Estimate, "16 Arm A78 cores summing FP32 contributions: each byte read from the NIC's buffer, the accumulator read and written, about three DRAM passes over a DDR5 of roughly 90 GB/s; no measurement found; plausible 10 to 60 GB/s", 10e9, 60e9),
			PerJobSlots:      paramInt("aggregator.bluefield3.per_job_slots", 4096, Estimate, "a window deep enough for line rate at the chunk RTT (400 Gb/s x 10 us / 256 B = 1,953); 4,096 leaves room"),
		},
	}

	intraServerParts = map[string]IntraServerLinkSpec{
		"nvlink3": {
			Name:        "nvlink3",
			BytesPerSec: param("intra.nvlink3.bandwidth", 300e9, "B/s", Vendor, "A100 NVLink 3: 12 links x 25 GB/s per direction = 300 GB/s per direction (600 GB/s total)"),
			Latency:     paramTime("intra.nvlink3.latency", 2e-6, Estimate, "an NCCL ring step inside a DGX, a few microseconds; plausible 1 to 10 us", 1e-6, 10e-6),
		},
		"nvlink2": {
			Name:        "nvlink2",
			BytesPerSec: param("intra.nvlink2.bandwidth", 150e9, "B/s", Vendor, "V100 NVLink 2: 6 links x 25 GB/s per direction = 150 GB/s per direction (300 GB/s total)"),
			Latency:     paramTime("intra.nvlink2.latency", 2e-6, Estimate, "as nvlink3"),
		},
		"pcie4": {
			Name:        "pcie4",
			BytesPerSec: param("intra.pcie4.bandwidth", 25e9, "B/s", Derived, "GPU to GPU through the host's PCIe Gen4 x16, the pinned H2D rate (pcie.gen4-x16.pinned_h2d)"),
			Latency:     paramTime("intra.pcie4.latency", 5e-6, Estimate, "a PCIe peer copy's setup; plausible 2 to 20 us", 2e-6, 20e-6),
		},
	}
)

// RoCEv2PacketBytes is what one RoCEv2 packet carries on the wire
// besides its payload: the host all-reduce's and parameter server's
// transfers (NCCL and BytePS over RDMA) pay it once per MTU of payload.
var RoCEv2PacketBytes = param("network.rocev2.packet_bytes", 82, "B", Derived,
	"Ethernet 14 + IPv4 20 + UDP 8 + InfiniBand BTH 12 + ICRC 4 + FCS 4 = 62 B of headers and trailers (InfiniBand Architecture Specification Annex A16, RoCEv2) + preamble and SFD 8 + inter-frame gap 12 (IEEE 802.3); at a 4,096 B MTU, 98% of the line rate is payload")

// LookupAggregator returns the named aggregating device ("tofino-switchml",
// "tofino-atp", "bluefield3").
func LookupAggregator(name string) (AggregatorSpec, error) {
	return lookup(aggregatorParts, "aggregator", name)
}

// AggregatorNames lists the aggregating devices, sorted.
func AggregatorNames() []string { return names(aggregatorParts) }

// LookupIntraServerLink returns the named GPU-to-GPU link ("nvlink3",
// "nvlink2", "pcie4").
func LookupIntraServerLink(name string) (IntraServerLinkSpec, error) {
	return lookup(intraServerParts, "intra-server link", name)
}

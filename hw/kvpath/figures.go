package kvpath

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
)

// The figures this package adds to hw's catalog, each written once with
// its grade and source; Figures lists them. hw.Provenance does not: a
// report that lists provenance appends Figures to it.
var (
	// hostDRAMPeak is one socket's memory: the GPU, the NIC and the
	// staging buffer sit on one socket (a NUMA-local buffer), so one
	// socket's channels are what staging can use.
	hostDRAMPeak = figure("kvpath.host_dram_peak", 307.2e9, "B/s", hw.Derived,
		"one socket of a 4th-generation Xeon (Sapphire Rapids, what H100/H200 HGX servers ship with): 8 channels x DDR5-4800 x 8 B = 307.2 GB/s (Intel: 8 channels, DDR5 up to 4800 MT/s; Dell infohub \"eight DIMMs per CPU and up to 4800 MT/s\"); an Ice Lake 8380 has 8 x DDR4-3200 = 204.8 GB/s")
	hostDRAMShare = figure("kvpath.host_dram_staging_share", 0.5, "1", hw.Estimate,
		"STREAM sustains about 0.75-0.8 of the DDR wire rate (anecdotal: TI AM62x/AM64x app notes 74-78%; ai-hpc.org on a Xeon 8470), and the serving engine and any background load use the same channels; half of the peak is left to staging; plausible 0.2 (a memory-bound background) to 0.75 (nothing else)", 0.2, 0.75)

	// The BlueField-3's DRAM is its own: only the Arm's control code
	// shares it, so its share is STREAM's efficiency alone.
	bf3DRAMPeak = figure("kvpath.bluefield3.dram_peak", 83.2e9, "B/s", hw.Derived,
		"16 B x 5200 MT/s: dual-channel DDR5-5200, 128 bit (V: docs.nvidia.com/networking/display/bf3dpu/supported+interfaces; hardware.md 1a); 89.6 GB/s at 5600")
	bf3DRAMShare = figure("kvpath.bluefield3.dram_sustained_share", 0.75, "1", hw.Estimate,
		"STREAM's sustained share of the DDR wire rate (anecdotal: TI app notes 74-78% on DDR4); no BlueField DRAM measurement found; plausible 0.5 to 0.85", 0.5, 0.85)

	postPerOp = figureTime("kvpath.post_per_op", (hw.DefaultHostCosts.PostSend + hw.DefaultHostCosts.PollCompletion).Seconds(), hw.Derived,
		"host.post_send 0.3 us + host.poll_completion 0.5 us (both E): one work request built and rung, its completion reaped, as a transfer engine that signals every slice does (Mooncake); plausible 0.2 us (doorbell batching, selective signalling) to 3 us", 0.2e-6, 3e-6)

	sliceBytes = int64(figure("kvpath.slice_bytes", 65536, "B", hw.Vendor,
		"Mooncake transfer engine's default slice: GlobalConfig slice_size = 65536 (kvcache-ai/Mooncake mooncake-transfer-engine/include/config.h)"))

	stageChunkBytes = int64(figure("kvpath.stage_chunk_bytes", 4<<20, "B", hw.Estimate,
		"one layer's K or V of a 2,048-token Llama-3.1-8B request (2,048 x 8 KV heads x 128 x 2 B = 4 MiB): the unit of a layer-wise pipeline (Splitwise moves KV per layer); plausible 1 MiB to 32 MiB (LMCache's 256-token chunk of every layer)", 1<<20, 32<<20))

	notifyLatency = figureTime("kvpath.notify_latency", 1e-6, hw.Estimate,
		"as sim/datapath's smartnic.notify_latency: a posted PCIe write the host polls, plus room for the DOCA completion path; plausible 0.5 to 5 us", 0.5e-6, 5e-6)
)

// figures holds every figure above, appended as they are initialised.
var figures []hw.Param

func figure(key string, v float64, unit string, g hw.Grade, source string, plausible ...float64) float64 {
	p := hw.Param{Key: key, Value: v, Unit: unit, Grade: g, Source: source}
	if len(plausible) == 2 {
		p.Low, p.High = plausible[0], plausible[1]
	}
	figures = append(figures, p)
	return v
}

func figureTime(key string, seconds float64, g hw.Grade, source string, plausible ...float64) engine.Time {
	return engine.Time(math.Round(figure(key, seconds, "s", g, source, plausible...) * 1e9))
}

// Figures lists this package's figures with their grades and sources,
// sorted by key.
func Figures() []hw.Param {
	ps := slices.Clone(figures)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

// Default is a server of the catalog's parts: a ConnectX-6 (200 Gb/s at
// 0.95) whose NIC shares a root complex with a Gen4 x16 GPU and can reach
// it peer to peer, two Xeon 8380s with no background load (per-core
// model), a BlueField-3 with the same 200 Gb/s port, NVLink 3 between the
// server's GPUs, and the figures above. Change the fields a scenario
// differs in (PCIe, Host.Background, SmartNIC nil, ...).
func Default() Hardware {
	nic := must(hw.LookupNIC("connectx6"))
	pcie := must(hw.LookupPCIe("gen4-x16"))
	cpu := must(hw.LookupHostCPU("xeon-8380-2s"))
	snic := must(hw.LookupSmartNIC("bluefield3"))
	nvlink := must(hw.LookupIntraServerLink("nvlink3"))
	c := hw.DefaultHostCosts
	return Hardware{
		NICBytesPerSec:      nic.LineRateBitsPerSec / 8 * nic.Efficiency,
		NICLatency:          nic.OneWayLatency,
		GPUDirect:           true,
		PCIe:                pcie,
		SameRootComplex:     true,
		CrossFactor:         hw.DefaultCrossRootComplexFactor,
		HostDRAMBytesPerSec: hostDRAMPeak * hostDRAMShare,
		TCP: hw.TCPStack{
			ClockHz:         cpu.ClockHz,
			RxCyclesPerByte: c.TCPRxCyclesPerByte,
			TxCyclesPerByte: c.TCPTxCyclesPerByte,
			RxPerMessage:    c.TCPRxPerMessage,
			TxPerMessage:    c.TCPTxPerMessage,
		},
		Host:                    hw.HostCPUConfig{Cores: cpu.Cores, Model: hw.BackgroundPerCore, Interference: c.Interference},
		SmartNIC:                &snic,
		SmartNICDRAMBytesPerSec: bf3DRAMPeak * bf3DRAMShare,
		NotifyLatency:           notifyLatency,
		NVLinkBytesPerSec:       nvlink.BytesPerSec,
		NVLinkLatency:           nvlink.Latency,
		PostPerOp:               postPerOp,
		MemcpyIssue:             c.MemcpyIssue,
		PageableFactor:          c.PageableFactor,
		SliceBytes:              sliceBytes,
		StageChunkBytes:         stageChunkBytes,
	}
}

// must is for catalog names spelt in this file: a miss is a bug here.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("kvpath: catalog part missing: %v", err))
	}
	return v
}

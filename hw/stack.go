package hw

import (
	"math"

	"github.com/conspirator-sim/conspirator/engine"
)

// TCPStack turns the host kernel's TCP costs into core-time: cycles per
// payload byte (the receive side is dominated by the kernel-to-user copy,
// Cai et al. SIGCOMM'21), an optional cost per MSS-sized packet, and a cost
// per message (system call, wake-up of the thread blocked in recv).
type TCPStack struct {
	ClockHz           float64
	RxCyclesPerByte   float64
	TxCyclesPerByte   float64
	RxCyclesPerPacket float64 // 0 when folded into the per-byte cost (TSO/GRO on, the default)
	TxCyclesPerPacket float64
	MSS               float64 // bytes of payload per packet; used only with per-packet costs
	RxPerMessage      engine.Time
	TxPerMessage      engine.Time
}

// RxWork is the core-time to receive a message of the given size.
func (t TCPStack) RxWork(bytes float64) engine.Time {
	return t.RxPerMessage + t.cycles(bytes, t.RxCyclesPerByte, t.RxCyclesPerPacket)
}

// TxWork is the core-time to send a message of the given size.
func (t TCPStack) TxWork(bytes float64) engine.Time {
	return t.TxPerMessage + t.cycles(bytes, t.TxCyclesPerByte, t.TxCyclesPerPacket)
}

func (t TCPStack) cycles(bytes, perByte, perPacket float64) engine.Time {
	c := bytes * perByte
	if perPacket > 0 && t.MSS > 0 {
		c += math.Ceil(bytes/t.MSS) * perPacket
	}
	return engine.Time(math.Ceil(c / t.ClockHz * 1e9))
}

// CopyWork is the host core-time of one cudaMemcpy toward the GPU of the
// given size, and the part of the transfer left to the GPU's copy engine
// (CopyBackWork is the other way). A pinned copy
// costs the CPU only its fixed issue cost; the DMA then runs at the link's
// pinned rate (device time, returned as dma). A pageable copy is staged by
// the CPU through a pinned bounce buffer, so the CPU is busy for the whole
// transfer at PageableFactor of the pinned rate, and the staging DMA
// overlaps with it (dma = 0).
func (c HostCosts) CopyWork(bytes, pinnedBytesPerSec float64, pageable bool) (cpu, dma engine.Time) {
	if pageable {
		return c.MemcpyIssue + SerializationTime(bytes, pinnedBytesPerSec*c.PageableFactor, 0), 0
	}
	return c.MemcpyIssue, SerializationTime(bytes, pinnedBytesPerSec, 0)
}

// CopyBackWork is CopyWork for a copy from the GPU into host memory (a
// result read back): a pageable one runs at PageableD2HFactor of the
// pinned rate, which must be set (> 0).
func (c HostCosts) CopyBackWork(bytes, pinnedBytesPerSec float64, pageable bool) (cpu, dma engine.Time) {
	if pageable {
		return c.MemcpyIssue + SerializationTime(bytes, pinnedBytesPerSec*c.PageableD2HFactor, 0), 0
	}
	return c.MemcpyIssue, SerializationTime(bytes, pinnedBytesPerSec, 0)
}

// P2PBytesPerSec is the rate at which a NIC can write into GPU memory with
// GPUDirect RDMA over the GPU's link: the link's pinned rate when NIC and
// GPU share a PCIe root complex, else crossFactor of it. NVIDIA's GPUDirect
// RDMA manual (V, v1.8, system requirements) only says best performance
// needs a shared root complex; the factor itself is an estimate (E 0.5,
// hardware-defaults.yaml cross_root_complex_bw_factor).
func P2PBytesPerSec(gpuLink PCIeSpec, sameRootComplex bool, crossFactor float64) float64 {
	if sameRootComplex {
		return gpuLink.PinnedH2DBytesPerSec
	}
	return gpuLink.PinnedH2DBytesPerSec * crossFactor
}

// DefaultCrossRootComplexFactor is the GPUDirect bandwidth factor across
// root complexes (E: no sourced factor).
const DefaultCrossRootComplexFactor = 0.5

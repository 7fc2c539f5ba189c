package llm

import (
	"fmt"
	"math"
	"strings"
)

// Efficiency is what a bandwidth-and-FLOPs roofline misses on one GPU
// type: the share of peak each kind of kernel reaches, the fixed cost of a
// kernel, a layer and a step, and the all-reduce's latency and bus
// efficiency. Fractions are of the GPU's (or slice's) vendor peaks.
type Efficiency struct {
	Name   string // "a100", "h100"
	Source string // how each number was obtained, and its grade

	GEMMCompute, GEMMMemory float64 // fractions of peak FLOP/s and bandwidth
	GEMMFloor               float64 // s per GEMM kernel
	// GEMMExponent is the p with which a GEMM's compute time tc and
	// memory time tm combine: (tc^p + tm^p)^(1/p) + GEMMFloor (fitted, D:
	// fitted.go). A real kernel hides its loads behind its math only in
	// part (prologue and epilogue, a partial last wave, tiles waiting on
	// loads), most visibly where the two times are close. A finite p
	// charges that: up to 2^(1/p) x max(tc, tm) where the two are equal,
	// next to nothing where one dominates, and never less than
	// max(tc, tm), so no GEMM beats its weights' read time. p = 1 is their
	// sum (no overlap); 0 stands for p -> infinity, the plain roofline
	// max(tc, tm). Elementwise kernels do no FLOPs, so their time is tm
	// whatever p; attention keeps the max (stepCalc.attention says why).
	GEMMExponent float64
	// GEMMTile is the row tile large GEMMs compute in: a product of more
	// rows does the FLOPs of rows rounded up to it; a product of fewer
	// pads only to the smallest power-of-two tile (16 or more) that
	// holds them, as kernel heuristics pick a narrow tile for a skinny
	// GEMM (0 or 1: no padding). See paddedRows.
	GEMMTile          float64
	ElementwiseMemory float64 // fraction of peak bandwidth
	ElementwiseFloor  float64 // s per elementwise kernel

	AttnCompute, AttnMemory float64 // attention kernels' fractions
	AttnFloor               float64 // s per attention kernel

	AllReduceLatency float64 // s per all-reduce
	AllReduceBus     float64 // fraction of the link's per-direction bandwidth

	// EagerStep is the fixed cost of a step run eagerly (a prefill or
	// mixed batch): scheduling, input preparation, sampling.
	EagerStep float64
	// GraphStep is the fixed cost of a decode-only step replaying a CUDA
	// graph, whose batch is padded to the next of GraphBatchSizes.
	GraphStep       float64
	GraphBatchSizes []int

	// Host is the serving engine's host-side time per step, which the
	// GPU cannot run ahead of (zero: the host keeps ahead).
	Host HostDispatch
}

// HostDispatch is the time the host takes to drive one step: it launches
// each layer's kernels (PerLayer, eager steps only: a CUDA graph replays
// the whole decode in one launch) and prepares and samples each sequence
// of the batch (PerSequence). The GPU runs kernels only as fast as the
// host launches them, so a step takes the longer of the two, not their
// sum: a host-bound step is max(GPU time, host time) (the shape
// bench/stepval measures: a decode that stops falling with TP at a floor
// per layer). It belongs to an engine on a host, not to a GPU: the
// fitted profiles leave it zero, as an engine with CUDA graphs and an
// overlapped scheduler keeps its host off the critical path;
// bench/stepval fits it for an eager engine on DGX servers.
type HostDispatch struct {
	PerLayer, PerSequence float64 // s
}

// Seconds is the host's time for a step of seqs sequences through layers
// layers, eager or replaying a CUDA graph.
func (h HostDispatch) Seconds(layers, seqs int, graph bool) float64 {
	t := h.PerSequence * float64(seqs)
	if !graph {
		t += h.PerLayer * float64(layers)
	}
	return t
}

// Validate checks that the fractions are in (0, 1] and the costs >= 0: an
// efficiency above 1 would let a step beat its memory floor.
func (e Efficiency) Validate() error {
	var bad []string
	frac := func(name string, v float64) {
		if !(v > 0 && v <= 1) {
			bad = append(bad, fmt.Sprintf("%s %g must be in (0, 1]", name, v))
		}
	}
	frac("GEMMCompute", e.GEMMCompute)
	frac("GEMMMemory", e.GEMMMemory)
	frac("ElementwiseMemory", e.ElementwiseMemory)
	frac("AttnCompute", e.AttnCompute)
	frac("AttnMemory", e.AttnMemory)
	frac("AllReduceBus", e.AllReduceBus)
	// p < 1 would charge more than the sum of the two times; NaN or
	// infinity would make every GEMM NaN.
	if p := e.GEMMExponent; p != 0 && !(p >= 1 && !math.IsInf(p, 1)) {
		bad = append(bad, fmt.Sprintf("GEMMExponent %g must be 0 (max of compute and memory) or a finite p >= 1", p))
	}
	for name, v := range map[string]float64{"GEMMFloor": e.GEMMFloor, "ElementwiseFloor": e.ElementwiseFloor, "AttnFloor": e.AttnFloor,
		"AllReduceLatency": e.AllReduceLatency, "EagerStep": e.EagerStep, "GraphStep": e.GraphStep,
		"Host.PerLayer": e.Host.PerLayer, "Host.PerSequence": e.Host.PerSequence} {
		if !(v >= 0) {
			bad = append(bad, fmt.Sprintf("%s %g must be >= 0", name, v))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("efficiency %s: %s", e.Name, strings.Join(bad, "; "))
	}
	return nil
}

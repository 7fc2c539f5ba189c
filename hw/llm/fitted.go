package llm

import (
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// VidurCommit is the commit of github.com/microsoft/vidur (MIT) whose
// data/profiling CSVs the fitted numbers below come from. Reproduce them
// with bench/llmfit (CONSPIRATOR_VIDUR_DIR=<checkout> go run ./bench/llmfit).
const VidurCommit = "7d47513363ec447a741ac5e47241580b47724fbf"

// graphBatchSizes are the decode batch sizes vLLM captures CUDA graphs for
// (A: vLLM v0.4-v0.6 worker/model_runner.py _BATCH_SIZES_TO_CAPTURE =
// [1, 2, 4] + [8 i for i in 1..32]); larger batches run eagerly.
var graphBatchSizes = func() []int {
	s := []int{1, 2, 4}
	for i := 1; i <= 32; i++ {
		s = append(s, 8*i)
	}
	return s
}()

// Fitted efficiencies. Grades as in hw/gpu: D = derived, here fitted by
// bench/llmfit to Vidur's measured (M) profiles at commit VidurCommit;
// E = estimate.
//
// GEMM* and Elementwise*: D, coordinate descent on the mean squared log
// error of the per-operator medians in
// data/profiling/compute/<gpu>/meta-llama/Llama-2-7b-hf/mlp.csv at TP 1
// (261 token counts, 1 to 4096; Vidur measured FP16 on an A100-80GB SXM
// and an H100-80GB SXM). Everything else in those CSVs is held out.
// GEMMExponent is fitted with the other GEMM numbers on that set alone
// (grid 1 to 8 in steps of 7/60, from p = 2): the p-norm it gives does
// better than max(compute, memory), refitted on the same set, on every
// held-out measure of bench/llmfit/RESULTS.md (H100 median 3.8% against
// 3.9%, p90 11.8% against 13.2%, max 26.3% against 43.0%, 14 rows over 25%
// against 20; A100 3.3/9.6/22.1% against 3.5/10.4/22.6%, none over 25%).
// AllReduce*: D, the same loss over data/profiling/network/<gpu>_dgx/
// all_reduce.csv rows within one node on 2 and 4 GPUs; 8 GPUs held out.
// Attention: E. Vidur's attention.csv files are stored outside its git
// objects (the fetched snapshot lacks them), so the attention kernels are
// not fitted: AttnCompute from the FlashAttention-2 and -3 papers (FA2
// forward reaches 50-73% of A100 peak, about 35% of H100 peak);
// AttnMemory and AttnFloor as the fitted GEMM memory efficiency and floor:
// under the p-norm those are what a GEMM far from its compute time
// reaches streaming its bytes (at one token the compute term adds 0.1% or
// less on the two profiled GPUs), as decode attention streams the KV
// cache.
// Step costs: E. Vidur's profiles hold no CPU-side step cost (its
// predictor skips it by default); 1 ms eager and 0.5 ms with a CUDA graph
// stand for scheduling, input preparation and sampling. Host (the host's
// launch and per-sequence time a step cannot hide) is E: 0. Vidur's
// times are kernel durations summed from the torch profiler's trace (its
// profiler's default record_function method; CUDA events around eager
// launches would not time its adds at 1 us), so launch gaps are not in the
// fitted floors; 0 assumes the host launches kernels faster than the GPU
// runs them, which nothing here validates.
var fitted = map[string]Efficiency{
	"a100": {
		Name: "a100",
		Source: "GEMM (p-norm, p fitted) and elementwise D, fitted to M (Vidur a100 Llama-2-7b-hf mlp.csv TP1, commit " + VidurCommit[:12] +
			"); all-reduce D, fitted to M (Vidur a100_dgx all_reduce.csv, 2-4 GPUs); attention E (FlashAttention-2 paper); step costs E",
		GEMMCompute: 0.720, GEMMMemory: 0.773, GEMMFloor: 5.0e-6, GEMMTile: 128, GEMMExponent: 3.45,
		ElementwiseMemory: 0.520, ElementwiseFloor: 3.0e-6,
		AttnCompute: 0.60, AttnMemory: 0.773, AttnFloor: 5.0e-6,
		AllReduceLatency: 41.5e-6, AllReduceBus: 0.55,
		EagerStep: 1e-3, GraphStep: 0.5e-3, GraphBatchSizes: graphBatchSizes,
	},
	"h100": {
		Name: "h100",
		Source: "GEMM (p-norm, p fitted) and elementwise D, fitted to M (Vidur h100 Llama-2-7b-hf mlp.csv TP1, commit " + VidurCommit[:12] +
			"); all-reduce D, fitted to M (Vidur h100_dgx all_reduce.csv, 2-4 GPUs); attention E (FlashAttention-3 paper: FA2 ~35% of H100); step costs E",
		GEMMCompute: 0.733, GEMMMemory: 0.787, GEMMFloor: 4.5e-6, GEMMTile: 128, GEMMExponent: 2.17,
		ElementwiseMemory: 0.595, ElementwiseFloor: 2.5e-6,
		AttnCompute: 0.35, AttnMemory: 0.787, AttnFloor: 4.5e-6,
		AllReduceLatency: 29.5e-6, AllReduceBus: 0.80,
		EagerStep: 1e-3, GraphStep: 0.5e-3, GraphBatchSizes: graphBatchSizes,
	},
}

// profileOf says which fitted profile a catalog GPU uses: its own where
// Vidur profiled it, else the nearest generation's (Hopper: h100, all
// others: a100), applied to the GPU's own vendor peaks.
var profileOf = map[string]string{
	"a100-40gb": "a100", "a100-80gb": "a100",
	"h100-80gb": "h100", "h100-94gb": "h100", "h200-141gb": "h100",
}

// FittedEfficiency returns the efficiencies for a catalog GPU and says in
// Source whether they were fitted on that GPU or carried over from another.
// A GPU without roofline figures is refused.
func FittedEfficiency(g gpu.Spec) (Efficiency, error) {
	if g.PeakDenseBF16 <= 0 || g.MemoryBandwidth <= 0 {
		return Efficiency{}, fmt.Errorf("gpu %s has no sourced peak FLOP/s or memory bandwidth, so the step model cannot time it; use one of %s", g.Name, strings.Join(RooflineGPUs(), ", "))
	}
	name, own := profileOf[g.Name]
	if !own {
		name = "a100"
	}
	e := fitted[name]
	e.GraphBatchSizes = append([]int(nil), e.GraphBatchSizes...)
	switch {
	case !own:
		e.Source = fmt.Sprintf("E: %s has no Vidur profile; the a100 fit is applied to its own vendor peaks. a100: %s", g.Name, e.Source)
	case g.Name != "a100-80gb" && g.Name != "h100-80gb":
		e.Source = fmt.Sprintf("D: %s has no Vidur profile; the %s fit (same generation) is applied to its own vendor peaks. %s", g.Name, name, e.Source)
	}
	return e, nil
}

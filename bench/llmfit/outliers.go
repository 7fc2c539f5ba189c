package main

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// l2Bytes is each GPU's L2 cache (V: NVIDIA A100 and H100 architecture
// whitepapers, 40 MB and 50 MB; cudaDeviceProp.l2CacheSize reports 40 MiB
// and 50 MiB).
var l2Bytes = map[string]float64{"a100": 40 << 20, "h100": 50 << 20}

// blockWeights is one decoder block's GEMM weight bytes on one GPU.
func blockWeights(rw row) float64 {
	_, ops, err := predict(rw, llm.Efficiency{}) // weights do not depend on the efficiencies
	if err != nil {
		return math.NaN()
	}
	var w float64
	for _, o := range ops {
		w += o.Weights
	}
	return w
}

// mayBeL2Resident says whether Vidur's timing of the row could have found
// its weights in L2. Vidur's profiler (vidur/profiling/mlp) runs one
// decoder block 20 times back to back and sums each operator's kernel
// durations from the torch profiler's trace; between two runs of an
// operator the rest of the block's weights stream through L2, so its own
// weights can still be there only if the whole block's weights per GPU fit
// in L2. Of the profiled blocks only Llama-2-7B at TP 8 on the H100 does
// (50.6 MB against 52.4 MB).
func mayBeL2Resident(rw row) bool {
	return blockWeights(rw) <= l2Bytes[rw.gpuDir]
}

// listOver prints the rows over bound in groups: per set (GPU, model, TP),
// runs of adjacent token counts erring the same way. For each: the
// operator that misses most (predicted/measured, and whether hw/llm finds it
// compute- or memory-bound), the kernels' fixed costs (floors) as a share
// of the predicted time, and the measured time's step from the token count
// before the run and to the one after it, which shows where cuBLAS changes
// kernels.
func listOver(rows []row, mdOf func(row) llm.Efficiency, effName string) {
	sets := map[string][]row{}
	var keys []string
	for _, r := range rows {
		k := fmt.Sprintf("%s %s TP%d", r.gpuDir, strings.TrimPrefix(r.model, "meta-llama/"), r.tp)
		if _, ok := sets[k]; !ok {
			keys = append(keys, k)
		}
		sets[k] = append(sets[k], r)
	}
	sort.Strings(keys)
	if effName == "own" {
		fmt.Println("| set (own GPU's fit unless marked) | tokens | rows | err | largest miss, us predicted/measured | floors of predicted | measured step in/out |")
		fmt.Println("|---|---|---|---|---|---|---|")
	}
	for _, k := range keys {
		set := sets[k]
		sort.SliceStable(set, func(i, j int) bool { return set[i].tokens < set[j].tokens })
		errs := make([]float64, len(set))
		for i, r := range set {
			errs[i] = layerErr(r, mdOf(r))
		}
		for i := 0; i < len(set); {
			if !(math.Abs(errs[i]) > bound) {
				i++
				continue
			}
			j := i
			for j+1 < len(set) && math.Abs(errs[j+1]) > bound && (errs[j+1] > 0) == (errs[i] > 0) {
				j++
			}
			describe(k, effName, set, errs, i, j, mdOf)
			i = j + 1
		}
	}
}

func describe(name, effName string, set []row, errs []float64, i, j int, mdOf func(row) llm.Efficiency) {
	lo, hi := errs[i], errs[i]
	miss := map[string]float64{}
	pred, meas := map[string]float64{}, map[string]float64{}
	boundOf := map[string]string{}
	var floors, total float64
	for k := i; k <= j; k++ {
		lo, hi = math.Min(lo, errs[k]), math.Max(hi, errs[k])
		p, ops, _ := predict(set[k], mdOf(set[k]))
		for _, o := range vidurOps {
			miss[o.ours] += math.Abs(p[o.ours]-set[k].ms[o.ours]) * o.calls
			pred[o.ours] += p[o.ours] * o.calls
			meas[o.ours] += set[k].ms[o.ours] * o.calls
			total += p[o.ours] * o.calls
		}
		for _, o := range ops {
			floors += o.Floor * float64(callsOf(o.Name))
			boundOf[o.Name] = o.Bound
		}
	}
	worst := ""
	for _, o := range vidurOps {
		if worst == "" || miss[o.ours] > miss[worst] {
			worst = o.ours
		}
	}
	n := float64(j - i + 1)
	step := func(a, b int) string {
		if a < 0 || b >= len(set) {
			return "-"
		}
		return fmt.Sprintf("x%.2f", measuredLayer(set[b])/measuredLayer(set[a]))
	}
	if effName != "own" {
		name += " (A100 effs)"
	}
	tokens := fmt.Sprint(set[i].tokens)
	if set[j].tokens != set[i].tokens {
		tokens += "-" + fmt.Sprint(set[j].tokens)
	}
	errRange := fmt.Sprintf("%+.0f%%", 100*lo)
	if math.Round(100*lo) != math.Round(100*hi) {
		errRange += fmt.Sprintf("..%+.0f%%", 100*hi)
	}
	fmt.Printf("| %s | %s | %d | %s | %s %.0f/%.0f (%s) | %.0f%% | %s / %s |\n",
		name, tokens, j-i+1, errRange, worst, 1e6*pred[worst]/n, 1e6*meas[worst]/n, boundOf[worst], 100*floors/total, step(i-1, i), step(j, j+1))
}

func callsOf(name string) int {
	for _, o := range vidurOps {
		if o.ours == name {
			return int(o.calls)
		}
	}
	return 1
}

func measuredLayer(rw row) float64 {
	var s float64
	for _, o := range vidurOps {
		s += rw.ms[o.ours] * o.calls
	}
	return s
}

// alternatives compares hw/llm's GEMM time shape, the p-norm fitted in
// main, with two others refitted on the same fit set by the same loss (the
// plain roofline max, hw/llm's before 2026-11-29, and the sum), on the
// held-out rows. hw/llm keeps the shape that does better on them without
// having been tuned on them.
func alternatives(rows, held []row, fitted map[string]llm.Efficiency, fitLoss map[string]float64) {
	fmt.Println("GEMM roofline shapes, each fitted on the fit set alone (tile, efficiencies, floor; p too where fitted):")
	fmt.Println()
	fmt.Println("| GEMM time | GPU | fit-set GEMM loss | held-out median | p90 | max | rows > 25% |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, alt := range []struct {
		name  string
		shape float64
	}{{"(compute^p + memory^p)^(1/p) + floor (hw/llm)", shapePNorm}, {"max(compute, memory) + floor (hw/llm before 2026-11-29)", shapeMax}, {"compute + memory + floor", shapeSum}} {
		for _, g := range []string{"a100", "h100"} {
			md, l := fitted[g], fitLoss[g]
			if alt.shape != shapePNorm {
				md, l = fitGPU(filter(rows, func(r row) bool { return r.gpuDir == g && fitSet(r) }), g, alt.shape)
			}
			st := layerStats(filter(held, func(r row) bool { return r.gpuDir == g }), func(row) llm.Efficiency { return md })
			name := alt.name
			if alt.shape > 1 {
				name += fmt.Sprintf(", p = %.2f", md.GEMMExponent)
			}
			name += fmt.Sprintf(", tile %.0f", md.GEMMTile)
			fmt.Printf("| %s | %s | %.4f | %.1f%% | %.1f%% | %.1f%% | %d |\n", name, g, l, 100*st.median, 100*st.p90, 100*st.max, st.over)
		}
	}
}

// hbmCheck prints, per GPU, the fastest rate at which a GEMM at 1 token
// (its bytes are its weights) was measured to read its weights, as a share
// of HBM peak: over all blocks, and over the blocks that fit in L2. A GEMM
// served from L2 could exceed HBM peak; the blocks that fit in L2 would be
// the fastest per byte.
func hbmCheck(rows []row) {
	for _, g := range []string{"a100", "h100"} {
		spec, _ := gpu.Lookup(gpuOf[g])
		var all, res float64
		var nAll, nRes int
		for _, rw := range rows {
			if rw.gpuDir != g || rw.tokens != 1 {
				continue
			}
			_, ops, err := predict(rw, llm.Efficiency{})
			if err != nil {
				continue
			}
			resident := mayBeL2Resident(rw)
			for _, o := range ops {
				if !gemm[o.Name] {
					continue
				}
				rate := o.Weights / rw.ms[o.Name] / spec.MemoryBandwidth
				all, nAll = math.Max(all, rate), nAll+1
				if resident {
					res, nRes = math.Max(res, rate), nRes+1
				}
			}
		}
		fmt.Printf("%s: GEMMs at 1 token read their weights at most at %.0f%% of HBM peak (%d kernels)", g, 100*all, nAll)
		if nRes > 0 {
			fmt.Printf("; in blocks that fit in L2 at most at %.0f%% (%d kernels)", 100*res, nRes)
		}
		fmt.Println(".")
	}
}

// smallMCheck prints, per GPU, how many fit-set GEMMs at no more tokens
// than the fitted tile would be bound by compute with their rows padded to
// the whole tile (hw/llm's rule before 2026-11-29) and as hw/llm pads them
// now (the smallest power of two of at least 16 that holds them), and the
// fit set's GEMM loss under each rule with the fitted efficiencies. Under
// the p-norm the padded FLOPs add time even to a GEMM bound by memory, so
// the rule moves the fit unless that time is negligible: the two losses
// say how much.
func smallMCheck(rows []row, fitted map[string]llm.Efficiency) {
	for _, g := range []string{"a100", "h100"} {
		spec, _ := gpu.Lookup(gpuOf[g])
		e := fitted[g]
		var n, whole, now int
		var lossNow, lossWhole float64
		var all int
		for _, rw := range rows {
			if rw.gpuDir != g || !fitSet(rw) {
				continue
			}
			p, ops, err := predict(rw, e)
			if err != nil {
				continue
			}
			small := float64(rw.tokens) <= e.GEMMTile
			for _, o := range ops {
				if !gemm[o.Name] {
					continue
				}
				all++
				d := math.Log(p[o.Name] / rw.ms[o.Name])
				lossNow += d * d
				if !small {
					lossWhole += d * d
					continue
				}
				n++
				tm := o.Bytes / (spec.MemoryBandwidth * e.GEMMMemory)
				kn := o.Weights / float64(rw.m.DTypeBytes)
				tc := 2 * e.GEMMTile * kn / (spec.PeakDenseBF16 * e.GEMMCompute)
				if tc > tm {
					whole++
				}
				if o.Bound == "compute" {
					now++
				}
				d = math.Log((o.Floor + pNorm(tc, tm, e.GEMMExponent)) / rw.ms[o.Name])
				lossWhole += d * d
			}
		}
		fmt.Printf("%s: of the fit set's %d GEMMs at <= %.0f tokens, %d would be bound by compute padded to the whole tile, %d as padded now; fit-set GEMM loss %.4f as padded now, %.4f padded to the whole tile.\n",
			g, n, e.GEMMTile, whole, now, lossNow/float64(all), lossWhole/float64(all))
	}
}

// pNorm is (a^p + b^p)^(1/p), max(a, b) for p 0, as hw/llm combines a
// GEMM's compute and memory times.
func pNorm(a, b, p float64) float64 {
	if p == 0 {
		return math.Max(a, b)
	}
	return math.Pow(math.Pow(a, p)+math.Pow(b, p), 1/p)
}

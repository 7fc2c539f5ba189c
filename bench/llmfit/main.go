// Command llmfit fits hw/llm's per-GPU efficiencies to Vidur's published
// per-operator profiles and prints the error on the profiles it held out:
// per set, every held-out row over the 25% bound with what dominates it,
// the L2-residency check, and the other GEMM roofline shapes it compared.
//
// Vidur (github.com/microsoft/vidur, MIT) is not part of this repository:
// fetch it yourself and point CONSPIRATOR_VIDUR_DIR (or -vidur) at the
// checkout's root (the directory holding data/profiling):
//
//	git clone https://github.com/microsoft/vidur /tmp/vidur
//	CONSPIRATOR_VIDUR_DIR=/tmp/vidur go run ./bench/llmfit
//
// The numbers it prints are the ones hw/llm/fitted.go carries.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// vidurOps maps Vidur's mlp.csv operator names to hw/llm's, with the calls
// one decoder block makes.
var vidurOps = []struct {
	vidur, ours string
	calls       float64
}{
	{"input_layernorm", "input_norm", 1},
	{"attn_pre_proj", "qkv_proj", 1},
	{"attn_rope", "rope", 1},
	{"attn_post_proj", "o_proj", 1},
	{"post_attention_layernorm", "post_norm", 1},
	{"mlp_up_proj", "up_proj", 1},
	{"mlp_act", "act", 1},
	{"mlp_down_proj", "down_proj", 1},
	{"add", "add", 2},
}

// row is one mlp.csv line: an architecture at a token count and TP, and the
// measured median time of each operator (seconds).
type row struct {
	gpuDir, model string
	m             llm.Model
	tokens, tp    int
	ms            map[string]float64 // ours -> seconds
}

func readMLP(path, gpuDir, model string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	need := []string{"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp", "num_tokens", "num_tensor_parallel_workers"}
	for _, o := range vidurOps {
		need = append(need, "time_stats."+o.vidur+".median")
	}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			// phi-2's parallel block has no post-attention norm: its
			// operators are not a Llama block's, so it is left out.
			fmt.Fprintf(os.Stderr, "llmfit: %s: no column %s, skipped\n", path, n)
			return nil, nil
		}
	}
	var out []row
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		atoi := func(k string) int { v, _ := strconv.Atoi(rec[col[k]]); return v }
		heads, embd := atoi("n_head"), atoi("n_embd")
		m := llm.Model{Name: model, Layers: 1, Hidden: embd, Heads: heads, KVHeads: atoi("n_kv_head"), HeadDim: embd / heads,
			Intermediate: atoi("n_expanded_embd"), Gated: rec[col["use_gated_mlp"]] == "True", Vocab: atoi("vocab_size"), DTypeBytes: 2}
		rw := row{gpuDir: gpuDir, model: model, m: m, tokens: atoi("num_tokens"), tp: atoi("num_tensor_parallel_workers"), ms: map[string]float64{}}
		ok := true
		for _, o := range vidurOps {
			v, err := strconv.ParseFloat(rec[col["time_stats."+o.vidur+".median"]], 64)
			if err != nil || v <= 0 {
				ok = false
				break
			}
			rw.ms[o.ours] = v / 1e3
		}
		if ok {
			out = append(out, rw)
		}
	}
	return out, nil
}

var gpuOf = map[string]string{"a100": "a100-80gb", "h100": "h100-80gb"}

// predict returns the per-operator seconds of rw's block as hw/llm times
// it with eff, and the ops themselves.
func predict(rw row, eff llm.Efficiency) (map[string]float64, []llm.Op, error) {
	g, _ := gpu.Lookup(gpuOf[rw.gpuDir])
	ops, err := llm.LayerLinearOps(rw.m, llm.Placement{GPU: g, TP: rw.tp}, rw.tokens, eff)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]float64{}
	for _, o := range ops {
		out[o.Name] = o.Seconds
	}
	return out, ops, nil
}

// The operators each kind of efficiency is fitted on (slices, so that the
// loss adds up in one order and the fit is the same every run).
var (
	gemmOps = []string{"qkv_proj", "o_proj", "up_proj", "down_proj"}
	elemOps = []string{"input_norm", "rope", "post_norm", "act", "add"}
	gemm    = map[string]bool{"qkv_proj": true, "o_proj": true, "up_proj": true, "down_proj": true}
)

// loss is the mean squared log error of the named operators over rows.
func loss(rows []row, md llm.Efficiency, names []string) float64 {
	var s float64
	var n int
	for _, rw := range rows {
		p, _, err := predict(rw, md)
		if err != nil {
			continue
		}
		for _, name := range names {
			d := math.Log(p[name] / rw.ms[name])
			s += d * d
			n++
		}
	}
	return s / float64(n)
}

// fit minimises loss by coordinate descent over grids, each parameter in
// its range, a few rounds.
func fit(rows []row, md *llm.Efficiency, names []string, params []*float64, lo, hi []float64) {
	for round := 0; round < 4; round++ {
		for i, p := range params {
			best, bestL := *p, loss(rows, *md, names)
			const steps = 60
			for k := 0; k <= steps; k++ {
				*p = lo[i] + (hi[i]-lo[i])*float64(k)/steps
				if l := loss(rows, *md, names); l < bestL {
					best, bestL = *p, l
				}
			}
			*p = best
		}
	}
}

func layerErr(rw row, md llm.Efficiency) float64 {
	p, _, err := predict(rw, md)
	if err != nil {
		return math.NaN()
	}
	var pr, me float64
	for _, o := range vidurOps {
		pr += p[o.ours] * o.calls
		me += rw.ms[o.ours] * o.calls
	}
	return pr/me - 1
}

// bound is the target for every held-out point.
const bound = 0.25

// errStats are a set's absolute errors: median, p90, max and how many
// exceed bound.
type errStats struct {
	n                int
	median, p90, max float64
	over             int
}

func statsOf(errs []float64) errStats {
	if len(errs) == 0 {
		return errStats{}
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	sort.Float64s(a)
	st := errStats{n: len(a), median: a[len(a)/2], p90: a[int(0.9*float64(len(a)-1))], max: a[len(a)-1]}
	for _, e := range a {
		if e > bound {
			st.over++
		}
	}
	return st
}

func printRow(name string, st errStats) {
	if st.n == 0 {
		fmt.Printf("| %-52s | %4d | - | - | - | - |\n", name, 0)
		return
	}
	fmt.Printf("| %-52s | %4d | %5.1f%% | %5.1f%% | %5.1f%% | %3d |\n", name, st.n, 100*st.median, 100*st.p90, 100*st.max, st.over)
}

const tableHead = "| set | rows | median abs err | p90 | max | rows > 25% |\n|---|---|---|---|---|---|"

func layerStats(rows []row, mdOf func(row) llm.Efficiency) errStats {
	var errs []float64
	for _, rw := range rows {
		if e := layerErr(rw, mdOf(rw)); !math.IsNaN(e) {
			errs = append(errs, e)
		}
	}
	return statsOf(errs)
}

func report(name string, rows []row, mdOf func(row) llm.Efficiency) {
	printRow(name, layerStats(rows, mdOf))
}

func filter(rows []row, keep func(row) bool) []row {
	var out []row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// fitSet says whether a row is in the fit set: Llama-2-7B at TP 1.
func fitSet(r row) bool { return r.model == "meta-llama/Llama-2-7b-hf" && r.tp == 1 }

// The GEMM time shapes compared, as Efficiency.GEMMExponent: hw/llm's
// p-norm (fitted from p = 2), the plain roofline max (hw/llm's before
// 2026-11-29) and the sum.
const (
	shapePNorm = 2.0
	shapeMax   = 0.0
	shapeSum   = 1.0
)

// fitGPU fits one GPU's GEMM and elementwise efficiencies on its fit set,
// GEMMs combined with exponent p (0: max; above 1: p is fitted too, from
// there), the row tile chosen from a grid by the same loss. It returns the
// fit and its GEMM loss.
func fitGPU(train []row, g string, p float64) (llm.Efficiency, float64) {
	base := llm.Efficiency{Name: g, GEMMCompute: 0.7, GEMMMemory: 0.7, GEMMExponent: p, ElementwiseMemory: 0.7, AttnCompute: 1, AttnMemory: 1, AllReduceBus: 1}
	bestL := math.Inf(1)
	var best llm.Efficiency
	for _, tile := range []float64{1, 16, 32, 64, 128, 256} {
		md := base
		md.GEMMTile = tile
		params, lo, hi := []*float64{&md.GEMMCompute, &md.GEMMMemory, &md.GEMMFloor}, []float64{0.2, 0.2, 0}, []float64{1, 1, 30e-6}
		if p > 1 {
			params, lo, hi = append(params, &md.GEMMExponent), append(lo, 1), append(hi, 8)
		}
		fit(train, &md, gemmOps, params, lo, hi)
		if l := loss(train, md, gemmOps); l < bestL {
			bestL, best = l, md
		}
	}
	fit(train, &best, elemOps, []*float64{&best.ElementwiseMemory, &best.ElementwiseFloor}, []float64{0.1, 0}, []float64{1, 30e-6})
	return best, bestL
}

// allReduce is one all_reduce.csv line within one node.
type allReduce struct {
	workers int
	bytes   float64
	sec     float64
}

func readAllReduce(path string) ([]allReduce, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var out []allReduce
	for _, rec := range recs[1:] {
		n, _ := strconv.Atoi(rec[col["num_workers"]])
		dpn, _ := strconv.Atoi(rec[col["devices_per_node"]])
		size, _ := strconv.ParseFloat(rec[col["size"]], 64)
		med, _ := strconv.ParseFloat(rec[col["time_stats.all_reduce.median"]], 64)
		if dpn != n || rec[col["collective"]] != "all_reduce" || med <= 0 {
			continue // across nodes: not modelled
		}
		out = append(out, allReduce{n, size, med / 1e3})
	}
	return out, nil
}

func arPredict(a allReduce, link, lat, bus float64) float64 {
	n := float64(a.workers)
	return lat + 2*(n-1)/n*a.bytes/(link*bus)
}

func fitAllReduce(rows []allReduce, link float64) (lat, bus float64) {
	l := func(lat, bus float64) float64 {
		var s float64
		for _, a := range rows {
			d := math.Log(arPredict(a, link, lat, bus) / a.sec)
			s += d * d
		}
		return s
	}
	best := math.Inf(1)
	for li := 0; li <= 200; li++ {
		for bi := 1; bi <= 100; bi++ {
			la, bu := float64(li)*0.25e-6, float64(bi)/100
			if v := l(la, bu); v < best {
				best, lat, bus = v, la, bu
			}
		}
	}
	return lat, bus
}

func arStats(rows []allReduce, link, lat, bus float64) errStats {
	var errs []float64
	for _, a := range rows {
		errs = append(errs, arPredict(a, link, lat, bus)/a.sec-1)
	}
	return statsOf(errs)
}

func main() {
	dir := flag.String("vidur", os.Getenv("CONSPIRATOR_VIDUR_DIR"), "root of a Vidur checkout (default $CONSPIRATOR_VIDUR_DIR)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "llmfit: set CONSPIRATOR_VIDUR_DIR or -vidur to a checkout of github.com/microsoft/vidur (the directory holding data/profiling)")
		os.Exit(2)
	}
	var rows []row
	for _, g := range []string{"a100", "h100"} {
		root := filepath.Join(*dir, "data", "profiling", "compute", g)
		err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.Name() != "mlp.csv" {
				return err
			}
			name, _ := filepath.Rel(root, filepath.Dir(path))
			rs, err := readMLP(path, g, name)
			rows = append(rows, rs...)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "llmfit:", err)
			os.Exit(2)
		}
	}
	fitted := map[string]llm.Efficiency{}
	fitLoss := map[string]float64{}
	for _, g := range []string{"a100", "h100"} {
		e, l := fitGPU(filter(rows, func(r row) bool { return r.gpuDir == g && fitSet(r) }), g, shapePNorm)
		fitted[g], fitLoss[g] = e, l
		fmt.Printf("%s fitted on %s/meta-llama/Llama-2-7b-hf/mlp.csv TP 1 (%d rows): GEMMCompute %.3f GEMMMemory %.3f GEMMFloor %.2f us GEMMTile %.0f GEMMExponent %.2f ElementwiseMemory %.3f ElementwiseFloor %.2f us\n",
			g, g, len(filter(rows, func(r row) bool { return r.gpuDir == g && fitSet(r) })), e.GEMMCompute, e.GEMMMemory, e.GEMMFloor*1e6, e.GEMMTile, e.GEMMExponent, e.ElementwiseMemory, e.ElementwiseFloor*1e6)
	}
	fmt.Println()
	fmt.Println("Error of one decoder block's non-attention time (sum of Vidur's mlp.csv operator medians, add twice) per row:")
	fmt.Println()
	fmt.Println(tableHead)
	models := map[string]bool{}
	for _, r := range rows {
		models[r.model] = true
	}
	var names []string
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	own := func(r row) llm.Efficiency { return fitted[r.gpuDir] }
	a100 := func(row) llm.Efficiency { return fitted["a100"] }
	for _, g := range []string{"a100", "h100"} {
		report(g+" llama-2-7b TP1 (fit set)", filter(rows, func(r row) bool { return r.gpuDir == g && fitSet(r) }), own)
		for _, m := range names {
			for _, tp := range []int{1, 2, 4, 8} {
				if m == "meta-llama/Llama-2-7b-hf" && tp == 1 {
					continue
				}
				set := filter(rows, func(r row) bool { return r.gpuDir == g && r.model == m && r.tp == tp })
				if len(set) > 0 {
					report(fmt.Sprintf("%s %s TP%d (held out)", g, strings.TrimPrefix(m, "meta-llama/"), tp), set, own)
				}
			}
		}
	}
	// Another GPU: H100 predicted with the A100's efficiencies, as a GPU
	// without a profile is.
	h100 := filter(rows, func(r row) bool { return r.gpuDir == "h100" })
	report("h100 all models, all TP, A100 efficiencies (held out)", h100, a100)
	held := filter(rows, func(r row) bool { return !fitSet(r) })
	report("all held-out rows, each GPU's own fit", held, own)
	report("  of which blocks that cannot be L2-resident", filter(held, func(r row) bool { return !mayBeL2Resident(r) }), own)
	fmt.Println()
	hbmCheck(rows)
	smallMCheck(rows, fitted)

	fmt.Println()
	fmt.Println("Held-out rows over 25%, grouped by set and adjacent token counts:")
	fmt.Println()
	listOver(held, own, "own")
	listOver(h100, a100, "a100")

	fmt.Println()
	alternatives(rows, held, fitted, fitLoss)

	fmt.Println()
	fmt.Println("All-reduce (within one node; latency + ring bytes over NVLink x bus efficiency): fit on 2 and 4 GPUs, held out 8")
	arFit := map[string][2]float64{}
	arData := map[string][]allReduce{}
	fmt.Println()
	fmt.Println(tableHead)
	for _, g := range []string{"a100", "h100"} {
		ar, err := readAllReduce(filepath.Join(*dir, "data", "profiling", "network", g+"_dgx", "all_reduce.csv"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "llmfit:", err)
			os.Exit(2)
		}
		spec, _ := gpu.Lookup(gpuOf[g])
		var train, held []allReduce
		for _, a := range ar {
			if a.workers == 8 {
				held = append(held, a)
			} else {
				train = append(train, a)
			}
		}
		lat, bus := fitAllReduce(train, spec.NVLinkBandwidth)
		arFit[g], arData[g] = [2]float64{lat, bus}, ar
		fmt.Printf("| %s_dgx fit: latency %.2f us, bus efficiency %.2f | | | | | |\n", g, lat*1e6, bus)
		printRow(g+"_dgx 2 and 4 GPUs (fit set)", arStats(train, spec.NVLinkBandwidth, lat, bus))
		printRow(g+"_dgx 8 GPUs (held out)", arStats(held, spec.NVLinkBandwidth, lat, bus))
		var small, large []allReduce
		for _, a := range held {
			if a.bytes < 2<<20 {
				small = append(small, a)
			} else {
				large = append(large, a)
			}
		}
		printRow(g+"_dgx 8 GPUs, < 2 MiB (held out)", arStats(small, spec.NVLinkBandwidth, lat, bus))
		printRow(g+"_dgx 8 GPUs, >= 2 MiB (held out)", arStats(large, spec.NVLinkBandwidth, lat, bus))
	}
	layerWithAllReduces(rows, fitted, arFit, arData)
}

// layerWithAllReduces reports one decoder block at TP > 1 without
// attention: the mlp.csv operators plus two all-reduces, measured against
// predicted.
func layerWithAllReduces(rows []row, fitted map[string]llm.Efficiency, arFit map[string][2]float64, arData map[string][]allReduce) {
	fmt.Println()
	fmt.Println("One decoder block at TP > 1 without attention: Vidur's mlp.csv operators plus two all-reduces of tokens x hidden x 2 bytes")
	fmt.Println("(measured: the nearest all_reduce.csv size on as many GPUs; predicted: hw/llm's operators and fitted all-reduce).")
	fmt.Println("GEMM/elementwise held out for every row; all-reduce held out at TP 8 only:")
	fmt.Println()
	fmt.Println(tableHead[:strings.Index(tableHead, "\n")] + " tokens of those |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, g := range []string{"a100", "h100"} {
		spec, _ := gpu.Lookup(gpuOf[g])
		for _, tp := range []int{2, 4, 8} {
			var errs []float64
			minT, maxT := math.MaxInt, 0
			for _, rw := range rows {
				if rw.gpuDir != g || rw.tp != tp {
					continue
				}
				p, _, err := predict(rw, fitted[g])
				if err != nil {
					continue
				}
				var pr, me float64
				for _, o := range vidurOps {
					pr += p[o.ours] * o.calls
					me += rw.ms[o.ours] * o.calls
				}
				size := float64(rw.tokens * rw.m.Hidden * 2)
				meas, ok := nearestAR(arData[g], tp, size)
				if !ok {
					continue
				}
				pr += 2 * arPredict(allReduce{tp, size, 0}, spec.NVLinkBandwidth, arFit[g][0], arFit[g][1])
				me += 2 * meas
				errs = append(errs, pr/me-1)
				if math.Abs(pr/me-1) > bound {
					minT, maxT = min(minT, rw.tokens), max(maxT, rw.tokens)
				}
			}
			if len(errs) == 0 {
				continue
			}
			st := statsOf(errs)
			fmt.Printf("| %-52s | %4d | %5.1f%% | %5.1f%% | %5.1f%% | %3d | ", fmt.Sprintf("%s all models TP%d, layer + 2 all-reduces", g, tp), st.n, 100*st.median, 100*st.p90, 100*st.max, st.over)
			if st.over > 0 {
				fmt.Printf("%d-%d |\n", minT, maxT)
			} else {
				fmt.Println("- |")
			}
		}
	}
}

// nearestAR is the measured all-reduce time on n GPUs of the profiled size
// nearest to size (within 1% or 8 KiB, else none).
func nearestAR(rows []allReduce, n int, size float64) (float64, bool) {
	best, bestD := 0.0, math.Inf(1)
	for _, a := range rows {
		if a.workers != n {
			continue
		}
		if d := math.Abs(a.bytes - size); d < bestD {
			best, bestD = a.sec, d
		}
	}
	return best, bestD <= 0.01*size+8192
}

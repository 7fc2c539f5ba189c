// Command stepval checks hw/llm's whole-step time against measured
// iteration times that no part of its fit has seen: SplitwiseSim's
// data/perf_model.csv (github.com/Mutinifni/splitwise-sim, MIT), prompt
// (prefill) and per-token (decode) times of Llama-2-70B at TP 2/4/8 and
// BLOOM-176B at TP 8 on DGX-A100 and DGX-H100 machines.
//
// The data is not part of this repository: point CONSPIRATOR_SPLITWISE_DIR
// (or -splitwise) at a checkout's root (the directory holding
// data/perf_model.csv), or at the CSV itself:
//
//	git clone https://github.com/Mutinifni/splitwise-sim /tmp/splitwise
//	CONSPIRATOR_SPLITWISE_DIR=/tmp/splitwise go run ./bench/stepval
//
// Without it the command says so and exits 0 (nothing to check). -rows
// also lists every compared row.
//
// Each CSV line is batch_size identical requests of prompt_size tokens,
// asked for token_size output tokens and run together: prompt_time is the
// prefill iteration of the whole batch (ms), token_time the mean decode
// iteration (ms), e2e_time their total. The steps decoded are (e2e - prompt) /
// token_time; decode step k reads prompt + k tokens, so the mean decode
// iteration is timed at context prompt + (steps+1)/2.
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

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// bloom176B is BLOOM-176B as its published config gives it
// (bigscience/bloom config.json: n_layer 70, hidden_size 14336, n_head 112,
// vocab_size 250880; 4 x hidden GELU FFN, multi-head attention, tied
// embeddings, BF16). The catalog has no BLOOM. ALiBi, biases and the
// embedding layer norm are left out, as the catalog leaves out biases; the
// step model charges a RoPE kernel BLOOM does not run (one elementwise op a
// layer, well under 1% of a step).
var bloom176B = llm.Model{
	Name: "bloom-176b", Source: "bigscience/bloom config.json, built in bench/stepval",
	Layers: 70, Hidden: 14336, Heads: 112, KVHeads: 112, HeadDim: 128, Intermediate: 4 * 14336,
	Vocab: 250880, DTypeBytes: 2, MaxContext: 2048, TiedEmbeddings: true,
}

// models maps the CSV's model names to hw/llm models.
func models() (map[string]llm.Model, error) {
	l, err := llm.Lookup("llama-2-70b")
	if err != nil {
		return nil, err
	}
	return map[string]llm.Model{"llama2-70b": l, "bloom-176b": bloom176B}, nil
}

// cfg is one measured configuration: the medians of its repeats.
type cfg struct {
	model, hw                  string
	tp, prompt, batch, outToks int
	promptMS, tokenMS, e2eMS   float64
	repeats                    int
	line                       int // first CSV line
}

// steps is the decode iterations the measurement ran: (e2e - prompt) /
// token_time.
func (c cfg) steps() float64 { return (c.e2eMS - c.promptMS) / c.tokenMS }

func median(a []float64) float64 {
	s := append([]float64(nil), a...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func readCSV(path string) ([]cfg, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, n := range []string{"model", "hardware", "tensor_parallel", "prompt_size", "batch_size", "token_size", "prompt_time", "token_time", "e2e_time"} {
		if _, ok := col[n]; !ok {
			return nil, 0, fmt.Errorf("%s: no column %q (header %v)", path, n, head)
		}
	}
	type key struct {
		model, hw                  string
		tp, prompt, batch, outToks int
	}
	type acc struct {
		p, t, e []float64
		line    int
	}
	groups := map[key]*acc{}
	var order []key
	raw := 0
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		ints := make([]int, 4)
		for i, n := range []string{"tensor_parallel", "prompt_size", "batch_size", "token_size"} {
			if ints[i], err = strconv.Atoi(rec[col[n]]); err != nil {
				return nil, 0, fmt.Errorf("%s:%d: %s %q is not an integer", path, line, n, rec[col[n]])
			}
		}
		fl := make([]float64, 3)
		for i, n := range []string{"prompt_time", "token_time", "e2e_time"} {
			if fl[i], err = strconv.ParseFloat(rec[col[n]], 64); err != nil || !(fl[i] > 0) {
				return nil, 0, fmt.Errorf("%s:%d: %s %q must be a positive number of ms", path, line, n, rec[col[n]])
			}
		}
		k := key{rec[col["model"]], rec[col["hardware"]], ints[0], ints[1], ints[2], ints[3]}
		a := groups[k]
		if a == nil {
			a = &acc{line: line}
			groups[k] = a
			order = append(order, k)
		}
		a.p, a.t, a.e = append(a.p, fl[0]), append(a.t, fl[1]), append(a.e, fl[2])
		raw++
	}
	var out []cfg
	for _, k := range order {
		a := groups[k]
		out = append(out, cfg{model: k.model, hw: k.hw, tp: k.tp, prompt: k.prompt, batch: k.batch, outToks: k.outToks,
			promptMS: median(a.p), tokenMS: median(a.t), e2eMS: median(a.e), repeats: len(a.p), line: a.line})
	}
	return out, raw, nil
}

// excludeToken: a decode that ran over 5% more iterations than the
// output asked for was preempted and recomputed, so its token_time is not
// one batch's iteration (the first output token comes from the prefill,
// so a clean run decodes token_size - 1 times).
func excludeToken(c cfg) bool { return c.steps() > 1.05*float64(c.outToks-1) }

// excludePrompt: over twice the asked iterations means the engine ran the
// requests in several smaller batches (Llama-2-70B at TP 2 and batch 64:
// e2e 80-160 s, prompt_time below batch 32's), so neither time is the
// configuration's.
func excludePrompt(c cfg) bool { return c.steps() > 2*float64(c.outToks) }

// sample is one measured time next to the model's.
type sample struct {
	c      cfg
	phase  string  // "prompt" or "token"
	ctx    int     // decode context the model is timed at (token rows)
	meas   float64 // s
	graph  llm.StepTime
	eager  llm.StepTime // decode without CUDA graphs (prompt rows: as graph)
	lo, hi float64      // s, decode (graph mode) at the first and last step's context
	m      llm.Model
}

func (s sample) errOf(mode string) float64 {
	if mode == "eager" {
		return s.eager.Seconds/s.meas - 1
	}
	return s.graph.Seconds/s.meas - 1
}

type stats struct {
	n                           int
	median, p90, max, signedMed float64
}

// statsOf: |err| median, p90 (nearest rank on n-1), max, and the signed
// median (the bias: negative when the model is fast).
func statsOf(errs []float64) stats {
	if len(errs) == 0 {
		return stats{}
	}
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	sort.Float64s(a)
	return stats{n: len(a), median: median(a), p90: a[int(math.Round(0.9*float64(len(a)-1)))], max: a[len(a)-1], signedMed: median(errs)}
}

func (s stats) cells() string {
	if s.n == 0 {
		return "0 | - | - | - | -"
	}
	return fmt.Sprintf("%d | %.1f%% | %.1f%% | %.1f%% | %+.1f%%", s.n, 100*s.median, 100*s.p90, 100*s.max, 100*s.signedMed)
}

func errsOf(ss []sample, mode string) []float64 {
	var out []float64
	for _, s := range ss {
		out = append(out, s.errOf(mode))
	}
	return out
}

// measuredGPUs are the CSV's hardware names that are catalog GPUs (same spelling).
var measuredGPUs = map[string]bool{"a100-80gb": true, "h100-80gb": true}

func main() {
	dir := flag.String("splitwise", os.Getenv("CONSPIRATOR_SPLITWISE_DIR"), "root of a splitwise-sim checkout, or its data/perf_model.csv (default $CONSPIRATOR_SPLITWISE_DIR)")
	rows := flag.Bool("rows", false, "also list every compared row")
	measured := flag.String("measured", "", "instead, compare llm.Step with the steps in this CSV (realhw/torch/measure_llm_step.py's, measured on a GPU)")
	distserve := flag.String("distserve", "", "instead, compare llm.Step with DistServe's step-time surfaces in this file (simdistserve/estimators/profile_data/profiler-a100-80g.vllm.json of github.com/LLMServe/DistServe)")
	flag.Parse()
	if *distserve != "" {
		if err := runDistServe(*distserve); err != nil {
			fmt.Fprintln(os.Stderr, "stepval:", err)
			os.Exit(2)
		}
		return
	}
	if *measured != "" {
		if err := runMeasured(*measured); err != nil {
			fmt.Fprintln(os.Stderr, "stepval:", err)
			os.Exit(2)
		}
		return
	}
	if *dir == "" {
		fmt.Println("stepval: skipped: set CONSPIRATOR_SPLITWISE_DIR or -splitwise to a checkout of github.com/Mutinifni/splitwise-sim (the directory holding data/perf_model.csv)")
		return
	}
	path := *dir
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "data", "perf_model.csv")
	}
	cfgs, raw, err := readCSV(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stepval:", err)
		os.Exit(2)
	}
	ms, err := models()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stepval:", err)
		os.Exit(2)
	}
	fmt.Printf("%s: %d lines, %d configurations (medians of their repeats)\n\n", path, raw, len(cfgs))

	var samples []sample
	var notes []string
	// Prompt rows: one per (model, GPU, TP, prompt, batch), the median over
	// every output length measured with it.
	type pkey struct {
		model, hw         string
		tp, prompt, batch int
	}
	promptTimes := map[pkey][]float64{}
	var pOrder []pkey
	var pFirst = map[pkey]cfg{}
	for _, c := range cfgs {
		if !measuredGPUs[c.hw] {
			continue // noted below
		}
		if excludePrompt(c) {
			notes = append(notes, fmt.Sprintf("line %d: %s %s TP%d, %d prompts of %d tokens, %d output tokens asked: e2e implies %.0f decode steps, over twice as many: the requests did not run as one batch (prompt_time %.0f ms), excluded from both phases",
				c.line, c.model, c.hw, c.tp, c.batch, c.prompt, c.outToks, c.steps(), c.promptMS))
			continue
		}
		if excludeToken(c) {
			notes = append(notes, fmt.Sprintf("line %d: %s %s TP%d, %d prompts of %d tokens, %d output tokens asked: e2e implies %.0f decode steps, over 5%% more than asked (preemption and recompute in the decode phase), token row excluded; its prompt_time %.0f ms kept",
				c.line, c.model, c.hw, c.tp, c.batch, c.prompt, c.outToks, c.steps(), c.promptMS))
		}
		k := pkey{c.model, c.hw, c.tp, c.prompt, c.batch}
		if _, ok := promptTimes[k]; !ok {
			pOrder = append(pOrder, k)
			pFirst[k] = c
		}
		promptTimes[k] = append(promptTimes[k], c.promptMS)
	}
	skipped := map[string]int{}
	for _, c := range cfgs {
		if !measuredGPUs[c.hw] {
			skipped[c.hw] += c.repeats
		}
	}
	for hw, n := range skipped {
		notes = append(notes, fmt.Sprintf("%s: %d lines skipped: a power-capped H100, not a catalog GPU, and not a measurement of its own: line for line its token_time and e2e_time equal h100-80gb's and its prompt_time is 1.3 x theirs", hw, n))
	}
	sort.Strings(notes)

	effOf := func(hw string) (gpu.Spec, llm.Efficiency, llm.Efficiency) {
		g, err := gpu.Lookup(hw)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stepval:", err)
			os.Exit(2)
		}
		eff, err := llm.FittedEfficiency(g)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stepval:", err)
			os.Exit(2)
		}
		eager := eff
		eager.GraphBatchSizes = nil // no captured sizes: every decode runs eagerly
		return g, eff, eager
	}
	step := func(m llm.Model, g gpu.Spec, tp int, b llm.Batch, eff llm.Efficiency) (llm.StepTime, error) {
		return llm.Step(m, llm.Placement{GPU: g, TP: tp}, b, eff)
	}
	for _, k := range pOrder {
		c := pFirst[k]
		m := ms[c.model]
		g, eff, eager := effOf(c.hw)
		b := llm.Batch{}
		for i := 0; i < c.batch; i++ {
			b.Prefill = append(b.Prefill, llm.Chunk{Tokens: c.prompt})
		}
		st, err := step(m, g, c.tp, b, eff)
		if err != nil {
			notes = append(notes, fmt.Sprintf("prompt %s %s TP%d %d x %d: %v", c.model, c.hw, c.tp, c.prompt, c.batch, err))
			continue
		}
		se, _ := step(m, g, c.tp, b, eager)
		samples = append(samples, sample{c: c, phase: "prompt", meas: median(promptTimes[k]) / 1e3, graph: st, eager: se, m: m})
	}
	for _, c := range cfgs {
		if !measuredGPUs[c.hw] || excludePrompt(c) || excludeToken(c) {
			continue
		}
		m := ms[c.model]
		g, eff, eager := effOf(c.hw)
		n := c.steps()
		ctx := c.prompt + int(math.Round((n+1)/2))
		dec := func(l int) llm.Batch {
			b := llm.Batch{}
			for i := 0; i < c.batch; i++ {
				b.Decode = append(b.Decode, l)
			}
			return b
		}
		st, err := step(m, g, c.tp, dec(ctx), eff)
		if err != nil {
			notes = append(notes, fmt.Sprintf("token %s %s TP%d %d x %d: %v", c.model, c.hw, c.tp, c.prompt, c.batch, err))
			continue
		}
		se, _ := step(m, g, c.tp, dec(ctx), eager)
		lo, _ := step(m, g, c.tp, dec(c.prompt+1), eff)
		hi, _ := step(m, g, c.tp, dec(c.prompt+int(math.Round(n))), eff)
		samples = append(samples, sample{c: c, phase: "token", ctx: ctx, meas: c.tokenMS / 1e3, graph: st, eager: se, lo: lo.Seconds, hi: hi.Seconds, m: m})
	}

	fmt.Println("Excluded or skipped:")
	for _, n := range notes {
		fmt.Println("-", n)
	}
	fmt.Println()

	groupTables(samples)
	overall(samples)
	sensitivity(samples)
	tpScaling(samples)
	fixedCost(samples)
	hostFloor(samples)
	if err := hostDispatch(samples); err != nil {
		fmt.Fprintln(os.Stderr, "stepval:", err)
		os.Exit(2)
	}
	prefillRate(samples)
	examples(samples)
	if *rows {
		listRows(samples)
	}
}

// listRows prints every compared row, measured and modelled, in ms.
func listRows(ss []sample) {
	fmt.Println()
	fmt.Println("Every compared row (ms):")
	fmt.Println()
	fmt.Println("| GPU | model | TP | phase | prompt | batch | output asked | steps | ctx | measured | graph | eager | err graph | err eager |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range ss {
		c := s.c
		// A prompt row is the median over every output length.
		asked, steps, ctx := "-", "-", "-"
		if s.phase == "token" {
			asked, steps, ctx = strconv.Itoa(c.outToks), fmt.Sprintf("%.0f", c.steps()), strconv.Itoa(s.ctx)
		}
		fmt.Printf("| %s | %s | %d | %s | %d | %d | %s | %s | %s | %.2f | %.2f | %.2f | %+.1f%% | %+.1f%% |\n", c.hw, c.model, c.tp, s.phase, c.prompt, c.batch, asked, steps, ctx,
			s.meas*1e3, s.graph.Seconds*1e3, s.eager.Seconds*1e3, 100*s.errOf("graph"), 100*s.errOf("eager"))
	}
}

type gkey struct {
	hw, model string
	tp        int
}

func groupsOf(ss []sample) ([]gkey, map[gkey][]sample) {
	m := map[gkey][]sample{}
	var keys []gkey
	for _, s := range ss {
		k := gkey{s.c.hw, s.c.model, s.c.tp}
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = append(m[k], s)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.hw != b.hw {
			return a.hw < b.hw
		}
		if a.model != b.model {
			return a.model > b.model // llama first
		}
		return a.tp < b.tp
	})
	return keys, m
}

func phaseOf(ss []sample, phase string) []sample {
	var out []sample
	for _, s := range ss {
		if s.phase == phase {
			out = append(out, s)
		}
	}
	return out
}

const head = "| GPU | model | TP | phase | mode | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|---|---|---|---|"

func groupTables(ss []sample) {
	fmt.Println("Per (GPU, model, TP, phase): error = model / measured - 1. Prefill always runs eagerly in hw/llm, so prompt rows have one mode;")
	fmt.Println("token rows: \"graph\" = FittedEfficiency as it is (decode replays a CUDA graph), \"eager\" = GraphBatchSizes empty.")
	fmt.Println()
	fmt.Println(head)
	keys, m := groupsOf(ss)
	for _, k := range keys {
		p := phaseOf(m[k], "prompt")
		t := phaseOf(m[k], "token")
		fmt.Printf("| %s | %s | %d | prompt | - | %s |\n", k.hw, k.model, k.tp, statsOf(errsOf(p, "graph")).cells())
		fmt.Printf("| %s | %s | %d | token | graph | %s |\n", k.hw, k.model, k.tp, statsOf(errsOf(t, "graph")).cells())
		fmt.Printf("| %s | %s | %d | token | eager | %s |\n", k.hw, k.model, k.tp, statsOf(errsOf(t, "eager")).cells())
	}
	fmt.Println()
}

func overall(ss []sample) {
	fmt.Println("Overall:")
	fmt.Println()
	fmt.Println("| set | mode | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|---|")
	p := phaseOf(ss, "prompt")
	t := phaseOf(ss, "token")
	row := func(name, mode string, set []sample) {
		fmt.Printf("| %s | %s | %s |\n", name, mode, statsOf(errsOf(set, mode)).cells())
	}
	row("prompt, all", "graph", p)
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		row("prompt, "+hw, "graph", filter(p, func(s sample) bool { return s.c.hw == hw }))
	}
	row("prompt, >= 2048 tokens in the batch", "graph", filter(p, func(s sample) bool { return s.c.prompt*s.c.batch >= 2048 }))
	row("prompt, < 2048 tokens in the batch", "graph", filter(p, func(s sample) bool { return s.c.prompt*s.c.batch < 2048 }))
	for _, mode := range []string{"graph", "eager"} {
		row("token, all", mode, t)
		for _, hw := range []string{"a100-80gb", "h100-80gb"} {
			row("token, "+hw, mode, filter(t, func(s sample) bool { return s.c.hw == hw }))
		}
		row("token, batch 1", mode, filter(t, func(s sample) bool { return s.c.batch == 1 }))
		row("token, batch >= 16", mode, filter(t, func(s sample) bool { return s.c.batch >= 16 }))
	}
	fmt.Println()
}

func filter(ss []sample, keep func(sample) bool) []sample {
	var out []sample
	for _, s := range ss {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// sensitivity times every token row (graph mode) at the first and the last
// decode step's context instead of the mean.
func sensitivity(ss []sample) {
	t := phaseOf(ss, "token")
	var lo, mid, hi []float64
	var spread []float64
	for _, s := range t {
		lo = append(lo, s.lo/s.meas-1)
		mid = append(mid, s.graph.Seconds/s.meas-1)
		hi = append(hi, s.hi/s.meas-1)
		spread = append(spread, s.hi/s.lo-1)
	}
	fmt.Println("Decode context sensitivity (graph mode, all token rows): the mean iteration timed at the first step's context (prompt + 1),")
	fmt.Println("the mean (prompt + (steps+1)/2, used above) and the last (prompt + steps):")
	fmt.Println()
	fmt.Println("| context | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|")
	fmt.Printf("| first step | %s |\n", statsOf(lo).cells())
	fmt.Printf("| mean (used) | %s |\n", statsOf(mid).cells())
	fmt.Printf("| last step | %s |\n", statsOf(hi).cells())
	sp := statsOf(spread)
	fmt.Printf("\nModel time at the last step's context over the first's: median %+.1f%%, max %+.1f%%.\n\n", 100*sp.signedMed, 100*sp.max)
}

// tpScaling compares how the batch-1, 512-token-prompt, 128-output decode
// and the 2048-token prefill scale with TP, measured and modelled.
func tpScaling(ss []sample) {
	fmt.Println("TP scaling, Llama-2-70B (ms): decode at batch 1 (prompt 512, 128 tokens asked) and prefill of one 2048-token prompt")
	fmt.Println()
	fmt.Println("| GPU | phase | TP | measured | graph | eager | measured / TP-2 measured | graph / TP-2 graph |\n|---|---|---|---|---|---|---|---|")
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		for _, ph := range []string{"token", "prompt"} {
			var base, baseG float64
			for _, tp := range []int{2, 4, 8} {
				for _, s := range ss {
					c := s.c
					if c.hw != hw || c.model != "llama2-70b" || c.tp != tp || s.phase != ph || c.batch != 1 {
						continue
					}
					if ph == "token" && (c.prompt != 512 || c.outToks != 128) || ph == "prompt" && c.prompt != 2048 {
						continue
					}
					if tp == 2 {
						base, baseG = s.meas, s.graph.Seconds
					}
					fmt.Printf("| %s | %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f |\n", hw, ph, tp, s.meas*1e3, s.graph.Seconds*1e3, s.eager.Seconds*1e3, s.meas/base, s.graph.Seconds/baseG)
				}
			}
		}
	}
	fmt.Println()
}

// fixedCost reports, per group, the per-layer host cost an eager decode
// would need for the model to match each token row: (measured - eager
// model) / layers, on top of the fitted EagerStep. If the gap is a launch
// floor it is about the same at every batch; if it grows with the batch it
// is not.
func fixedCost(ss []sample) {
	fmt.Println("Decode gap as a per-layer eager cost: (measured - eager model) / layers, us, per token row (hw/llm adds no per-layer cost;")
	fmt.Println("EagerStep 1 ms already counted). Also the gap at batch 1 and at batch 64 in ms, and prefill's gap at 128 and 8,192 tokens:")
	fmt.Println()
	fmt.Println("The last two columns: decode time added per request from batch 1 to the largest batch measured (prompt 512), us, measured and eager model.")
	fmt.Println()
	fmt.Println("| GPU | model | TP | token rows | per-layer median | min | max | decode gap b1 (ms) | b64 (ms) | prefill gap 128 (ms) | 8192 (ms) | per request, measured | model |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	keys, m := groupsOf(ss)
	var all []float64
	for _, k := range keys {
		var per []float64
		gap := map[string]string{"b1": "-", "b64": "-", "p128": "-", "p8192": "-"}
		var b1, bMax sample
		for _, s := range m[k] {
			d := s.meas - s.eager.Seconds
			switch {
			case s.phase == "token":
				per = append(per, d/float64(s.m.Layers))
				if s.c.batch == 1 && s.c.prompt == 512 && s.c.outToks == 128 {
					gap["b1"] = fmt.Sprintf("%.1f", d*1e3)
					b1 = s
				}
				if s.c.prompt == 512 && s.c.outToks == 128 && s.c.batch > bMax.c.batch {
					bMax = s
				}
				if s.c.batch == 64 {
					gap["b64"] = fmt.Sprintf("%.1f", d*1e3)
				}
			case s.c.batch == 1 && s.c.prompt == 128:
				gap["p128"] = fmt.Sprintf("%.1f", d*1e3)
			case s.c.batch == 1 && s.c.prompt == 8192:
				gap["p8192"] = fmt.Sprintf("%.1f", d*1e3)
			}
		}
		all = append(all, per...)
		sort.Float64s(per)
		nb := float64(bMax.c.batch - 1)
		fmt.Printf("| %s | %s | %d | %d | %.0f | %.0f | %.0f | %s | %s | %s | %s | %.0f (to %d) | %.0f |\n", k.hw, k.model, k.tp, len(per), median(per)*1e6, per[0]*1e6, per[len(per)-1]*1e6,
			gap["b1"], gap["b64"], gap["p128"], gap["p8192"], (bMax.meas-b1.meas)/nb*1e6, bMax.c.batch, (bMax.eager.Seconds-b1.eager.Seconds)/nb*1e6)
	}
	fmt.Printf("\nAll token rows: per-layer cost to match, median %.0f us.\n", median(all)*1e6)
	// What a single additive per-layer cost, held fixed per GPU, leaves: the
	// value that zeroes the median signed error, and the spread after it.
	fmt.Println()
	fmt.Println("One additive per-layer cost per GPU, chosen on every token row to zero the median signed decode error (in-sample; the shape hw/llm rejects):")
	fmt.Println()
	fmt.Println("| GPU | per-layer cost (us) | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|---|")
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		t := filter(phaseOf(ss, "token"), func(s sample) bool { return s.c.hw == hw })
		errsAt := func(x float64) []float64 {
			var e []float64
			for _, s := range t {
				e = append(e, (s.eager.Seconds+x*float64(s.m.Layers))/s.meas-1)
			}
			return e
		}
		lo, hi := 0.0, 2e-3
		for i := 0; i < 60; i++ {
			mid := (lo + hi) / 2
			if median(errsAt(mid)) < 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		fmt.Printf("| %s | %.0f | %s |\n", hw, lo*1e6, statsOf(errsAt(lo)).cells())
	}
	fmt.Println()
}

func examples(ss []sample) {
	fmt.Println("Examples (ms; model parts: compute / memory / communication / overhead, graph mode for token rows):")
	fmt.Println()
	fmt.Println("| GPU | model | TP | phase | prompt x batch | ctx | measured | graph | eager | err graph | err eager | parts |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
	pick := []struct {
		hw, model, phase  string
		tp, prompt, batch int
	}{
		{"h100-80gb", "llama2-70b", "token", 8, 512, 1},
		{"h100-80gb", "llama2-70b", "token", 2, 512, 1},
		{"a100-80gb", "llama2-70b", "token", 4, 512, 64},
		{"a100-80gb", "bloom-176b", "token", 8, 512, 16},
		{"h100-80gb", "llama2-70b", "prompt", 8, 128, 1},
		{"a100-80gb", "llama2-70b", "prompt", 2, 8192, 1},
		{"h100-80gb", "bloom-176b", "prompt", 8, 512, 8},
		{"a100-80gb", "llama2-70b", "prompt", 4, 512, 16},
	}
	for _, p := range pick {
		for _, s := range ss {
			c := s.c
			if c.hw != p.hw || c.model != p.model || s.phase != p.phase || c.tp != p.tp || c.prompt != p.prompt || c.batch != p.batch {
				continue
			}
			if s.phase == "token" && c.outToks != 128 {
				continue
			}
			g := s.graph
			ctx := "-"
			if s.phase == "token" {
				ctx = strconv.Itoa(s.ctx)
			}
			fmt.Printf("| %s | %s | %d | %s | %d x %d | %s | %.1f | %.1f | %.1f | %+.0f%% | %+.0f%% | %.1f / %.1f / %.1f / %.1f |\n",
				c.hw, c.model, c.tp, s.phase, c.prompt, c.batch, ctx, s.meas*1e3, g.Seconds*1e3, s.eager.Seconds*1e3,
				100*s.errOf("graph"), 100*s.errOf("eager"), g.Compute*1e3, g.Memory*1e3, g.Communication*1e3, g.Overhead*1e3)
		}
	}
}

// hostFloor tests the other shape a host-side cost can have: the GPU
// waits for the host, so a decode takes max(layers x F, the eager model)
// rather than their sum, F being the host's time per layer. One F per
// machine (GPU type) is chosen to zero the median signed decode error; the
// prompt rows are then checked under the same floor, not fitted on.
func hostFloor(ss []sample) {
	fmt.Println("Decode per layer as measured, us (measured / layers; a host-bound step's time per layer), batch 1, prompt 512, 128 tokens asked:")
	fmt.Println()
	fmt.Println("| GPU | model | TP | measured / layers | eager model / layers |\n|---|---|---|---|---|")
	keys, m := groupsOf(ss)
	for _, k := range keys {
		for _, s := range m[k] {
			if s.phase == "token" && s.c.batch == 1 && s.c.prompt == 512 && s.c.outToks == 128 {
				L := float64(s.m.Layers)
				fmt.Printf("| %s | %s | %d | %.0f | %.0f |\n", k.hw, k.model, k.tp, s.meas/L*1e6, s.eager.Seconds/L*1e6)
			}
		}
	}
	fmt.Println()
	fmt.Println("Step = max(layers x F, eager model), one host floor F per GPU type chosen to zero the median signed decode error")
	fmt.Println("(in-sample, every token row; the held-out fit of the same shape with a per-sequence term follows); prompt rows under the same F:")
	fmt.Println()
	fmt.Println(head)
	floorOf := map[string]float64{}
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		t := filter(phaseOf(ss, "token"), func(s sample) bool { return s.c.hw == hw })
		lo, hi := 0.0, 2e-3
		for i := 0; i < 60; i++ {
			mid := (lo + hi) / 2
			if median(floorErrs(t, mid)) < 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		floorOf[hw] = lo
	}
	// rows prints a group's prompt and token rows under floor F.
	rows := func(hw, model, tp string, g []sample, F float64) {
		for _, phase := range []string{"prompt", "token"} {
			fmt.Printf("| %s | %s | %s | %s | floor %.0f us | %s |\n", hw, model, tp, phase, F*1e6, statsOf(floorErrs(phaseOf(g, phase), F)).cells())
		}
	}
	for _, k := range keys {
		rows(k.hw, k.model, strconv.Itoa(k.tp), m[k], floorOf[k.hw])
	}
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		rows(hw, "all", "-", filter(ss, func(s sample) bool { return s.c.hw == hw }), floorOf[hw])
	}
	fmt.Println()
}

func floorErrs(ss []sample, F float64) []float64 {
	var e []float64
	for _, s := range ss {
		e = append(e, math.Max(F*float64(s.m.Layers), s.eager.Seconds)/s.meas-1)
	}
	return e
}

// prefillRate reports the large prefills (>= 2048 tokens in the batch) as
// achieved BF16 throughput per GPU: the model's FLOPs over the measured
// and over the modelled time, as a share of the GPU's dense peak.
func prefillRate(ss []sample) {
	fmt.Println("Prefill of >= 2,048 tokens: FLOPs per GPU (hw/llm's count) over the time, as a share of the dense BF16 peak; median over rows:")
	fmt.Println()
	fmt.Println("| GPU | model | TP | rows | measured | model | signed median err |\n|---|---|---|---|---|---|---|")
	keys, m := groupsOf(ss)
	for _, k := range keys {
		var meas, mod, errs []float64
		for _, s := range phaseOf(m[k], "prompt") {
			if s.c.prompt*s.c.batch < 2048 {
				continue
			}
			var f float64
			for _, o := range s.graph.Ops {
				f += o.FLOPs * float64(o.Calls)
			}
			g, _ := gpu.Lookup(s.c.hw)
			meas = append(meas, f/s.meas/g.PeakDenseBF16)
			mod = append(mod, f/s.graph.Seconds/g.PeakDenseBF16)
			errs = append(errs, s.errOf("graph"))
		}
		if len(meas) == 0 {
			continue
		}
		fmt.Printf("| %s | %s | %d | %d | %.0f%% | %.0f%% | %+.1f%% |\n", k.hw, k.model, k.tp, len(meas), 100*median(meas), 100*median(mod), 100*median(errs))
	}
	fmt.Println()
}

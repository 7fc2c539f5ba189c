package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// The -distserve mode: hw/llm's step time against a second engine's
// measured steps, as DistServe (Zhong et al., OSDI'24; github.com/LLMServe/
// DistServe, Apache-2.0) publishes them: not the points but its least-squares
// surfaces over them (evaluation/1-fit-time-usage/main.py, relative error
// minimised), one per model and TP degree on an A100-80GB:
//
//	prefill (ms) = a + b x sum of prompt tokens + c x sum of squared prompt lengths
//	decode  (ms) = a + b x sum of context tokens + c x batch size (another set from batch 95)
//
// in simdistserve/estimators/profile_data/profiler-a100-80g.{vllm,
// distserve}.json. Read them at DistServe's commit 87143bf, where they are
// the fits as made: its commit 4c68ed9 multiplied them by hand (its
// estimator's "fudge factors" for overhead, x1.1 to x1.4), and 79659a4
// added a copy of vLLM's OPT-66B TP 8 curve to the DistServe engine's file.
// The surfaces are read only on the grid DistServe measured (dsBatches),
// so the comparison is with DistServe's fit of its measurements, whose own
// error it does not publish.

// dsCoeffs is one (model, TP) entry of the file.
type dsCoeffs struct {
	Threshold int        `json:"decoding_large_small_bs_threshold"`
	Prefill   []float64  `json:"prefill"`
	DecSmall  []float64  `json:"decoding_smallbs"`
	DecLarge  []float64  `json:"decoding_largebs"`
	model     string     // the file's model name
	tp        int        // TP degree
	m         *llm.Model // nil: not a model this bench knows
}

// opt66B and opt175B are the OPT models the catalog lacks, from their
// published config.json files (facebook/opt-66b: 64 layers, hidden 9,216,
// 72 heads, FFN 36,864; facebook/opt-175b as the OPT paper's table 1: 96
// layers, hidden 12,288, 96 heads, FFN 49,152; both vocabulary 50,272,
// ReLU FFN, tied embeddings, FP16), as the catalog's opt-13b leaves out
// biases and learned positions.
var (
	opt66B = llm.Model{Name: "opt-66b", Source: "facebook/opt-66b config.json, built in bench/stepval",
		Layers: 64, Hidden: 9216, Heads: 72, KVHeads: 72, HeadDim: 128, Intermediate: 36864,
		Vocab: 50272, DTypeBytes: 2, MaxContext: 2048, TiedEmbeddings: true}
	opt175B = llm.Model{Name: "opt-175b", Source: "OPT paper table 1, built in bench/stepval",
		Layers: 96, Hidden: 12288, Heads: 96, KVHeads: 96, HeadDim: 128, Intermediate: 49152,
		Vocab: 50272, DTypeBytes: 2, MaxContext: 2048, TiedEmbeddings: true}
)

func dsModel(name string) (*llm.Model, error) {
	switch name {
	case "facebook/opt-13b":
		m, err := llm.Lookup("opt-13b")
		return &m, err
	case "facebook/opt-66b":
		m := opt66B
		return &m, nil
	case "facebook/opt-175b":
		m := opt175B
		return &m, nil
	}
	return nil, nil
}

// readDistServe parses a DistServe profile: model -> TP -> coefficients,
// each set exactly three numbers. Entries are returned sorted by model and
// TP; models this bench cannot build keep m nil and are listed as skipped.
func readDistServe(r io.Reader, name string) ([]dsCoeffs, error) {
	var raw map[string]map[string]dsCoeffs
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w (a DistServe profile: model -> TP -> {prefill, decoding_smallbs, decoding_largebs, decoding_large_small_bs_threshold})", name, err)
	}
	var out []dsCoeffs
	for model, tps := range raw {
		m, err := dsModel(model)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, model, err)
		}
		for tpS, c := range tps {
			tp, err := strconv.Atoi(tpS)
			if err != nil || tp < 1 || tp > 8 {
				return nil, fmt.Errorf("%s: %s: TP %q is not a degree from 1 to 8", name, model, tpS)
			}
			for key, v := range map[string][]float64{"prefill": c.Prefill, "decoding_smallbs": c.DecSmall, "decoding_largebs": c.DecLarge} {
				if len(v) != 3 {
					return nil, fmt.Errorf("%s: %s TP %d: %s has %d coefficients, want 3 (a, b, c)", name, model, tp, key, len(v))
				}
			}
			if c.Threshold < 1 {
				return nil, fmt.Errorf("%s: %s TP %d: decoding_large_small_bs_threshold %d must be a batch size >= 1", name, model, tp, c.Threshold)
			}
			c.model, c.tp, c.m = model, tp, m
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no model in the file", name)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].model != out[j].model {
			return out[i].model < out[j].model
		}
		return out[i].tp < out[j].tp
	})
	return out, nil
}

// dsPoint is one grid point: a prefill of batch prompts of length tokens,
// or a decode of batch requests at context tokens.
type dsPoint struct {
	c             *dsCoeffs
	phase         string // "prefill" or "decode"
	batch, tokens int
	ref           float64 // s, DistServe's surface
	eager         llm.StepTime
}

// dsBatches and dsLengths are the grid DistServe measured its surfaces on
// (evaluation/0-test-single-forward-performance/main.py, get_profiling_params:
// identical requests of input_len tokens, 16 output tokens), each (model,
// TP) up to its token cap: batch x input_len rounded up to 16 <= the cap.
var (
	dsBatches = []int{1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192}
	dsLengths = []int{4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 284, 512, 768, 1024, 1536, 2020}
	dsCaps    = map[string]int{
		"facebook/opt-13b/1": 49152, "facebook/opt-13b/2": 98304, "facebook/opt-13b/4": 250000,
		"facebook/opt-66b/2": 8192, "facebook/opt-66b/3": 36864, "facebook/opt-66b/4": 65000,
	}
)

// surface is DistServe's estimator (simdistserve/estimators/
// time_estimator.py) without its fudge factors: a decode batch at or past
// the threshold takes the large-batch set.
func (c *dsCoeffs) surface(phase string, batch, tokens int) float64 {
	b, n := float64(batch), float64(tokens)
	if phase == "prefill" {
		return (c.Prefill[0] + c.Prefill[1]*b*n + c.Prefill[2]*b*n*n) / 1e3
	}
	k := c.DecSmall
	if batch >= c.Threshold {
		k = c.DecLarge
	}
	return (k[0] + k[1]*b*n + k[2]*b) / 1e3
}

// dsStep is llm.Step on an A100-80GB with the fitted efficiencies, eager
// (the vLLM DistServe compared with captured no CUDA graphs) and host h.
func dsStep(p dsPoint, h llm.HostDispatch) (llm.StepTime, error) {
	g, err := gpu.Lookup("a100-80gb")
	if err != nil {
		return llm.StepTime{}, err
	}
	eff, err := llm.FittedEfficiency(g)
	if err != nil {
		return llm.StepTime{}, err
	}
	eff.GraphBatchSizes = nil
	eff.Host = h
	var b llm.Batch
	for range p.batch {
		if p.phase == "prefill" {
			b.Prefill = append(b.Prefill, llm.Chunk{Tokens: p.tokens})
		} else {
			// The measured decode is the mean of 15 steps at contexts
			// input_len + 1 to + 15; decode time is linear in the context.
			b.Decode = append(b.Decode, p.tokens+8)
		}
	}
	return llm.Step(*p.c.m, llm.Placement{GPU: g, TP: p.c.tp}, b, eff)
}

// splitwiseA100Host is the host term this bench fits on SplitwiseSim's
// DGX-A100 Llama-2-70B TP 4 decode rows (RESULTS.md, "Host dispatch"),
// typed from that run: here it is held out on another engine and model.
var splitwiseA100Host = llm.HostDispatch{PerLayer: 547.5e-6, PerSequence: 390e-6}

// dsInFit is this file's own fit set for the host term: the smallest
// model's decode at TP 1 (one model, one TP, one phase), as the
// SplitwiseSim fit takes one model's decode at one TP.
func dsInFit(p dsPoint) bool {
	return p.phase == "decode" && p.c.model == "facebook/opt-13b" && p.c.tp == 1
}

func runDistServe(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cs, err := readDistServe(f, path)
	if err != nil {
		return err
	}
	var ps []dsPoint
	var skipped []string
	for i := range cs {
		c := &cs[i]
		if c.m == nil {
			skipped = append(skipped, fmt.Sprintf("%s TP %d (no model built for it)", c.model, c.tp))
			continue
		}
		if dsCaps[fmt.Sprintf("%s/%d", c.model, c.tp)] == 0 {
			// At DistServe's HEAD, opt-66b TP 8 is a copy of vLLM's curve
			// (its commit 79659a4), not a profiled configuration.
			skipped = append(skipped, fmt.Sprintf("%s TP %d (not in DistServe's profiling list)", c.model, c.tp))
			c.m = nil
			continue
		}
		for _, phase := range []string{"prefill", "decode"} {
			for _, b := range dsBatches {
				for _, n := range dsLengths {
					if b*((n+15)/16*16) > dsCaps[fmt.Sprintf("%s/%d", c.model, c.tp)] {
						continue
					}
					p := dsPoint{c: c, phase: phase, batch: b, tokens: n, ref: c.surface(phase, b, n)}
					if p.ref <= 0 {
						return fmt.Errorf("%s: %s TP %d %s at batch %d x %d tokens: the surface gives %.3f ms", path, c.model, c.tp, phase, b, n, p.ref*1e3)
					}
					if p.eager, err = dsStep(p, llm.HostDispatch{}); err != nil {
						return fmt.Errorf("%s TP %d %s: %w", c.model, c.tp, phase, err)
					}
					ps = append(ps, p)
				}
			}
		}
	}
	fmt.Printf("%s: %d (model, TP) surfaces, %d grid points (batches %v x lengths %v, each phase)\n", path, len(cs)-len(skipped), len(ps), dsBatches, dsLengths)
	if len(skipped) > 0 {
		fmt.Printf("skipped: %v\n", skipped)
	}
	fmt.Println()

	var fit []hostPoint
	for _, p := range ps {
		if dsInFit(p) {
			fit = append(fit, hostPoint{gpu: p.eager.Seconds, meas: p.ref, layers: p.c.m.Layers, seqs: p.batch})
		}
	}
	own, loss := fitHostPoints(fit)
	fmt.Printf("Host term fitted here on OPT-13B's TP 1 decode (%d points): PerLayer %.1f us, PerSequence %.1f us (loss %.5f);\n",
		len(fit), own.PerLayer*1e6, own.PerSequence*1e6, loss)
	fmt.Printf("SplitwiseSim's DGX-A100 fit, held out here: PerLayer %.1f us, PerSequence %.1f us.\n\n",
		splitwiseA100Host.PerLayer*1e6, splitwiseA100Host.PerSequence*1e6)

	modes := []struct {
		name string
		h    llm.HostDispatch
	}{{"profiles alone", llm.HostDispatch{}}, {"SplitwiseSim's A100 host", splitwiseA100Host}, {"host fitted here", own}}
	errs := make([][]float64, len(modes)) // per mode, per point
	for mi, mode := range modes {
		for _, p := range ps {
			st, err := dsStep(p, mode.h)
			if err != nil {
				return err
			}
			errs[mi] = append(errs[mi], st.Seconds/p.ref-1)
		}
	}
	pick := func(mi int, keep func(dsPoint) bool) []float64 {
		var out []float64
		for i, p := range ps {
			if keep(p) {
				out = append(out, errs[mi][i])
			}
		}
		return out
	}
	fmt.Println("Error = model / DistServe's surface - 1 (negative: the model is faster). Per model, TP and phase:")
	fmt.Println()
	fmt.Print("| model | TP | phase | points |")
	for _, mode := range modes {
		fmt.Printf(" %s: median, max, signed |", mode.name)
	}
	fmt.Print("\n|---|---|---|---|")
	for range modes {
		fmt.Print("---|")
	}
	fmt.Println()
	for i := range cs {
		c := &cs[i]
		if c.m == nil {
			continue
		}
		for _, phase := range []string{"prefill", "decode"} {
			keep := func(p dsPoint) bool { return p.c == c && p.phase == phase }
			fmt.Printf("| %s | %d | %s%s | %d |", c.m.Name, c.tp, phase, map[bool]string{true: " (fit)"}[c.model == "facebook/opt-13b" && c.tp == 1 && phase == "decode"], len(pick(0, keep)))
			for mi := range modes {
				s := statsOf(pick(mi, keep))
				fmt.Printf(" %.1f%%, %.1f%%, %+.1f%% |", 100*s.median, 100*s.max, 100*s.signedMed)
			}
			fmt.Println()
		}
	}
	fmt.Println()
	fmt.Println("Summary, per mode (the host fitted here leaves its fit set out; the other two modes fit nothing here):")
	fmt.Println()
	fmt.Println("| set | mode | points | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|---|")
	for _, set := range []struct {
		name string
		keep func(dsPoint) bool
	}{
		{"decode", func(p dsPoint) bool { return p.phase == "decode" }},
		{"decode, batch < 95", func(p dsPoint) bool { return p.phase == "decode" && p.batch < p.c.Threshold }},
		{"prefill", func(p dsPoint) bool { return p.phase == "prefill" }},
		{"prefill, 512 tokens or more in the batch", func(p dsPoint) bool { return p.phase == "prefill" && p.batch*p.tokens >= 512 }},
		{"prefill, under 512 tokens in the batch", func(p dsPoint) bool { return p.phase == "prefill" && p.batch*p.tokens < 512 }},
	} {
		for mi, mode := range modes {
			keep := set.keep
			if mi == 2 {
				keep = func(p dsPoint) bool { return set.keep(p) && !dsInFit(p) }
			}
			fmt.Printf("| %s | %s | %s |\n", set.name, mode.name, statsOf(pick(mi, keep)).cells())
		}
	}
	fmt.Println()
	fmt.Println("Points past 25% with the profiles alone:")
	fmt.Println()
	n := 0
	for i, p := range ps {
		if e := errs[0][i]; e > 0.25 || e < -0.25 {
			fmt.Printf("- %s TP %d %s, %d x %d tokens: %.2f ms against %.2f (%+.1f%%)\n", p.c.m.Name, p.c.tp, p.phase, p.batch, p.tokens, p.eager.Seconds*1e3, p.ref*1e3, 100*e)
			n++
		}
	}
	if n == 0 {
		fmt.Println("- none")
	}
	fmt.Println()
	return nil
}

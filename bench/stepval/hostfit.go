package main

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// The host-dispatch fit: llm.Efficiency.Host (a step takes the longer of
// the GPU's time and the host's: PerLayer x layers for an eager step plus
// PerSequence x sequences) fitted per machine on one part of this data and
// held out on the rest.
//
// Fit set: Llama-2-70B's decode rows at TP 4, per GPU type (19 rows each):
// one model, one TP degree, one phase. Held out: the same model's decode
// at TP 2 and TP 8 (other TP degrees), BLOOM-176B's decode at TP 8 (another
// model), and every prompt row (another phase). The two GPU types are
// fitted apart because the floor belongs to the host (DGX-A100 and DGX-H100
// have different CPUs), not to anything hw/llm knows of the GPU.
func inFitSet(s sample) bool {
	return s.phase == "token" && s.c.model == "llama2-70b" && s.c.tp == 4
}

// hostStep is llm.Step's time under host h: max(GPU, host), the GPU's
// time being the eager model's. The fit uses it (llm.Step per grid point
// would take minutes); the tables call llm.Step itself, and a row where
// the two differ stops the bench.
func hostStep(s sample, h llm.HostDispatch) float64 { return hostPointOf(s).step(h) }

// hostPoint is one step for the host fit: the eager GPU time, the
// measured time, and what the host's time is counted in.
type hostPoint struct {
	gpu, meas    float64 // s
	layers, seqs int
}

func hostPointOf(s sample) hostPoint {
	return hostPoint{gpu: s.eager.Seconds, meas: s.meas, layers: s.m.Layers, seqs: s.c.batch}
}

// step is the step's time under host h: max(GPU, host), eager.
func (p hostPoint) step(h llm.HostDispatch) float64 {
	return math.Max(p.gpu, h.Seconds(p.layers, p.seqs, false))
}

// fitHost fits the host term on SplitwiseSim rows.
func fitHost(fit []sample) (llm.HostDispatch, float64) {
	ps := make([]hostPoint, len(fit))
	for i, s := range fit {
		ps[i] = hostPointOf(s)
	}
	return fitHostPoints(ps)
}

// fitHostPoints minimises the mean squared log error of max(GPU, host)
// over ps on a grid of 2.5 us in both terms, 0 to 1 ms.
func fitHostPoints(ps []hostPoint) (llm.HostDispatch, float64) {
	best, bestLoss := llm.HostDispatch{}, math.Inf(1)
	for i := 0; i <= 400; i++ {
		for j := 0; j <= 400; j++ {
			h := llm.HostDispatch{PerLayer: float64(i) * 2.5e-6, PerSequence: float64(j) * 2.5e-6}
			var loss float64
			for _, p := range ps {
				d := math.Log(p.step(h) / p.meas)
				loss += d * d
			}
			if loss /= float64(len(ps)); loss < bestLoss {
				best, bestLoss = h, loss
			}
		}
	}
	return best, bestLoss
}

func hostDispatch(ss []sample) error {
	fmt.Println("Host dispatch (hw/llm Efficiency.Host): step = max(GPU time, layers x PerLayer + sequences x PerSequence),")
	fmt.Println("decodes eager; fitted per GPU type on Llama-2-70B's TP 4 decode rows (mean squared log error, 2.5 us grid),")
	fmt.Println("every other row held out:")
	fmt.Println()
	hosts := map[string]llm.HostDispatch{}
	for _, hw := range []string{"a100-80gb", "h100-80gb"} {
		fit := filter(ss, func(s sample) bool { return s.c.hw == hw && inFitSet(s) })
		h, loss := fitHost(fit)
		hosts[hw] = h
		fmt.Printf("- %s: PerLayer %.1f us, PerSequence %.1f us (%d rows, loss %.5f)\n", hw, h.PerLayer*1e6, h.PerSequence*1e6, len(fit), loss)
	}
	fmt.Println()
	// Each row through llm.Step itself.
	errOf := map[int]float64{}
	for i, s := range ss {
		g, err := gpu.Lookup(s.c.hw)
		if err != nil {
			return err
		}
		eff, err := llm.FittedEfficiency(g)
		if err != nil {
			return err
		}
		eff.GraphBatchSizes = nil
		eff.Host = hosts[s.c.hw]
		b := llm.Batch{}
		for k := 0; k < s.c.batch; k++ {
			if s.phase == "prompt" {
				b.Prefill = append(b.Prefill, llm.Chunk{Tokens: s.c.prompt})
			} else {
				b.Decode = append(b.Decode, s.ctx)
			}
		}
		st, err := llm.Step(s.m, llm.Placement{GPU: g, TP: s.c.tp}, b, eff)
		if err != nil {
			return fmt.Errorf("%s %s TP%d %s: %w", s.c.model, s.c.hw, s.c.tp, s.phase, err)
		}
		if want := hostStep(s, eff.Host); math.Abs(st.Seconds-want) > 1e-9*want {
			return fmt.Errorf("%s %s TP%d %s: llm.Step %.6f ms, the fit's formula %.6f ms: the fit does not describe hw/llm", s.c.model, s.c.hw, s.c.tp, s.phase, st.Seconds*1e3, want*1e3)
		}
		errOf[i] = st.Seconds/s.meas - 1
	}
	errs := func(keep func(sample) bool) []float64 {
		var out []float64
		for i, s := range ss {
			if keep(s) {
				out = append(out, errOf[i])
			}
		}
		return out
	}
	fmt.Println("| GPU | model | TP | phase | set | rows | median abs err | p90 | max | signed median | eager, no host (median, max) |\n|---|---|---|---|---|---|---|---|---|---|---|")
	keys, m := groupsOf(ss)
	for _, k := range keys {
		for _, phase := range []string{"prompt", "token"} {
			g := phaseOf(m[k], phase)
			if len(g) == 0 {
				continue
			}
			set := "held out"
			if inFitSet(g[0]) {
				set = "fit"
			}
			e := errs(func(s sample) bool {
				return s.c.hw == k.hw && s.c.model == k.model && s.c.tp == k.tp && s.phase == phase
			})
			base := statsOf(errsOf(g, "eager"))
			fmt.Printf("| %s | %s | %d | %s | %s | %s | %.1f%%, %.1f%% |\n", k.hw, k.model, k.tp, phase, set, statsOf(e).cells(), 100*base.median, 100*base.max)
		}
	}
	fmt.Println()
	fmt.Println("| held-out set | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|")
	for _, row := range []struct {
		name string
		keep func(sample) bool
	}{
		{"decode, Llama-2-70B TP 2 and 8", func(s sample) bool { return s.phase == "token" && s.c.model == "llama2-70b" && s.c.tp != 4 }},
		{"decode, BLOOM-176B TP 8", func(s sample) bool { return s.phase == "token" && s.c.model == "bloom-176b" }},
		{"decode, all held out", func(s sample) bool { return s.phase == "token" && !inFitSet(s) }},
		{"prompt, all", func(s sample) bool { return s.phase == "prompt" }},
		{"prompt, batch 1", func(s sample) bool { return s.phase == "prompt" && s.c.batch == 1 }},
		{"prompt, batch >= 2", func(s sample) bool { return s.phase == "prompt" && s.c.batch >= 2 }},
	} {
		fmt.Printf("| %s | %s |\n", row.name, statsOf(errs(row.keep)).cells())
	}
	fmt.Println()
	return nil
}

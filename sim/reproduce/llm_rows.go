package reproduce

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/llmcap"
)

// The LLM serving rows have no published figure to meet: no paper
// reports a measured run of these setups (a model on a GPU under these
// traces with vLLM's defaults). They are rows so that the headline each
// scenario gives is in the table, checked against the docs like every
// other, with the verdict saying what it rests on ("model only").
const (
	llmPaper   = "none published for this setup"
	llmVerdict = "model only"
	llmNote    = "no measured run of this setup is published; what the step model is validated against (Vidur's operator profiles, held out) and where it differs from BLIS is in llm.md"
)

// llmRow is one scenario's serving headline: TTFT and TPOT at p90, SLO
// attainment, goodput and output throughput. A trace replays as recorded
// (one seed), so its figures have no CI.
func llmRow(name string) func(r *Runner, _ bool) ([]Figure, error) {
	return func(r *Runner, _ bool) ([]Figure, error) {
		out, err := r.scenario(name)
		if err != nil {
			return nil, err
		}
		s := out.Summary.LLM
		if s == nil {
			return nil, fmt.Errorf("%s: the run has no llm result", name)
		}
		est := func(key, label string, e sim.Est, scale float64, unit string, dec int) Figure {
			f := Figure{Key: key, Label: label, Value: e.Mean * scale, Unit: unit, Decimals: dec, Seeds: s.Seeds}
			if e.CI95 != nil {
				f.CI95 = ci(*e.CI95 * scale)
			}
			return f
		}
		res := s.Result
		return []Figure{
			est("ttft_p90_ms", "TTFT p90", res.TTFT.P90, 1e3, " ms", 0),
			est("tpot_p90_ms", "TPOT p90", res.TPOT.P90, 1e3, " ms", 1),
			est("slo_attainment", "SLO attainment", res.SLOAttainment, 100, "%", 1),
			est("goodput", "goodput", res.Goodput, 1, "/s", 2),
			est("output_tokens_per_s", "output tokens/s", res.OutputTokensPerSec, 1, "/s", 0),
			est("peak_kv_used", "peak KV use", res.PeakKVUsed, 100, "%", 1),
		}, nil
	}
}

func judgeLLM(fs map[string]Figure) (string, string, string) {
	return fmt.Sprintf("TTFT p90 %s, TPOT p90 %s, %s within the SLO, %s output tokens, peak KV %s",
		fs["ttft_p90_ms"].Text(), fs["tpot_p90_ms"].Text(), fs["slo_attainment"].Text(), fs["output_tokens_per_s"].Text(), fs["peak_kv_used"].Text()), llmVerdict, llmNote
}

// runLLMCapacity runs llm/capacity's configuration search (its
// llm.capacity section) and gives, per rate, the cheapest
// configuration's GPUs and price per hour.
func runLLMCapacity(r *Runner, _ bool) ([]Figure, error) {
	const name = "llm/capacity"
	load := r.Load
	if load == nil {
		load = LoadBuiltin
	}
	sc, err := load(name, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if sc.LLM == nil || !sc.LLM.Capacity.Searches() {
		return nil, fmt.Errorf("%s: no llm.capacity search in the scenario", name)
	}
	cfg := *sc.LLM
	cc := cfg.Capacity
	sp := llmcap.Space{TPs: cc.TP, MaxGPUs: cc.MaxGPUs}
	for _, n := range cc.GPUTypes {
		g, err := gpu.Lookup(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		sp.GPUs = append(sp.GPUs, g)
	}
	for _, rt := range cc.Rates {
		sp.Rates = append(sp.Rates, float64(rt))
	}
	ts, err := llmcap.SearchConfigs(cfg, sc.Seed, sp, float64(cfg.Workload.Synthetic.Rate), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var figs []Figure
	for _, t := range ts {
		rate := strings.TrimSuffix(perSec(t.Rate), "/s")
		c, ok := t.Cheapest()
		if !ok {
			return nil, fmt.Errorf("%s: no priced configuration meets the SLO at %s/s within %d GPUs", name, rate, cc.MaxGPUs)
		}
		label := fmt.Sprintf("%s/s: %d x %s tp %d", rate, c.Replicas, c.GPU, c.TP)
		if c.PriceBasis != "" {
			label += ", " + c.PriceBasis + " price"
		}
		figs = append(figs,
			Figure{Key: "gpus_" + rate, Label: label, Value: float64(c.Replicas * c.TP), Unit: " GPUs", Seeds: cfg.Seeds},
			Figure{Key: "cost_" + rate, Label: label, Value: c.Cost(), Unit: " $/h", Decimals: 2, Seeds: cfg.Seeds})
	}
	return figs, nil
}

func perSec(r float64) string { return fmt.Sprintf("%g/s", r) }

func judgeLLMCapacity(fs map[string]Figure) (string, string, string) {
	var parts []string
	for _, k := range sortedKeys(fs, "cost_") {
		c := fs[k]
		parts = append(parts, c.Label+" ("+c.Text()+")")
	}
	return "cheapest: " + strings.Join(parts, "; "), llmVerdict,
		"A100-80GB, H100-80GB and H200-141GB at TP 1 and 2, the fewest replicas whose mean SLO attainment over 3 seeds reaches 90%, priced per GPU-hour (hw/gpu: the H200's is a capacity-block price); no published search of this setup"
}

// sortedKeys are the keys of fs starting with prefix, ordered by the
// number after it (cost_5 before cost_20).
func sortedKeys(fs map[string]Figure, prefix string) []string {
	var ks []string
	for k := range fs {
		if strings.HasPrefix(k, prefix) {
			ks = append(ks, k)
		}
	}
	num := func(k string) float64 {
		var v float64
		fmt.Sscan(strings.TrimPrefix(k, prefix), &v)
		return v
	}
	sort.Slice(ks, func(i, j int) bool { return num(ks[i]) < num(ks[j]) })
	return ks
}

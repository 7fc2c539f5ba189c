package reproduce

import (
	"fmt"
	"math"
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
	sp := llmcap.Space{TPs: cc.TP, MaxGPUs: cc.MaxGPUs, MIG: cc.MIG}
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
		if c.MIG != "" {
			label = fmt.Sprintf("%s/s: %d x %s %s", rate, c.Replicas, c.GPU, c.MIG)
		}
		if c.PriceBasis != "" {
			label += ", " + c.PriceBasis + " price"
		}
		figs = append(figs,
			Figure{Key: "gpus_" + rate, Label: label, Value: c.GPUs(), Unit: " GPUs", Decimals: 2, Seeds: cfg.Seeds},
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

// Anchors of LLM serving on the data paths (issue 55): a published
// figure each, read through secondary summaries where the paper was not
// at hand (the Source says so).

// splitwiseA100 is llm/splitwise on DGX-A100s: A100-80GB GPUs and a
// ConnectX-6 (200 Gb/s) for each.
var splitwiseA100 = []string{"llm.disagg.prefill.gpu=a100-80gb", "llm.disagg.decode.gpu=a100-80gb", "llm.disagg.nic=connectx6"}

// runSplitwise runs llm/splitwise layerwise on H100 and A100 servers and
// serialized on H100: the transfer left after the first token (ms) and,
// overlapped and serialized, its share of the mean end-to-end time.
func runSplitwise(r *Runner, _ bool) ([]Figure, error) {
	run := func(sets ...string) (*sim.LLMSummary, error) {
		out, err := r.scenario("llm/splitwise", sets...)
		if err != nil {
			return nil, err
		}
		if out.Summary.LLM == nil || out.Summary.LLM.Disagg == nil {
			return nil, fmt.Errorf("llm/splitwise: the run has no disaggregation result")
		}
		return out.Summary.LLM, nil
	}
	h, err := run()
	if err != nil {
		return nil, err
	}
	a, err := run(splitwiseA100...)
	if err != nil {
		return nil, err
	}
	ser, err := run("llm.disagg.transfer=after")
	if err != nil {
		return nil, err
	}
	share := func(s *sim.LLMSummary) float64 { return 100 * s.Disagg.TailMeanS / s.Result.E2E.Mean.Mean }
	return []Figure{
		{Key: "tail_h100_ms", Label: "H100", Value: 1e3 * h.Disagg.TailMeanS, Unit: " ms", Decimals: 2, Seeds: 1},
		{Key: "tail_a100_ms", Label: "A100", Value: 1e3 * a.Disagg.TailMeanS, Unit: " ms", Decimals: 2, Seeds: 1},
		{Key: "share_overlapped", Label: "overlapped", Value: share(h), Unit: "%", Decimals: 2, Seeds: 1},
		{Key: "share_serialized", Label: "serialized", Value: share(ser), Unit: "%", Decimals: 2, Seeds: 1},
		{Key: "serialized_ms", Label: "serialized transfer", Value: 1e3 * ser.Disagg.TailMeanS, Unit: " ms", Decimals: 1, Seeds: 1},
	}, nil
}

func judgeSplitwise(fs map[string]Figure) (string, string, string) {
	h, a := fs["tail_h100_ms"], fs["tail_a100_ms"]
	return fmt.Sprintf("left after the first token: %s (H100), %s (A100); of end-to-end time %s overlapped, %s serialized (%s)",
			h.Text(), a.Text(), fs["share_overlapped"].Text(), fs["share_serialized"].Text(), fs["serialized_ms"].Text()),
		against(h, 5),
		"layer by layer, the model hides all but the last layer's bytes (1/80 of the KV at 8 x 400 Gb/s: microseconds) and the posting work behind the prompt's step; the published milliseconds include per-layer synchronisation and interference with the prompt's kernels, which the model does not charge. Serialized, the transfer is bound by posting 11,680 RDMA writes from one thread (0.8 us each, an estimate), not by the wire; one seed's transfers over the mean end-to-end time of 3"
}

// runBlink runs llm/blink (a saturated H100, control plane on the host,
// serial) idle and at 80% and 95% host load, and on the SmartNIC: the
// throughput kept under load and the SmartNIC's over the loaded host.
func runBlink(r *Runner, _ bool) ([]Figure, error) {
	tput := func(sets ...string) (sim.Est, int, error) {
		out, err := r.scenario("llm/blink", sets...)
		if err != nil {
			return sim.Est{}, 0, err
		}
		if out.Summary.LLM == nil {
			return sim.Est{}, 0, fmt.Errorf("llm/blink: the run has no llm result")
		}
		return out.Summary.LLM.Result.OutputTokensPerSec, out.Summary.LLM.Seeds, nil
	}
	idle, seeds, err := tput()
	if err != nil {
		return nil, err
	}
	var figs []Figure
	for _, load := range []string{"80", "95"} {
		e, _, err := tput("llm.host_load=" + load + "%")
		if err != nil {
			return nil, err
		}
		figs = append(figs, ratioFig("kept_"+load, load+"% load", e, idle, 100, "%", seeds))
	}
	nic, _, err := tput("llm.control_plane.placement=smartnic")
	if err != nil {
		return nil, err
	}
	loaded, _, err := tput("llm.host_load=95%")
	if err != nil {
		return nil, err
	}
	figs = append(figs, ratioFig("smartnic_over_loaded", "SmartNIC over the host at 95%", nic, loaded, 1, "x", seeds))
	figs = append(figs, ratioFig("smartnic_over_idle", "SmartNIC over the idle host", nic, idle, 1, "x", seeds))
	return figs, nil
}

// ratioFig is a/b (times scale) with the CI of a ratio of two
// independent means: relative half-widths added in quadrature.
func ratioFig(key, label string, a, b sim.Est, scale float64, unit string, seeds int) Figure {
	v := a.Mean / b.Mean
	f := Figure{Key: key, Label: label, Value: scale * v, Unit: unit, Decimals: 1, Seeds: seeds}
	if unit == "x" {
		f.Decimals = 2
	}
	if a.CI95 != nil && b.CI95 != nil {
		rel := math.Hypot(*a.CI95/a.Mean, *b.CI95/b.Mean)
		f.CI95 = ci(scale * v * rel)
	}
	return f
}

func judgeBlink(fs map[string]Figure) (string, string, string) {
	k80, k95 := fs["kept_80"], fs["kept_95"]
	// The published effect is the loss: 46-72% of the throughput; ours
	// is judged against its smaller end.
	loss := k95
	loss.Value, loss.Unit = 100-k95.Value, "%"
	return fmt.Sprintf("kept %s at 80%% host load, %s at 95%%; SmartNIC %s the loaded host's, %s the idle host's", k80.Text(), k95.Text(), fs["smartnic_over_loaded"].Text(), fs["smartnic_over_idle"].Text()),
		against(loss, 46),
		"Llama-3.1-8B on a saturated H100, vLLM v0-style serial engine, the control plane's CPU parts estimates (llm.md); host load by the data-path section's per-core model, which stretches CPU work at most 2.2x: the published baselines lose more, so their interference is heavier than this model's at any load it allows"
}

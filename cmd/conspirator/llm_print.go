package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim"
)

// printLLM prints the llm section: what the plan resolved, then TTFT,
// TPOT and E2E (mean, p50, p90, p99), throughput, goodput and SLO
// attainment, preemptions; means over the seeds ± the 95% CI where the
// workload was drawn per seed.
func printLLM(w io.Writer, s *sim.Summary) {
	l := s.LLM
	if l == nil {
		return
	}
	where := l.GPU
	if l.MIG != "" {
		where += " slice " + l.MIG
	}
	fmt.Fprintf(w, "\nllm: %s (%.2fB parameters, context %d) on %d x %s, tp %d: %d %s, %s; %.1f GB of weights per GPU; KV cache %d blocks of %d tokens = %d tokens per replica\n",
		l.Model, float64(l.Params)/1e9, l.MaxContext, l.GPUs, where, l.TP, l.Replicas, map[bool]string{true: "replica", false: "replicas"}[l.Replicas == 1], l.Scheduler, l.WeightsGBPerGPU, l.KVBlocks, l.BlockSize, l.KVTokens)
	fmt.Fprintf(w, "workload: %s, %d requests", l.Workload, l.Requests)
	if l.Seeds > 1 {
		fmt.Fprintf(w, "; means over %d seeds (%d .. %d; each its own draw), ± the 95%% CI", l.Seeds, s.Seed, s.Seed+uint64(l.Seeds)-1)
		if c := reports.FewSeedsCaveat(l.Seeds); c != "" {
			fmt.Fprint(w, " "+c)
		}
	}
	fmt.Fprintln(w)
	r := l.Result
	est := func(e sim.Est, scale float64, format string) string {
		out := fmt.Sprintf(format, e.Mean*scale)
		if e.CI95 != nil {
			out += " ± " + fmt.Sprintf(format, *e.CI95*scale)
		}
		return out
	}
	rows := [][]string{{"latency", "mean ms", "p50 ms", "p90 ms", "p99 ms"}}
	for _, q := range []struct {
		name string
		v    sim.LLMQuantiles
	}{{"TTFT", r.TTFT}, {"TPOT", r.TPOT}, {"E2E", r.E2E}, {"queue", r.Queue}} {
		rows = append(rows, []string{q.name, est(q.v.Mean, 1e3, "%.1f"), est(q.v.P50, 1e3, "%.1f"), est(q.v.P90, 1e3, "%.1f"), est(q.v.P99, 1e3, "%.1f")})
	}
	printTable(w, rows)
	verdict := "met"
	if !l.SLOMet {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "throughput %s requests/s, %s output tokens/s, %s tokens/s; completed %s, rejected %s\n",
		est(r.RequestsPerSec, 1, "%.2f"), est(r.OutputTokensPerSec, 1, "%.0f"), est(r.TokensPerSec, 1, "%.0f"), est(r.Completed, 1, "%.0f"), est(r.Rejected, 1, "%.0f"))
	fmt.Fprintf(w, "SLO TTFT <= %s and TPOT <= %s: goodput %s requests/s, attainment %s of all requests, refused ones counted as misses (%s: target %.0f%%)\n",
		secText(l.SLO.TTFTS), secText(l.SLO.TPOTS), est(r.Goodput, 1, "%.2f"), est(r.SLOAttainment, 100, "%.1f%%"), verdict, 100*l.SLO.Quantile)
	fmt.Fprintf(w, "batch %s requests a step on average; KV cache used %s on average, %s at peak; preemptions %s; %d steps (first seed)\n",
		est(r.MeanBatch, 1, "%.1f"), est(r.MeanKVUsed, 100, "%.1f%%"), est(r.PeakKVUsed, 100, "%.1f%%"), est(r.Preemptions, 1, "%.0f"), l.Steps)
	if r.PrefixHitShare.Mean > 0 {
		fmt.Fprintf(w, "prefix cache: %s of prompt tokens served from it", est(r.PrefixHitShare, 100, "%.1f%%"))
		if r.FetchedShare.Mean > 0 {
			fmt.Fprintf(w, "; %s fetched from the KV store", est(r.FetchedShare, 100, "%.1f%%"))
		}
		fmt.Fprintln(w)
	}
	if d := l.Disagg; d != nil {
		when := "after the prefill"
		if d.Layerwise {
			when = "layer by layer"
		}
		pg, dg := d.PrefillGPU, d.DecodeGPU
		if d.PrefillMIG != "" {
			pg += " " + d.PrefillMIG
		}
		if d.DecodeMIG != "" {
			dg += " " + d.DecodeMIG
		}
		within := d.NVLink + d.HostCopy
		fmt.Fprintf(w, "disaggregated: prefill %d x %s tp %d, decode %d x %s tp %d (%s); KV %s: %d transfers (%d between servers over %s, %d within a server: %d over NVLink, %d through host memory), %.1f GB, %.1f ms mean, %.1f ms p99; waited for decode blocks %.1f ms mean, %.1f ms p99; after the first token %.1f ms mean, %.1f ms p99 (first seed)\n",
			d.PrefillReplicas, pg, d.PrefillTP, d.DecodeReplicas, dg, d.DecodeTP, d.Policy, when,
			d.Transfers, d.Transfers-within, d.Path, within, d.NVLink, d.HostCopy, d.GBMoved, 1e3*d.TransferMeanS, 1e3*d.TransferP99S, 1e3*d.WaitMeanS, 1e3*d.WaitP99S, 1e3*d.TailMeanS, 1e3*d.TailP99S)
	}
	for _, n := range l.Notes {
		fmt.Fprintln(w, "  note: "+n)
	}
}

// secText writes a duration in seconds as ms below one second.
func secText(s float64) string {
	if s < 1 {
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", s*1e3), "0"), ".") + " ms"
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", s), "0"), ".") + " s"
}

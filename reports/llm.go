package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Files of an llm run.
const (
	LLMRequestsFile = "llm_requests.csv"
	LLMSamplesFile  = "llm_samples.csv"
)

// LLMEst is a mean over the seeds and its 95% CI half-width (NaN with
// one seed).
type LLMEst struct {
	Mean Num `json:"mean"`
	CI95 Num `json:"ci95"`
}

// LLMQuantiles is a latency's mean and percentiles in seconds.
type LLMQuantiles struct {
	Mean LLMEst `json:"mean"`
	P50  LLMEst `json:"p50"`
	P90  LLMEst `json:"p90"`
	P99  LLMEst `json:"p99"`
}

// LLMResult is summary.json's llm section, as far as the report reads it.
type LLMResult struct {
	Model      string `json:"model"`
	Params     int64  `json:"params"`
	MaxContext int    `json:"max_context"`
	GPU        string `json:"gpu"`
	MIG        string `json:"mig"`
	TP         int    `json:"tp"`
	Replicas   int    `json:"replicas"`
	GPUs       int    `json:"gpus"`
	Scheduler  string `json:"scheduler"`
	Weights    Num    `json:"weights_gb_per_gpu"`
	KVBlocks   int    `json:"kv_blocks"`
	BlockSize  int    `json:"block_size"`
	KVTokens   int64  `json:"kv_tokens"`
	Workload   string `json:"workload"`
	Requests   int    `json:"requests"`
	Seeds      int    `json:"seeds"`
	// PerSeed is each seed's value of a few metrics (sim.LLMPerSeedMetrics),
	// for comparing runs that share their seeds seed by seed.
	PerSeed map[string][]float64 `json:"per_seed"`
	SLO     struct {
		TTFTS    Num `json:"ttft_s"`
		TPOTS    Num `json:"tpot_s"`
		Quantile Num `json:"quantile"`
	} `json:"slo"`
	Result struct {
		TTFT               LLMQuantiles `json:"ttft_s"`
		TPOT               LLMQuantiles `json:"tpot_s"`
		E2E                LLMQuantiles `json:"e2e_s"`
		Queue              LLMQuantiles `json:"queue_s"`
		Completed          LLMEst       `json:"completed"`
		Rejected           LLMEst       `json:"rejected"`
		RequestsPerSec     LLMEst       `json:"requests_per_s"`
		OutputTokensPerSec LLMEst       `json:"output_tokens_per_s"`
		TokensPerSec       LLMEst       `json:"tokens_per_s"`
		Goodput            LLMEst       `json:"goodput_requests_per_s"`
		SLOAttainment      LLMEst       `json:"slo_attainment"`
		MeanBatch          LLMEst       `json:"mean_batch"`
		MeanKVUsed         LLMEst       `json:"mean_kv_used"`
		PeakKVUsed         LLMEst       `json:"peak_kv_used"`
		Preemptions        LLMEst       `json:"preemptions"`
	} `json:"result"`
	SLOMet bool     `json:"slo_met"`
	Notes  []string `json:"notes"`
}

// est writes a mean ± its CI with format, scaled.
func (e LLMEst) text(scale float64, format string) string {
	s := fmt.Sprintf(format, float64(e.Mean)*scale)
	if c := float64(e.CI95); !math.IsNaN(c) && c != 0 {
		s += " ± " + fmt.Sprintf(format, c*scale)
	}
	return s
}

// writeLLMTable writes the llm section of report.md.
func writeLLMTable(md *strings.Builder, l *LLMResult) {
	if l == nil {
		return
	}
	where := l.GPU
	if l.MIG != "" {
		where += " slice " + l.MIG
	}
	fmt.Fprintf(md, "\n## LLM serving\n\n%s (%.2fB parameters, context %d tokens) on %d × %s at tp %d: %d replica(s) under %s, %.1f GB of weights per GPU; each replica's KV cache holds %d blocks of %d tokens (%d tokens). Workload: %s, %d requests.",
		l.Model, float64(l.Params)/1e9, l.MaxContext, l.GPUs, where, l.TP, l.Replicas, l.Scheduler, float64(l.Weights), l.KVBlocks, l.BlockSize, l.KVTokens, l.Workload, l.Requests)
	if l.Seeds > 1 {
		fmt.Fprintf(md, " Means over %d seeds (each its own draw of the workload) with 95%% CIs.", l.Seeds)
		if c := FewSeedsCaveat(l.Seeds); c != "" {
			md.WriteString(" " + strings.Trim(c, "()") + ".")
		}
	}
	r := l.Result
	md.WriteString("\n\n| latency | mean (ms) | p50 (ms) | p90 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n")
	for _, q := range []struct {
		name string
		v    LLMQuantiles
	}{{"TTFT", r.TTFT}, {"TPOT", r.TPOT}, {"E2E", r.E2E}, {"queue", r.Queue}} {
		fmt.Fprintf(md, "| %s | %s | %s | %s | %s |\n", q.name, q.v.Mean.text(1e3, "%.1f"), q.v.P50.text(1e3, "%.1f"), q.v.P90.text(1e3, "%.1f"), q.v.P99.text(1e3, "%.1f"))
	}
	verdict := "met"
	if !l.SLOMet {
		verdict = "**not met**"
	}
	fmt.Fprintf(md, "\nThroughput %s requests/s, %s output tokens/s, %s tokens/s; %s completed, %s rejected by the admission limit. ",
		r.RequestsPerSec.text(1, "%.2f"), r.OutputTokensPerSec.text(1, "%.0f"), r.TokensPerSec.text(1, "%.0f"), r.Completed.text(1, "%.0f"), r.Rejected.text(1, "%.0f"))
	fmt.Fprintf(md, "SLO (TTFT ≤ %g s and TPOT ≤ %g s): goodput %s requests/s, attainment %s, %s (target %.0f%%). ",
		float64(l.SLO.TTFTS), float64(l.SLO.TPOTS), r.Goodput.text(1, "%.2f"), r.SLOAttainment.text(100, "%.1f%%"), verdict, 100*float64(l.SLO.Quantile))
	fmt.Fprintf(md, "A step ran %s requests on average; the KV cache was %s used on average and %s at peak; %s preemptions.\n",
		r.MeanBatch.text(1, "%.1f"), r.MeanKVUsed.text(100, "%.1f%%"), r.PeakKVUsed.text(100, "%.1f%%"), r.Preemptions.text(1, "%.0f"))
	for _, n := range l.Notes {
		fmt.Fprintf(md, "\n- %s", n)
	}
	if len(l.Notes) > 0 {
		md.WriteString("\n")
	}
}

// llmFigures adds the llm section's figures: the TTFT and TPOT CDFs, KV
// use and batch size over time (the first seed's).
func llmFigures(dir string, l *LLMResult, add func(*figure, error) error) error {
	t, err := readTable(filepath.Join(dir, LLMRequestsFile), "rejected", "ttft_s", "tpot_s", "output_tokens")
	switch {
	case err == nil:
		var ttft, tpot []float64
		for i := range t.rows {
			if t.str(i, "rejected") == "1" {
				continue
			}
			a, err := t.float(i, "ttft_s")
			if err != nil {
				return err
			}
			b, err := t.float(i, "tpot_s")
			if err != nil {
				return err
			}
			o, err := t.float(i, "output_tokens")
			if err != nil {
				return err
			}
			ttft = append(ttft, 1e3*a)
			if o > 1 {
				tpot = append(tpot, 1e3*b)
			}
		}
		if err := add(llmLatencyCDF(ttft, tpot, l)); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	s, err := readTable(filepath.Join(dir, LLMSamplesFile), "time_s", "replica", "kv_used", "running", "waiting")
	switch {
	case err == nil:
		return add(llmSeries(s))
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}

// llmLatencyCDF is two panels: the TTFT and the TPOT CDF, each with its
// SLO bound.
func llmLatencyCDF(ttft, tpot []float64, l *LLMResult) (*figure, error) {
	if len(ttft) == 0 {
		return nil, nil
	}
	f := &figure{name: "llm_latency_cdf", legend: newLegend()}
	for i, c := range []struct {
		label string
		xs    []float64
		bound float64
	}{{"TTFT (ms)", ttft, 1e3 * float64(l.SLO.TTFTS)}, {"TPOT (ms)", tpot, 1e3 * float64(l.SLO.TPOTS)}} {
		if len(c.xs) == 0 {
			continue
		}
		p := newPlot(c.label, "fraction ≤ x", true)
		p.Y.Min, p.Y.Max = 0, 1
		if useLogScale(c.xs) {
			setLog(&p.X)
			p.X.Label.Text += " (log scale)"
		}
		ln, err := plotter.NewLine(cdfPoints(c.xs, 500))
		if err != nil {
			return nil, fmt.Errorf("plot llm_latency_cdf: %w", err)
		}
		ln.StepStyle = plotter.PostStep
		ln.LineStyle = lineStyle(0)
		p.Add(ln)
		if i == 0 {
			f.legend.add(fmt.Sprintf("requests (n=%d)", len(c.xs)), ln)
		}
		if c.bound > 0 {
			b, err := plotter.NewLine(plotter.XYs{{X: c.bound, Y: 0}, {X: c.bound, Y: 1}})
			if err != nil {
				return nil, fmt.Errorf("plot llm_latency_cdf: %w", err)
			}
			b.LineStyle = lineStyle(1)
			b.LineStyle.Dashes = dashes[1]
			p.Add(b)
			if i == 0 {
				f.legend.add("SLO bound", b)
			}
			p.X.Max = math.Max(p.X.Max, c.bound)
		}
		padCDF(p)
		f.panels = append(f.panels, p)
	}
	return f, nil
}

// llmSeries is KV-cache use and the running and waiting requests over
// time, averaged into at most seriesBins bins of time: a line per
// replica for one or two, else the mean over the replicas and the
// busiest one's (each bin's maximum over the replicas of their bin means).
func llmSeries(t *table) (*figure, error) {
	if len(t.rows) == 0 {
		return nil, nil
	}
	type row struct {
		t    float64
		rep  int
		vals [3]float64
	}
	rows := make([]row, len(t.rows))
	reps := map[int]bool{}
	var tMax float64
	for i := range t.rows {
		var r row
		var err error
		if r.t, err = t.float(i, "time_s"); err != nil {
			return nil, err
		}
		rf, err := t.float(i, "replica")
		if err != nil {
			return nil, err
		}
		r.rep = int(rf)
		for k, c := range []string{"kv_used", "running", "waiting"} {
			if r.vals[k], err = t.float(i, c); err != nil {
				return nil, err
			}
		}
		r.vals[0] *= 100
		rows[i] = r
		reps[r.rep] = true
		tMax = math.Max(tMax, r.t)
	}
	const seriesBins = 300
	width := tMax / seriesBins
	if width <= 0 {
		width = 1
	}
	bin := func(x float64) int { return min(int(x/width), seriesBins-1) }
	nrep := 0
	for r := range reps {
		nrep = max(nrep, r+1)
	}
	// sum[k][rep][bin], n[rep][bin]
	var sum [3][][]float64
	n := make([][]float64, nrep)
	for k := range sum {
		sum[k] = make([][]float64, nrep)
		for r := range sum[k] {
			sum[k][r] = make([]float64, seriesBins)
		}
	}
	for r := range n {
		n[r] = make([]float64, seriesBins)
	}
	for _, r := range rows {
		b := bin(r.t)
		n[r.rep][b]++
		for k := range 3 {
			sum[k][r.rep][b] += r.vals[k]
		}
	}
	x := func(b int) float64 { return (float64(b) + 0.5) * width }
	type line struct {
		name string
		pts  [3]plotter.XYs
	}
	var lines []line
	if nrep <= 2 {
		for r := range nrep {
			l := line{name: fmt.Sprintf("replica %d", r)}
			for b := range seriesBins {
				if n[r][b] == 0 {
					continue
				}
				for k := range 3 {
					l.pts[k] = append(l.pts[k], plotter.XY{X: x(b), Y: sum[k][r][b] / n[r][b]})
				}
			}
			lines = append(lines, l)
		}
	} else {
		mean, top := line{name: fmt.Sprintf("mean of %d replicas", nrep)}, line{name: "busiest replica"}
		for b := range seriesBins {
			for k := range 3 {
				var s, mx float64
				m := 0
				for r := range nrep {
					if n[r][b] == 0 {
						continue
					}
					v := sum[k][r][b] / n[r][b]
					s += v
					mx = math.Max(mx, v)
					m++
				}
				if m == 0 {
					continue
				}
				mean.pts[k] = append(mean.pts[k], plotter.XY{X: x(b), Y: s / float64(m)})
				top.pts[k] = append(top.pts[k], plotter.XY{X: x(b), Y: mx})
			}
		}
		lines = []line{mean, top}
	}
	kv := newPlot("time (s)", "KV cache used (%)", true)
	kv.Y.Min, kv.Y.Max = 0, 100
	run := newPlot("time (s)", "requests running", true)
	run.Y.Min = 0
	wait := newPlot("time (s)", "requests waiting", true)
	wait.Y.Min = 0
	for _, pl := range []*plot.Plot{kv, run, wait} {
		pl.X.Min = 0
	}
	leg := newLegend()
	for i, ln := range lines {
		for k, pl := range []*plot.Plot{kv, run, wait} {
			if len(ln.pts[k]) == 0 {
				continue
			}
			l, err := plotter.NewLine(ln.pts[k])
			if err != nil {
				return nil, fmt.Errorf("plot llm_series: %w", err)
			}
			l.LineStyle = lineStyle(i)
			pl.Add(l)
			if k == 0 && len(lines) > 1 {
				leg.add(ln.name, l)
			}
		}
	}
	f := &figure{name: "llm_series", panels: []*plot.Plot{kv, run, wait}, cols: 1}
	if leg.n > 0 {
		f.legend = leg
	}
	f.w, f.h = figW, 2*figH
	return f, nil
}

// LLMEntity names the llm section's one entity in a sweep's metrics
// ("llm/serving/ttft_s.p90").
const LLMEntity = "serving"

// llmMetrics are what a sweep aggregates of the llm section, in the order
// of llmValues.
var llmMetrics = []metric{
	{field: "ttft_s.mean", label: "mean TTFT (s)", title: "Mean time to first token", plot: true, ci: "ttft_s.mean.ci95"},
	{field: "ttft_s.p90", label: "p90 TTFT (s)"},
	{field: "ttft_s.p99", label: "p99 TTFT (s)", title: "p99 time to first token", plot: true, logY: true, ci: "ttft_s.p99.ci95"},
	{field: "tpot_s.mean", label: "mean TPOT (s)"},
	{field: "tpot_s.p90", label: "p90 TPOT (s)", title: "p90 time per output token", plot: true, ci: "tpot_s.p90.ci95"},
	{field: "tpot_s.p99", label: "p99 TPOT (s)"},
	{field: "e2e_s.mean", label: "mean end-to-end latency (s)", ci: "e2e_s.mean.ci95"},
	{field: "e2e_s.p99", label: "p99 end-to-end latency (s)"},
	{field: "requests_per_s", label: "throughput (requests/s)", title: "Throughput", plot: true, ci: "requests_per_s.ci95"},
	{field: "output_tokens_per_s", label: "output tokens per second"},
	{field: "goodput_requests_per_s", label: "goodput (requests/s meeting the SLO)", short: "goodput (req/s)", title: "Goodput", plot: true, ci: "goodput_requests_per_s.ci95"},
	{field: "slo_attainment", label: "SLO attainment (share of requests)", title: "SLO attainment", plot: true, ci: "slo_attainment.ci95"},
	{field: "mean_kv_used", label: "mean KV cache used (fraction)"},
	{field: "peak_kv_used", label: "peak KV cache used (fraction)"},
	{field: "preemptions", label: "preemptions"},
	{field: "rejected", label: "requests rejected by the admission limit"},
	// The run's own 95% CI half-widths over its llm.seeds, which a sweep
	// of one seed draws as the plotted metrics' CIs (NaN with one seed).
	{field: "ttft_s.mean.ci95", label: "95% CI half-width of the mean TTFT over the scenario's seeds (s)"},
	{field: "ttft_s.p99.ci95", label: "95% CI half-width of the p99 TTFT over the scenario's seeds (s)"},
	{field: "tpot_s.p90.ci95", label: "95% CI half-width of the p90 TPOT over the scenario's seeds (s)"},
	{field: "requests_per_s.ci95", label: "95% CI half-width of the throughput over the scenario's seeds (requests/s)"},
	{field: "goodput_requests_per_s.ci95", label: "95% CI half-width of the goodput over the scenario's seeds (requests/s)"},
	{field: "slo_attainment.ci95", label: "95% CI half-width of the SLO attainment over the scenario's seeds"},
	{field: "e2e_s.mean.ci95", label: "95% CI half-width of the mean end-to-end latency over the scenario's seeds (s)"},
}

func llmValues(l *LLMResult) []float64 {
	r := l.Result
	return []float64{float64(r.TTFT.Mean.Mean), float64(r.TTFT.P90.Mean), float64(r.TTFT.P99.Mean),
		float64(r.TPOT.Mean.Mean), float64(r.TPOT.P90.Mean), float64(r.TPOT.P99.Mean),
		float64(r.E2E.Mean.Mean), float64(r.E2E.P99.Mean),
		float64(r.RequestsPerSec.Mean), float64(r.OutputTokensPerSec.Mean), float64(r.Goodput.Mean), float64(r.SLOAttainment.Mean),
		float64(r.MeanKVUsed.Mean), float64(r.PeakKVUsed.Mean), float64(r.Preemptions.Mean), float64(r.Rejected.Mean),
		ciOr(r.TTFT.Mean), ciOr(r.TTFT.P99), ciOr(r.TPOT.P90), ciOr(r.RequestsPerSec), ciOr(r.Goodput), ciOr(r.SLOAttainment), ciOr(r.E2E.Mean)}
}

// ciOr is an estimate's CI half-width, NaN where it has none (one seed).
func ciOr(e LLMEst) float64 {
	if c := float64(e.CI95); !math.IsNaN(c) && c > 0 {
		return c
	}
	return math.NaN()
}

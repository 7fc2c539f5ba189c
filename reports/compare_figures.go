package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// WriteComparison writes a comparison into dir: report.md (the table and
// the inputs that differ, as text, then the overlaid figures),
// report.html, and plots/. Each run keeps its colour (its index in the
// palette) in every figure. Figures are drawn from what the runs share:
// latency CDFs need requests.csv, GPU-hours need cluster policies.
func WriteComparison(fsys atomicfs.FS, dir string, c Comparison) error {
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	plots, err := mkPlotsDir(fsys, dir)
	if err != nil {
		return err
	}
	figs, err := compareFigures(c.Runs)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	lines, note, err := compareSweepLines(c.Runs)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	figs = append(figs, lines...)
	var text strings.Builder
	if err := c.WriteText(&text); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# Comparison\n\n")
	for i, r := range c.Runs {
		fmt.Fprintf(&md, "- [%d] `%s`: %s\n", i, r.Dir, provenance(r.Result))
	}
	md.WriteString("\nDifferences are to run [0], in percent of its value, or in percentage points (pp) for a metric that is itself a percentage (a gap, a saving); \"beyond CI\" means the difference exceeds the sum of both runs' 95% CI half-widths.\n\n```\n")
	md.WriteString(text.String())
	md.WriteString("```\n")
	if note != "" {
		fmt.Fprintf(&md, "\n%s\n", note)
	} else if len(figs) == 0 {
		md.WriteString("\nNo overlaid figures: they are drawn for runs that share their data (latency CDFs, stages, GPU-hours) and for sweeps of one shared parameter (a line per sweep).\n")
	}
	if err := saveFigures(fsys, plots, &md, figs); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := atomicfs.WriteFile(fsys, filepath.Join(dir, ReportFile), []byte(md.String())); err != nil {
		return err
	}
	return writeHTML(fsys, dir, md.String(), Result{Scenario: "comparison of " + fmt.Sprint(len(c.Runs)) + " runs"})
}

// runLabel names run i in legends and on axes: by the inputs that set it
// apart (at most two, "[1] background_load=80%"), where the runs differ in
// a few; else by its directory (a folder named by a digest says nothing).
func runLabel(i int, r Run) string {
	if r.Label != "" {
		return fmt.Sprintf("[%d] %s", i, r.Label)
	}
	return fmt.Sprintf("[%d] %s", i, filepath.Base(filepath.Clean(r.Dir)))
}

// labelRuns sets each run's Label from the inputs that differ between
// the runs, where they differ in one to three keys (beyond that no short
// label says it; the table lists them all).
func labelRuns(runs []Run) {
	diffs := inputDiffs(runs)
	var shown []InputDiff
	for _, d := range diffs {
		if d.Key == "name" || d.Key == "description" {
			continue
		}
		shown = append(shown, d)
	}
	if len(shown) == 0 || len(shown) > 3 {
		return
	}
	for i := range runs {
		var parts []string
		for _, d := range shown[:min(2, len(shown))] {
			k := d.Key
			if j := strings.LastIndex(k, "."); j >= 0 {
				k = k[j+1:]
			}
			v := strings.Trim(d.Values[i], `"`)
			if v == "" {
				v = "(none)" // an empty --set list, not a missing run
			}
			parts = append(parts, k+"="+v)
		}
		runs[i].Label = strings.Join(parts, ", ")
	}
}

// compareFigures draws the overlaid figures of runs: latency CDFs per
// path, the stage breakdown of every path and run, and GPU-hours per
// policy and run. A figure is left out where fewer than two runs have its
// data; sweeps are overlaid by compareSweepLines.
func compareFigures(runs []Run) ([]*figure, error) {
	labelRuns(runs)
	var figs []*figure
	if f, err := compareLatencyCDF(runs); err != nil {
		return nil, err
	} else if f != nil {
		figs = append(figs, f)
	}
	if f, err := compareStages(runs); err != nil {
		return nil, err
	} else if f != nil {
		figs = append(figs, f)
	}
	if f, err := compareGPUHours(runs); err != nil {
		return nil, err
	} else if f != nil {
		figs = append(figs, f)
	}
	return figs, nil
}

// compareLatencyCDF has one panel per data path that at least two runs
// have, one line per run.
func compareLatencyCDF(runs []Run) (*figure, error) {
	reqs := make([]*Requests, len(runs))
	for i, r := range runs {
		if r.Sweep != nil {
			continue
		}
		q, err := ReadRequests(filepath.Join(r.Dir, RequestsFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		reqs[i] = &q
	}
	var paths []string
	seen := map[string]int{}
	for _, q := range reqs {
		if q == nil {
			continue
		}
		for _, p := range q.Paths {
			if seen[p]++; seen[p] == 2 {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	leg := newLegend()
	var panels []*plot.Plot
	for pi, path := range paths {
		xl := "latency (µs)"
		p := newPlot(xl, "", true)
		if pi == 0 {
			p.Y.Label.Text = "fraction ≤ x"
		}
		panelTitle(p, path)
		p.Y.Min, p.Y.Max = 0, 1
		var all [][]float64
		for _, q := range reqs {
			if q != nil {
				all = append(all, q.LatencyUS[path])
			}
		}
		if useLogScale(all...) {
			setLog(&p.X)
			p.X.Label.Text += " (log)"
		}
		for i, q := range reqs {
			if q == nil || len(q.LatencyUS[path]) == 0 {
				continue
			}
			l, err := plotter.NewLine(cdfPoints(q.LatencyUS[path], 300))
			if err != nil {
				return nil, fmt.Errorf("plot compare_latency_cdf: %s: %w", path, err)
			}
			l.StepStyle = plotter.PostStep
			l.LineStyle = lineStyle(i)
			p.Add(l)
			if pi == 0 {
				leg.add(runLabel(i, runs[i]), l)
			}
		}
		panels = append(panels, p)
	}
	return &figure{name: "compare_latency_cdf", caption: "Latency CDF of each data path, one line per run (colour and dash: the run).",
		panels: panels, legend: leg, w: figW + vg.Length(len(panels)-1)*5*vg.Centimeter, h: figH}, nil
}

// compareStages stacks the stage kinds of every path of every run, the
// runs of one path side by side.
func compareStages(runs []Run) (*figure, error) {
	have := 0
	for _, r := range runs {
		if len(r.Result.Paths) > 0 {
			have++
		}
	}
	if have < 2 {
		return nil, nil
	}
	var bars []PathResult
	for _, name := range pathNames(runs) {
		for i, r := range runs {
			for _, p := range r.Result.Paths {
				if p.Name == name {
					q := p
					q.Name = fmt.Sprintf("%s [%d]", p.Name, i)
					bars = append(bars, q)
				}
			}
		}
	}
	f, err := stageBreakdown(bars, nil)
	if f == nil || err != nil {
		return f, err
	}
	slantLabels(f.panels[0])
	f.name = "compare_stage_breakdown"
	f.caption = "Mean time per stage kind, stacked, for each data path and run ([i]: run i); one colour per kind on every path and run."
	return f, nil
}

// pathNames lists the data paths of the runs in first-seen order.
func pathNames(runs []Run) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, p := range r.Result.Paths {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// compareGPUHours draws one bar per policy and run, with each run's 95%
// CI over its seeds where it has one.
func compareGPUHours(runs []Run) (*figure, error) {
	var names []string
	seen := map[string]bool{}
	have := 0
	for _, r := range runs {
		if len(r.Result.Policies) > 0 {
			have++
		}
		for _, q := range r.Result.Policies {
			if !seen[q.Name] {
				seen[q.Name] = true
				names = append(names, q.Name)
			}
		}
	}
	if have < 2 {
		return nil, nil
	}
	p := newPlot("policy", "GPU-hours (GPU h)", false)
	p.NominalX(names...)
	p.X.Padding = vg.Points(20)
	slantLabels(p)
	leg := newLegend()
	w := vg.Points(36) / vg.Length(have)
	k := 0
	for i, r := range runs {
		if len(r.Result.Policies) == 0 {
			continue
		}
		vals := make(plotter.Values, len(names))
		byName := map[string]PolicyResult{}
		for _, q := range r.Result.Policies {
			byName[q.Name] = q
		}
		var ordered []PolicyResult
		for j, n := range names {
			q := byName[n]
			vals[j] = nan0(float64(q.GPUHours))
			ordered = append(ordered, q)
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("plot compare_gpu_hours: %w", err)
		}
		b.Color = colour(i)
		b.Offset = w * (vg.Length(k) - vg.Length(have-1)/2)
		p.Add(b)
		if e := gpuHoursCI(ordered); len(e.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(e)
			if err != nil {
				return nil, fmt.Errorf("plot compare_gpu_hours: %w", err)
			}
			eb.LineStyle.Width = vg.Points(1)
			eb.CapWidth = vg.Points(4)
			p.Add(shifted{eb, vg.Point{X: b.Offset}})
		}
		leg.add(runLabel(i, r), b)
		k++
	}
	p.Y.Min = 0
	return &figure{name: "compare_gpu_hours", caption: "GPU-hours per policy, one bar per run (error bars: 95% CI over the run's seeds, where it has several).",
		panels: []*plot.Plot{p}, legend: leg}, nil
}

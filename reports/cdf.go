package reports

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// CDFSeries is one labelled sample set of a CDF plot.
type CDFSeries struct {
	Label  string
	Values []float64
	Dashed bool // drawn dashed (e.g. a model next to its measurement)
}

// CDFPlot draws the empirical CDFs of series into base.png and base.svg,
// for figures outside a result directory's standard set (the calibration's
// measured-vs-model latencies). A Dashed series takes the colour of the
// series before it.
func CDFPlot(base, title, xLabel string, series []CDFSeries) error {
	if len(series) == 0 {
		return fmt.Errorf("plot %s: no series", base)
	}
	p := newPlot(title, xLabel, "fraction ≤ x", true)
	p.Y.Min, p.Y.Max = 0, 1
	all := make([][]float64, len(series))
	for i, s := range series {
		all[i] = s.Values
	}
	if useLogScale(all...) { // heavy tails: the body would be a vertical line
		setLog(&p.X)
		p.X.Label.Text += " (log scale)"
	}
	leg := newLegend()
	seen := map[string]bool{}
	colourIdx := -1
	for _, s := range series {
		if seen[s.Label] {
			return fmt.Errorf("plot %s: two series labelled %q", base, s.Label)
		}
		seen[s.Label] = true
		// A dashed series shares the colour of the solid one before it,
		// so a measurement and its model read as a pair.
		if !s.Dashed || colourIdx < 0 {
			colourIdx++
		}
		l, err := plotter.NewLine(cdfPoints(s.Values, 500))
		if err != nil {
			return fmt.Errorf("plot %s: %s: %w", base, s.Label, err)
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle = lineStyle(colourIdx)
		l.LineStyle.Dashes = nil
		if s.Dashed {
			l.LineStyle.Dashes = dashes[1]
		}
		p.Add(l)
		leg.add(fmt.Sprintf("%s (n=%d)", s.Label, len(s.Values)), l)
	}
	f := &figure{name: filepath.Base(base), panels: []*plot.Plot{p}, legend: leg}
	dir := filepath.Dir(base)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot %s: %w", base, err)
	}
	_, err := f.save(dir)
	return err
}

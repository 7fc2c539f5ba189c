package reports

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// CDFSeries is one labelled sample set of a CDF plot.
type CDFSeries struct {
	Label  string
	Values []float64
	Dashed bool // drawn dashed (e.g. a model next to its measurement)
}

// CDFPlot draws the empirical CDFs of series into base.png, .svg and .pdf,
// for figures outside a result directory's standard set (the calibration's
// measured-vs-model latencies): the CDF on the left, and on the right the
// tail as the fraction at or above x on log-log axes, where p99 and p99.9 can be
// read (on the CDF they are a hair under 1). A Dashed series takes the
// colour of the series before it.
func CDFPlot(base, title, xLabel string, series []CDFSeries) error {
	if len(series) == 0 {
		return fmt.Errorf("plot %s: no series", base)
	}
	p := newPlot(xLabel, "fraction ≤ x", true)
	panelTitle(p, title)
	p.Y.Min, p.Y.Max = 0, 1
	all := make([][]float64, len(series))
	for i, s := range series {
		all[i] = s.Values
	}
	if useLogScale(all...) { // heavy tails: the body would be a vertical line
		setLog(&p.X)
		p.X.Label.Text += " (log scale)"
	}
	tail := newPlot(xLabel+" (log scale)", "fraction ≥ x (log scale)", true)
	panelTitle(tail, "tail")
	setLog(&tail.X)
	setLog(&tail.Y)
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
		label := fmt.Sprintf("%s (n=%d", s.Label, len(s.Values))
		// A log axis cannot hold x <= 0 (gonum panics on it): such values
		// (a model's draw below zero) stay in the CDF and the count, and
		// the legend says how many the tail panel leaves off.
		tailPts, off := positiveX(ccdfPoints(s.Values, 500)), nonPositive(s.Values)
		if off > 0 {
			label += fmt.Sprintf(", %d ≤ 0 not in the tail", off)
		}
		leg.add(label+")", l)
		if len(tailPts) == 0 {
			continue
		}
		t, err := plotter.NewLine(tailPts)
		if err != nil {
			return fmt.Errorf("plot %s: %s: %w", base, s.Label, err)
		}
		t.StepStyle = plotter.PostStep
		t.LineStyle = l.LineStyle
		tail.Add(t)
	}
	f := &figure{name: filepath.Base(base), panels: []*plot.Plot{p, tail}, legend: leg, w: 1.5 * figW, h: figH}
	dir := filepath.Dir(base)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot %s: %w", base, err)
	}
	_, err := f.save(atomicfs.OS, dir)
	return err
}

func positiveX(pts plotter.XYs) plotter.XYs {
	out := pts[:0:0]
	for _, p := range pts {
		if p.X > 0 {
			out = append(out, p)
		}
	}
	return out
}

func nonPositive(vs []float64) int {
	n := 0
	for _, v := range vs {
		if v <= 0 {
			n++
		}
	}
	return n
}

// ccdfPoints is the empirical fraction of vs at or above x at (at most maxPts)
// sample values, ranks spaced evenly in log(fraction) so that the tail,
// where the points matter, keeps its resolution. Every fraction is at
// least 1/n, so a log y axis can hold it.
func ccdfPoints(vs []float64, maxPts int) plotter.XYs {
	s := sortedCopy(vs)
	n := len(s)
	if n == 0 {
		return nil
	}
	var pts plotter.XYs
	last := -1
	for k := range max(maxPts, 2) {
		// Fraction above from 1 down to 1/n, log-spaced; rank i has n-i
		// samples at or above it.
		frac := math.Pow(float64(n), -float64(k)/float64(max(maxPts, 2)-1))
		i := min(n-int(math.Round(frac*float64(n))), n-1)
		if i <= last {
			continue
		}
		last = i
		pts = append(pts, plotter.XY{X: s[i], Y: float64(n-i) / float64(n)})
	}
	return pts
}

package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figures of a cluster run. One axis with a line per policy hid what the
// figures were for (issue 31): eight step lines over a burst are a solid
// block, and late lines cover early ones. So the GPUs in use are small
// multiples (a panel per policy, the baseline behind it in grey) with a
// zoom on the busiest window, completion times are split by kind of job,
// and decision times are distributions.

// activeGPUs draws each policy's GPUs in use over the trace's span in a
// panel of its own, the baseline's behind it in grey, and beside it the
// same over the busiest window (where the baseline's GPU time is
// largest). span is the last arrival (s; 0: the series' end): jobs that
// run past it add a tail that says nothing about the policies.
func activeGPUs(series []Series, baseline string, span float64) (*figure, error) {
	if len(series) == 0 {
		return nil, nil
	}
	end := 0.0
	for _, s := range series {
		for _, x := range s.X {
			end = math.Max(end, x)
		}
	}
	if span <= 0 || span > end {
		span = end
	}
	base := slices.IndexFunc(series, func(s Series) bool { return s.Name == baseline })
	ref := series[max(base, 0)]
	w0, w1 := busiestWindow(ref, span, span/40)
	unit, div := timeUnit(span)
	zunit, zdiv := timeUnit(w1 - w0)
	ymax := 0.0
	for _, s := range series {
		for _, y := range s.Y {
			ymax = math.Max(ymax, y)
		}
	}
	grey := draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(1)}
	var panels []*plot.Plot
	for i, s := range series {
		for _, z := range []bool{false, true} {
			xl, lo, hi, d := fmt.Sprintf("simulated time (%s)", unit), 0.0, span, div
			if z {
				xl, lo, hi, d = fmt.Sprintf("busiest window, from day %.1f (%s)", w0/86400, zunit), w0, w1, zdiv
			}
			p := newPlot("", "GPUs", true)
			if i == len(series)-1 {
				p.X.Label.Text = xl
			}
			title := s.Name
			if base >= 0 && i != base {
				title += " (grey: " + baseline + ")"
			}
			if z {
				title = ""
			}
			panelTitle(p, title)
			if base >= 0 && i != base {
				l, err := stepLine(series[base], lo, hi, d, z)
				if err != nil {
					return nil, fmt.Errorf("plot active_gpus: %w", err)
				}
				l.LineStyle = grey
				p.Add(l)
			}
			l, err := stepLine(s, lo, hi, d, z)
			if err != nil {
				return nil, fmt.Errorf("plot active_gpus: policy %s: %w", s.Name, err)
			}
			l.LineStyle = lineStyle(i)
			l.LineStyle.Dashes = nil // one line a panel: colour and panel tell it apart
			p.Add(l)
			p.X.Min, p.X.Max = lo/d, hi/d
			if z {
				p.X.Min, p.X.Max = 0, (hi-lo)/d
			}
			p.Y.Min, p.Y.Max = 0, ymax*1.05
			panels = append(panels, p)
		}
	}
	h := vg.Length(len(series))*2.6*vg.Centimeter + 1.5*vg.Centimeter
	return &figure{name: "active_gpus", panels: panels, cols: 2, w: figW, h: h}, nil
}

// stepLine is s between lo and hi (seconds) in units of div, as a step
// function starting at lo (shifted to 0 when rel).
func stepLine(s Series, lo, hi, div float64, rel bool) (*plotter.Line, error) {
	var pts plotter.XYs
	off := 0.0
	if rel {
		off = lo
	}
	add := func(x, y float64) { pts = append(pts, plotter.XY{X: (x - off) / div, Y: y}) }
	cur := 0.0
	for j, x := range s.X {
		switch {
		case x <= lo:
			cur = s.Y[j]
		case x < hi:
			if len(pts) == 0 {
				add(lo, cur)
			}
			add(x, s.Y[j])
			cur = s.Y[j]
		}
	}
	if len(pts) == 0 {
		add(lo, cur)
	}
	add(hi, cur)
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	return l, nil
}

// busiestWindow is the window of width w within [0, span] over which the
// step function s holds the most GPU time (the first such, if several).
// The time held over [lo, lo+w] is piecewise linear in lo, so its maximum
// lies where lo or lo+w meets a step: only those starts are tried, each
// through the cumulative integral.
func busiestWindow(s Series, span, w float64) (float64, float64) {
	if w <= 0 || span <= w || len(s.X) == 0 {
		return 0, span
	}
	// cum[j] is the integral of s from s.X[0] to s.X[j].
	cum := make([]float64, len(s.X))
	for j := 1; j < len(s.X); j++ {
		cum[j] = cum[j-1] + s.Y[j-1]*(s.X[j]-s.X[j-1])
	}
	at := func(t float64) float64 { // the integral from s.X[0] to t
		j := sort.SearchFloat64s(s.X, t) // first X >= t
		if j < len(s.X) && s.X[j] == t {
			return cum[j]
		}
		if j == 0 {
			return 0
		}
		return cum[j-1] + s.Y[j-1]*(t-s.X[j-1])
	}
	starts := []float64{0, span - w}
	for _, x := range s.X {
		for _, c := range []float64{x, x - w} {
			if c > 0 && c < span-w {
				starts = append(starts, c)
			}
		}
	}
	sort.Float64s(starts)
	best, bestV := 0.0, at(w)-at(0)
	for _, lo := range starts {
		if v := at(lo+w) - at(lo); v > bestV+1e-9*math.Abs(bestV) {
			best, bestV = lo, v
		}
	}
	return best, best + w
}

// jctByKind draws the completion-time CDF of every policy, one panel per
// kind of job (batch jobs hold their work, services their time: their
// completion times mean different things), on a log axis. Policies often
// give nearly the same CDF: the lines are drawn from thick (the first
// policy) to thin (the last), so a line on top of another leaves its
// edges showing, and the caption names the policies whose CDFs lie
// within 2 points of one another everywhere.
func jctByKind(jobs []JobRow) (*figure, error) {
	var policies, kinds []string
	samples := map[string]map[string][]float64{} // kind -> policy -> JCTs
	for _, j := range jobs {
		if !slices.Contains(policies, j.Policy) {
			policies = append(policies, j.Policy)
		}
		if j.JCT < 0 {
			continue // never completed, or censored
		}
		if samples[j.Kind] == nil {
			samples[j.Kind] = map[string][]float64{}
			kinds = append(kinds, j.Kind)
		}
		samples[j.Kind][j.Policy] = append(samples[j.Kind][j.Policy], j.JCT)
	}
	if len(kinds) == 0 {
		return nil, nil
	}
	sort.Strings(kinds) // batch before service; "" (older results) alone
	leg := newLegend()
	var panels []*plot.Plot
	var notes []string
	for ki, kind := range kinds {
		p := newPlot("job completion time (s, log scale)", "fraction ≤ x", true)
		p.Y.Min, p.Y.Max = 0, 1
		var all [][]float64
		for _, pol := range policies {
			all = append(all, samples[kind][pol])
		}
		if useLogScale(all...) {
			setLog(&p.X)
		} else {
			p.X.Label.Text = "job completion time (s)"
		}
		n := 0
		for i, pol := range policies {
			v := samples[kind][pol]
			if len(v) == 0 {
				continue
			}
			n = len(v)
			l, err := plotter.NewLine(cdfPoints(v, 500))
			if err != nil {
				return nil, fmt.Errorf("plot jct_cdf: %s %s: %w", kind, pol, err)
			}
			l.StepStyle = plotter.PostStep
			l.LineStyle = lineStyle(i)
			if len(policies) > 1 {
				l.LineStyle.Width = vg.Points(1 + 2*float64(len(policies)-1-i)/float64(len(policies)-1))
			}
			p.Add(l)
			if ki == 0 {
				leg.add(pol, l)
			}
		}
		padCDF(p)
		title := fmt.Sprintf("%s jobs (n=%d per policy)", kind, n)
		if kind == "" {
			title = fmt.Sprintf("n=%d per policy", n)
		}
		panelTitle(p, title)
		panels = append(panels, p)
		for _, g := range closeCDFs(policies, samples[kind], 0.02) {
			what := kind + " jobs"
			if kind == "" {
				what = "jobs"
			}
			notes = append(notes, fmt.Sprintf("%s: %s lie within 2 points of one another everywhere (their lines overlap)", what, strings.Join(g, ", ")))
		}
	}
	f := &figure{name: "jct_cdf", panels: panels, legend: leg, w: figW + vg.Length(len(panels)-1)*5*vg.Centimeter, h: figH}
	if len(notes) > 0 {
		f.caption = "Lines drawn from thick (first in the legend) to thin. " + capitalise(strings.Join(notes, "; ")) + "."
	}
	return f, nil
}

// closeCDFs groups the policies whose empirical CDFs (of samples) differ
// by at most tol everywhere (the Kolmogorov-Smirnov distance) from the
// group's first, in policy order; only groups of two or more.
func closeCDFs(policies []string, samples map[string][]float64, tol float64) [][]string {
	var groups [][]string
	for _, p := range policies {
		if len(samples[p]) == 0 {
			continue
		}
		placed := false
		for gi, g := range groups {
			if ksDistance(samples[g[0]], samples[p]) <= tol {
				groups[gi] = append(groups[gi], p)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []string{p})
		}
	}
	var out [][]string
	for _, g := range groups {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}

// ksDistance is the largest difference between the empirical CDFs of a
// and b.
func ksDistance(a, b []float64) float64 {
	x, y := sortedCopy(a), sortedCopy(b)
	i, j, d := 0, 0, 0.0
	for i < len(x) && j < len(y) {
		v := math.Min(x[i], y[j])
		for i < len(x) && x[i] <= v {
			i++
		}
		for j < len(y) && y[j] <= v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}

// decisionBoxes draws each policy's wall-clock decision times as a box
// (median, quartiles; whiskers at 1.5 IQR) on a log axis: the mean of a
// call on one job and of one on two hundred are different quantities, and
// a line per policy through the mean at each size tangled.
func decisionBoxes(series []Series) (*figure, error) {
	if len(series) == 0 {
		return nil, nil
	}
	p := newPlot("", "µs per call (log scale)", false)
	setLog(&p.Y)
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = fmt.Sprintf("%s (%d calls)", s.Name, len(s.Y))
		vals := make(plotter.Values, 0, len(s.Y))
		for _, y := range s.Y {
			if y > 0 {
				vals = append(vals, y)
			}
		}
		if len(vals) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(14), float64(i), vals)
		if err != nil {
			return nil, fmt.Errorf("plot decision_time: policy %s: %w", s.Name, err)
		}
		b.FillColor = translucent(colour(i), 0.5)
		b.BoxStyle.Color = colour(i)
		b.Horizontal = false
		p.Add(b)
	}
	nominalX(p, names)
	slantLabels(p)
	return &figure{name: "decision_time", panels: []*plot.Plot{p}}, nil
}

// gpuHoursBars draws GPU-hours per policy as horizontal bars, so that long
// policy names read on the y axis instead of overlapping under the bars;
// whole GPUs with their 95% CI over seeds, and the fraction-weighted
// GPU-hours beside them.
func gpuHoursBars(pols []PolicyResult) (*figure, error) {
	n := len(pols)
	p := newPlot("GPU-hours (GPU h)", "", true)
	names := make([]string, n)
	whole := make(plotter.Values, n)
	frac := make(plotter.Values, n)
	hasFrac := false
	for i, q := range pols {
		k := n - 1 - i // the first policy on top
		names[k] = q.Name
		whole[k] = nan0(float64(q.GPUHours))
		frac[k] = nan0(float64(q.GPUHoursFractional))
		hasFrac = hasFrac || frac[k] != 0
	}
	p.NominalY(names...)
	p.Y.Padding = vg.Points(12)
	leg := newLegend()
	w := vg.Points(9)
	b1, err := plotter.NewBarChart(whole, w)
	if err != nil {
		return nil, fmt.Errorf("plot gpu_hours: %w", err)
	}
	b1.Horizontal = true
	b1.Color = colour(0)
	p.Add(b1)
	ci := gpuHoursCI(pols)
	label := "whole GPUs in use"
	if len(ci.XYs) > 0 {
		label = "whole GPUs (± 95% CI)"
	}
	leg.add(label, b1)
	if hasFrac {
		b1.Offset = w / 2
		b2, err := plotter.NewBarChart(frac, w)
		if err != nil {
			return nil, fmt.Errorf("plot gpu_hours: %w", err)
		}
		b2.Horizontal = true
		b2.Color = colour(4)
		b2.Offset = -w / 2
		p.Add(b2)
		leg.add("fraction-weighted (MIG)", b2)
	}
	if len(ci.XYs) > 0 {
		var e errXPts
		for k := range ci.XYs {
			i := int(ci.XYs[k].X)
			e.XYs = append(e.XYs, plotter.XY{X: ci.XYs[k].Y, Y: float64(n - 1 - i)})
			e.XErrors = append(e.XErrors, struct{ Low, High float64 }{ci.YErrors[k].Low, ci.YErrors[k].High})
		}
		eb, err := plotter.NewXErrorBars(e)
		if err != nil {
			return nil, fmt.Errorf("plot gpu_hours: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1)
		eb.CapWidth = vg.Points(5)
		p.Add(shifted{eb, vg.Point{Y: b1.Offset}})
	}
	p.X.Min = 0
	h := max(figH, vg.Length(n)*0.9*vg.Centimeter+2*vg.Centimeter)
	return &figure{name: "gpu_hours", panels: []*plot.Plot{p}, legend: leg, w: figW, h: h}, nil
}

type errXPts struct {
	plotter.XYs
	plotter.XErrors
}

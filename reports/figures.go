package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// cdfPoints returns at most maxPts points (x = value, y = fraction of
// samples <= x) of the empirical CDF of vs, always including the minimum and
// maximum, so a million-request run gives a small, smooth SVG.
func cdfPoints(vs []float64, maxPts int) plotter.XYs {
	s := sortedCopy(vs)
	n := len(s)
	if n == 0 {
		return nil
	}
	m := min(n, maxPts)
	pts := make(plotter.XYs, 0, m+1)
	// Start at (min, 0) so the first step up is drawn: a path whose
	// requests mostly take the same time rises vertically there.
	pts = append(pts, plotter.XY{X: s[0], Y: 0})
	for k := 0; k < m; k++ {
		i := k * (n - 1) / max(m-1, 1)
		// Fraction <= s[i]: step to the last equal sample.
		j := sort.SearchFloat64s(s, math.Nextafter(s[i], math.Inf(1)))
		pts = append(pts, plotter.XY{X: s[i], Y: float64(j) / float64(n)})
	}
	return pts
}

// sortedCopy returns vs sorted, leaving vs as it is.
func sortedCopy(vs []float64) []float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	return s
}

// cdfFigure draws one empirical CDF per named sample set.
func cdfFigure(name, xLabel string, names []string, samples map[string][]float64) (*figure, error) {
	p := newPlot(xLabel, "fraction ≤ x", true)
	p.Y.Min, p.Y.Max = 0, 1
	var all [][]float64
	for _, n := range names {
		all = append(all, samples[n])
	}
	if useLogScale(all...) {
		setLog(&p.X)
		p.X.Label.Text += " (log scale)"
	}
	leg := newLegend()
	for i, n := range names {
		l, err := plotter.NewLine(cdfPoints(samples[n], 500))
		if err != nil {
			return nil, fmt.Errorf("plot %s: %s: %w", name, n, err)
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle = lineStyle(i)
		p.Add(l)
		leg.add(fmt.Sprintf("%s (n=%d)", n, len(samples[n])), l)
	}
	padCDF(p)
	return &figure{name: name, panels: []*plot.Plot{p}, legend: leg}, nil
}

// padCDF widens a CDF panel's x range by a little either side: a CDF's
// first rise from 0 and last rise to 1 are vertical, at the smallest and
// largest samples, and drawn on the axis's edge they vanish into it (the
// longest tail looked cut short of 1).
func padCDF(p *plot.Plot) {
	lo, hi := p.X.Min, p.X.Max
	if !(hi > lo) {
		return
	}
	if _, log := p.X.Scale.(plot.LogScale); log && lo > 0 {
		f := math.Pow(hi/lo, 0.03)
		p.X.Min, p.X.Max = lo/f, hi*f
		return
	}
	d := 0.03 * (hi - lo)
	p.X.Min, p.X.Max = lo-d, hi+d
	if lo >= 0 && p.X.Min < 0 {
		p.X.Min = 0 // a time or size axis does not go below zero
	}
}

// latencyCDF is the per-request latency CDF of each data path.
func latencyCDF(req Requests) (*figure, error) {
	return cdfFigure("latency_cdf", "end-to-end latency (µs)", req.Paths, req.LatencyUS)
}

// stageBreakdown stacks each path's mean time per pipeline stage. Where
// the results name each stage's kind it stacks kinds, in the vocabulary's
// order and each in its own colour, so one colour means one kind of work
// on every path and in every figure; older results stack stage names.
func stageBreakdown(paths []PathResult, order []string) (*figure, error) {
	segs := kindSegments(paths)
	if segs == nil {
		segs = stageSegments(paths, order)
	}
	if len(segs) == 0 {
		return nil, nil
	}
	p := newPlot("data path", "mean time per request (µs)", false)
	names := make([]string, len(paths))
	for i, pr := range paths {
		names[i] = pr.Name
	}
	nominalX(p, names)
	var below *plotter.BarChart
	bars := make([]*plotter.BarChart, len(segs))
	for i, sg := range segs {
		b, err := plotter.NewBarChart(sg.vals, vg.Points(36))
		if err != nil {
			return nil, fmt.Errorf("plot stage_breakdown: stage %s: %w", sg.label, err)
		}
		b.Color = sg.colour
		b.LineStyle.Width = vg.Points(0.5)
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		bars[i] = b
	}
	// The legend reads top-down as the stack does.
	leg := newLegend()
	for i := len(segs) - 1; i >= 0; i-- {
		leg.add(segs[i].label, bars[i])
	}
	p.Y.Min = 0
	// Past four bars the figure widens, so that bars keep their width and
	// stay apart.
	w := figW + vg.Length(max(0, len(paths)-4))*2*vg.Centimeter
	return &figure{name: "stage_breakdown", panels: []*plot.Plot{p}, legend: leg, w: w, h: figH}, nil
}

// segment is one stacked layer of the stage breakdown: a value per path.
type segment struct {
	label  string
	colour color.Color
	vals   plotter.Values
}

// kindColours colours datapath.StageKinds by index: Paul Tol's "muted"
// scheme (colour-blind safe) and a pale grey, ordered so that kinds next
// to each other in a stack differ in lightness as well as hue.
var kindColours = []color.Color{
	color.RGBA{221, 221, 221, 255}, // nic: pale grey
	color.RGBA{51, 34, 136, 255},   // network: indigo
	color.RGBA{204, 102, 119, 255}, // host-cpu: rose
	color.RGBA{68, 170, 153, 255},  // soc: teal
	color.RGBA{221, 204, 119, 255}, // host-copy: sand
	color.RGBA{17, 119, 51, 255},   // dma: green
	color.RGBA{136, 34, 85, 255},   // launch: wine
	color.RGBA{136, 204, 238, 255}, // compute: cyan
	color.RGBA{170, 68, 153, 255},  // sync: purple
	color.RGBA{153, 153, 51, 255},  // reply: olive
}

// kindSegments sums each path's stages by kind, one segment per kind that
// takes time on some path; nil when a path lacks kinds or names one the
// vocabulary does not have (results of another version).
func kindSegments(paths []PathResult) []segment {
	index := map[string]int{}
	for i, k := range datapath.StageKinds {
		index[string(k.Kind)] = i
	}
	sums := make([]plotter.Values, len(datapath.StageKinds))
	for i := range sums {
		sums[i] = make(plotter.Values, len(paths))
	}
	for pi, pr := range paths {
		for st, v := range pr.StagesUS {
			k, ok := index[pr.StageKinds[st]]
			if !ok {
				return nil
			}
			if !math.IsNaN(float64(v)) {
				sums[k][pi] += float64(v)
			}
		}
	}
	var out []segment
	for i, k := range datapath.StageKinds {
		if slices.ContainsFunc(sums[i], func(v float64) bool { return v > 0 }) {
			out = append(out, segment{label: k.Label, colour: kindColours[i%len(kindColours)], vals: sums[i]})
		}
	}
	return out
}

// stageSegments is one segment per stage name, for results without kinds.
func stageSegments(paths []PathResult, order []string) []segment {
	stages := stageOrder(paths, order)
	out := make([]segment, len(stages))
	for si, s := range stages {
		vals := make(plotter.Values, len(paths))
		for i, pr := range paths {
			if v, ok := pr.StagesUS[s]; ok && !math.IsNaN(float64(v)) {
				vals[i] = float64(v)
			}
		}
		out[si] = segment{label: s, colour: stageColour(si, len(stages)), vals: vals}
	}
	return out
}

// stageOrder lists the stages that occur in any path: in requests.csv's
// column order (the pipeline order) where known, then the rest sorted.
func stageOrder(paths []PathResult, order []string) []string {
	// A stage that takes no time on any path (a column shared with other
	// paths' pipelines) would only crowd the legend.
	present := map[string]bool{}
	for _, p := range paths {
		for s, v := range p.StagesUS {
			if float64(v) > 0 {
				present[s] = true
			}
		}
	}
	var out []string
	for _, s := range order {
		if present[s] {
			out = append(out, s)
			delete(present, s)
		}
	}
	var rest []string
	for s := range present {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// barPanel is one bar per name with its value written above the bar.
func barPanel(title, xLabel, yLabel string, names []string, vals []float64, c int) (*plot.Plot, error) {
	p := newPlot(xLabel, yLabel, false)
	panelTitle(p, title)
	nominalX(p, names)
	vs := make(plotter.Values, len(vals))
	var labels []string
	var xys plotter.XYs
	for i, v := range vals {
		if !math.IsNaN(v) {
			vs[i] = v
			labels = append(labels, fmtSig(v))
			xys = append(xys, plotter.XY{X: float64(i), Y: v})
		}
	}
	b, err := plotter.NewBarChart(vs, vg.Points(30))
	if err != nil {
		return nil, err
	}
	b.Color = colour(c)
	p.Add(b)
	if len(xys) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font = font.From(sans, 9)
			l.TextStyle[i].XAlign = draw.XCenter
		}
		l.Offset = vg.Point{Y: vg.Points(3)}
		p.Add(l)
	}
	p.Y.Min = 0
	p.Y.Max = maxOf(vals) * 1.15 // room for the value labels
	return p, nil
}

func maxOf(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		if v > m {
			m = v
		}
	}
	if m == 0 {
		return 1
	}
	return m
}

// costPower shows the paper's two ratios side by side.
func costPower(rows []CostRow) (*figure, error) {
	names := make([]string, len(rows))
	ce := make([]float64, len(rows))
	pe := make([]float64, len(rows))
	for i, r := range rows {
		names[i], ce[i], pe[i] = r.Name, float64(r.CostEffectiveness), float64(r.PowerEfficiency)
	}
	// Both panels relative to the first row (the host), as the paper
	// states its claim: the SmartNIC's gain over the host, +17% and +44%.
	for _, v := range [][]float64{ce, pe} {
		if ref := v[0]; ref > 0 {
			for i := range v {
				v[i] /= ref
			}
		}
	}
	a, err := barPanel("Cost-effectiveness", "scheduler hardware", "throughput per dollar (host = 1)", names, ce, 0)
	if err != nil {
		return nil, fmt.Errorf("plot cost_power: %w", err)
	}
	b, err := barPanel("Power efficiency", "scheduler hardware", "throughput per watt (host = 1)", names, pe, 2)
	if err != nil {
		return nil, fmt.Errorf("plot cost_power: %w", err)
	}
	// The paper's figures on the SmartNIC's bar, where there is one.
	if at := slices.IndexFunc(names, func(n string) bool { return strings.Contains(strings.ToLower(n), "smartnic") }); at > 0 {
		for _, pm := range []struct {
			p    *plot.Plot
			gain float64
		}{{a, 1.17}, {b, 1.44}} {
			l, err := plotter.NewLine(plotter.XYs{{X: float64(at) - 0.25, Y: pm.gain}, {X: float64(at) + 0.25, Y: pm.gain}})
			if err != nil {
				return nil, fmt.Errorf("plot cost_power: %w", err)
			}
			l.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
			// The mark's words left of its dash, in the gap between the
			// bars: above the bar they sat on its value label whenever
			// the run reproduces the paper (paper/cost: 1.169 at +17%).
			lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: float64(at) - 0.25, Y: pm.gain}}, Labels: []string{fmt.Sprintf("paper: %+.0f%%", 100*(pm.gain-1))}})
			if err != nil {
				return nil, fmt.Errorf("plot cost_power: %w", err)
			}
			lab.TextStyle[0].Font = font.From(sans, 9)
			lab.TextStyle[0].XAlign = draw.XRight
			lab.TextStyle[0].YAlign = draw.YCenter
			lab.Offset = vg.Point{X: -vg.Points(3)}
			pm.p.Add(l, lab)
			pm.p.Y.Max = math.Max(pm.p.Y.Max, pm.gain*1.15)
		}
	}
	return &figure{name: "cost_power", panels: []*plot.Plot{a, b}}, nil
}

// gpuHoursCI returns the error bars of a multi-seed run's GPU-hours: the
// 95% CI of each policy's mean, at the policy's position; none for one
// seed.
func gpuHoursCI(pols []PolicyResult) errPts {
	var e errPts
	for i, q := range pols {
		if ci := float64(q.GPUHoursCI95); ci > 0 {
			e.XYs = append(e.XYs, plotter.XY{X: float64(i), Y: nan0(float64(q.GPUHours))})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{ci, ci})
		}
	}
	return e
}

// errBars is what shifted moves: error bars (x or y), whose data range
// and glyph boxes still size the axes.
type errBars interface {
	plot.Plotter
	plot.DataRanger
	plot.GlyphBoxer
}

// shifted draws error bars moved by a length on the page, onto a bar
// chart drawn with that Offset (bar offsets are lengths on the page, not
// data): sideways for vertical bars, up for horizontal ones.
type shifted struct {
	errBars
	by vg.Point
}

// Plot implements plot.Plotter.
func (s shifted) Plot(c draw.Canvas, p *plot.Plot) {
	c.Push()
	defer c.Pop()
	c.Translate(s.by)
	s.errBars.Plot(c, p)
}

func nan0(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// timeUnit picks seconds, hours or days for a span of seconds.
func timeUnit(maxS float64) (string, float64) {
	switch {
	case maxS > 3*86400:
		return "days", 86400
	case maxS > 3*3600:
		return "h", 3600
	}
	return "s", 1
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.PlusGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// Line is one curve of a metric-vs-parameter figure: the mean at each x and
// the half-width of its confidence interval (NaN: no bar).
type Line struct {
	Name            string
	X, Y, HalfWidth []float64
}

type errPts struct {
	plotter.XYs
	plotter.YErrors
}

// metricVsParamStyled draws one line per path or policy with its 95% CI:
// a band on a numeric x, error bars on a categorical one (ticks, when not
// nil, names categorical x positions 0..n-1); line i is drawn in palette
// colour and dash styles[i] (nil: i), so that a run keeps its colour in
// every panel of a comparison whichever lines a panel lacks.
func metricVsParamStyled(name, xLabel, yLabel string, lines []Line, styles []int, logY bool, ticks []string) (*figure, error) {
	return metricVsParamCI(name, xLabel, yLabel, lines, styles, logY, ticks, false)
}

// metricVsParamCI is metricVsParamStyled drawing the CI as error bars
// where bars is set, even on a numeric x: a CI over two seeds (Student t
// of one degree of freedom, 12.7 standard errors) is wide enough that a
// band hides the lines.
func metricVsParamCI(name, xLabel, yLabel string, lines []Line, styles []int, logY bool, ticks []string, bars bool) (*figure, error) {
	p := newPlot(xLabel, yLabel, ticks == nil)
	if logY {
		setLog(&p.Y)
		p.Y.Label.Text += " (log scale)"
		// A flat line (one value everywhere: a metric the swept
		// parameter does not move) gives a log axis no range, which
		// gonum pads below zero: open it a factor of 2 each way.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, ln := range lines {
			for _, y := range ln.Y {
				if y > 0 {
					lo, hi = min(lo, y), max(hi, y)
				}
			}
		}
		if hi > 0 && hi <= lo*(1+1e-9) {
			p.Y.Min, p.Y.Max = lo/2, hi*2
		}
	}
	if ticks != nil {
		nominalX(p, ticks)
	}
	leg := newLegend()
	// Bands first, every line after them: a band drawn after a line
	// painted over it.
	var top []plot.Plotter
	for li, ln := range lines {
		i := li
		if styles != nil {
			i = styles[li]
		}
		var e errPts
		for j := range ln.X {
			y := ln.Y[j]
			if math.IsNaN(y) || logY && y <= 0 {
				continue
			}
			hw := ln.HalfWidth[j]
			if math.IsNaN(hw) {
				hw = 0
			}
			low := hw
			if logY {
				// A CI reaching 0 or below has no place on a log axis:
				// its bar stops at a tenth of the value, as the bands do.
				low = min(hw, y-y/10)
			}
			e.XYs = append(e.XYs, plotter.XY{X: ln.X[j], Y: y})
			e.YErrors = append(e.YErrors, struct{ Low, High float64 }{low, hw})
		}
		if len(e.XYs) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(e.XYs)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %s: %w", name, ln.Name, err)
		}
		l.LineStyle = lineStyle(i)
		sc.Color = colour(i)
		sc.Shape = shapes[i%len(shapes)]
		if ticks == nil && len(e.XYs) > 1 && !bars {
			// A numeric x: the CI is a band around the line.
			band, err := ciBand(e, logY)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %s: %w", name, ln.Name, err)
			}
			if band != nil {
				band.Color = translucent(colour(i), 0.18)
				band.LineStyle.Width = 0
				p.Add(band)
			}
		} else {
			eb, err := plotter.NewYErrorBars(e)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %s: %w", name, ln.Name, err)
			}
			eb.LineStyle.Color = colour(i)
			eb.LineStyle.Width = vg.Points(1)
			eb.CapWidth = vg.Points(6)
			if bars && ticks == nil && len(lines) > 1 {
				// Bars of several lines at one x sit side by side, 4 pt
				// apart, so that one does not hide another.
				top = append(top, shifted{eb, vg.Point{X: vg.Points(4 * (float64(li) - float64(len(lines)-1)/2))}})
			} else {
				top = append(top, eb)
			}
		}
		if ticks != nil {
			// A categorical x: markers and bars, no line between names.
			top = append(top, sc)
			leg.add(ln.Name, sc)
			continue
		}
		top = append(top, l, sc)
		leg.add(ln.Name, l, sc)
	}
	p.Add(top...)
	// Not from zero: lines compare values, and a mean latency of 870
	// against 928 µs drawn from 0 was a few pixels apart.
	return &figure{name: name, panels: []*plot.Plot{p}, legend: leg}, nil
}

// ciBand is the polygon from mean-hw to mean+hw along x (in x order), nil
// where every half-width is zero. On a log axis the lower edge stays above
// zero (a tenth of the mean), where an interval reaching zero cannot be
// drawn.
func ciBand(e errPts, logY bool) (*plotter.Polygon, error) {
	idx := make([]int, len(e.XYs))
	some := false
	for i := range idx {
		idx[i] = i
		some = some || e.YErrors[i].High > 0
	}
	if !some {
		return nil, nil
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(e.XYs[a].X, e.XYs[b].X) })
	ring := make(plotter.XYs, 0, 2*len(idx))
	for _, i := range idx {
		lo := e.XYs[i].Y - e.YErrors[i].Low
		if logY {
			lo = max(lo, e.XYs[i].Y/10)
		}
		ring = append(ring, plotter.XY{X: e.XYs[i].X, Y: lo})
	}
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		ring = append(ring, plotter.XY{X: e.XYs[i].X, Y: e.XYs[i].Y + e.YErrors[i].High})
	}
	return plotter.NewPolygon(ring)
}

// translucent is c with the given opacity.
func translucent(c color.Color, alpha float64) color.Color {
	r, g, b, _ := c.RGBA()
	a := alpha * 0xffff
	return color.NRGBA64{R: uint16(r), G: uint16(g), B: uint16(b), A: uint16(a)}
}

// slantLabels tilts nominal x tick labels so that long names (policy
// names such as naive-share) do not run into each other.
func slantLabels(p *plot.Plot) {
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
}

// nominalX puts names under x = 0, 1, ... (plots made with newPlot(...,
// false) have no vertical grid lines to cut through the bars).
func nominalX(p *plot.Plot, names []string) {
	p.NominalX(names...)
	p.X.Padding = vg.Points(20)
	p.X.Tick.Label.Font = font.From(sans, 10)
}

// allocationCurve draws each policy's GPU allocation ratio against the GPU
// request arrived, both in percent of the cluster's GPU capacity, with the
// diagonal "allocated = arrived" that no policy can exceed.
func allocationCurve(series []Series) (*figure, error) {
	p := newPlot("GPU request arrived (% of GPU capacity)", "GPU allocated (% of GPU capacity)", true)
	leg := newLegend()
	maxX := 0.0
	for i, s := range series {
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			maxX = math.Max(maxX, s.X[j])
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot allocation: policy %s: %w", s.Name, err)
		}
		l.LineStyle = lineStyle(i)
		p.Add(l)
		leg.add(s.Name, l)
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: math.Min(maxX, 100), Y: math.Min(maxX, 100)}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	diag.LineStyle.Color = color.Gray{Y: 128}
	p.Add(diag)
	leg.add("arrived (upper bound)", diag)
	p.Y.Min, p.Y.Max = 0, 100
	return &figure{name: "allocation", panels: []*plot.Plot{p}, legend: leg}, nil
}

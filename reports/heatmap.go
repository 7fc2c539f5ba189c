package reports

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// Maps of a sweep over two numeric parameters (issue 32): the headline
// metrics as a heat map over the two, with contour lines (the paper's 15%
// drawn thick for the gap) and the scenario's own point marked, one map
// per value of any other swept parameter. The cells are the swept values
// in index order, labelled with their values, so a log-spaced sweep is
// drawn evenly; a cell without a value (an unstable point) is grey.

// heatmapMetrics are the metrics drawn as maps, with the level a contour
// marks thick (NaN: none).
var heatmapMetrics = []struct {
	kind, name string // name "" : every entity of the kind
	field      string
	mark       float64
	markLabel  string
}{
	{"derived", "", "gap_pct", 15, "the paper's 15%"},
	{"policies", "conspirator", "vs_baseline.pct", -33, "the paper's -33%"},
	{"policies", "conspirator", "vs_best_baseline.pct", -33, "the paper's -33%"},
	{"training", "esa", "vs_baseline.x", 1.35, "ESA's 1.35x"},
}

// mapGrid is one metric over the two parameters, z[i][j] at x value i and
// y value j, in index space (gonum's GridXYZ).
type mapGrid struct {
	z [][]float64
}

func (g mapGrid) Dims() (c, r int)   { return len(g.z), len(g.z[0]) }
func (g mapGrid) Z(c, r int) float64 { return g.z[c][r] }
func (g mapGrid) X(c int) float64    { return float64(c) }
func (g mapGrid) Y(r int) float64    { return float64(r) }

// indexTicks labels the cells of an axis with their values, at most about
// eight of them.
type indexTicks struct{ labels []string }

func (t indexTicks) Ticks(_, _ float64) []plot.Tick {
	step := max(1, (len(t.labels)+7)/8)
	var out []plot.Tick
	for i, l := range t.labels {
		tk := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			tk.Label = l
		}
		out = append(out, tk)
	}
	return out
}

// stepColours is a palette of given colours.
type stepColours []color.Color

func (p stepColours) Colors() []color.Color { return p }

// swatch is a legend thumbnail filled with one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}})
}

// mapAxes picks the two parameters of agg a map is drawn over: the first
// two with at least two values. ok is false with a note when there are
// not two, or one of them is not numeric.
func mapAxes(agg SweepAggregate) (xi, yi int, note string, ok bool) {
	var swept []int
	for i, p := range agg.Params {
		if len(p.Values) >= 2 {
			swept = append(swept, i)
		}
	}
	if len(swept) < 2 {
		return 0, 0, "", false
	}
	xi, yi = swept[0], swept[1]
	for _, i := range []int{xi, yi} {
		if _, _, numeric := numericAxis(agg.Params[i].Values); !numeric {
			p := agg.Params[i]
			return 0, 0, fmt.Sprintf("No heat map: `%s` is not a numeric axis (values %s); its values are drawn as the lines above instead.", p.Key, strings.Join(p.Values, ", ")), false
		}
	}
	return xi, yi, "", true
}

// ownPoint is where the sweep's scenario itself lies on the two axes, as
// fractional cell indices (NaN where unknown or outside the swept range):
// its values of the two keys, resolved as the sweep's points were.
func ownPoint(dir string, agg SweepAggregate, xi, yi int) (float64, float64) {
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	name := spec.Meta["scenario"]
	if !slices.Contains(scenarios.List(), name) && !filepath.IsAbs(name) {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			name = filepath.Join(dir, name) // the copy an emitted sweep keeps
		}
	}
	var sets []string
	if s := spec.Meta["sets"]; s != "" {
		sets = strings.Split(s, "\n")
	}
	var sc scenarios.Scenario
	if err := scenarios.Load(name, sets, nil, &sc); err != nil {
		return math.NaN(), math.NaN()
	}
	m, err := sim.InputsMap(&sc)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	b, _ := json.Marshal(m)
	var in map[string]any
	if json.Unmarshal(b, &in) != nil {
		return math.NaN(), math.NaN()
	}
	flat := map[string]string{}
	flatten("", in, flat)
	at := func(i int) float64 {
		p := agg.Params[i]
		v, ok := flat[p.Key]
		if !ok {
			return math.NaN()
		}
		// Read with the axis, so that both are in one unit.
		all, _, ok := numericAxis(append(slices.Clone(p.Values), strings.Trim(v, `"`)))
		if !ok {
			return math.NaN()
		}
		return fractionalIndex(all[:len(all)-1], all[len(all)-1])
	}
	return at(xi), at(yi)
}

// fractionalIndex places v among the ascending values xs: index i where
// v == xs[i], in between by log interpolation where all are positive (a
// log-spaced sweep), else linearly; NaN outside.
func fractionalIndex(xs []float64, v float64) float64 {
	for i := 0; i+1 < len(xs); i++ {
		a, b := xs[i], xs[i+1]
		if v < math.Min(a, b) || v > math.Max(a, b) {
			continue
		}
		if a > 0 && b > 0 && v > 0 {
			return float64(i) + math.Log(v/a)/math.Log(b/a)
		}
		if b == a {
			return float64(i)
		}
		return float64(i) + (v-a)/(b-a)
	}
	return math.NaN()
}

// sweepHeatmaps draws the maps of agg (see the comment at the top).
func sweepHeatmaps(dir string, agg SweepAggregate) ([]*figure, string, error) {
	xi, yi, note, ok := mapAxes(agg)
	if !ok {
		return nil, note, nil
	}
	xp, yp := agg.Params[xi], agg.Params[yi]
	xs, _, _ := numericAxis(xp.Values)
	ys, _, _ := numericAxis(yp.Values)
	ownX, ownY := ownPoint(dir, agg, xi, yi)
	fixedKeys, byFixed := groupByOthers(agg.Groups, xi, yi)
	var figs []*figure
	for _, hm := range heatmapMetrics {
		var names []string
		for _, k := range metricKinds(agg) {
			if k.kind != hm.kind {
				continue
			}
			for _, n := range k.names {
				if hm.name == "" || n == hm.name {
					names = append(names, n)
				}
			}
		}
		m := metricNamed(map[string][]metric{"derived": derivedMetrics, "policies": policyMetrics, "training": trainingMetrics}[hm.kind], hm.field)
		for _, name := range names {
			for fi, fixed := range fixedKeys {
				z := make([][]float64, len(xs))
				for i := range z {
					z[i] = make([]float64, len(ys))
					for j := range z[i] {
						z[i][j] = math.NaN()
					}
				}
				some := false
				for _, g := range byFixed[fixed] {
					i := slices.Index(xp.Values, g.Params[xi].Value)
					j := slices.Index(yp.Values, g.Params[yi].Value)
					if e, ok := g.Metrics[hm.kind+"/"+name+"/"+hm.field]; ok && i >= 0 && j >= 0 {
						z[i][j] = e.Mean
						some = some || !math.IsNaN(e.Mean)
					}
				}
				if !some {
					continue
				}
				f, err := heatmapFigure(mapGrid{z}, xp.Values, yp.Values, axisName(xp.Key), axisName(yp.Key), hm.mark, ownX, ownY)
				if err != nil {
					return nil, "", err
				}
				f.name = "map_" + slug(hm.kind+"_"+name+"_"+hm.field)
				if len(fixedKeys) > 1 || fixed != "" {
					f.name += fmt.Sprintf("__%02d", fi+1)
				}
				f.caption = fmt.Sprintf("%s, %s, over `%s` and `%s` (cells: the swept values; grey: no value, an unstable point). Contours: black; thick: %s.", m.label, name, xp.Key, yp.Key, hm.markLabel)
				if !math.IsNaN(ownX) && !math.IsNaN(ownY) {
					f.caption += " The cross: the scenario's own point."
				}
				if fixed != "" {
					f.caption += " Fixed: " + fixed + "."
				}
				figs = append(figs, f)
			}
		}
	}
	return figs, "", nil
}

// heatmapFigure draws g as cells coloured in ten steps of its range, the
// steps named in the legend, with contour lines at round levels and mark
// (if within the range) thick, and a cross at (ownX, ownY).
func heatmapFigure(g mapGrid, xl, yl []string, xLabel, yLabel string, mark, ownX, ownY float64) (*figure, error) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, col := range g.z {
		for _, v := range col {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	const steps = 10
	// Kindlmann's map (luminance rising evenly, readable in grey) without
	// its black and white ends, which read as "nothing" beside the grey of
	// a missing cell.
	cm := moreland.Kindlmann()
	cm.SetMin(0)
	cm.SetMax(1)
	var cols stepColours
	for k := range steps {
		c, err := cm.At(0.12 + 0.74*float64(k)/(steps-1))
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	pal := cols
	hmp := plotter.NewHeatMap(g, pal)
	hmp.Min, hmp.Max = lo, hi
	hmp.NaN = color.Gray{Y: 200}
	p := newPlot(xLabel, yLabel, false)
	p.Add(hmp)
	// Contours at round levels inside the range; mark thick.
	var levels []float64
	for _, t := range (linearTicks{most: 6}).Ticks(lo, hi) {
		if t.Label != "" && t.Value > lo && t.Value < hi && t.Value != mark {
			levels = append(levels, t.Value)
		}
	}
	if len(g.z) > 1 && len(g.z[0]) > 1 {
		if len(levels) > 0 {
			c := plotter.NewContour(g, levels, nil)
			c.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(0.6)}}
			p.Add(c)
		}
		if mark > lo && mark < hi {
			c := plotter.NewContour(g, []float64{mark}, nil)
			c.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(2.2)}}
			p.Add(c)
		}
	}
	if !math.IsNaN(ownX) && !math.IsNaN(ownY) {
		sc, err := plotter.NewScatter(plotter.XYs{{X: ownX, Y: ownY}})
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.White, Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
		p.Add(sc)
	}
	p.X.Tick.Marker = indexTicks{readable(xl)}
	p.Y.Tick.Marker = indexTicks{readable(yl)}
	p.X.Min, p.X.Max = -0.5, float64(len(xl))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(yl))-0.5
	slantLabels(p)
	leg := newLegend()
	leg.TextStyle.Font = font.From(sans, 9)
	for k := steps - 1; k >= 0; k-- {
		a := lo + (hi-lo)*float64(k)/steps
		b := lo + (hi-lo)*float64(k+1)/steps
		leg.add(fmt.Sprintf("%s to %s", fmtSig(a), fmtSig(b)), swatch{pal.Colors()[k]})
	}
	return &figure{panels: []*plot.Plot{p}, legend: leg, w: figW + 2*vg.Centimeter, h: figH + 2*vg.Centimeter}, nil
}

// readable writes byte counts as KiB and MiB ("5033596B" is 4.8MiB);
// other values as swept.
func readable(values []string) []string {
	xs, unit, ok := numericAxis(values)
	if !ok || unit != "B" {
		return values
	}
	out := make([]string, len(xs))
	for i, b := range xs {
		switch {
		case b >= 1<<20:
			out[i] = fmtSig(b/(1<<20)) + "MiB"
		case b >= 1<<10:
			out[i] = fmtSig(b/(1<<10)) + "KiB"
		default:
			out[i] = fmtSig(b) + "B"
		}
	}
	return out
}

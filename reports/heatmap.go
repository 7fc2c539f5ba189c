package reports

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// metrics as a heat map over the two, the reference level (the paper's
// 15% for the gap) as a labelled contour and the scenario's own point
// marked, one map per value of any other swept parameter, titled and
// named by it. The cells are the swept values in index order, so a
// log-spaced sweep is drawn evenly, and the axes are labelled at round
// values placed among them. Issue 38: the maps of one entity share one
// colour scale of round bins from a diverging map centred on the value of
// no difference; the key is titled with the unit; pieces of the contour
// that ring only a cell or two (noise) are left out and counted; a cell
// without a value (an unstable point) is grey.

// heatmapMetrics are the metrics drawn as maps, with the level the
// labelled contour marks (NaN: none).
var heatmapMetrics = []struct {
	kind, name string // name "" : every entity of the kind
	field      string
	mark       float64
	markLabel  string
	// centre is the value of no difference, where the diverging colour
	// map turns: 0 for a percentage gap, 1 for a ratio.
	centre float64
}{
	{"derived", "", "gap_pct", 15, "the paper's 15%", 0},
	{"policies", "conspirator", "vs_baseline.pct", -33, "the paper's -33%", 0},
	{"policies", "conspirator", "vs_best_baseline.pct", -33, "the paper's -33%", 0},
	{"training", "esa", "vs_baseline.x", 1.35, "ESA's 1.35x", 1},
	{"training", "", "vs_none.x", 1, "the level of no aggregation", 1},
}

// mapGrid is one metric over the two parameters, z[i][j] at x value i and
// y value j, in index space (gonum's GridXYZ).
type mapGrid struct {
	z [][]float64
	// hw is each cell's 95% CI half-width (NaN: none); nil: no labels.
	hw [][]float64
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
//
// on says whether a group's other parameters are the scenario's own (the
// cross belongs only on those maps: a scenario at background load 0% or
// with the node list's own mix of GPUs is not on the 80% or 25% map).
func ownPoint(dir string, agg SweepAggregate, xi, yi int) (x, y float64, on func(sweep.Group) bool) {
	x, y, flat := ownValues(dir, agg, xi, yi)
	on = func(g sweep.Group) bool {
		for i, kv := range g.Params {
			if i == xi || i == yi {
				continue
			}
			v, ok := flat[kv.Key]
			if !ok || !sameValue(strings.Trim(v, `"`), kv.Value) {
				return false
			}
		}
		return true
	}
	return x, y, on
}

// sameValue compares a scenario's value with a swept one: as numbers in
// one unit where both read as such (0.25 and 25%), else as written.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	xs, _, ok := numericAxis([]string{a, b})
	return ok && math.Abs(xs[0]-xs[1]) <= 1e-9*math.Max(1, math.Abs(xs[1]))
}

// ownValues is ownPoint's cell position and the scenario's inputs,
// flattened to their keys.
func ownValues(dir string, agg SweepAggregate, xi, yi int) (float64, float64, map[string]string) {
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return math.NaN(), math.NaN(), nil
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
		return math.NaN(), math.NaN(), nil
	}
	m, err := sim.InputsMap(&sc)
	if err != nil {
		return math.NaN(), math.NaN(), nil
	}
	b, _ := json.Marshal(m)
	var in map[string]any
	if json.Unmarshal(b, &in) != nil {
		return math.NaN(), math.NaN(), nil
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
	return at(xi), at(yi), flat
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

// A map drawn: one entity's metric at one value of the other parameters.
type mapPanel struct {
	name, fixed string
	z, hw       [][]float64 // the means and their 95% CI half-widths
}

// sweepHeatmaps draws the maps of agg (see the comment at the top). Every
// map of one entity's metric (the 0% and the 80% load map of conspirator's
// gap) shares one colour scale, so a colour means one value on all of
// them; entities get their own (tcp's gap reaches -119%, which would
// leave conspirator's 15% in one bin).
func sweepHeatmaps(dir string, agg SweepAggregate) ([]*figure, string, error) {
	xi, yi, note, ok := mapAxes(agg)
	if !ok {
		return nil, note, nil
	}
	xp, yp := agg.Params[xi], agg.Params[yi]
	xs, xu, _ := numericAxis(xp.Values)
	ys, yu, _ := numericAxis(yp.Values)
	ownX, ownY, ownOn := ownPoint(dir, agg, xi, yi)
	fixedKeys, byFixed := groupByOthers(agg.Groups, xi, yi)
	fixedNames := fixedFileNames(fixedKeys)
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
		// Every map of the metric, over every entity and fixed value,
		// shares one colour scale.
		var panels []mapPanel
		var hws []float64 // the cells' 95% CI half-widths
		for _, name := range names {
			for _, fixed := range fixedKeys {
				z, zhw := make([][]float64, len(xs)), make([][]float64, len(xs))
				for i := range z {
					z[i], zhw[i] = make([]float64, len(ys)), make([]float64, len(ys))
					for j := range z[i] {
						z[i][j], zhw[i][j] = math.NaN(), math.NaN()
					}
				}
				some := false
				for _, g := range byFixed[fixed] {
					i := slices.Index(xp.Values, g.Params[xi].Value)
					j := slices.Index(yp.Values, g.Params[yi].Value)
					if e, ok := g.Metrics[hm.kind+"/"+name+"/"+hm.field]; ok && i >= 0 && j >= 0 {
						z[i][j] = e.Mean
						some = some || !math.IsNaN(e.Mean)
						if hw := halfWidth(g, hm.kind, name, m); !math.IsNaN(e.Mean) && !math.IsNaN(hw) {
							hws = append(hws, hw)
							zhw[i][j] = hw
						}
					}
				}
				if some {
					panels = append(panels, mapPanel{name: name, fixed: fixed, z: z, hw: zhw})
				}
			}
		}
		if len(panels) == 0 {
			continue
		}
		{
			var all [][]float64
			for _, p := range panels {
				all = append(all, p.z...)
			}
			// A step finer than the cells' CIs colours noise, and one as
			// coarse as the noisiest cell's hides the others' clear
			// differences: no finer than the median half-width. Colour
			// is binned on the mean; each cell's own CI is in its label.
			ci := 0.0
			if len(hws) > 0 {
				slices.Sort(hws)
				ci = hws[len(hws)/2]
			}
			sc := newMapScale(all, hm.centre, ci)
			keyTitle := m.label
			if m.short != "" {
				keyTitle = m.short
			}
			for _, p := range panels {
				name := p.name
				title := name
				if p.fixed != "" {
					title += ", " + fixedWords(p.fixed)
				}
				px, py := ownX, ownY
				if g := byFixed[p.fixed]; len(g) == 0 || !ownOn(g[0]) {
					px, py = math.NaN(), math.NaN()
				}
				mark, markLabel := hm.mark, hm.markLabel
				if hm.kind == "training" && hm.field == "vs_baseline.x" && !agg.prov.esaOverATP() {
					mark, markLabel = math.NaN(), "" // ESA's 1.35x is over ATP, not this baseline
				}
				grid := mapGrid{z: p.z}
				if len(xs)*len(ys) <= labelCellsUpTo {
					grid.hw = p.hw
				}
				f, dropped, hit, err := heatmapFigure(grid, sc, mapAxis{xp.Values, xs, xu, agg.axisLabel(xp.Key)}, mapAxis{yp.Values, ys, yu, agg.axisLabel(yp.Key)}, title, keyTitle, mark, markLabel, px, py)
				if err != nil {
					return nil, "", err
				}
				f.name = "map_" + slug(hm.kind+"_"+name+"_"+hm.field)
				if fn := fixedNames[p.fixed]; fn != "" {
					f.name += "__" + fn
				}
				f.caption = fmt.Sprintf("%s, %s, over `%s` and `%s`", m.label, name, xp.Key, yp.Key)
				if p.fixed != "" {
					f.caption += ", at " + fixedWords(p.fixed)
				}
				f.caption += fmt.Sprintf(". Cells: the swept values, coloured in steps of %s", fmtSig(sc.step))
				if len(panels) > 1 {
					f.caption += fmt.Sprintf(" on one scale for all %d maps of this metric", len(panels))
				}
				f.caption += fmt.Sprintf(", diverging at %s; the pale centre bin is within half a step of it", fmtSig(hm.centre))
				if len(hws) > 0 {
					f.caption += fmt.Sprintf(". The cells' 95%% CI half-widths: median %s, largest %s (aggregate.csv has each); the step is no finer than the median, and colour is binned on the mean alone, so two cells of different colours may still overlap within their CIs", fmtSig(ci), fmtSig(hws[len(hws)-1]))
				}
				f.caption += "."
				if sc.nan {
					f.caption += " Ochre: no value (an unstable point)."
				}
				if grid.hw != nil {
					f.caption += " Each cell is labelled with its mean ± its 95% CI half-width over the seeds."
				}
				switch {
				case math.IsNaN(mark):
				case hit:
					f.caption += fmt.Sprintf(" The line: %s.", markLabel)
				default:
					f.caption += " " + noContour(p.z, mark, markLabel)
				}
				if dropped > 0 {
					f.caption += fmt.Sprintf(" %d piece(s) of that line ringing only one or two cells (within one seed's noise) left out.", dropped)
				}
				if !math.IsNaN(px) && !math.IsNaN(py) {
					f.caption += " The cross: the scenario's own point."
				}
				figs = append(figs, f)
			}
		}
	}
	return figs, "", nil
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fixedWords writes the fixed parameters of a map ("k.a_b=80%, ...") as a
// title reads them: "a b 80%, ...".
func fixedWords(fixed string) string {
	var out []string
	for _, kv := range strings.Split(fixed, ", ") {
		k, v, _ := strings.Cut(kv, "=")
		parts := strings.Split(k, ".")
		k = parts[len(parts)-1]
		// A bare word ("count", "rate") says little alone: with the
		// element before it, its index dropped ("gpus count").
		if !strings.Contains(k, "_") && len(parts) > 1 {
			prev, _, _ := strings.Cut(parts[len(parts)-2], "[")
			k = prev + " " + k
		}
		out = append(out, strings.ReplaceAll(k, "_", " ")+" "+v)
	}
	return strings.Join(out, ", ")
}

// fixedFileNames gives each combination of fixed parameters a file-name
// part that says it ("background_load_80pct"), made unique by a number
// where two would read the same; "" for the lone "" of a sweep with no
// other parameter.
func fixedFileNames(keys []string) map[string]string {
	out := map[string]string{}
	seen := map[string]int{}
	for _, k := range keys {
		if k == "" {
			out[k] = ""
			continue
		}
		n := slug(strings.ReplaceAll(fixedWords(k), "%", "pct"))
		if n == "" {
			n = "fixed"
		}
		seen[n]++
		if seen[n] > 1 {
			n += fmt.Sprintf("_%d", seen[n])
		}
		out[k] = n
	}
	return out
}

// mapScale is a map's colour key: bins of one round step from lo, their
// colours from a diverging map centred at centre (the same distance from
// it, the same strength of colour either side).
type mapScale struct {
	lo, step float64
	bins     int
	cols     []color.Color
	centre   float64
	nan      bool // some cell has no value
}

// newMapScale picks the smallest round step (1, 2 or 5 times a power of
// ten) that covers the values of zs in at most 12 bins, the middle one
// centred on centre (-5 to 5 for a step of 10): values within half a step
// of no difference, where one seed's noise flips the sign, share the
// diverging map's neutral colour, and a sign is coloured only where it is
// at least half a step clear.
func newMapScale(zs [][]float64, centre, minStep float64) mapScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	nan := false
	for _, col := range zs {
		for _, v := range col {
			if math.IsNaN(v) {
				nan = true
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = centre, centre
	}
	const most = 12
	var s mapScale
	s.centre, s.nan = centre, nan
	// One value (or none) still needs a step: its distance from the
	// centre sets it.
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(hi-centre), 1e-9)
	}
	e := math.Pow10(int(math.Floor(math.Log10(math.Max(span/most, minStep)))))
	for _, m := range []float64{1, 2, 5, 10, 20, 50} {
		step := m * e
		if step < minStep {
			continue // finer than the cells' CI (e <= minStep < 10 e)
		}
		k0 := math.Floor((lo-centre)/step - 0.5 + 1e-9)
		k1 := math.Ceil((hi-centre)/step - 0.5 - 1e-9)
		if k1 <= k0 {
			k1 = k0 + 1
		}
		if n := int(k1 - k0); n <= most {
			s.lo, s.step, s.bins = centre+(k0+0.5)*step, step, n
			break
		}
	}
	reach := math.Max(math.Abs(s.lo-centre), math.Abs(s.lo+float64(s.bins)*s.step-centre))
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	for k := range s.bins {
		mid := s.lo + (float64(k)+0.5)*s.step
		c, err := cm.At(math.Max(-1, math.Min(1, (mid-centre)/reach)))
		if err != nil {
			c = color.Gray{Y: 128}
		}
		s.cols = append(s.cols, c)
	}
	return s
}

// edge is bin k's lower edge (k = bins: the top), rounded to the step's
// precision so that a label reads 0.3, not 0.30000000000000004.
func (s mapScale) edge(k int) float64 {
	v := s.lo + float64(k)*s.step
	return math.Round(v/s.step*2) / 2 * s.step
}

func (s mapScale) colourOf(v float64) color.Color {
	if math.IsNaN(v) {
		return mapNaN
	}
	k := int(math.Floor((v - s.lo) / s.step))
	return s.cols[max(0, min(s.bins-1, k))]
}

// mapNaN is a missing cell: ochre, a hue the blue-red diverging map has
// nowhere (a grey was read as its pale centre).
var mapNaN = color.RGBA{R: 196, G: 160, B: 40, A: 255}

// noContour says where the cells of z lie against mark when no line of
// it is drawn: all on one side, or crossing it only between single cells
// (pieces left out as noise).
func noContour(z [][]float64, mark float64, label string) string {
	above, below := 0, 0
	for _, col := range z {
		for _, v := range col {
			switch {
			case math.IsNaN(v):
			case v >= mark:
				above++
			default:
				below++
			}
		}
	}
	switch {
	case above == 0:
		return fmt.Sprintf("Every cell is below %s (%s): no line of it.", label, fmtSig(mark))
	case below == 0:
		return fmt.Sprintf("Every cell is at or above %s (%s): no line of it.", label, fmtSig(mark))
	}
	return fmt.Sprintf("Cells lie on both sides of %s (%s), but no line of it survives the noise filter.", label, fmtSig(mark))
}

// cells draws a grid's cells in its scale's colours, cell (i, j) centred
// on (i, j).
type cells struct {
	g  mapGrid
	sc mapScale
	// ownX, ownY: the scenario's own point (NaN: none), which a cell's
	// label keeps clear of.
	ownX, ownY float64
}

func (cl cells) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	nx, ny := cl.g.Dims()
	for i := range nx {
		for j := range ny {
			// A hair wider than the cell, so that anti-aliasing leaves no
			// pale seams between cells.
			x0, x1 := trX(float64(i)-0.5)-0.3, trX(float64(i)+0.5)+0.3
			y0, y1 := trY(float64(j)-0.5)-0.3, trY(float64(j)+0.5)+0.3
			col := cl.sc.colourOf(cl.g.Z(i, j))
			c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}})
			if v := cl.g.Z(i, j); cl.g.hw != nil && !math.IsNaN(v) {
				// The mean and its CI, in black or white as the cell is
				// light or dark.
				ink := color.Color(color.Black)
				if r, g, b, _ := col.RGBA(); 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) < 0.5*0xffff {
					ink = color.White
				}
				ts := draw.TextStyle{Color: ink, Font: font.From(sans, 7), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
				// At the cell's centre, on its row's and column's ticks;
				// above it in the cell of the scenario's own point, whose
				// cross stands at the centre.
				y := float64(j)
				if math.Abs(cl.ownX-float64(i)) < 0.5 && math.Abs(cl.ownY-float64(j)) < 0.5 {
					y += 0.3
				}
				c.FillText(ts, vg.Point{X: trX(float64(i)), Y: trY(y)}, meanCI(v, cl.g.hw[i][j]))
			}
		}
	}
}

// meanCI writes a mean and its 95% CI half-width to the CI's first
// significant digit ("1.017 ± 0.008"); the mean alone (4 significant
// digits) without one.
func meanCI(v, hw float64) string {
	if math.IsNaN(hw) || !(hw > 0) {
		return fmtSig(v)
	}
	d := max(0, -int(math.Floor(math.Log10(hw))))
	return strconv.FormatFloat(v, 'f', d, 64) + " ± " + strconv.FormatFloat(hw, 'f', d, 64)
}

// labelCellsUpTo is the most cells a map labels with their values: a
// sweep of a few values each way (paper/ina's 5 x 3) reads them; one of
// 20 x 20 would be text over colour.
const labelCellsUpTo = 48

// mapAxis is one axis of a map: the swept values as written and as
// numbers in unit, and its label.
type mapAxis struct {
	values []string
	xs     []float64
	unit   string
	label  string
}

// roundTicks labels an axis drawn in index space: at round values (1, 10,
// 100 of the axis's unit, in KiB and MiB for bytes and µs and ms for
// seconds; 2 and 5 between where fewer than three powers fall in range)
// placed at their fractional index, where the values are positive and
// span a factor of ten over more than eight cells; otherwise at the swept
// values themselves. With a few cells every cell carries its own value: a
// round tick between two cells (1000 between 100 and 2000) reads as the
// value of the cell it falls in.
func roundTicks(a mapAxis) plot.Ticker {
	lo, hi := slices.Min(a.xs), slices.Max(a.xs)
	if len(a.xs) <= 8 || !(lo > 0) || hi < 10*lo || !slices.IsSorted(a.xs) {
		return indexTicks{readable(a.values)}
	}
	var ticks []plot.Tick
	for _, ms := range [][]float64{{1}, {1, 2, 5}} {
		ticks = ticks[:0]
		for e := int(math.Floor(math.Log10(lo))) - 1; e <= int(math.Ceil(math.Log10(hi)))+1; e++ {
			for _, m := range ms {
				v := m * math.Pow10(e)
				if a.unit == "B" {
					v = binaryRound(m, e)
				}
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				ticks = append(ticks, plot.Tick{Value: fractionalIndex(a.xs, v), Label: unitLabel(v, a.unit)})
			}
		}
		if len(ticks) >= 3 {
			break
		}
	}
	slices.SortFunc(ticks, func(p, q plot.Tick) int { return cmpFloat(p.Value, q.Value) })
	return plot.ConstantTicks(ticks)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// binaryRound is m x 10^e of the binary unit it falls in: 10^e bytes
// below 1 KiB, 10^(e-3) KiB below 1 MiB, 10^(e-6) MiB above (1 KiB, 10
// KiB, 100 KiB, 1 MiB: round numbers as a reader writes sizes).
func binaryRound(m float64, e int) float64 {
	switch {
	case e < 3:
		return m * math.Pow10(e)
	case e < 6:
		return m * math.Pow10(e-3) * (1 << 10)
	case e < 9:
		return m * math.Pow10(e-6) * (1 << 20)
	}
	return m * math.Pow10(e-9) * (1 << 30)
}

// unitLabel writes v (in unit) with a readable prefix: 1e-4 s as 100µs,
// 102400 B as 100KiB.
func unitLabel(v float64, unit string) string {
	trim := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	switch unit {
	case "s":
		switch {
		case v < 1e-3:
			return trim(v*1e6) + "µs"
		case v < 1:
			return trim(v*1e3) + "ms"
		}
		return trim(v) + "s"
	case "B":
		switch {
		case v >= 1<<30:
			return trim(v/(1<<30)) + "GiB"
		case v >= 1<<20:
			return trim(v/(1<<20)) + "MiB"
		case v >= 1<<10:
			return trim(v/(1<<10)) + "KiB"
		}
		return trim(v) + "B"
	}
	return trim(v) + unit
}

// heatmapFigure draws g in the colours of sc, the colour key beside it
// (titled keyTitle), the contour at mark thick and labelled (its pieces
// that ring only a cell or two left out: dropped counts them; hit says
// whether any crossing was found), and a cross at (ownX, ownY).
func heatmapFigure(g mapGrid, sc mapScale, xa, ya mapAxis, title, keyTitle string, mark float64, markLabel string, ownX, ownY float64) (f *figure, dropped int, hit bool, err error) {
	p := newPlot(xa.label, ya.label, false)
	panelTitle(p, title)
	p.Add(cells{g, sc, ownX, ownY})
	if !math.IsNaN(mark) {
		var kept [][]vg.Point
		for _, piece := range contourPaths(g.z, mark) {
			hit = true
			if smallPiece(piece) {
				dropped++
				continue
			}
			kept = append(kept, piece)
		}
		if len(kept) > 0 {
			p.Add(labelledContour{paths: kept, label: contourLabel(markLabel), avoid: []plotter.XY{{X: ownX, Y: ownY}}})
		}
	}
	leg := newLegend()
	leg.TextStyle.Font = font.From(sans, 9)
	leg.add(keyTitle)
	for k := sc.bins - 1; k >= 0; k-- {
		leg.add(fmt.Sprintf("%s to %s", trimFloat(sc.edge(k)), trimFloat(sc.edge(k+1))), swatch{sc.cols[k]})
	}
	if sc.nan {
		leg.add("no value (unstable)", swatch{mapNaN})
	}
	if !math.IsNaN(ownX) && !math.IsNaN(ownY) {
		halo, err := plotter.NewScatter(plotter.XYs{{X: ownX, Y: ownY}})
		if err != nil {
			return nil, 0, false, err
		}
		halo.GlyphStyle = draw.GlyphStyle{Color: color.White, Radius: vg.Points(7), Shape: thickCross{vg.Points(4)}}
		sc2, err := plotter.NewScatter(plotter.XYs{{X: ownX, Y: ownY}})
		if err != nil {
			return nil, 0, false, err
		}
		sc2.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: thickCross{vg.Points(1.6)}}
		p.Add(halo, sc2)
		leg.add("the scenario's own point", sc2)
	}
	p.X.Tick.Marker = roundTicks(xa)
	p.Y.Tick.Marker = roundTicks(ya)
	p.X.Min, p.X.Max = -0.5, float64(len(xa.values))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(ya.values))-0.5
	return &figure{panels: []*plot.Plot{p}, legend: leg, w: figW + 2*vg.Centimeter, h: figH + 2*vg.Centimeter}, dropped, hit, nil
}

// contourLabel is the short text on the line: "paper: 15%" for "the
// paper's 15%".
func contourLabel(markLabel string) string {
	if who, what, ok := strings.Cut(markLabel, "'s "); ok {
		return strings.TrimPrefix(who, "the ") + ": " + what
	}
	return markLabel
}

// trimFloat writes a round bin edge without trailing zeros.
func trimFloat(v float64) string {
	if v == 0 {
		return "0" // never "-0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// thickCross is a cross glyph drawn with lines of a given width (gonum's
// CrossGlyph takes the glyph style's, which has none).
type thickCross struct{ w vg.Length }

func (t thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: t.w}
	r := sty.Radius
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// readable writes byte counts as KiB and MiB ("5033596B" is 4.8MiB);
// other values as swept.
func readable(values []string) []string {
	xs, unit, ok := numericAxis(values)
	if ok && unit == "/s" && slices.Max(xs) < 1 {
		// An arrival rate below one a second reads as so many a minute
		// or an hour (0.016667/s is 1/min).
		out := make([]string, len(xs))
		for i, r := range xs {
			switch {
			case r*60 >= 1 || r == 0:
				out[i] = fmtSig(r*60) + "/min"
			default:
				out[i] = fmtSig(r*3600) + "/h"
			}
		}
		return out
	}
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

// reference is a metric's value of no difference and the paper's value.
type reference struct {
	centre, mark float64
	markLabel    string
}

// referenceOf is the reference of a signed percentage among
// heatmapMetrics (the gap, the saving): lines of it are drawn against
// both. A ratio (esa's speedup) has its own line at 1 (referenceAt1).
func referenceOf(kind, field string) (reference, bool) {
	for _, hm := range heatmapMetrics {
		if hm.kind == kind && hm.field == field && hm.centre == 0 {
			return reference{hm.centre, hm.mark, hm.markLabel}, true
		}
	}
	return reference{}, false
}

// referenceLines draws r across the x range of f's one panel: the value
// of no difference solid grey, the paper's dashed black, both in the
// legend, the axis stretched to show them.
func referenceLines(f *figure, xs []float64, r reference) error {
	lo, hi := slices.Min(xs), slices.Max(xs)
	for _, ref := range []struct {
		y     float64
		label string
		sty   draw.LineStyle
	}{
		{r.centre, "no difference", draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1)}},
		{r.mark, r.markLabel, draw.LineStyle{Color: color.Black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}},
	} {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: ref.y}, {X: hi, Y: ref.y}})
		if err != nil {
			return fmt.Errorf("plot %s: %w", f.name, err)
		}
		l.LineStyle = ref.sty
		f.panels[0].Add(l)
		f.legend.add(ref.label, l)
	}
	return nil
}

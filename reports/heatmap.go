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
// values placed among them. Issue 38: a diverging map centred on the
// value of no difference; the key is titled with the unit; pieces of the
// contour that ring only a cell or two (noise) are left out and counted;
// a cell without a value (an unstable point) is ochre. Issue 53: the
// colour carries the mean in steps fine enough to tell the cells apart
// (at most mapMostBins bins over the values, edges on round numbers with
// one at no difference), each comparison on its own scale (tcp's -130%
// would leave conspirator's 5% and 15% in one bin) shared by its maps
// over the other parameters' values; whether a cell's 95% CI excludes no
// difference is drawn apart from the colour, as hatching over the cells
// whose CI includes it; the title names the compared entity and its
// baseline; the paper's figure is drawn only on the comparison it is the
// paper's for.

// heatmapMetrics are the metrics drawn as maps, with the level the
// labelled contour marks (NaN: none).
var heatmapMetrics = []struct {
	kind, name string // name "" : every entity of the kind
	field      string
	mark       float64
	markLabel  string
	// markFor is the one entity whose comparison mark is the figure of
	// ("": every entity's): the paper's 15% is conspirator's over
	// host-rdma, not gpudirect's; ESA's 1.35x is esa's over ATP.
	markFor string
	// centre is the value of no difference, where the diverging colour
	// map turns: 0 for a percentage gap, 1 for a ratio.
	centre float64
	// scale names a colour scale shared by the maps of every entity of
	// every metric that names it (a training sweep's speedups, over the
	// baseline and over none, so that a policy's colour reads against
	// another's); "": one scale per entity's comparison.
	scale string
	// what is what the comparison measures, in a map's title; key
	// titles the colour key (with the unit; the title names the
	// baseline).
	what, key string
}{
	{"derived", "", "gap_pct", 15, "the paper's 15%", "conspirator vs host-rdma", 0, "", "mean end-to-end time, % lower", "below host-rdma (%)"},
	{"policies", "conspirator", "vs_baseline.pct", -33, "the paper's -33%", "conspirator", 0, "", "GPU-hours, % change", "GPU-hours change (%)"},
	{"policies", "conspirator", "vs_best_baseline.pct", -33, "the paper's -33%", "conspirator", 0, "", "GPU-hours, % change", "GPU-hours change (%)"},
	{"training", "", "vs_baseline.x", 1.35, "ESA's 1.35x", "esa", 1, "training speedup", "JCT speedup", "JCT speedup (x)"},
	// No line at 1 over none: the colour turns from blue to red there.
	{"training", "", "vs_none.x", math.NaN(), "", "", 1, "training speedup", "JCT speedup", "JCT speedup (x)"},
}

// mapMostBins is the most colour bins of a map's scale: fine enough that
// a scale over -15% to 45% has steps of 5 (5% and 15% in bins of their
// own), few enough that neighbouring bins stay apart and the key fits
// beside the map.
const mapMostBins = 16

// mapTint is the least strength of colour (of the diverging map's 1) of
// a bin beside the centre.
const mapTint = 0.12

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
	hm          int // index in heatmapMetrics
	name, fixed string
	z, hw       [][]float64 // the means and their 95% CI half-widths
}

// mapScaleKey is the colour scale a panel of heatmapMetrics[hm] for
// entity name is drawn on: the metric's shared scale, or its own
// comparison's.
func mapScaleKey(hm int, name string) string {
	if s := heatmapMetrics[hm].scale; s != "" {
		return s
	}
	h := heatmapMetrics[hm]
	return h.kind + "/" + name + "/" + h.field
}

// mapMarkOn says whether heatmapMetrics[hm]'s mark belongs on entity
// name's map: only on the comparison the paper's figure is of (the 15%
// on conspirator vs host-rdma, not gpudirect vs host-rdma), and ESA's
// 1.35x only where the baseline is ATP.
func (agg SweepAggregate) mapMarkOn(hm int, name string) bool {
	h := heatmapMetrics[hm]
	switch {
	case math.IsNaN(h.mark):
		return false
	case h.markFor != "" && h.markFor != name:
		return false
	case h.kind == "training" && h.field == "vs_baseline.x" && !agg.prov.esaOverATP():
		return false // ESA's 1.35x is over ATP, not this baseline
	}
	return true
}

// mapBaseline is what heatmapMetrics[hm] compares entity name with: the
// compared entity and the baseline, as a map's title names them.
func (agg SweepAggregate) mapBaseline(hm int, name string) (compared, baseline string) {
	h := heatmapMetrics[hm]
	input := func(key string) string { return strings.Trim(agg.prov.inputs[key], `"`) }
	switch {
	case h.kind == "derived":
		if a, b, ok := strings.Cut(name, " vs "); ok {
			return a, b
		}
		return name, "host-rdma"
	case h.field == "vs_best_baseline.pct":
		return name, "the best baseline"
	case h.field == "vs_none.x":
		return name, "none"
	case h.kind == "training":
		baseline = agg.prov.baseline
		if baseline == "" {
			baseline = input("training.baseline")
		}
	default:
		baseline = input("cluster.baseline")
	}
	if baseline == "" {
		baseline = "the baseline"
	}
	return name, baseline
}

// mapTitle is a map's title: the comparison, what it measures and the
// other parameters' values ("conspirator vs host-rdma (mean end-to-end
// time, % lower), background load 80%"; "esa over atp (JCT speedup)"), on
// a second line where one would not fit the map's width.
func (agg SweepAggregate) mapTitle(hm int, name, fixed string) string {
	h := heatmapMetrics[hm]
	a, b := agg.mapBaseline(hm, name)
	vs := " vs "
	if h.centre == 1 {
		vs = " over " // a speedup over its baseline
	}
	title := a + vs + b + " (" + h.what + ")"
	if fixed != "" {
		sep := ", "
		if len(title)+len(fixedWords(fixed)) > 60 {
			sep = ",\n"
		}
		title += sep + fixedWords(fixed)
	}
	return title
}

// bestBaselines are the policies of a cluster sweep that vs_best_baseline
// picks the best of at each point: neither the project's (conspirator...)
// nor an exact solver (optimal...), as sim/cluster's bestBaseline.
func (agg SweepAggregate) bestBaselines() []string {
	var out []string
	for _, n := range agg.Policies {
		if !strings.HasPrefix(n, "conspirator") && !strings.HasPrefix(n, "optimal") {
			out = append(out, n)
		}
	}
	return out
}

// sweepHeatmaps draws the maps of agg (see the comment at the top). Every
// map of one comparison (the 0% and the 80% load map of conspirator's
// gap) shares one colour scale, so a colour means one value on all of
// them; comparisons get their own (tcp's gap reaches -119%, which would
// leave conspirator's 5% and 15% in one bin), but for those of a metric
// that names a shared scale (a training sweep's speedups).
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
	var panels []mapPanel
	for hi, hm := range heatmapMetrics {
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
		m := hmMetric(hi)
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
							zhw[i][j] = hw
						}
					}
				}
				// A map of an entity against itself (the baseline's
				// speedup over the baseline) has no value: not drawn.
				if some {
					panels = append(panels, mapPanel{hm: hi, name: name, fixed: fixed, z: z, hw: zhw})
				}
			}
		}
	}
	// One colour scale per comparison (or shared scale), over all its
	// maps.
	scaleOf := map[string]mapScale{}
	count := map[string]int{}
	{
		all := map[string][][]float64{}
		var keys []string
		for _, p := range panels {
			k := mapScaleKey(p.hm, p.name)
			if _, ok := all[k]; !ok {
				keys = append(keys, k)
			}
			all[k] = append(all[k], p.z...)
			count[k]++
		}
		for _, k := range keys {
			centre := 0.0
			for _, p := range panels {
				if mapScaleKey(p.hm, p.name) == k {
					centre = heatmapMetrics[p.hm].centre
					break
				}
			}
			scaleOf[k] = newMapScale(all[k], centre)
		}
	}
	var figs []*figure
	for _, p := range panels {
		hm := heatmapMetrics[p.hm]
		m := hmMetric(p.hm)
		key := mapScaleKey(p.hm, p.name)
		sc := scaleOf[key]
		keyTitle := hm.key
		px, py := ownX, ownY
		if g := byFixed[p.fixed]; len(g) == 0 || !ownOn(g[0]) {
			px, py = math.NaN(), math.NaN()
		}
		mark, markLabel := math.NaN(), ""
		if agg.mapMarkOn(p.hm, p.name) {
			mark, markLabel = hm.mark, hm.markLabel
		}
		grid := mapGrid{z: p.z, hw: p.hw}
		labels := len(xs)*len(ys) <= labelCellsUpTo
		f, dropped, hit, err := heatmapFigure(grid, sc, labels, mapAxis{xp.Values, xs, xu, agg.axisLabel(xp.Key)}, mapAxis{yp.Values, ys, yu, agg.axisLabel(yp.Key)}, agg.mapTitle(p.hm, p.name, p.fixed), keyTitle, mark, markLabel, px, py)
		if err != nil {
			return nil, "", err
		}
		f.name = "map_" + slug(hm.kind+"_"+p.name+"_"+hm.field)
		if fn := fixedNames[p.fixed]; fn != "" {
			f.name += "__" + fn
		}
		a, b := agg.mapBaseline(p.hm, p.name)
		f.caption = fmt.Sprintf("%s: %s against %s", capitalise(m.label), a, b)
		if hm.field == "vs_best_baseline.pct" {
			if bb := agg.bestBaselines(); len(bb) > 0 {
				f.caption += " (at each point the one of " + strings.Join(bb, ", ") + " with the fewest GPU-hours)"
			}
		}
		f.caption += fmt.Sprintf(", over `%s` and `%s`", xp.Key, yp.Key)
		if p.fixed != "" {
			f.caption += ", at " + fixedWords(p.fixed)
		}
		f.caption += ". " + sc.describe(count[key], hm.scale != "")
		f.caption += " " + mapCIWords(p.z, p.hw, sc.centre, len(agg.Seeds))
		if sc.nan {
			f.caption += " Ochre: no value (an unstable point)."
		}
		if labels {
			f.caption += " Each cell is labelled with its mean"
			if anyFinite(p.hw) {
				f.caption += " ± its 95% CI half-width"
			}
			f.caption += "."
		}
		switch {
		case math.IsNaN(mark):
			if !math.IsNaN(hm.mark) && hm.markFor != "" && hm.markFor != p.name {
				f.caption += fmt.Sprintf(" No line of %s here: it is %s's figure, drawn on that map alone.", hm.markLabel, hm.markFor)
			}
		case !sc.covers(mark):
			f.caption += " " + outsideRange(sc, mark, markLabel)
			f.legend.add(fmt.Sprintf("%s: outside this range", markLabel))
		case hit:
			f.caption += fmt.Sprintf(" The line: %s.", markLabel)
		default:
			f.caption += " " + noContour(p.z, mark, markLabel)
			f.legend.add(markLabel + ": " + mapSide(p.z, mark))
		}
		if dropped > 0 {
			f.caption += fmt.Sprintf(" %d piece(s) of that line ringing only one or two cells (within one seed's noise) left out.", dropped)
		}
		if !math.IsNaN(px) && !math.IsNaN(py) {
			f.caption += " The cross: the scenario's own point."
		}
		figs = append(figs, f)
	}
	if f := agg.bestPolicyMap(xi, yi, xs, ys, xu, yu, byFixed, fixedKeys, fixedNames, ownX, ownY, ownOn); f != nil {
		figs = append(figs, f...)
	}
	return figs, "", nil
}

// hmMetric is the metric heatmapMetrics[hm] maps.
func hmMetric(hm int) metric {
	h := heatmapMetrics[hm]
	return metricNamed(map[string][]metric{"derived": derivedMetrics, "policies": policyMetrics, "training": trainingMetrics}[h.kind], h.field)
}

func anyFinite(zs [][]float64) bool {
	for _, col := range zs {
		for _, v := range col {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// ciIncludes says whether a cell's 95% CI (mean v, half-width hw)
// includes centre: the colour's sign is then not told apart from no
// difference, and the cell is hatched. A cell without a CI (one seed)
// is not: it has nothing to say either way.
func ciIncludes(v, hw, centre float64) bool {
	return !math.IsNaN(v) && !math.IsNaN(hw) && math.Abs(v-centre) <= hw
}

// mapCIWords says how a map shows its cells' CIs: which are hatched and
// how many, or that the cells have none (one seed each).
func mapCIWords(z, hw [][]float64, centre float64, sweepSeeds int) string {
	cells, withCI, hatched := 0, 0, 0
	for i := range z {
		for j, v := range z[i] {
			if math.IsNaN(v) {
				continue
			}
			cells++
			if !math.IsNaN(hw[i][j]) {
				withCI++
			}
			if ciIncludes(v, hw[i][j], centre) {
				hatched++
			}
		}
	}
	c := fmtSig(centre)
	switch {
	case cells == 0:
		return ""
	case withCI == 0 && sweepSeeds <= 1:
		return fmt.Sprintf("Each cell is one seed's run, with no CI: a colour a step or two from %s may be that seed's noise (run the sweep with `--seeds 3` or more for cells with CIs, hatched where they include %s).", c, c)
	case withCI == 0:
		return "No cell has a CI."
	}
	s := fmt.Sprintf("Hatched: cells whose 95%% CI includes %s (%d of %d), where the colour's side of %s is not told apart from no difference; unhatched cells' CIs exclude it.", c, hatched, cells, c)
	if withCI < cells {
		s += fmt.Sprintf(" %d cell(s) have no CI (one seed) and are not hatched.", cells-withCI)
	}
	return s
}

// outsideRange says that mark lies outside the map's colour range, where
// no line of it can be.
func outsideRange(sc mapScale, mark float64, label string) string {
	side := "below"
	if mark > sc.edge(sc.bins) {
		side = "above"
	}
	if v := fmtSig(mark); !strings.Contains(label, v) {
		label += " (" + v + ")"
	}
	return fmt.Sprintf("%s is %s this map's range (%s to %s): every cell is on one side of it, and no line of it is drawn.", capitalise(label), side, trimFloat(sc.edge(0)), trimFloat(sc.edge(sc.bins)))
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fixedWords writes the fixed parameters of a map ("k.a_b=80%, ...") as a
// title reads them: "a b 80%, ...", a value in the form the axes write it
// (a rate of 0.016667/s as 1/min, 5033596B as 4.8MiB).
func fixedWords(fixed string) string { return fixedText(fixed, true) }

// fixedText is fixedWords, the values as swept where readable is false
// (a file name keeps them).
func fixedText(fixed string, human bool) string {
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
		if human {
			v = readable([]string{v})[0]
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
		n := slug(strings.ReplaceAll(fixedText(k, false), "%", "pct"))
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

// mapScale is a map's colour key: bins of one round step from lo, one
// edge at centre, their colours from a diverging map centred there (the
// same distance from it, the same strength of colour either side).
type mapScale struct {
	lo, step float64
	bins     int
	cols     []color.Color
	centre   float64
	nan      bool // some cell has no value
}

// newMapScale picks the smallest round step (1, 2 or 5 times a power of
// ten) that covers the values of zs in at most mapMostBins bins, their
// edges at centre + k steps: -20 to 50 in steps of 5 for values -15.29
// to 45.29 around 0, so that 5.5% and 15% fall in bins of their own and
// the sign of a mean is its colour's side. Colour carries the mean
// alone: whether a cell's CI tells it from no difference is drawn apart
// (hatching), not by coarsening the step to the noisiest cell's CI.
func newMapScale(zs [][]float64, centre float64) mapScale {
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
	var s mapScale
	s.centre, s.nan = centre, nan
	// One value (or none) still needs a step: its distance from the
	// centre sets it.
	span := hi - lo
	if span <= 0 {
		span = math.Max(math.Abs(hi-centre), 1e-9)
	}
	e := math.Pow10(int(math.Floor(math.Log10(span / mapMostBins))))
	for _, m := range []float64{1, 2, 5, 10, 20, 50} {
		step := m * e
		k0 := math.Floor((lo-centre)/step + 1e-9)
		k1 := math.Ceil((hi-centre)/step - 1e-9)
		if k1 <= k0 {
			k1 = k0 + 1
		}
		if n := int(k1 - k0); n <= mapMostBins {
			s.lo, s.step, s.bins = centre+k0*step, step, n
			break
		}
	}
	reach := math.Max(math.Abs(s.lo-centre), math.Abs(s.lo+float64(s.bins)*s.step-centre))
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	for k := range s.bins {
		// The bins beside the centre keep a tint of their side's hue
		// (a floor of mapTint), so that -5 to 0 and 0 to 5 are not one
		// grey on a scale reaching -120.
		mid := s.lo + (float64(k)+0.5)*s.step
		t := math.Max(-1, math.Min(1, (mid-centre)/reach))
		t = math.Copysign(mapTint+(1-mapTint)*math.Abs(t), t)
		c, err := cm.At(t)
		if err != nil {
			c = color.Gray{Y: 128}
		}
		s.cols = append(s.cols, c)
	}
	return s
}

// covers says whether v lies within the scale's range.
func (s mapScale) covers(v float64) bool {
	return v >= s.edge(0) && v <= s.edge(s.bins)
}

// describe says in words how the scale colours a map: its steps and
// range, which side of the centre is which colour, and how many maps
// share it.
func (s mapScale) describe(maps int, shared bool) string {
	c := fmtSig(s.centre)
	out := fmt.Sprintf("Colour: each cell's mean, in steps of %s from %s to %s, red above %s and blue below, deeper the farther", fmtSig(s.step), trimFloat(s.edge(0)), trimFloat(s.edge(s.bins)), c)
	all := fmt.Sprintf("all %d", maps)
	if maps == 2 {
		all = "both"
	}
	switch {
	case maps > 1 && shared:
		out += fmt.Sprintf(", on one scale for %s speedup maps (each policy's over the baseline and over none), so that a colour reads alike on every one", all)
	case maps > 1:
		out += fmt.Sprintf(", on one scale for %s maps of this comparison", all)
	}
	return out + "."
}

// edge is bin k's lower edge (k = bins: the top), centre + a whole
// number of steps, rounded to the step's precision so that a label reads
// 0.3, not 0.30000000000000004.
func (s mapScale) edge(k int) float64 {
	v := s.centre + (math.Round((s.lo-s.centre)/s.step)+float64(k))*s.step
	p := math.Pow10(max(0, 1-int(math.Floor(math.Log10(s.step)))))
	return math.Round(v*p) / p
}

func (s mapScale) colourOf(v float64) color.Color {
	if math.IsNaN(v) {
		return mapNaN
	}
	k := int(math.Floor((v-s.lo)/s.step + 1e-9))
	return s.cols[max(0, min(s.bins-1, k))]
}

// mapNaN is a missing cell: ochre, a hue the blue-red diverging map has
// nowhere (a grey was read as its pale centre).
var mapNaN = color.RGBA{R: 196, G: 160, B: 40, A: 255}

// sides counts the cells of z below mark and at or above it (NaN cells
// in neither).
func sides(z [][]float64, mark float64) (below, above int) {
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
	return below, above
}

// noContour says where the cells of z lie against mark when no line of
// it is drawn: all on one side, or crossing it only between single cells
// (pieces left out as noise).
func noContour(z [][]float64, mark float64, label string) string {
	below, above := sides(z, mark)
	switch {
	case above == 0:
		return fmt.Sprintf("Every cell is below %s (%s): no line of it.", label, fmtSig(mark))
	case below == 0:
		return fmt.Sprintf("Every cell is at or above %s (%s): no line of it.", label, fmtSig(mark))
	}
	return fmt.Sprintf("Cells lie on both sides of %s (%s), but no line of it survives the noise filter.", label, fmtSig(mark))
}

// mapSide says in a few words where the cells of z lie against mark,
// for the key of a map with no line of it: "every cell below", "every
// cell above", or "no line survives the noise filter".
func mapSide(z [][]float64, mark float64) string {
	below, above := sides(z, mark)
	switch {
	case above == 0:
		return "every cell below"
	case below == 0:
		return "every cell at or above"
	}
	return "no line past the noise"
}

// cells draws a grid's cells in its scale's colours, cell (i, j) centred
// on (i, j), hatching those whose CI includes the scale's centre.
type cells struct {
	g  mapGrid
	sc mapScale
	// labels: each cell labelled with its mean (and CI).
	labels bool
	// ownX, ownY: the scenario's own point (NaN: none), which a cell's
	// label keeps clear of.
	ownX, ownY float64
}

// inkOn is black or white, whichever reads on col.
func inkOn(col color.Color) color.Color {
	if r, g, b, _ := col.RGBA(); 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) < 0.5*0xffff {
		return color.White
	}
	return color.Black
}

// hatchInk is the hatching's colour on a cell of col: the label's ink,
// half transparent, so that the fill still reads through it.
func hatchInk(col color.Color) color.Color {
	if inkOn(col) == color.White {
		return color.NRGBA{R: 255, G: 255, B: 255, A: 170}
	}
	return color.NRGBA{R: 0, G: 0, B: 0, A: 150}
}

// hatch draws lines rising at 45 degrees across the rectangle (x0, y0)-
// (x1, y1), on the lines x - y = n gap of the canvas, so that the hatching
// of neighbouring cells runs on without a seam.
func hatch(c draw.Canvas, ink color.Color, x0, y0, x1, y1, gap vg.Length) {
	ls := draw.LineStyle{Color: ink, Width: vg.Points(0.7)}
	w, h := x1-x0, y1-y0
	// Line d: y - y0 = (x - x0) - d, d from -h to w; x - y = x0 - y0 + d.
	off := x0 - y0
	first := vg.Length(math.Ceil(float64((off-h)/gap)))*gap - off
	for d := first; d < w; d += gap {
		// Its ends where it enters and leaves the rectangle.
		ax, ay := x0+max(0, d), y0+max(0, -d)
		bx, by := x0+min(w, h+d), y0+min(h, w-d)
		c.StrokeLine2(ls, ax, ay, bx, by)
	}
}

func (cl cells) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	nx, ny := cl.g.Dims()
	gap := vg.Points(5)
	hwAt := func(i, j int) float64 {
		if cl.g.hw == nil {
			return math.NaN()
		}
		return cl.g.hw[i][j]
	}
	// The fills, then the hatching over them (so that a neighbour's fill
	// never cuts a cell's hatching at the seam), then the labels.
	for pass := range 3 {
		for i := range nx {
			for j := range ny {
				v, hw := cl.g.Z(i, j), hwAt(i, j)
				col := cl.sc.colourOf(v)
				hatched := ciIncludes(v, hw, cl.sc.centre)
				switch pass {
				case 0:
					// A hair wider than the cell, so that anti-aliasing
					// leaves no pale seams between cells.
					x0, x1 := trX(float64(i)-0.5)-0.3, trX(float64(i)+0.5)+0.3
					y0, y1 := trY(float64(j)-0.5)-0.3, trY(float64(j)+0.5)+0.3
					c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}})
				case 1:
					if hatched {
						hatch(c, hatchInk(col), trX(float64(i)-0.5), trY(float64(j)-0.5), trX(float64(i)+0.5), trY(float64(j)+0.5), gap)
					}
				case 2:
					if !cl.labels || math.IsNaN(v) {
						continue
					}
					// The mean and its CI, in black or white as the cell
					// is light or dark, on a patch of the cell's colour
					// over any hatching.
					ts := draw.TextStyle{Color: inkOn(col), Font: font.From(sans, 7), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
					// At the cell's centre, on its row's and column's
					// ticks; above it in the cell of the scenario's own
					// point, whose cross stands at the centre.
					y := float64(j)
					if math.Abs(cl.ownX-float64(i)) < 0.5 && math.Abs(cl.ownY-float64(j)) < 0.5 {
						y += 0.3
					}
					label := meanCI(v, hw)
					at := vg.Point{X: trX(float64(i)), Y: trY(y)}
					if hatched {
						w, h, pad := ts.Width(label), ts.Height(label), vg.Points(1.5)
						c.FillPolygon(col, []vg.Point{{X: at.X - w/2 - pad, Y: at.Y - h/2 - pad}, {X: at.X - w/2 - pad, Y: at.Y + h/2 + pad}, {X: at.X + w/2 + pad, Y: at.Y + h/2 + pad}, {X: at.X + w/2 + pad, Y: at.Y - h/2 - pad}})
					}
					c.FillText(ts, at, label)
				}
			}
		}
	}
}

// hatchSwatch is the key's thumbnail of a hatched cell.
type hatchSwatch struct{ c color.Color }

func (s hatchSwatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}})
	hatch(*c, hatchInk(s.c), c.Min.X, c.Min.Y, c.Max.X, c.Max.Y, vg.Points(4))
}

// lineSwatch is the key's thumbnail of a line.
type lineSwatch struct{ sty draw.LineStyle }

func (s lineSwatch) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(s.sty, c.Min.X, y, c.Max.X, y)
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

// heatmapFigure draws g in the colours of sc (labels: each cell
// labelled with its mean and CI), the colour key beside it (titled
// keyTitle), the cells whose CI includes the centre hatched, the contour
// at mark thick and labelled (its pieces that ring only a cell or two
// left out: dropped counts them; hit says whether any crossing was
// found), and a cross at (ownX, ownY).
func heatmapFigure(g mapGrid, sc mapScale, labels bool, xa, ya mapAxis, title, keyTitle string, mark float64, markLabel string, ownX, ownY float64) (f *figure, dropped int, hit bool, err error) {
	p := newPlot(xa.label, ya.label, false)
	panelTitle(p, title)
	p.Add(cells{g: g, sc: sc, labels: labels, ownX: ownX, ownY: ownY})
	leg := newLegend()
	leg.TextStyle.Font = font.From(sans, 9)
	leg.add(keyTitle)
	for k := sc.bins - 1; k >= 0; k-- {
		leg.add(fmt.Sprintf("%s to %s", trimFloat(sc.edge(k)), trimFloat(sc.edge(k+1))), swatch{sc.cols[k]})
	}
	if sc.nan {
		leg.add("no value (unstable)", swatch{mapNaN})
	}
	hatched := false
	for i := range g.z {
		for j := range g.z[i] {
			hatched = hatched || g.hw != nil && ciIncludes(g.z[i][j], g.hw[i][j], sc.centre)
		}
	}
	if hatched {
		leg.add(fmt.Sprintf("95%% CI includes %s", fmtSig(sc.centre)), hatchSwatch{color.Gray{Y: 225}})
	} else if !anyFinite(g.hw) {
		leg.add("one seed a cell: no CI")
	}
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
			leg.add(markLabel, lineSwatch{draw.LineStyle{Color: color.Black, Width: vg.Points(2.2)}})
		}
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

// reference is a metric's value of no difference and the paper's value,
// with the comparison the paper's value is of ("": every one).
type reference struct {
	centre, mark float64
	markLabel    string
	markFor      string
}

// referenceOf is the reference of a signed percentage among
// heatmapMetrics (the gap, the saving): lines of it are drawn against
// both. A ratio (esa's speedup) has its own line at 1 (referenceAt1).
func referenceOf(kind, field string) (reference, bool) {
	for _, hm := range heatmapMetrics {
		if hm.kind == kind && hm.field == field && hm.centre == 0 {
			return reference{hm.centre, hm.mark, hm.markLabel, hm.markFor}, true
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

// bestPolicyMap draws, for a training sweep of several policies, which
// policy has the lowest mean JCT in each cell (one map per value of the
// other parameters), each in its colour of the line figures, labelled
// with its name and its lead over the runner-up: the speedup maps show
// each policy against the baseline and none, this one which of them is
// best where (static ahead of both esa and atp at a scarce pool, say).
func (agg SweepAggregate) bestPolicyMap(xi, yi int, xs, ys []float64, xu, yu string, byFixed map[string][]sweep.Group, fixedKeys []string, fixedNames map[string]string, ownX, ownY float64, ownOn func(sweep.Group) bool) []*figure {
	if len(agg.Training) < 2 {
		return nil
	}
	xp, yp := agg.Params[xi], agg.Params[yi]
	var figs []*figure
	for _, fixed := range fixedKeys {
		best := make([][]int, len(xs))
		lead := make([][]string, len(xs))
		seen := map[int]bool{}
		for i := range best {
			best[i] = make([]int, len(ys))
			lead[i] = make([]string, len(ys))
			for j := range best[i] {
				best[i][j] = -1
			}
		}
		for _, g := range byFixed[fixed] {
			i := slices.Index(xp.Values, g.Params[xi].Value)
			j := slices.Index(yp.Values, g.Params[yi].Value)
			if i < 0 || j < 0 {
				continue
			}
			b, second := -1, -1
			jct := func(k int) float64 { return g.Metrics["training/"+agg.Training[k]+"/jct_s.mean"].Mean }
			for k := range agg.Training {
				e, ok := g.Metrics["training/"+agg.Training[k]+"/jct_s.mean"]
				if !ok || math.IsNaN(e.Mean) {
					continue
				}
				switch {
				case b < 0 || e.Mean < jct(b):
					b, second = k, b
				case second < 0 || e.Mean < jct(second):
					second = k
				}
			}
			if b < 0 {
				continue
			}
			best[i][j] = b
			seen[b] = true
			if second >= 0 && jct(second) > 0 {
				lead[i][j] = fmt.Sprintf("%s\n%.1f%% below %s", agg.Training[b], 100*(1-jct(b)/jct(second)), agg.Training[second])
			} else {
				lead[i][j] = agg.Training[b]
			}
		}
		if len(seen) == 0 {
			continue
		}
		title := "lowest mean JCT: which policy"
		if fixed != "" {
			title += ", " + fixedWords(fixed)
		}
		p := newPlot(agg.axisLabel(xp.Key), agg.axisLabel(yp.Key), false)
		panelTitle(p, title)
		px, py := ownX, ownY
		if g := byFixed[fixed]; len(g) == 0 || !ownOn(g[0]) {
			px, py = math.NaN(), math.NaN()
		}
		labels := len(xs)*len(ys) <= labelCellsUpTo
		p.Add(bestCells{best: best, lead: lead, labels: labels, ownX: px, ownY: py})
		leg := newLegend()
		leg.TextStyle.Font = font.From(sans, 9)
		leg.add("lowest mean JCT")
		for k, n := range agg.Training {
			if seen[k] {
				leg.add(n, swatch{colour(k)})
			}
		}
		if !math.IsNaN(px) && !math.IsNaN(py) {
			cross, err := plotter.NewScatter(plotter.XYs{{X: px, Y: py}})
			if err == nil {
				cross.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: thickCross{vg.Points(1.6)}}
				halo, _ := plotter.NewScatter(plotter.XYs{{X: px, Y: py}})
				halo.GlyphStyle = draw.GlyphStyle{Color: color.White, Radius: vg.Points(7), Shape: thickCross{vg.Points(4)}}
				p.Add(halo, cross)
				leg.add("the scenario's own point", cross)
			}
		}
		p.X.Tick.Marker = roundTicks(mapAxis{xp.Values, xs, xu, ""})
		p.Y.Tick.Marker = roundTicks(mapAxis{yp.Values, ys, yu, ""})
		p.X.Min, p.X.Max = -0.5, float64(len(xs))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(ys))-0.5
		f := &figure{panels: []*plot.Plot{p}, legend: leg, w: figW + 2*vg.Centimeter, h: figH + 2*vg.Centimeter}
		f.name = "map_training_best_jct"
		if fn := fixedNames[fixed]; fn != "" {
			f.name += "__" + fn
		}
		var names []string
		for k, n := range agg.Training {
			if seen[k] {
				names = append(names, n)
			}
		}
		f.caption = fmt.Sprintf("Which of %s has the lowest mean JCT (the mean over the seeds), over `%s` and `%s`", strings.Join(agg.Training, ", "), xp.Key, yp.Key)
		if fixed != "" {
			f.caption += ", at " + fixedWords(fixed)
		}
		f.caption += fmt.Sprintf(": best in some cell: %s (each policy in its colour of the line figures).", strings.Join(names, ", "))
		if labels {
			f.caption += " Each cell is labelled with the best policy and how far its mean JCT is below the runner-up's; that lead is of the means, not tested against the seeds' spread (the speedup maps give each policy's CI against the baseline and against none)."
		}
		if !math.IsNaN(px) && !math.IsNaN(py) {
			f.caption += " The cross: the scenario's own point."
		}
		figs = append(figs, f)
	}
	return figs
}

// bestCells draws each cell in the colour of its best policy (-1: none,
// ochre), labelled with lead.
type bestCells struct {
	best       [][]int
	lead       [][]string
	labels     bool
	ownX, ownY float64
}

func (bc bestCells) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for i := range bc.best {
		for j, k := range bc.best[i] {
			x0, x1 := trX(float64(i)-0.5)-0.3, trX(float64(i)+0.5)+0.3
			y0, y1 := trY(float64(j)-0.5)-0.3, trY(float64(j)+0.5)+0.3
			col := color.Color(mapNaN)
			if k >= 0 {
				col = colour(k)
			}
			c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}})
			if !bc.labels || bc.lead[i][j] == "" {
				continue
			}
			y := float64(j)
			if math.Abs(bc.ownX-float64(i)) < 0.5 && math.Abs(bc.ownY-float64(j)) < 0.5 {
				y += 0.3
			}
			ts := draw.TextStyle{Color: inkOn(col), Font: font.From(sans, 7), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
			c.FillText(ts, vg.Point{X: trX(float64(i)), Y: trY(y)}, bc.lead[i][j])
		}
	}
}

package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// llmWinnerMetrics are what an LLM sweep's winner maps compare: lower is
// better for each; ci is the field of the runs' own 95% CI half-width.
var llmWinnerMetrics = []struct{ field, ci, title string }{
	{"tpot_s.p90", "tpot_s.p90.ci95", "lowest p90 TPOT"},
	{"e2e_s.mean", "e2e_s.mean.ci95", "lowest mean E2E"},
}

// sameWithin is the relative gap below which a winner map calls two
// values the same whatever their CIs: a gap too small to matter.
const sameWithin = 0.005

// comparedCategory is the index of the named parameter a winner map
// compares: the one naming a data path or a control-plane placement
// (what "where it pays" asks), else the only named one; -1 if none. The
// other named parameters get a map each.
func comparedCategory(params []sweep.Param, cats []int) int {
	for _, i := range cats {
		if k := params[i].Key; strings.HasSuffix(k, ".path") || strings.HasSuffix(k, ".placement") {
			return i
		}
	}
	if len(cats) == 1 {
		return cats[0]
	}
	return -1
}

// llmMapAnchor is a published setup located on a winner map's axis: a
// dashed line at its value, labelled.
type llmMapAnchor struct{ key, value, label string }

// llmMapAnchors are the anchors of issue 55 (docs/llm.md) that sit on a
// swept axis: the link rates their papers ran.
var llmMapAnchors = []llmMapAnchor{
	{"llm.disagg.line_rate", "25Gbps", "DistServe 25 Gb/s"},
	{"llm.disagg.line_rate", "100Gbps", "Mooncake knee"},
	{"llm.disagg.line_rate", "400Gbps", "Splitwise 400 Gb/s"},
}

// anchorPositions places key's anchors on an axis of values (cell i at
// i): between two cells by the log of the value where all are positive,
// linearly otherwise; anchors outside the axis are left out.
func anchorPositions(key string, values []string) ([]float64, []string) {
	var pos []float64
	var labels []string
	for _, a := range llmMapAnchors {
		if a.key != key {
			continue
		}
		xs, _, ok := numericAxis(append(append([]string(nil), values...), a.value))
		if !ok {
			continue
		}
		v, axis := xs[len(xs)-1], xs[:len(xs)-1]
		for i := 0; i+1 < len(axis); i++ {
			lo, hi := axis[i], axis[i+1]
			if v < min(lo, hi) || v > max(lo, hi) {
				continue
			}
			f := (v - lo) / (hi - lo)
			if lo > 0 && hi > 0 && v > 0 {
				f = math.Log(v/lo) / math.Log(hi/lo)
			}
			pos, labels = append(pos, float64(i)+f), append(labels, a.label)
			break
		}
	}
	return pos, labels
}

// anchorLines draws the anchors as dashed vertical lines over rows
// cells, each labelled at the foot of the plot; a line leaves a gap
// through the middle of each cell, where the cell's label is.
type anchorLines struct {
	pos    []float64
	labels []string
	rows   int
}

func (al anchorLines) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	ts := draw.TextStyle{Color: color.Black, Font: font.From(sans, 6.5), XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
	for i, p := range al.pos {
		x := trX(p)
		// The label sits at the foot of the bottom cell, the line above it.
		foot := trY(-0.5) + vg.Points(2)
		for j := 0; j < al.rows; j++ {
			y := float64(j)
			lo := trY(y - 0.5)
			if j == 0 {
				lo = foot + vg.Points(9)
			}
			c.StrokeLine2(sty, x, lo, x, trY(y-0.36))
			c.StrokeLine2(sty, x, trY(y+0.36), x, trY(y+0.5))
		}
		c.FillText(ts, vg.Point{X: x, Y: foot}, al.labels[i])
	}
}

// llmWinnerMaps draws, for an LLM sweep over two numeric parameters and
// one named one (a data path, a control-plane placement), which value of
// the named parameter gives the lowest metric in each cell: one map per
// metric and per combination of any other parameters, each value in its
// colour, each cell labelled with the winner and its lead over the
// runner-up, and said to be within the noise where the two CIs (the runs'
// own over their seeds) overlap. "Where it pays, mapped."
func llmWinnerMaps(agg SweepAggregate) []*figure {
	if len(agg.LLM) == 0 {
		return nil
	}
	var nums, cats []int
	for i, p := range agg.Params {
		if len(p.Values) < 2 {
			continue
		}
		if _, _, ok := numericAxis(p.Values); ok {
			nums = append(nums, i)
		} else {
			cats = append(cats, i)
		}
	}
	ci := comparedCategory(agg.Params, cats)
	if len(nums) < 2 || ci < 0 {
		return nil
	}
	xi, yi := nums[0], nums[1]
	xp, yp, cp := agg.Params[xi], agg.Params[yi], agg.Params[ci]
	xs, xu, _ := numericAxis(xp.Values)
	ys, yu, _ := numericAxis(yp.Values)
	// The other parameters: one map per combination.
	byFixed := map[string][]sweep.Group{}
	var fixedKeys []string
	for _, g := range agg.Groups {
		var parts []string
		for i, kv := range g.Params {
			if i != xi && i != yi && i != ci {
				parts = append(parts, kv.Key+"="+kv.Value)
			}
		}
		k := strings.Join(parts, ", ")
		if _, ok := byFixed[k]; !ok {
			fixedKeys = append(fixedKeys, k)
		}
		byFixed[k] = append(byFixed[k], g)
	}
	fixedNames := fixedFileNames(fixedKeys)
	var figs []*figure
	for _, m := range llmWinnerMetrics {
		for _, fixed := range fixedKeys {
			means := make([][][]float64, len(xs)) // [x][y][category]; NaN: not run
			for i := range means {
				means[i] = make([][]float64, len(ys))
				for j := range means[i] {
					means[i][j] = make([]float64, len(cp.Values))
					for k := range means[i][j] {
						means[i][j][k] = math.NaN()
					}
				}
			}
			seeds := make([][][][]float64, len(xs)) // per seed, where the runs pair
			for i := range seeds {
				seeds[i] = make([][][]float64, len(ys))
				for j := range seeds[i] {
					seeds[i][j] = make([][]float64, len(cp.Values))
				}
			}
			halfs := make([][][]float64, len(xs)) // the runs' own CI half-widths; NaN: none
			for i := range halfs {
				halfs[i] = make([][]float64, len(ys))
				for j := range halfs[i] {
					halfs[i][j] = make([]float64, len(cp.Values))
					for k := range halfs[i][j] {
						halfs[i][j][k] = math.NaN()
					}
				}
			}
			for _, g := range byFixed[fixed] {
				i := slices.Index(xp.Values, g.Params[xi].Value)
				j := slices.Index(yp.Values, g.Params[yi].Value)
				k := slices.Index(cp.Values, g.Params[ci].Value)
				if e, ok := g.Metrics["llm/"+LLMEntity+"/"+m.field]; ok && i >= 0 && j >= 0 && k >= 0 {
					means[i][j][k] = e.Mean
					if h, ok := g.Metrics["llm/"+LLMEntity+"/"+m.ci]; ok {
						halfs[i][j][k] = h.Mean
					}
					seeds[i][j][k] = agg.llmSeeds[paramsKey(g.Params)][m.field]
				}
			}
			best := make([][]int, len(xs))
			lead := make([][]string, len(xs))
			seen := map[int]bool{}
			ties := 0
			for i := range xs {
				best[i] = make([]int, len(ys))
				lead[i] = make([]string, len(ys))
				for j := range ys {
					b, label, tie := winnerCell(means[i][j], gapCI(halfs[i][j], seeds[i][j]), cp.Values)
					best[i][j], lead[i][j] = b, label
					if tie {
						best[i][j] = -1
						ties++
						continue
					}
					if b < 0 {
						continue
					}
					seen[b] = true
				}
			}
			if len(seen) == 0 && ties == 0 {
				continue
			}
			title := m.title + " by " + agg.axisLabel(cp.Key)
			if fixed != "" {
				title += "\n" + fixedWords(fixed) // a second line: one would outrun the panel
			}
			p := newPlot(agg.axisLabel(xp.Key), agg.axisLabel(yp.Key), false)
			panelTitle(p, title)
			labels := len(xs)*len(ys) <= labelCellsUpTo
			p.Add(bestCells{best: best, lead: lead, labels: labels, ownX: math.NaN(), ownY: math.NaN()})
			apos, alabels := anchorPositions(xp.Key, xp.Values)
			if len(apos) > 0 {
				p.Add(anchorLines{pos: apos, labels: alabels, rows: len(ys)})
			}
			leg := newLegend()
			leg.TextStyle.Font = font.From(sans, 9)
			leg.add(m.title)
			for k, n := range cp.Values {
				if seen[k] {
					leg.add(n, swatch{colour(k)})
				}
			}
			if ties > 0 {
				leg.add("several within the CI (or 0.5%) of the best", swatch{mapNaN})
			}
			if len(apos) > 0 {
				leg.add("dashed: a published anchor's setup")
			}
			p.X.Tick.Marker = roundTicks(mapAxis{xp.Values, xs, xu, ""})
			p.Y.Tick.Marker = roundTicks(mapAxis{yp.Values, ys, yu, ""})
			p.X.Min, p.X.Max = -0.5, float64(len(xs))-0.5
			p.Y.Min, p.Y.Max = -0.5, float64(len(ys))-0.5
			f := &figure{panels: []*plot.Plot{p}, legend: leg, w: figW + 2*vg.Centimeter, h: figH + 2*vg.Centimeter}
			f.name = "map_llm_best_" + slug(m.field) + "_by_" + slug(cp.Key)
			if fn := fixedNames[fixed]; fn != "" {
				f.name += "__" + fn
			}
			f.caption = fmt.Sprintf("Which `%s` (%s) gives the %s (the mean over the runs' seeds), over `%s` and `%s`", cp.Key, strings.Join(cp.Values, ", "), strings.TrimPrefix(m.title, "lowest ")+" lowest", xp.Key, yp.Key)
			if fixed != "" {
				f.caption += ", at " + fixedWords(fixed)
			}
			f.caption += fmt.Sprintf(". A coloured cell names the best and how far below the runner-up's it is, +/- the 95%% CI of that gap; in %d of %d cells (ochre) others are within it (or within %.1f%%, too small to matter), and the label says which are not and how far the worst is behind. The runs of a cell share their seeds, and so draw the same requests: the gap's CI is paired, seed by seed (Student's t on the differences), where the runs kept their per-seed values, else the two runs' own CIs combined as if independent (wider).", ties, len(xs)*len(ys), 100*sameWithin)
			if len(apos) > 0 {
				f.caption += " Dashed lines: " + strings.Join(alabels, ", ") + " (docs/llm.md's anchors), where their setups sit on the axis."
			}
			f.caption += "\n"
			figs = append(figs, f)
		}
	}
	return figs
}

// gapCI is a cell's 95% CI half-width of the gap between values b and k:
// paired over the seeds where both runs kept theirs (seeds, the same
// seeds drawing the same requests: Student's t on the differences), else
// the runs' own half-widths (halfs) combined as if independent, which is
// wider; 0 where neither is known.
func gapCI(halfs []float64, seeds [][]float64) func(b, k int) float64 {
	return func(b, k int) float64 {
		if sb, sk := seeds[b], seeds[k]; len(sb) > 1 && len(sb) == len(sk) {
			d := make([]float64, len(sb))
			for s := range sb {
				d[s] = sk[s] - sb[s]
			}
			if _, hw := stats.MeanCI(d, 0.95); !math.IsNaN(hw) {
				return hw
			}
		}
		h := func(x float64) float64 {
			if math.IsNaN(x) {
				return 0
			}
			return x
		}
		return math.Hypot(h(halfs[b]), h(halfs[k]))
	}
}

// winnerCell is one cell of a winner map: the index of the lowest of
// means (NaN: not run; -1: none), its label, and whether others are
// within reach of it (a tie: the label says which are not and how far
// the worst is behind). Another value is within reach when its gap to
// the best is within the gap's 95% CI (gap; nil: none known) or within
// sameWithin of the best: a gap too small to matter.
func winnerCell(means []float64, gap func(b, k int) float64, names []string) (int, string, bool) {
	b, second := -1, -1
	for k, v := range means {
		if math.IsNaN(v) {
			continue
		}
		switch {
		case b < 0 || v < means[b]:
			b, second = k, b
		case second < 0 || v < means[second]:
			second = k
		}
	}
	if b < 0 {
		return -1, "", false
	}
	gapCI := func(k int) float64 {
		if gap == nil {
			return 0
		}
		return gap(b, k)
	}
	var tied, behind []string
	worst := b
	for k, v := range means {
		if math.IsNaN(v) || k == b {
			continue
		}
		if v > means[worst] {
			worst = k
		}
		if v-means[b] <= max(gapCI(k), means[b]*sameWithin) {
			tied = append(tied, names[k])
		} else {
			behind = append(behind, names[k])
		}
	}
	if len(tied) > 0 {
		if len(behind) == 0 {
			return b, "all the same", true
		}
		sep := " " // one name fits beside "all but"; more go on a line of their own
		if len(behind) > 1 {
			sep = "\n"
		}
		label := fmt.Sprintf("all but%s%s\n%s +%.1f%%", sep, strings.Join(behind, ", "), names[worst], 100*(means[worst]/means[b]-1))
		if ci := gapCI(worst); ci > 0 {
			label += fmt.Sprintf(" ±%.1f", 100*ci/means[b])
		}
		return b, label, true
	}
	if second < 0 || means[second] <= 0 {
		return b, names[b], false
	}
	label := fmt.Sprintf("%s\nby %.1f%%", names[b], 100*(1-means[b]/means[second]))
	if ci := gapCI(second); ci > 0 {
		label += fmt.Sprintf(" ±%.1f", 100*ci/means[second])
	}
	return b, label, false
}

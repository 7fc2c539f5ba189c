package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// llmWinnerMetrics are what an LLM sweep's winner maps compare: lower is
// better for each.
var llmWinnerMetrics = []struct{ field, title string }{
	{"tpot_s.p90", "lowest p90 TPOT"},
	{"e2e_s.mean", "lowest mean E2E"},
}

// sameWithin is the relative gap below which a winner map calls two
// values the same.
const sameWithin = 0.005

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
	if len(nums) < 2 || len(cats) != 1 {
		return nil
	}
	xi, yi, ci := nums[0], nums[1], cats[0]
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
			for _, g := range byFixed[fixed] {
				i := slices.Index(xp.Values, g.Params[xi].Value)
				j := slices.Index(yp.Values, g.Params[yi].Value)
				k := slices.Index(cp.Values, g.Params[ci].Value)
				if e, ok := g.Metrics["llm/"+LLMEntity+"/"+m.field]; ok && i >= 0 && j >= 0 && k >= 0 {
					means[i][j][k] = e.Mean
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
					b, label, tie := winnerCell(means[i][j], cp.Values)
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
				title += ", " + fixedWords(fixed)
			}
			p := newPlot(agg.axisLabel(xp.Key), agg.axisLabel(yp.Key), false)
			panelTitle(p, title)
			labels := len(xs)*len(ys) <= labelCellsUpTo
			p.Add(bestCells{best: best, lead: lead, labels: labels, ownX: math.NaN(), ownY: math.NaN()})
			leg := newLegend()
			leg.TextStyle.Font = font.From(sans, 9)
			leg.add(m.title)
			for k, n := range cp.Values {
				if seen[k] {
					leg.add(n, swatch{colour(k)})
				}
			}
			if ties > 0 {
				leg.add(fmt.Sprintf("several within %.1f%% of the best", 100*sameWithin), swatch{mapNaN})
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
			f.caption += fmt.Sprintf(". A coloured cell names the best and how far below the runner-up's it is; in %d of %d cells (ochre) several are within %.1f%% of the best, and the label says which are not and how far the worst is behind. The runs of a cell share their seeds, and so draw the same requests: a gap is the parameter's alone, but it is a gap of means, not tested against the seeds' spread.\n", ties, len(xs)*len(ys), 100*sameWithin)
			figs = append(figs, f)
		}
	}
	return figs
}

// winnerCell is one cell of a winner map: the index of the lowest of
// means (NaN: not run; -1: none), its label, and whether others are
// within sameWithin of it (a tie: the label says which are not and how
// far the worst is behind). The runs of a cell share their seeds, and so
// their requests: a smaller gap is no difference worth a colour.
func winnerCell(means []float64, names []string) (int, string, bool) {
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
	var tied, behind []string
	worst := b
	for k, v := range means {
		if math.IsNaN(v) || k == b {
			continue
		}
		if v > means[worst] {
			worst = k
		}
		if v <= means[b]*(1+sameWithin) {
			tied = append(tied, names[k])
		} else {
			behind = append(behind, names[k])
		}
	}
	if len(tied) > 0 {
		if len(behind) == 0 {
			return b, "all the same", true
		}
		return b, fmt.Sprintf("all but %s\n%s +%.1f%%", strings.Join(behind, ", "), names[worst], 100*(means[worst]/means[b]-1)), true
	}
	if second < 0 || means[second] <= 0 {
		return b, names[b], false
	}
	return b, fmt.Sprintf("%s\nby %.1f%%", names[b], 100*(1-means[b]/means[second])), false
}

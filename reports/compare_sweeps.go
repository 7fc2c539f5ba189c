package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// maxComparePanels bounds the panels of one overlaid sweep figure (one per
// path, policy or derived gap); beyond it the figure names what it left
// out.
const maxComparePanels = 6

// compareSweepLines overlays sweeps that vary the same one parameter:
// for every plotted metric, one panel per path, policy or derived gap
// that at least two sweeps have, one line per sweep (its colour in every
// panel, as in the other comparison figures) with its 95% CI. note says
// why no figure was drawn where sweeps are given but cannot be overlaid
// (different parameters, several at once, a sweep beside a run).
func compareSweepLines(runs []Run) (figs []*figure, note string, err error) {
	var sw []int
	for i, r := range runs {
		if r.Sweep != nil {
			sw = append(sw, i)
		}
	}
	switch {
	case len(sw) == 0:
		return nil, "", nil
	case len(sw) < len(runs):
		return nil, "No overlaid lines: sweeps and single runs are compared in the table only (a run has no parameter axis).", nil
	}
	// The axis: the one parameter every sweep varies.
	key := ""
	var union []string
	for _, i := range sw {
		var varied []string
		for _, p := range runs[i].Sweep.Params {
			if len(p.Values) > 1 {
				varied = append(varied, p.Key)
			}
		}
		if len(varied) != 1 || key != "" && varied[0] != key {
			var what []string
			for _, j := range sw {
				var ks []string
				for _, p := range runs[j].Sweep.Params {
					if len(p.Values) > 1 {
						ks = append(ks, "`"+p.Key+"`")
					}
				}
				what = append(what, fmt.Sprintf("[%d] varies %s", j, orNone(strings.Join(ks, " and "))))
			}
			return nil, fmt.Sprintf("No overlaid lines: they are drawn for sweeps that each vary the same one parameter; here %s. Each sweep's own report draws its lines (and maps).", strings.Join(what, ", ")), nil
		}
		key = varied[0]
		for _, p := range runs[i].Sweep.Params {
			if p.Key == key {
				for _, v := range p.Values {
					if !slices.Contains(union, v) {
						union = append(union, v)
					}
				}
			}
		}
	}
	xs, unit, numeric := numericAxis(union)
	var ticks []string
	if !numeric {
		ticks = union
		xs = make([]float64, len(union))
		for i := range xs {
			xs[i] = float64(i)
		}
	}
	xAt := map[string]float64{}
	for i, v := range union {
		xAt[v] = xs[i]
	}
	geometric := numeric && slices.Min(xs) > 0 && slices.Max(xs) >= 16*slices.Min(xs)
	xLabel := axisName(key)
	if unit != "" {
		xLabel += " (" + unit + ")"
	}
	labelRuns(runs)
	kindsOf := make([][]metricKind, len(runs))
	for _, i := range sw {
		kindsOf[i] = metricKinds(*runs[i].Sweep)
	}
	for ki, kind := range kindsOf[sw[0]] {
		// Entities that at least two sweeps have, in first-seen order.
		count := map[string]int{}
		var names []string
		for _, i := range sw {
			for _, n := range kindsOf[i][ki].names {
				if count[n]++; count[n] == 2 {
					names = append(names, n)
				}
			}
		}
		left := 0
		if len(names) > maxComparePanels {
			left = len(names) - maxComparePanels
			names = names[:maxComparePanels]
		}
		for _, m := range kind.metrics {
			if !m.plot {
				continue
			}
			f, err := overlaidPanels(runs, sw, kind.kind, names, m, key, xAt, xLabel, ticks, geometric)
			if err != nil || f == nil {
				if err != nil {
					return nil, "", err
				}
				continue
			}
			f.name = "compare_" + slug(strings.ReplaceAll(m.field, "_us", "")) + "_vs_" + slug(key)
			if kind.kind == "training" {
				f.name = "compare_training_" + strings.TrimPrefix(f.name, "compare_")
			}
			ci := "shaded bands"
			if ticks != nil {
				ci = "error bars"
			}
			f.caption = fmt.Sprintf("%s against `%s`: one panel per %s, one line per sweep (colour and dash: the sweep, as in the table's [i]); %s: 95%% CI across each sweep's seeds, or its runs' own over their seeds where it has one.", m.title, key, singular(kind.kind), ci)
			if left > 0 {
				f.caption += fmt.Sprintf(" %d more %ss left out of the figure (in the table).", left, singular(kind.kind))
			}
			if m.ratio {
				for _, p := range f.panels {
					if err := referenceAt1(&figure{name: f.name, panels: []*plot.Plot{p}, legend: &legend{Legend: plot.NewLegend()}}, xs, m.reference(), -1); err != nil {
						return nil, "", err
					}
				}
				f.caption += fmt.Sprintf(" Dashed grey: %s (1).", m.reference())
			}
			figs = append(figs, f)
		}
	}
	return figs, "", nil
}

// overlaidPanels draws metric m of each entity name in a panel of its
// own, a line per sweep; nil where no panel has two sweeps' lines.
func overlaidPanels(runs []Run, sw []int, kind string, names []string, m metric, key string, xAt map[string]float64, xLabel string, ticks []string, geometric bool) (*figure, error) {
	var panels []*plot.Plot
	var leg *legend
	for _, n := range names {
		var lines []Line
		var styles []int
		for _, i := range sw {
			ln := sweepLine(*runs[i].Sweep, kind, n, m, key, xAt)
			ln.Name = runLabel(i, runs[i])
			// A line with no finite value (the baseline's ratio to
			// itself, an unstable path's latency) draws nothing.
			if slices.ContainsFunc(ln.Y, func(y float64) bool { return !math.IsNaN(y) && !math.IsInf(y, 0) }) {
				lines = append(lines, ln)
				styles = append(styles, i)
			}
		}
		if len(lines) < 2 {
			continue
		}
		yl := m.label
		if m.short != "" {
			yl = m.short
		}
		f, err := metricVsParamStyled("compare", xLabel, yl, lines, styles, m.logY, ticks)
		if err != nil {
			return nil, err
		}
		p := f.panels[0]
		panelTitle(p, n)
		if geometric {
			setLog(&p.X)
			p.X.Label.Text += " (log scale)"
		}
		if leg == nil || len(lines) > leg.n {
			leg = f.legend
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, nil
	}
	// Two panels a row up to four (a 2x2 grid for the four data paths),
	// three beyond; each about two thirds of a single figure's width.
	cols := min(len(panels), 2)
	if len(panels) > 4 {
		cols = 3
	}
	rows := (len(panels) + cols - 1) / cols
	return &figure{panels: panels, legend: leg, cols: cols,
		w: figW*2/3*vg.Length(cols) + 4*vg.Centimeter, h: figH * 4 / 5 * vg.Length(rows)}, nil
}

// sweepLine is metric m of entity name of kind in agg against the
// parameter key (at xAt of its values), in x order, with its 95% CI.
func sweepLine(agg SweepAggregate, kind, name string, m metric, key string, xAt map[string]float64) Line {
	type pt struct{ x, y, hw float64 }
	var pts []pt
	for _, g := range agg.Groups {
		e, ok := g.Metrics[kind+"/"+name+"/"+m.field]
		if !ok {
			continue
		}
		pts = append(pts, pt{xAt[paramValue(g, key)], e.Mean, halfWidth(g, kind, name, m)})
	}
	slices.SortStableFunc(pts, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	var ln Line
	for _, p := range pts {
		ln.X, ln.Y, ln.HalfWidth = append(ln.X, p.x), append(ln.Y, p.y), append(ln.HalfWidth, p.hw)
	}
	return ln
}

// paramValue is g's value of the parameter key ("" if it has none).
func paramValue(g sweep.Group, key string) string {
	for _, kv := range g.Params {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no parameter"
	}
	return s
}

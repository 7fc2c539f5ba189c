package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// The capacity of a data path (issue 32): which resource a path uses most
// at every point of a sweep (the one that saturates first as load grows),
// and, in a sweep of the offered load, latency against the throughput
// achieved with the knee marked.

// resources are the utilisation metrics a path reports, by name.
var resources = []struct{ name, field string }{
	{"gpu", "gpu_utilization"}, {"soc", "soc_utilization"}, {"dma", "dma_utilization"}, {"port", "port_utilization"},
}

// busiest names the most used resource of path name in group g (means
// over seeds) and its utilisation; "" where the point has none.
func busiest(g sweep.Group, name string) (string, float64) {
	best, at := -1.0, ""
	for _, r := range resources {
		if e, ok := g.Metrics["paths/"+name+"/"+r.field]; ok && e.Mean > best {
			best, at = e.Mean, r.name
		}
	}
	return at, best
}

// sweepCapacity writes, for a data-path sweep of at most 60 parameter
// combinations, each path's throughput, its resources' utilisation and
// the busiest of them; a point whose path is unstable says so.
func sweepCapacity(md *strings.Builder, agg SweepAggregate) {
	if len(agg.Paths) == 0 || len(agg.Groups) > 60 {
		return
	}
	md.WriteString("\n## Capacity: the busiest resource of each path\n\n")
	md.WriteString("Utilisation over the run (means over seeds) of the GPUs, the SmartNIC's Arm cores (soc) and DMA engine, and the inbound port; the busiest saturates first as the offered load grows.\n\n|")
	for _, p := range agg.Params {
		fmt.Fprintf(md, " %s |", p.Key)
	}
	md.WriteString(" path | throughput (req/s) | gpu | soc | dma | port | busiest |\n|")
	for range len(agg.Params) + 1 {
		md.WriteString("---|")
	}
	md.WriteString("---:|---:|---:|---:|---:|---|\n")
	for _, g := range agg.Groups {
		for _, n := range agg.Paths {
			if _, ok := g.Metrics["paths/"+n+"/throughput_rps"]; !ok {
				continue
			}
			md.WriteString("|")
			for _, kv := range g.Params {
				fmt.Fprintf(md, " %s |", kv.Value)
			}
			fmt.Fprintf(md, " %s | %s |", n, fmtSig(g.Metrics["paths/"+n+"/throughput_rps"].Mean))
			for _, r := range resources {
				fmt.Fprintf(md, " %s |", fmtPct(g.Metrics["paths/"+n+"/"+r.field].Mean))
			}
			b, u := busiest(g, n)
			note := fmt.Sprintf("%s (%s)", b, fmtPct(u))
			if e := g.Metrics["paths/"+n+"/unstable"]; e.Mean > 0 {
				note += "; **unstable**"
			}
			fmt.Fprintf(md, " %s |\n", note)
		}
	}
	fmt.Fprintf(md, "\n%s\n", unstableRule)
}

// kneeFigures draws, for a sweep of datapath.clients.rate (open loop),
// each path's p50 and p99 latency against the throughput it achieved, a
// panel per path, one figure per combination of the other parameters (at
// most four). The knee is the last point before the median latency
// doubles its value at the lightest load (queueing has taken over) or the
// path turns unstable; it is circled.
func kneeFigures(agg SweepAggregate) ([]*figure, []string) {
	ri := slices.IndexFunc(agg.Params, func(p sweep.Param) bool { return strings.HasSuffix(p.Key, "clients.rate") && len(p.Values) >= 2 })
	if ri < 0 || len(agg.Paths) == 0 {
		return nil, nil
	}
	rates, _, ok := numericAxis(agg.Params[ri].Values)
	if !ok {
		return nil, nil
	}
	fixedKeys, byFixed := groupByOthers(agg.Groups, ri)
	if len(fixedKeys) > 4 {
		return nil, []string{fmt.Sprintf("Latency against throughput is drawn for at most 4 combinations of the other parameters; this sweep has %d (the capacity table has them).", len(fixedKeys))}
	}
	var figs []*figure
	fixedNames := fixedFileNames(fixedKeys)
	for _, fixed := range fixedKeys {
		groups := byFixed[fixed]
		slices.SortFunc(groups, func(a, b sweep.Group) int {
			x := rates[slices.Index(agg.Params[ri].Values, a.Params[ri].Value)]
			y := rates[slices.Index(agg.Params[ri].Values, b.Params[ri].Value)]
			return cmp.Compare(x, y)
		})
		var panels []*plot.Plot
		leg := newLegend()
		var notes []string
		for pi, path := range agg.Paths {
			p := newPlot("", "latency (µs, log scale)", true)
			setLog(&p.Y)
			panelTitle(p, path)
			var p50, p99 plotter.XYs
			knee := -1
			base := math.NaN()
			for _, g := range groups {
				thr := g.Metrics["paths/"+path+"/throughput_rps"].Mean
				a, b := g.Metrics["paths/"+path+"/latency_us.p50"].Mean, g.Metrics["paths/"+path+"/latency_us.p99"].Mean
				if math.IsNaN(a) || math.IsNaN(b) || !(thr > 0) || !(a > 0) {
					break // unstable from here on: no latency to draw
				}
				if math.IsNaN(base) {
					base = a
				}
				if a > 2*base {
					break
				}
				p50, p99 = append(p50, plotter.XY{X: thr, Y: a}), append(p99, plotter.XY{X: thr, Y: b})
				knee = len(p99) - 1
			}
			// The points past the knee, drawn too, up to the last stable one.
			for _, g := range groups[len(p99):] {
				thr := g.Metrics["paths/"+path+"/throughput_rps"].Mean
				a, b := g.Metrics["paths/"+path+"/latency_us.p50"].Mean, g.Metrics["paths/"+path+"/latency_us.p99"].Mean
				if math.IsNaN(a) || math.IsNaN(b) || !(thr > 0) || !(a > 0) {
					break
				}
				p50, p99 = append(p50, plotter.XY{X: thr, Y: a}), append(p99, plotter.XY{X: thr, Y: b})
			}
			for k, pts := range []plotter.XYs{p50, p99} {
				if len(pts) == 0 {
					continue
				}
				l, sc, err := plotter.NewLinePoints(pts)
				if err != nil {
					continue
				}
				l.LineStyle = lineStyle(k)
				sc.Color = colour(k)
				p.Add(l, sc)
				if pi == 0 {
					leg.add([]string{"p50", "p99"}[k], l, sc)
				}
			}
			if knee >= 0 && knee < len(p99) {
				c, err := plotter.NewScatter(plotter.XYs{p99[knee]})
				if err == nil {
					c.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(7), Shape: draw.RingGlyph{}}
					p.Add(c)
					if pi == 0 {
						leg.add("the knee", c)
					}
					notes = append(notes, fmt.Sprintf("%s %s req/s", path, fmtSig(p99[knee].X)))
				}
			}
			p.X.Label.Text = "throughput achieved (req/s)"
			p.X.Tick.Marker = linearTicks{most: 4}
			panels = append(panels, p)
		}
		f := &figure{name: "latency_vs_throughput", panels: panels, legend: leg, cols: 2,
			w: figW + 2*vg.Centimeter, h: vg.Length((len(panels)+1)/2)*5*vg.Centimeter + vg.Centimeter}
		if fixed != "" {
			f.name += "__" + fixedNames[fixed]
		}
		f.caption = "p50 and p99 latency against the throughput each path achieved, as the offered load (`" + agg.Params[ri].Key + "`) grows; circled: the knee, the last point before the median doubles its light-load value (" + strings.Join(notes, "; ") + "). A path stops where it turns unstable."
		if fixed != "" {
			f.caption += " Fixed: " + fixed + "."
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// capacityFigures draws, for a data-path sweep the capacity table covers,
// the utilisation of every resource of each path (a panel per path)
// against the first numeric swept parameter, one figure per combination
// of the others (at most four): the resource whose line reaches 100%
// first is the one that saturates. A point where the path is unstable is
// ringed. Drawn only where some path is unstable or some resource at 90%
// or more: elsewhere capacity is not what the sweep asks.
func capacityFigures(agg SweepAggregate) []*figure {
	if len(agg.Paths) == 0 || len(agg.Groups) > 60 {
		return nil
	}
	xi := -1
	var xs []float64
	for i, p := range agg.Params {
		if v, _, ok := numericAxis(p.Values); ok && len(p.Values) >= 2 {
			xi, xs = i, v
			break
		}
	}
	// Only where capacity is the question: some path unstable, or some
	// resource at 90% or more somewhere.
	near := false
	for _, g := range agg.Groups {
		for _, n := range agg.Paths {
			_, u := busiest(g, n)
			near = near || u >= 0.9 || g.Metrics["paths/"+n+"/unstable"].Mean > 0
		}
	}
	if xi < 0 || !near {
		return nil
	}
	xp := agg.Params[xi]
	fixedKeys, byFixed := groupByOthers(agg.Groups, xi)
	if len(fixedKeys) > 4 {
		return nil
	}
	fixedNames := fixedFileNames(fixedKeys)
	var figs []*figure
	for _, fixed := range fixedKeys {
		groups := byFixed[fixed]
		// The legend in the resources' order, whichever panel has each.
		thumbs := make([][]plot.Thumbnailer, len(resources))
		var ring plot.Thumbnailer
		var panels []*plot.Plot
		for _, path := range agg.Paths {
			p := newPlot(axisName(xp.Key), "utilisation (%)", true)
			panelTitle(p, path)
			var unstable plotter.XYs
			for ri, r := range resources {
				var pts plotter.XYs
				for _, g := range groups {
					e, ok := g.Metrics["paths/"+path+"/"+r.field]
					if !ok || math.IsNaN(e.Mean) {
						continue
					}
					x := xs[slices.Index(xp.Values, g.Params[xi].Value)]
					pts = append(pts, plotter.XY{X: x, Y: 100 * e.Mean})
					if g.Metrics["paths/"+path+"/unstable"].Mean > 0 && ri == 0 {
						// Ringed on the busiest resource's point.
						_, u := busiest(g, path)
						unstable = append(unstable, plotter.XY{X: x, Y: 100 * u})
					}
				}
				if !slices.ContainsFunc(pts, func(q plotter.XY) bool { return q.Y > 0 }) {
					continue // a path without a SmartNIC has no SoC or DMA engine
				}
				l, sc, err := plotter.NewLinePoints(pts)
				if err != nil {
					continue
				}
				l.LineStyle = lineStyle(ri)
				sc.Color = colour(ri)
				sc.Shape = shapes[ri%len(shapes)]
				p.Add(l, sc)
				if thumbs[ri] == nil {
					thumbs[ri] = []plot.Thumbnailer{l, sc}
				}
			}
			full, err := plotter.NewLine(plotter.XYs{{X: slices.Min(xs), Y: 100}, {X: slices.Max(xs), Y: 100}})
			if err == nil {
				full.LineStyle = draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
				p.Add(full)
			}
			if len(unstable) > 0 {
				c, err := plotter.NewScatter(unstable)
				if err == nil {
					c.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(7), Shape: draw.RingGlyph{}}
					p.Add(c)
					ring = c
				}
			}
			p.Y.Min, p.Y.Max = 0, 105
			p.Y.Tick.Marker = linearTicks{most: 6}
			var ticks []plot.Tick
			for i, v := range xs {
				ticks = append(ticks, plot.Tick{Value: v, Label: xp.Values[i]})
			}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			panels = append(panels, p)
		}
		leg := newLegend()
		for ri, t := range thumbs {
			if t != nil {
				leg.add(resources[ri].name, t...)
			}
		}
		if ring != nil {
			leg.add("unstable", ring)
		}
		f := &figure{name: "utilisation_vs_" + slug(xp.Key), panels: panels, legend: leg, cols: 2,
			w: figW + 2*vg.Centimeter, h: vg.Length((len(panels)+1)/2)*6*vg.Centimeter + vg.Centimeter}
		if fixed != "" {
			f.name += "__" + fixedNames[fixed]
		}
		f.caption = fmt.Sprintf("Utilisation of each resource (GPUs, the SmartNIC's Arm cores (soc) and DMA engine, the inbound port; means over seeds) against `%s`, a panel per path: the resource that reaches 100%% first saturates. Ringed: the path is unstable there (the rule under the capacity table), on its busiest resource.", xp.Key)
		if fixed != "" {
			f.caption += " Fixed: " + fixed + "."
		}
		figs = append(figs, f)
	}
	return figs
}

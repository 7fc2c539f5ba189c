package reports

// A sweep's line figures: each plotted metric against each swept key, one
// figure per value of the others, with the axes read from the values.

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// anyCI says whether any point of lines has a CI to draw.
func anyCI(lines []Line) bool {
	for _, ln := range lines {
		for _, hw := range ln.HalfWidth {
			if hw > 0 && !math.IsInf(hw, 0) {
				return true
			}
		}
	}
	return false
}

// ratioReference is what a ratio figure's line at 1 stands for, and the
// style it is drawn in: the entity it is, where that is one of the
// figure's (a training sweep's baseline policy, or none), in that
// entity's colour and dash, named so; else the metric's reference in
// grey (style -1).
func (agg SweepAggregate) ratioReference(kind metricKind, m metric) (string, int) {
	ref := ""
	if kind.kind == "training" {
		switch m.field {
		case "vs_baseline.x":
			ref = agg.prov.baseline
		case "vs_none.x":
			ref = "none"
		}
	}
	i := slices.Index(kind.names, ref)
	switch {
	case i < 0:
		return m.reference(), -1
	case m.at1 != "":
		return m.at1, i
	}
	return ref + " (the baseline)", i
}

// entityStyles is each line's style (colour, dash and marker) by its
// entity's place among names, so that an entity keeps its style in
// every figure whichever lines a figure lacks (a ratio's reference has
// none: the baseline in one, none in another).
func entityStyles(lines []Line, names []string) []int {
	styles := make([]int, len(lines))
	for i, ln := range lines {
		styles[i] = slices.Index(names, ln.Name)
	}
	return styles
}

var leadingNumber = regexp.MustCompile(`^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$`)

// numericAxis reads parameter values such as "0.4", "80%", "25GB/s" as
// numbers sharing one unit; ok is false when they are not all numbers with
// the same unit (then the axis is categorical). Quantities of one kind in
// mixed units ("100us", "1ms"; "16KiB", "4MiB") are read in the kind's
// base unit (s, B, B/s), so that a log-spaced sweep is one axis.
func numericAxis(values []string) (xs []float64, unit string, ok bool) {
	if xs, unit, ok := plainAxis(values); ok {
		return xs, unit, true
	}
	kinds := []struct {
		unit  string
		parse func(string) (float64, error)
	}{
		{"s", func(v string) (float64, error) { d, err := units.ParseDuration(v); return d.Time().Seconds(), err }},
		{"B", func(v string) (float64, error) { b, err := units.ParseBytes(v); return float64(b), err }},
		{"B/s", func(v string) (float64, error) { b, err := units.ParseBandwidth(v); return float64(b), err }},
		{"/s", func(v string) (float64, error) { r, err := units.ParseRate(v); return float64(r), err }},
	}
	for _, k := range kinds {
		xs = xs[:0]
		good := true
		for _, v := range values {
			x, err := k.parse(strings.TrimSpace(v))
			if err != nil {
				good = false
				break
			}
			xs = append(xs, x)
		}
		if good && len(xs) == len(values) {
			return xs, k.unit, true
		}
	}
	return nil, "", false
}

// plainAxis reads values that are numbers with one unit as written.
func plainAxis(values []string) (xs []float64, unit string, ok bool) {
	for i, v := range values {
		m := leadingNumber.FindStringSubmatch(v)
		if m == nil {
			return nil, "", false
		}
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return nil, "", false
		}
		if i == 0 {
			unit = m[2]
		} else if m[2] != unit {
			return nil, "", false
		}
		xs = append(xs, x)
	}
	return xs, unit, true
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

func slug(s string) string {
	return strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

// sweepFigures draws, for every swept parameter with at least two values
// and every plotted metric, the metric against that parameter with one line
// per path or policy. When other parameters are swept too, there is one
// figure per combination of their values.
func sweepFigures(agg SweepAggregate) ([]*figure, error) {
	figs, _, err := sweepLineFigures(agg, 0)
	return figs, err
}

// sweepLineFigures is sweepFigures, leaving out the lines against a
// parameter that would need more than maxFixed figures (one per value of
// the others; 0: no limit), with a note saying so: where maps are drawn,
// 20 figures of lines per metric are not read.
func sweepLineFigures(agg SweepAggregate, maxFixed int) ([]*figure, []string, error) {
	var notes []string
	var figs []*figure
	// Two seeds give a CI of 12.7 standard errors: drawn as bars, said.
	fewSeeds := len(agg.Seeds) == 2
	if fewSeeds {
		notes = append(notes, "With 2 seeds per combination the 95% confidence intervals are not meaningful (Student t of one degree of freedom: 12.7 standard errors either side); the figures draw them as error bars rather than bands that would hide the lines. Run with `--seeds 3` or more for intervals worth reading.")
	}
	// A numeric swept parameter carries the single-entity kinds' lines
	// (one per combination of the others); against a named parameter
	// (placement: host, smartnic) they would be a figure per combination.
	numericParam := ""
	for _, xp := range agg.Params {
		if _, _, ok := numericAxis(xp.Values); ok && len(xp.Values) >= 2 && numericParam == "" {
			numericParam = xp.Key
		}
	}
	for xi, xp := range agg.Params {
		if len(xp.Values) < 2 {
			continue
		}
		xs, unit, numeric := numericAxis(xp.Values)
		var ticks []string
		if !numeric {
			ticks = xp.Values
			xs = make([]float64, len(xp.Values))
			for i := range xs {
				xs[i] = float64(i)
			}
		}
		if numeric && unit == "/s" && slices.Max(xs) < 1 {
			// A rate below one a second reads as so many a minute (or
			// an hour), as the maps and the fixed values write it.
			xs, unit = perMinute(xs)
		}
		geometric := numeric && slices.Min(xs) > 0 && slices.Max(xs) >= 16*slices.Min(xs)
		xLabel := agg.axisLabel(xp.Key)
		if unit != "" {
			xLabel += " (" + unit + ")"
		}
		xAt := map[string]float64{}
		for i, v := range xp.Values {
			xAt[v] = xs[i]
		}
		fixedKeys, byFixed := groupByOthers(agg.Groups, xi)
		fixedNames := fixedFileNames(fixedKeys)
		if maxFixed > 0 && len(fixedKeys) > maxFixed {
			notes = append(notes, fmt.Sprintf("Lines against `%s` are left out: one figure per value of the other parameters would be %d per metric; the maps below show them.", xp.Key, len(fixedKeys)))
			continue
		}
		// The llm section's one entity (serving) draws each
		// combination of the other parameters as a line of one figure,
		// not one figure of one line each: the comparison is between
		// the combinations.
		combined := map[string]bool{}
		if !numeric && numericParam != "" && len(fixedKeys) > 1 {
			for _, kind := range metricKinds(agg) {
				if kind.kind == "llm" {
					combined[kind.kind] = true
				}
			}
		} else if len(fixedKeys) > 1 && len(fixedKeys) <= 8 {
			for _, kind := range metricKinds(agg) {
				if kind.kind != "llm" || len(kind.names) != 1 {
					continue
				}
				combined[kind.kind] = true
				n := kind.names[0]
				for _, m := range kind.metrics {
					if !m.plot {
						continue
					}
					var lines []Line
					for _, fixed := range fixedKeys {
						if ln, ok := lineOf(fixedLabel(fixed), byFixed[fixed], kind.kind, n, m, xi, xAt); ok {
							lines = append(lines, ln)
						}
					}
					if len(lines) == 0 {
						continue
					}
					name := slug(strings.ReplaceAll(m.field, "_us", "")) + "_vs_" + slug(xp.Key)
					f, err := metricVsParamCI(name, xLabel, m.axisLabel(), lines, nil, m.logY, ticks, fewSeeds)
					if err != nil {
						return nil, nil, err
					}
					if geometric {
						setLog(&f.panels[0].X)
						f.panels[0].X.Label.Text += " (log scale)"
					}
					f.caption = fmt.Sprintf("%s against `%s`, one line per combination of %s.", m.title, xp.Key, otherKeys(fixedKeys[0]))
					if anyCI(lines) {
						f.caption += " Bars or bands: 95% CI."
					} else {
						f.caption += " No CI (the points carry none for this metric)."
					}
					figs = append(figs, f)
				}
			}
		}
		for _, fixed := range fixedKeys {
			for _, kind := range metricKinds(agg) {
				if combined[kind.kind] {
					continue
				}
				for _, m := range kind.metrics {
					if !m.plot {
						continue
					}
					var lines []Line
					for _, n := range kind.names {
						if ln, ok := lineOf(n, byFixed[fixed], kind.kind, n, m, xi, xAt); ok {
							lines = append(lines, ln)
						}
					}
					if len(lines) == 0 {
						// Every value NaN (a gap where a path is unstable at
						// every point): an empty frame says nothing.
						// A sweep without the data paths (training,
						// cluster) has no gap to be missing: nothing to say.
						if fixed == fixedKeys[0] && kind.kind == "derived" && len(kind.names) > 0 {
							notes = append(notes, fmt.Sprintf("No figure of %s against `%s`: it is not defined at any point (a path unstable at each; the capacity table says which resource saturated).", strings.ToLower(m.title[:1])+m.title[1:], xp.Key))
						}
						continue
					}
					name := slug(strings.ReplaceAll(m.field, "_us", "")) + "_vs_" + slug(xp.Key)
					if kind.kind == "training" { // jct_s.mean is a cluster metric too
						name = "training_" + name
					}
					ci := "shaded bands"
					if ticks != nil || fewSeeds {
						ci = "error bars"
					}
					one := "one line"
					if ticks != nil {
						// Values of a name (a fallback, a device) have
						// nothing between them: points, not lines.
						one = "one set of markers"
					}
					caption := fmt.Sprintf("%s against `%s`, %s per %s; %s: 95%% CI (across the sweep's seeds, or the run's own over its seeds where the sweep has one).", m.title, xp.Key, one, singular(kind.kind), ci)
					if !anyCI(lines) {
						caption = fmt.Sprintf("%s against `%s`, %s per %s; no CI (the points carry none for this metric).", m.title, xp.Key, one, singular(kind.kind))
					}
					if fewSeeds {
						caption += " Over two seeds that CI is not meaningful (see above)."
					}
					if fixed != "" {
						name += "__" + fixedNames[fixed]
						caption += " Fixed: " + fixedValues(fixed) + "."
					}
					f, err := metricVsParamCI(name, xLabel, m.axisLabel(), lines, entityStyles(lines, kind.names), m.logY, ticks, fewSeeds)
					if err != nil {
						return nil, nil, err
					}
					if r, ok := referenceOf(kind.kind, m.field); ok {
						// Among several lines, the paper's figure is named
						// as the one comparison's it is (the 15% is
						// conspirator's over host-rdma, not tcp's).
						if r.markFor != "" && len(lines) > 1 {
							r.markLabel += " (" + r.markFor + ")"
						}
						if err := referenceLines(f, xs, r); err != nil {
							return nil, nil, err
						}
						caption += fmt.Sprintf(" Grey: no difference (%s); dashed: %s.", fmtSig(r.centre), r.markLabel)
					}
					if geometric {
						// Values such as 1,400 .. 44,800 slots are spread
						// evenly on a log axis, not crowded at its left.
						setLog(&f.panels[0].X)
						f.panels[0].X.Label.Text += " (log scale)"
					}
					if m.ratio {
						name, style := agg.ratioReference(kind, m)
						if err := referenceAt1(f, xs, name, style); err != nil {
							return nil, nil, err
						}
					}
					f.caption = caption
					figs = append(figs, f)
				}
			}
		}
	}
	// Where an exact policy ran, each policy's gap to its optimum (one
	// value per parameter combination, the mean over seeds): how the gap
	// is spread over the sweep, which a line per fixed value cannot show.
	gaps := map[string][]float64{}
	var names []string
	for _, n := range agg.Policies {
		if n == "optimal" || isHorizon(n) {
			continue
		}
		for _, g := range agg.Groups {
			if e, ok := g.Metrics["policies/"+n+"/optimality_gap"]; ok && !math.IsNaN(e.Mean) {
				gaps[n] = append(gaps[n], 100*e.Mean)
			}
		}
		if len(gaps[n]) > 1 {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		f, err := cdfFigure("optimality_gap_cdf", "GPU-hours over the exact optimum's (%)", names, gaps)
		if err != nil {
			return nil, nil, err
		}
		f.caption = "Gap to the exact policy's GPU-hours over the sweep's parameter combinations (each the mean over seeds): empirical CDF. Below 0: fewer GPU-hours than the optimum, which a per-snapshot optimum allows."
		figs = append(figs, f)
	}
	// Where the horizon bound ran: each policy's GPU-hours above it, over
	// the combinations whose every seed the bound covers (the others are
	// counted in the caption, never drawn as if covered).
	// A line per policy and kind of bound: the optimum from arrival
	// (exact for runs where no job waits) and the LP that lets jobs wait
	// (loose) say different things, so they are never pooled.
	above := map[string][]float64{}
	names, left := nil, 0
	for _, n := range agg.Policies {
		if isHorizon(n) {
			continue
		}
		var lines []string
		for _, g := range agg.Groups {
			e, ok := g.Metrics["policies/"+n+"/vs_horizon.pct"]
			if !ok || math.IsNaN(e.Mean) {
				continue
			}
			if c := g.Metrics["policies/"+n+"/vs_horizon.covered"]; c.Mean != 1 {
				left++
				continue
			}
			line := n + ", jobs may wait"
			for _, h := range agg.Policies {
				if fa, ok := g.Metrics["policies/"+h+"/horizon.from_arrival"]; ok && isHorizon(h) && fa.Mean == 1 {
					line = n + ", from arrival"
				}
			}
			if len(above[line]) == 0 {
				lines = append(lines, line)
			}
			above[line] = append(above[line], e.Mean)
		}
		slices.Sort(lines)
		for _, l := range lines {
			if len(above[l]) > 1 {
				names = append(names, l)
			}
		}
	}
	if len(names) > 0 {
		f, err := cdfFigure("horizon_gap_cdf", "GPU-hours above the horizon lower bound (%)", names, above)
		if err != nil {
			return nil, nil, err
		}
		f.caption = "GPU-hours above optimal-horizon's lower bound over the sweep's parameter combinations (each the mean over seeds): empirical CDF, a line per policy and kind of bound: 'from arrival' where the window has a schedule that starts every job on arrival (the bound is then that optimum, exact for runs in which no job waits), 'jobs may wait' elsewhere (the configuration LP, loose: it ignores integrality over time). No policy is below 0."
		if left > 0 {
			f.caption += fmt.Sprintf(" Left out: %d policy-combinations the bound does not cover (summary.json's vs_horizon.why).", left)
		}
		figs = append(figs, f)
	}
	return figs, notes, nil
}

// groupByOthers splits groups by the values of every parameter but the
// ones at indices axes (the axes of a figure): the keys ("k=v, k=v"; ""
// where no other parameter varies) in first-seen order, and the groups
// of each.
func groupByOthers(groups []sweep.Group, axes ...int) ([]string, map[string][]sweep.Group) {
	var keys []string
	by := map[string][]sweep.Group{}
	for _, g := range groups {
		var parts []string
		for i, kv := range g.Params {
			if !slices.Contains(axes, i) {
				parts = append(parts, kv.Key+"="+kv.Value)
			}
		}
		k := strings.Join(parts, ", ")
		if _, seen := by[k]; !seen {
			keys = append(keys, k)
		}
		by[k] = append(by[k], g)
	}
	return keys, by
}

// isHorizon reports whether a policy entry is the offline horizon bound
// (optimal-horizon, or a variant of it) rather than an online policy.
func isHorizon(name string) bool {
	return name == "optimal-horizon" || strings.HasPrefix(name, "optimal-horizon/")
}

// axisName is a swept key as an axis reads it: its last element in words,
// with the section for context in brackets ("datapath.host.background_load"
// becomes "background load [datapath.host]"); the caller adds the unit in
// parentheses.
func axisName(key string) string {
	i := strings.LastIndex(key, ".")
	if i < 0 {
		return strings.ReplaceAll(key, "_", " ")
	}
	return strings.ReplaceAll(key[i+1:], "_", " ") + " [" + key[:i] + "]"
}

// axisLabel is axisName, or for a swept weight the entry it weighs,
// where the sweep's inputs say: training.jobs.synthetic.model_weights[2]
// reads "bert-large's weight (model weights[2])", from the inputs'
// training.jobs.synthetic.models[2] (a short label: an axis is no
// longer than its plot).
func (agg SweepAggregate) axisLabel(key string) string {
	name := axisName(key)
	dot := strings.LastIndex(key, ".")
	open := strings.LastIndex(key, "[")
	if dot < 0 || open < dot || !strings.HasSuffix(key, "]") {
		return name
	}
	list, idx := key[dot+1:open], key[open:]
	if !strings.HasSuffix(list, "_weights") {
		return name
	}
	entry, ok := agg.prov.inputs[key[:dot+1]+strings.TrimSuffix(list, "_weights")+"s"+idx]
	if !ok {
		return name
	}
	return strings.Trim(entry, `"`) + "'s weight (" + strings.ReplaceAll(list, "_", " ") + idx + ")"
}

// singular names one entry of a result group ("paths" -> "path",
// "policies" -> "policy").
func singular(kind string) string {
	if kind == "policies" || kind == "training" {
		return "policy"
	}
	if kind == "derived" {
		return "comparison"
	}
	return strings.TrimSuffix(kind, "s")
}

// perMinute writes rates in /s below one a second as so many a minute,
// or an hour where even the largest is below one a minute.
func perMinute(xs []float64) ([]float64, string) {
	f, unit := 60.0, "/min"
	if slices.Max(xs)*60 < 1 {
		f, unit = 3600, "/h"
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out, unit
}

// fixedValues writes a figure's fixed parameters ("k=v, k=v") with each
// value in the form the figures write it (a rate of 0.016667/s as 1/min).
// lineOf is entity n's metric m against parameter xi over groups, named
// name; ok false where it has no value that is not NaN (nothing to draw).
func lineOf(name string, groups []sweep.Group, kind, n string, m metric, xi int, xAt map[string]float64) (Line, bool) {
	ln := Line{Name: name}
	for _, g := range groups {
		e, ok := g.Metrics[kind+"/"+n+"/"+m.field]
		if !ok {
			continue
		}
		ln.X = append(ln.X, xAt[g.Params[xi].Value])
		ln.Y = append(ln.Y, e.Mean)
		ln.HalfWidth = append(ln.HalfWidth, halfWidth(g, kind, n, m))
	}
	return ln, slices.ContainsFunc(ln.Y, func(v float64) bool { return !math.IsNaN(v) })
}

// fixedLabel is a combination's values alone, for a legend: "host,
// serial" for "a.placement=host, a.engine=serial".
func fixedLabel(fixed string) string {
	var out []string
	for _, kv := range strings.Split(fixed, ", ") {
		if _, v, ok := strings.Cut(kv, "="); ok {
			out = append(out, readable([]string{v})[0])
		}
	}
	return strings.Join(out, ", ")
}

// otherKeys names a combination's parameters: "`a.placement`, `a.engine`".
func otherKeys(fixed string) string {
	var out []string
	for _, kv := range strings.Split(fixed, ", ") {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, "`"+k+"`")
	}
	return strings.Join(out, ", ")
}

func fixedValues(fixed string) string {
	var out []string
	for _, kv := range strings.Split(fixed, ", ") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			kv = k + "=" + readable([]string{v})[0]
		}
		out = append(out, kv)
	}
	return strings.Join(out, ", ")
}

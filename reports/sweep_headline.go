package reports

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// What a sweep's report opens with (issue 38): the binary's version and
// commit that computed its points, the scenario by its own name, the
// seeds, and the result in one line; and, for a data-path sweep whose gap
// is nowhere defined (every point has an unstable path), the capacity
// answer instead of a column of "not defined".

// sweepProv is what a sweep's points say of themselves (their
// summary.json files), gathered as they are aggregated.
type sweepProv struct {
	// scenario is the scenario's own name: an emitted sweep's spec names
	// its copy of the file (scenario.yaml), the points the scenario.
	scenario string
	// builds are the distinct "version (commit ...)" that computed the
	// points, in first-seen order.
	builds []string
	// calibration is the calibration profile of the points ("" none).
	calibration string
	// baseline is a training sweep's baseline policy ("" none).
	baseline string
	// inputs are the sweep's resolved inputs (sweep.Spec.Inputs), for
	// axis labels.
	inputs map[string]string
	// runSeeds is the most seeds a point's own run is over
	// (cluster.seeds, training.seeds): each point's metrics are means
	// over them.
	runSeeds int
	// training is each training setting the points report (device,
	// pool, in-flight slots, fallback, hash, ina.use, placement) and
	// its values over the points, in first-seen order.
	training []setting
}

// setting is a named input and its values over a sweep's points.
type setting struct {
	name   string
	values []string
}

// trainingSettings are the settings of a training result a sweep report
// names, as "name value".
func trainingSettings(t *TrainingResult) [][2]string {
	s := [][2]string{{"device", t.Device}, {"pool", fmt.Sprintf("%d slots", t.Slots)}, {"window", fmt.Sprint(t.Window)},
		{"held in flight", fmt.Sprint(t.InFlight)}, {"fallback", t.Fallback}, {"hash", t.Hash}, {"ina.use", t.Use}}
	if t.Placement != "" {
		s = append(s, [2]string{"placement", t.Placement + " (" + t.ServerNIC + ")"})
	}
	return s
}

// trainingLine is the sweep's training settings: each with its value,
// or its values over the points where they differ.
func (p sweepProv) trainingLine() string {
	var parts []string
	for _, st := range p.training {
		v := strings.Join(st.values, ", ")
		if v == "" {
			continue // not in the points' summaries (older ones)
		}
		if len(st.values) > 1 {
			v += " (by point)"
		}
		parts = append(parts, st.name+" "+v)
	}
	return strings.Join(parts, "; ")
}

// esaOverATP says whether esa's speedup over the baseline is a speedup
// over ATP, the one ESA's "up to 1.35x" was measured against: a sweep
// whose baseline is another (none: the host ring) marks no 1.35.
func (p sweepProv) esaOverATP() bool { return p.baseline == "" || p.baseline == "atp" }

// headlineWhat is what a headline of kind says it measures, and whether
// its paper's mark applies: ESA's 1.35x is over ATP, so against another
// baseline it is no yardstick and the training headline says so.
func (p sweepProv) headlineWhat(kind, what string) (string, bool) {
	if kind != "training" || p.esaOverATP() {
		return what, true
	}
	return fmt.Sprintf("esa's mean JCT speedup over %s (ESA's up to 1.35x is over ATP-style sharing and not over %s), x", p.baseline, p.baseline), false
}

func (p *sweepProv) add(r Result) {
	if p.scenario == "" {
		p.scenario = r.Scenario
	}
	if b := Build(r.Version, r.Commit); !slices.Contains(p.builds, b) {
		p.builds = append(p.builds, b)
	}
	if c := r.calibration(); c != "" {
		p.calibration = c
	}
	p.runSeeds = max(p.runSeeds, r.seedCount())
	if r.Training != nil && p.baseline == "" {
		p.baseline = r.Training.Baseline
	}
	if r.Training != nil {
		for _, kv := range trainingSettings(r.Training) {
			i := slices.IndexFunc(p.training, func(st setting) bool { return st.name == kv[0] })
			if i < 0 {
				p.training = append(p.training, setting{name: kv[0]})
				i = len(p.training) - 1
			}
			if kv[1] != "" && !slices.Contains(p.training[i].values, kv[1]) {
				p.training[i].values = append(p.training[i].values, kv[1])
			}
		}
	}
}

// Build names the binary that computed a result: its version and
// commit, and honestly why the commit is unknown where the binary carries
// none (`go run` and GOFLAGS=-buildvcs=false build without it).
func Build(version, commit string) string {
	s := "conspirator " + orUnknown(version)
	if commit == "" {
		return s + " (commit unknown: built without VCS info)"
	}
	return s + " (commit " + commit + ")"
}

// sweepProvenance is the sweep's line of what computed it.
func sweepProvenance(agg SweepAggregate, title string) string {
	parts := []string{"computed by " + strings.Join(agg.prov.builds, " and ")}
	if len(agg.prov.builds) == 0 {
		parts = []string{"no point complete, so no build to name"}
	}
	parts = append(parts, "scenario "+orUnknown(title))
	seeds := make([]string, len(agg.Seeds))
	for i, s := range agg.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	s := "seeds " + strings.Join(seeds, ", ")
	// A point's seed is the first of its own run's (cluster.seeds,
	// training.seeds).
	switch n := agg.prov.runSeeds; {
	case n > 1 && len(agg.Seeds) == 1:
		s += fmt.Sprintf(" (each point: means over its run's seeds %d-%d)", agg.Seeds[0], agg.Seeds[0]+uint64(n)-1)
	case n > 1:
		s += fmt.Sprintf(" (each point: means over its run's %d seeds, from the point's seed on)", n)
	}
	parts = append(parts, s)
	if agg.prov.calibration != "" {
		parts = append(parts, "calibration profile "+agg.prov.calibration)
	} else {
		parts = append(parts, "no calibration profile (catalog values)")
	}
	return strings.Join(parts, "; ")
}

// sweepHeadlines are the headline metrics of a sweep, the first the sweep
// has: the data path's gap, the cluster saving, esa's speedup; mark is
// the paper's value, reached where the metric is at or beyond it (below
// it where lower).
var sweepHeadlines = []struct {
	kind, name string
	m          metric
	what       string
	mark       float64
	unit       string
	lower      bool
}{
	{"derived", "conspirator vs host-rdma", metricNamed(derivedMetrics, "gap_pct"), "conspirator's mean end-to-end time below host-rdma's, % (the paper: 15)", 15, "%", false},
	{"policies", "conspirator", metricNamed(policyMetrics, "vs_baseline.pct"), "the conspirator policy's GPU-hours against the baseline, % (the paper: -33)", -33, "%", true},
	{"training", "esa", metricNamed(trainingMetrics, "vs_baseline.x"), "esa's mean JCT speedup over the baseline, x (ESA: up to 1.35)", 1.35, "x", false},
}

// groupAt writes a group's parameters as "k=v, k=v".
func groupAt(g sweep.Group) string {
	var kv []string
	for _, p := range g.Params {
		kv = append(kv, p.Key+"="+p.Value)
	}
	return strings.Join(kv, ", ")
}

// SweepHeadline is the sweep's result in one line: the headline metric's
// range over the combinations (or its value, with one), how many reach
// the paper's value, how many have none; where none has a value, the
// capacity answer. "" when the sweep has no headline metric.
func SweepHeadline(agg SweepAggregate) string {
	for _, h := range sweepHeadlines {
		key := h.kind + "/" + h.name + "/" + h.m.field
		var defined []sweep.Group
		total := 0
		for _, g := range agg.Groups {
			e, ok := g.Metrics[key]
			if !ok {
				continue
			}
			total++
			if !math.IsNaN(e.Mean) {
				defined = append(defined, g)
			}
		}
		if total == 0 {
			continue
		}
		full, marked := agg.prov.headlineWhat(h.kind, h.what)
		what, _, _ := strings.Cut(full, ", ")
		if len(defined) == 0 {
			s := fmt.Sprintf("%s: not defined at any of the %d combinations (a path unstable at each).", what, total)
			if c := capacityHeadline(agg); c != "" {
				s = "Capacity: " + c + ". " + capitalise(s)
			}
			return s
		}
		val := func(g sweep.Group) string {
			return meanCI(g.Metrics[key].Mean, halfWidth(g, h.kind, h.name, h.m)) + h.unit
		}
		var s string
		if total == 1 {
			s = fmt.Sprintf("%s: %s (the paper: %s%s)", what, val(defined[0]), fmtSig(h.mark), h.unit)
			if !marked {
				s = fmt.Sprintf("%s: %s", what, val(defined[0]))
			}
			s += againstNone(h.kind, defined[0], "there")
		} else {
			lo, hi, reach := defined[0], defined[0], 0
			for _, g := range defined {
				v := g.Metrics[key].Mean
				if v < lo.Metrics[key].Mean {
					lo = g
				}
				if v > hi.Metrics[key].Mean {
					hi = g
				}
				if h.lower && v <= h.mark || !h.lower && v >= h.mark {
					reach++
				}
			}
			s = fmt.Sprintf("%s: from %s (%s) to %s (%s) over %d combinations", what, val(lo), groupAt(lo), val(hi), groupAt(hi), total)
			if marked {
				s += fmt.Sprintf("; the paper's %s%s reached at %d of them", fmtSig(h.mark), h.unit, reach)
			}
			s += againstNone(h.kind, hi, "at the latter")
		}
		if n := total - len(defined); n > 0 {
			s += fmt.Sprintf("; not defined at %d (a path unstable)", n)
		}
		if h.kind == "training" {
			if b := bestTraining(agg); b != "" {
				s = b + "; " + s
			}
		}
		if c := FewSeedsCaveat(agg.ciSeeds()); c != "" {
			s += " " + c
		}
		return s + "."
	}
	if c := capacityHeadline(agg); c != "" {
		return "Capacity: " + c + "."
	}
	return ""
}

// ciSeeds is how many seeds the ± of the sweep's metrics is over: its
// own seeds where it has several, else each point's run's own
// (cluster.seeds, training.seeds).
func (agg SweepAggregate) ciSeeds() int {
	if len(agg.Seeds) > 1 {
		return len(agg.Seeds)
	}
	return agg.prov.runSeeds
}

// groupBest is the training policy with the largest mean-JCT speedup
// over the baseline at g, the baseline itself (at 1) where none beats
// it; ok is false where g has no speedup.
func groupBest(agg SweepAggregate, g sweep.Group) (name string, x float64, ok bool) {
	name, x = agg.prov.baseline, 1
	for _, n := range agg.Training {
		e, has := g.Metrics["training/"+n+"/vs_baseline.x"]
		if !has || math.IsNaN(e.Mean) || n == agg.prov.baseline {
			continue
		}
		ok = true
		if e.Mean > x {
			name, x = n, e.Mean
		}
	}
	return name, x, ok
}

// speedupAt is policy's speedup over the baseline at g with its CI, as
// "1.42 ± 0.21x"; the baseline's is 1x.
func speedupAt(agg SweepAggregate, g sweep.Group, policy string) string {
	if policy == agg.prov.baseline {
		return "1x (the baseline)"
	}
	e := g.Metrics["training/"+policy+"/vs_baseline.x"]
	return meanCI(e.Mean, halfWidth(g, "training", policy, metricNamed(trainingMetrics, "vs_baseline.x"))) + "x"
}

// bestTraining names, for a training sweep, the policy with the shortest
// mean JCT against the baseline, so that esa's range (the headline's
// measure, ESA's claim) never reads as the winner where another policy
// beats it: at how many combinations each policy is best, and the
// largest speedup with esa's there. "" for a sweep without speedups.
func bestTraining(agg SweepAggregate) string {
	if agg.prov.baseline == "" {
		return ""
	}
	count := map[string]int{}
	var order []string
	var top sweep.Group
	topName, topX, found := "", math.Inf(-1), false
	for _, g := range agg.Groups {
		n, x, ok := groupBest(agg, g)
		if !ok {
			continue
		}
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
		if !found || x > topX {
			top, topName, topX, found = g, n, x, true
		}
	}
	if !found {
		return ""
	}
	label := func(n string) string {
		if n == agg.prov.baseline {
			return n + " (the baseline)"
		}
		return n
	}
	total := 0
	for _, n := range order {
		total += count[n]
	}
	esa := ""
	if e, ok := top.Metrics["training/esa/vs_baseline.x"]; ok && !math.IsNaN(e.Mean) && topName != "esa" {
		esa = ", where esa is " + speedupAt(agg, top, "esa")
	}
	if total == 1 {
		return fmt.Sprintf("best mean JCT: %s, %s over %s (the baseline)%s", label(topName), speedupAt(agg, top, topName), agg.prov.baseline, esa)
	}
	slices.SortStableFunc(order, func(a, b string) int { return count[b] - count[a] })
	var at []string
	for _, n := range order {
		at = append(at, fmt.Sprintf("%s at %d", label(n), count[n]))
	}
	return fmt.Sprintf("best mean JCT against %s (the baseline): %s of %d combinations; the largest speedup: %s %s (%s)%s",
		agg.prov.baseline, strings.Join(at, ", "), total, topName, speedupAt(agg, top, topName), groupAt(top), esa)
}

// againstNone is, for a training headline, esa's speedup over no
// aggregation at g: a gain over ATP says nothing of whether aggregating
// pays at all ("" where g has none).
func againstNone(kind string, g sweep.Group, where string) string {
	if kind != "training" {
		return ""
	}
	e, ok := g.Metrics["training/esa/vs_none.x"]
	if !ok || math.IsNaN(e.Mean) {
		return ""
	}
	m := metricNamed(trainingMetrics, "vs_none.x")
	return fmt.Sprintf("; %s esa is %sx of no in-network aggregation", where, meanCI(e.Mean, halfWidth(g, "training", "esa", m)))
}

// capacityHeadline says, per path of a data-path sweep, the most it
// delivered while stable and the resource busiest there, and at how many
// combinations it is unstable with what was busiest at those.
func capacityHeadline(agg SweepAggregate) string {
	var out []string
	for _, n := range agg.Paths {
		best, at, bestRes := -1.0, "", ""
		unstable, total := 0, 0
		busy := map[string]int{}
		var order []string
		for _, g := range agg.Groups {
			thr, ok := g.Metrics["paths/"+n+"/throughput_rps"]
			if !ok {
				continue
			}
			total++
			res, u := busiest(g, n)
			if g.Metrics["paths/"+n+"/unstable"].Mean > 0 {
				unstable++
				if busy[res] == 0 {
					order = append(order, res)
				}
				busy[res]++
				continue
			}
			if thr.Mean > best {
				best, at, bestRes = thr.Mean, groupAt(g), fmt.Sprintf("%s %s", res, fmtPct(u))
			}
		}
		if total == 0 {
			continue
		}
		var s string
		if best >= 0 {
			s = fmt.Sprintf("%s delivers at most %s req/s while stable (%s; busiest: %s)", n, fmtSig(best), at, bestRes)
		} else {
			s = n + " is stable nowhere"
		}
		if unstable > 0 {
			var b []string
			for _, r := range order {
				b = append(b, fmt.Sprintf("%s at %d", r, busy[r]))
			}
			s += fmt.Sprintf(", unstable at %d of %d combinations (busiest there: %s)", unstable, total, strings.Join(b, ", "))
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// unstableRule states the one rule every path's stability is judged by
// (sim/datapath's recorder.unstable), for the reports to print beside
// the flags it sets.
const unstableRule = "Unstable (one rule for every path): the open loop's mean number of requests in flight in the second half of the arrivals exceeds 1.5 times the first half's plus one, and the backlog when arrivals end exceeds both 1% of the arrivals and twice that first-half mean (or the in-flight count passed max_in_flight); a mild overload that leaves fewer than 1% of the arrivals behind is not flagged. Throughput is the completions from the first request's start to the last one's finish: it includes the run's end, when clients have sent their last requests, so even a stable path reads below the nominal offered rate."

// WriteSweepHeadline prints the sweep's headline line, then the headline
// metric of every parameter combination with its 95% CI as a short table
// (the range where there are more than 30); where no combination has a
// value, each combination's capacity (throughput, busiest resource,
// stability) instead, and the rule that flags a path unstable.
func WriteSweepHeadline(w io.Writer, agg SweepAggregate) {
	if h := SweepHeadline(agg); h != "" {
		fmt.Fprintf(w, "\n%s\n", h)
	}
	for _, h := range sweepHeadlines {
		key := h.kind + "/" + h.name + "/" + h.m.field
		var rows [][]string
		defined := 0
		for _, g := range agg.Groups {
			e, ok := g.Metrics[key]
			if !ok {
				continue
			}
			v := "not defined (an unstable path)"
			if !math.IsNaN(e.Mean) {
				defined++
				v = meanCI(e.Mean, halfWidth(g, h.kind, h.name, h.m))
			}
			best := ""
			if n, _, ok := groupBest(agg, g); ok && h.kind == "training" && agg.prov.baseline != "" && n != h.name {
				best = "best: " + n + " " + speedupAt(agg, g, n)
			}
			rows = append(rows, []string{groupAt(g), v, best})
		}
		if len(rows) == 0 {
			continue
		}
		if defined == 0 {
			writeCapacityLines(w, agg)
			return
		}
		if len(rows) > 30 {
			fmt.Fprintln(w, "every combination in aggregate.csv, the maps in report.md")
			return
		}
		what, _ := agg.prov.headlineWhat(h.kind, h.what)
		if c := FewSeedsCaveat(agg.ciSeeds()); c != "" {
			what += " " + c
		}
		fmt.Fprintf(w, "\n%s:\n", what)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\n", strings.TrimRight(strings.Join(r, "\t"), "\t"))
		}
		tw.Flush()
		return
	}
	writeCapacityLines(w, agg)
}

// writeCapacityLines prints each combination's paths: throughput, the
// busiest resource and whether unstable (at most 30 combinations; the
// report's capacity table has them all).
func writeCapacityLines(w io.Writer, agg SweepAggregate) {
	if len(agg.Paths) == 0 || len(agg.Groups) == 0 || len(agg.Groups) > 30 {
		return
	}
	fmt.Fprintln(w, "\neach path's throughput (req/s) and busiest resource:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range agg.Groups {
		var cells []string
		for _, n := range agg.Paths {
			thr, ok := g.Metrics["paths/"+n+"/throughput_rps"]
			if !ok {
				continue
			}
			res, u := busiest(g, n)
			c := fmt.Sprintf("%s %s, %s %s", n, fmtSig(thr.Mean), res, fmtPct(u))
			if g.Metrics["paths/"+n+"/unstable"].Mean > 0 {
				c += ", unstable"
			}
			cells = append(cells, c)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", groupAt(g), strings.Join(cells, "\t"))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s\n", unstableRule)
}

package reports

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// metric is a scalar taken from each point's summary.json and aggregated
// across seeds. Metric keys in aggregate files are "<kind>/<name>/<field>",
// e.g. "paths/conspirator/latency_us.mean".
type metric struct {
	field string
	label string // axis label with unit
	// short is the axis label of a small panel (compare's grid), where
	// label would not fit; "" uses label.
	short string
	title string
	logY  bool
	plot  bool
	// ratio: a ratio to a reference, drawn with the reference's line at
	// 1, named in the legend by at1 ("": the baseline).
	ratio bool
	at1   string
	// ci names the metric that holds this one's own 95% CI half-width
	// over the scenario's seeds (a multi-seed cluster or training run):
	// a sweep of one seed shows that one, as it has no spread of its own.
	ci string
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

// reference is what a ratio metric's line at 1 stands for.
func (m metric) reference() string {
	if m.at1 != "" {
		return m.at1
	}
	return "the baseline"
}

// axisLabel is m's label on a figure's y axis: the short one where the
// long would run past the axis's height (about 44 characters at the
// figures' size and font).
func (m metric) axisLabel() string {
	if m.short != "" && utf8.RuneCountInString(m.label) > 44 {
		return m.short
	}
	return m.label
}

var pathMetrics = []metric{
	{field: "latency_us.mean", label: "mean latency (µs)", title: "Mean request latency", plot: true},
	{field: "latency_us.p50", label: "median latency (µs)"},
	{field: "latency_us.p95", label: "p95 latency (µs)"},
	{field: "latency_us.p99", label: "p99 latency (µs)", title: "p99 request latency", plot: true},
	{field: "throughput_rps", label: "throughput (req/s)", title: "Throughput", plot: true},
	{field: "host_cpu_us_per_request", label: "host CPU time (µs per request)", title: "Host CPU cost per request", plot: true},
	{field: "soc_utilization", label: "SoC utilization (fraction)"},
	{field: "gpu_utilization", label: "GPU utilization (fraction)"},
	{field: "dropped", label: "dropped requests"},
	{field: "unstable", label: "unstable (1: offered load above capacity; its latencies are left out)"},
	{field: "dma_utilization", label: "SmartNIC DMA utilization (fraction)"},
	{field: "port_utilization", label: "inbound port utilization (fraction)"},
}

// derivedMetrics are computed from several paths of a point: the
// headline gap (summary.json's), and every path's mean latency below
// host-rdma's. An unstable path gives none (NaN), so a curve never
// averages an unbounded mean in.
var derivedMetrics = []metric{
	{field: "gap_pct", label: "mean end-to-end time below host-rdma's (%)", short: "below host-rdma (%)", title: "The headline: mean end-to-end time below host-rdma's (the paper: 15% for conspirator)", plot: true},
}

var policyMetrics = []metric{
	{field: "gpu_hours", label: "GPU-hours (GPU h)", title: "GPU-hours consumed", plot: true, ci: "gpu_hours.ci95"},
	{field: "gpu_hours_fractional", label: "fraction-weighted GPU-hours (GPU h)"},
	{field: "jct_s.mean", label: "mean job completion time (s)", title: "Mean job completion time", plot: true},
	{field: "jct_s.p99", label: "p99 job completion time (s)"},
	{field: "queue_s.mean", label: "mean queueing delay (s)", title: "Mean queueing delay", plot: true},
	{field: "queue_s.p99", label: "p99 queueing delay (s)"},
	{field: "utilization", label: "GPU utilization (fraction)"},
	{field: "migrations", label: "migrations"},
	{field: "unscheduled", label: "unscheduled jobs"},
	{field: "vs_baseline.pct", label: "GPU-hours vs the baseline (%)", title: "GPU-hours against the baseline", plot: true, ci: "vs_baseline.ci95"},
	{field: "top10_share", label: "top-10 jobs' share of held GPU time (fraction)"},
	{field: "censored", label: "censored jobs (still running at the trace's end)"},
	{field: "optimality_gap", label: "optimality gap (fraction)"},
	{field: "vs_horizon.pct", label: "GPU-hours above the horizon bound (%)"},
	{field: "vs_horizon.covered", label: "the horizon bound covers the run (1 = yes)"},
	{field: "solves.proven_share", label: "share of exact solves proven optimal"},
	{field: "horizon.from_arrival", label: "the horizon bound is the optimum from arrival (1) or lets jobs wait (0)"},
	{field: "gpu_hours.ci95", label: "95% CI half-width of GPU-hours over the scenario's seeds (GPU h)"},
	{field: "vs_baseline.ci95", label: "95% CI half-width of GPU-hours vs the baseline over the scenario's seeds (%)"},
	{field: "vs_best_baseline.pct", label: "GPU-hours vs the best established baseline (%)", title: "GPU-hours against the best established baseline", plot: true, ci: "vs_best_baseline.ci95"},
	{field: "vs_best_baseline.ci95", label: "95% CI half-width of GPU-hours vs the best baseline over the scenario's seeds (%)"},
}

func pathValues(p PathResult) []float64 {
	lat := []float64{float64(p.LatencyUS.Mean), float64(p.LatencyUS.P50), float64(p.LatencyUS.P95), float64(p.LatencyUS.P99)}
	unstable := 0.0
	if p.Unstable {
		// Its queue grew with the run: no latency of it means anything.
		unstable = 1
		for i := range lat {
			lat[i] = math.NaN()
		}
	}
	return append(lat, float64(p.ThroughputRPS), float64(p.HostCPUUSPerRequest), float64(p.SoCUtilization), float64(p.GPUUtilization), float64(p.Dropped), unstable,
		float64(p.DMAUtilization), float64(p.PortUtilization))
}

// derivedValues are the derived metrics of r, keyed by name ("conspirator
// vs host-rdma", "tcp vs host-rdma", ...).
func derivedValues(r Result) map[string][]float64 {
	out := map[string][]float64{}
	var ref *PathResult
	for i := range r.Paths {
		if r.Paths[i].Name == "host-rdma" {
			ref = &r.Paths[i]
		}
	}
	if ref == nil {
		return out
	}
	for _, p := range r.Paths {
		if p.Name == "host-rdma" {
			continue
		}
		v := math.NaN()
		if !p.Unstable && !ref.Unstable && float64(ref.LatencyUS.Mean) > 0 {
			v = 100 * (1 - float64(p.LatencyUS.Mean)/float64(ref.LatencyUS.Mean))
		}
		if p.Name == "conspirator" && r.Gap != nil {
			v = float64(*r.Gap) // the summary's own, the same formula
		}
		out[p.Name+" vs host-rdma"] = []float64{v}
	}
	return out
}

func policyValues(q PolicyResult) []float64 {
	vsHorizon, covered, proven := math.NaN(), math.NaN(), math.NaN()
	if h := q.VsHorizon; h != nil {
		vsHorizon, covered = float64(h.Pct), 0
		if h.Covered {
			covered = 1
		}
	}
	if st := q.Solves; st != nil && st.Total > 0 {
		proven = float64(st.Proven) / float64(st.Total)
	}
	fromArrival := math.NaN()
	if h := q.Horizon; h != nil {
		fromArrival = 0
		if h.Starts == "arrival" {
			fromArrival = 1
		}
	}
	vsBase, vsCI := math.NaN(), math.NaN()
	if v := q.VsBaseline; v != nil {
		vsBase, vsCI = float64(v.Pct), float64(v.CI95)
	}
	vsBest, vsBestCI := math.NaN(), math.NaN()
	if v := q.VsBest; v != nil {
		vsBest, vsBestCI = float64(v.Pct), float64(v.CI95)
	}
	return []float64{float64(q.GPUHours), float64(q.GPUHoursFractional), float64(q.JCTS.Mean), float64(q.JCTS.P99),
		float64(q.QueueS.Mean), float64(q.QueueS.P99), float64(q.Utilization), float64(q.Migrations), float64(q.Unscheduled),
		vsBase, float64(q.Top10Share), float64(q.Censored), float64(q.OptimalityGap),
		vsHorizon, covered, proven, fromArrival, float64(q.GPUHoursCI95), vsCI, vsBest, vsBestCI}
}

// Metrics flattens a result into the scalar metrics a sweep aggregates.
func Metrics(r Result) map[string]float64 {
	m := map[string]float64{}
	for _, p := range r.Paths {
		for i, v := range pathValues(p) {
			m["paths/"+p.Name+"/"+pathMetrics[i].field] = v
		}
	}
	for _, q := range r.Policies {
		for i, v := range policyValues(q) {
			m["policies/"+q.Name+"/"+policyMetrics[i].field] = v
		}
	}
	if r.Training != nil {
		for _, q := range r.Training.Policies {
			for i, v := range trainingValues(q) {
				m["training/"+q.Name+"/"+trainingMetrics[i].field] = v
			}
		}
	}
	for name, vs := range derivedValues(r) {
		for i, v := range vs {
			m["derived/"+name+"/"+derivedMetrics[i].field] = v
		}
	}
	return m
}

// metricKind is one kind of entity a sweep aggregates, with its names and
// metrics.
type metricKind struct {
	kind    string
	title   string
	names   []string
	metrics []metric
}

// metricKinds lists the kinds of agg in report order.
func metricKinds(agg SweepAggregate) []metricKind {
	return []metricKind{
		{"derived", "The headline gap", agg.Derived, derivedMetrics},
		{"paths", "Data path", agg.Paths, pathMetrics},
		{"policies", "Cluster scheduling", agg.Policies, policyMetrics},
		{"training", "Training (aggregator memory policies)", agg.Training, trainingMetrics},
	}
}

// SweepAggregate is aggregate.json: every parameter combination's metrics,
// mean and 95% CI half-width across seeds.
type SweepAggregate struct {
	Complete int           `json:"complete_points"`
	Total    int           `json:"total_points"`
	Params   []sweep.Param `json:"params"`
	Seeds    []uint64      `json:"seeds"`
	Paths    []string      `json:"paths,omitempty"`
	Policies []string      `json:"policies,omitempty"`
	Training []string      `json:"training,omitempty"`
	Derived  []string      `json:"derived,omitempty"`
	Groups   []sweep.Group `json:"groups"`
	// prov is what the points say of themselves (not in aggregate.json).
	prov sweepProv
}

// AggregateSweep reads the complete points of the sweep in dir and
// aggregates their metrics across seeds.
func AggregateSweep(dir string) (SweepAggregate, error) {
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return SweepAggregate{}, err
	}
	agg := SweepAggregate{Total: len(spec.Points), Params: spec.Params, Seeds: spec.Seeds}
	agg.prov.inputs = spec.Inputs
	seenPath, seenPol, seenTrain := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var samples []sweep.Sample
	for _, p := range spec.Points {
		ok, err := sweep.IsComplete(dir, p)
		if err != nil {
			return SweepAggregate{}, err
		}
		if !ok {
			continue
		}
		// Read through the point's manifest: a summary edited after the
		// sweep wrote it is refused, here as on --resume.
		b, err := sweep.ReadPointFile(sweep.PointDir(dir, p), ResultFile)
		if err != nil {
			return SweepAggregate{}, err
		}
		r, err := ParseResult(filepath.Join(sweep.PointDir(dir, p), ResultFile), b)
		if err != nil {
			return SweepAggregate{}, fmt.Errorf("point %s: %w", p.ID, err)
		}
		if p.Inputs != "" && r.InputsSHA256 != p.Inputs {
			return SweepAggregate{}, fmt.Errorf("point %s: its %s was computed from other inputs (inputs_sha256 %s) than %s records for it (%s); delete the point's directory and rerun the sweep with --resume",
				p, ResultFile, shortDigest(r.InputsSHA256), sweep.SpecFile, shortDigest(p.Inputs))
		}
		for _, x := range r.Paths {
			if !seenPath[x.Name] {
				seenPath[x.Name] = true
				agg.Paths = append(agg.Paths, x.Name)
			}
		}
		for _, x := range r.Policies {
			if !seenPol[x.Name] {
				seenPol[x.Name] = true
				agg.Policies = append(agg.Policies, x.Name)
			}
		}
		if r.Training != nil {
			for _, x := range r.Training.Policies {
				if !seenTrain[x.Name] {
					seenTrain[x.Name] = true
					agg.Training = append(agg.Training, x.Name)
				}
			}
		}
		for name := range derivedValues(r) {
			if !slices.Contains(agg.Derived, name) {
				agg.Derived = append(agg.Derived, name)
			}
		}
		agg.prov.add(r)
		samples = append(samples, sweep.Sample{Point: p, Metrics: Metrics(r)})
		agg.Complete++
	}
	// The headline first, then the others by name.
	slices.SortFunc(agg.Derived, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "conspirator vs host-rdma":
			return -1
		case b == "conspirator vs host-rdma":
			return 1
		}
		return strings.Compare(a, b)
	})
	agg.Groups = sweep.Aggregate(samples, 0.95)
	if agg.Groups == nil {
		agg.Groups = []sweep.Group{}
	}
	return agg, nil
}

func renderSweep(fsys atomicfs.FS, dir, by string) error {
	agg, err := AggregateSweep(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := WriteJSONAtomic(fsys, filepath.Join(dir, AggregateJSON), agg); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeAggregateCSV(fsys, filepath.Join(dir, AggregateCSV), agg); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	plots, err := mkPlotsDir(fsys, dir)
	if err != nil {
		return err
	}
	var md strings.Builder
	// The title names the scenario, not the directory, so that one sweep
	// renders to the same bytes wherever it is written; the scenario's
	// own name, as its points record it (an emitted sweep's spec names
	// its copy, scenario.yaml).
	title := agg.prov.scenario
	if title == "" {
		title = filepath.Base(filepath.Clean(dir))
		if spec, err := sweep.ReadSpec(dir); err == nil && spec.Meta["scenario"] != "" {
			title = spec.Meta["scenario"]
		}
	}
	fmt.Fprintf(&md, "# Sweep report: %s\n\n", title)
	if h := SweepHeadline(agg); h != "" {
		fmt.Fprintf(&md, "**%s**\n\n", h)
	}
	fmt.Fprintf(&md, "Sweep: %s.\n\n", sweepProvenance(agg, title))
	fmt.Fprintf(&md, "%d of %d points complete", agg.Complete, agg.Total)
	if agg.Complete < agg.Total {
		md.WriteString(" (**incomplete**: rerun the sweep with `--resume` to finish it)")
	}
	md.WriteString(". Means across seeds with 95% confidence intervals (Student t)")
	if len(agg.Seeds) == 1 {
		md.WriteString("; with one sweep seed, the ± of GPU-hours, JCT and savings is each run's own CI over the scenario's seeds (cluster.seeds, training.seeds), where it has several")
	}
	md.WriteString(".\n\n")
	for _, p := range agg.Params {
		fmt.Fprintf(&md, "- `%s`: %s\n", p.Key, strings.Join(p.Values, ", "))
	}
	for _, k := range metricKinds(agg) {
		sweepTable(&md, agg, k)
	}
	if err := sweepTiming(&md, dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	maps, mapNote, err := sweepHeatmaps(dir, agg)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	maxFixed := 0
	if len(maps) > 0 {
		maxFixed = 4
	}
	figs, notes, err := sweepLineFigures(agg, maxFixed)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	figs = append(figs, maps...)
	figs = append(figs, capacityFigures(agg)...)
	knees, kneeNotes := kneeFigures(agg)
	figs = append(figs, knees...)
	notes = append(notes, kneeNotes...)
	notes = append(notes, noPoolNotes(agg)...)
	sweepCapacity(&md, agg)
	for _, n := range append(notes, mapNote) {
		if n != "" {
			fmt.Fprintf(&md, "\n%s\n", n)
		}
	}
	if len(figs) > 0 {
		md.WriteString("\n## Figures\n")
	}
	if err := saveFigures(fsys, plots, &md, figs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	writtenBy(&md, by)
	if err := writeReport(fsys, dir, md.String()); err != nil {
		return err
	}
	// A sweep's points each have their own seed and inputs: the page names
	// the scenario; the points' summary.json files hold the rest.
	return writeHTMLWith(fsys, dir, md.String(), title, sweepProvenance(agg, title))
}

func writeAggregateCSV(fsys atomicfs.FS, path string, agg SweepAggregate) error {
	header := []string{}
	for _, p := range agg.Params {
		header = append(header, p.Key)
	}
	header = append(header, "kind", "name", "metric", "mean", "ci95_half_width", "n")
	var rows [][]string
	for _, g := range agg.Groups {
		for _, kind := range metricKinds(agg) {
			for _, name := range kind.names {
				for _, m := range kind.metrics {
					e, ok := g.Metrics[kind.kind+"/"+name+"/"+m.field]
					if !ok {
						continue
					}
					row := []string{}
					for _, kv := range g.Params {
						row = append(row, kv.Value)
					}
					row = append(row, kind.kind, name, m.field, FormatFloat(e.Mean), FormatFloat(e.HalfWidth), strconv.Itoa(e.N))
					rows = append(rows, row)
				}
			}
		}
	}
	return WriteCSVAtomic(fsys, path, header, rows)
}

// halfWidth is the 95% CI half-width shown for metric m of entity name in
// group g: across the sweep's seeds where it has several, else the
// scenario's own CI over its seeds (m.ci) where it has one; NaN when
// neither.
func halfWidth(g sweep.Group, kind, name string, m metric) float64 {
	e := g.Metrics[kind+"/"+name+"/"+m.field]
	if !math.IsNaN(e.HalfWidth) || m.ci == "" {
		return e.HalfWidth
	}
	if c, ok := g.Metrics[kind+"/"+name+"/"+m.ci]; ok && c.N == 1 && c.Mean > 0 {
		return c.Mean
	}
	return e.HalfWidth
}

// sweepTable lists the plotted metrics of every combination and entity.
func sweepTable(md *strings.Builder, agg SweepAggregate, k metricKind) {
	kind, names := k.kind, k.names
	if len(names) == 0 {
		return
	}
	var shown []metric
	for _, m := range k.metrics {
		if m.plot {
			shown = append(shown, m)
		}
	}
	fmt.Fprintf(md, "\n## %s\n\n|", k.title)
	for _, p := range agg.Params {
		fmt.Fprintf(md, " %s |", p.Key)
	}
	fmt.Fprintf(md, " %s |", singular(kind))
	for _, m := range shown {
		fmt.Fprintf(md, " %s |", m.label)
	}
	md.WriteString("\n|")
	for range len(agg.Params) + 1 {
		md.WriteString("---|")
	}
	for range shown {
		md.WriteString("---:|")
	}
	md.WriteString("\n")
	for _, g := range agg.Groups {
		for _, n := range names {
			md.WriteString("|")
			for _, kv := range g.Params {
				fmt.Fprintf(md, " %s |", kv.Value)
			}
			fmt.Fprintf(md, " %s |", n)
			for _, m := range shown {
				e, ok := g.Metrics[kind+"/"+n+"/"+m.field]
				hw := halfWidth(g, kind, n, m)
				switch {
				case !ok:
					md.WriteString(" - |")
				case math.IsNaN(hw):
					fmt.Fprintf(md, " %s |", fmtSig(e.Mean))
				default:
					// Seeds that agree up to rounding give a half-width of
					// 1e-13: print it as the 0 it is.
					if math.Abs(hw) < 1e-9*math.Max(math.Abs(e.Mean), 1e-300) {
						hw = 0
					}
					fmt.Fprintf(md, " %s ± %s |", fmtSig(e.Mean), fmtSig(hw))
				}
			}
			md.WriteString("\n")
		}
	}
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
		for _, fixed := range fixedKeys {
			for _, kind := range metricKinds(agg) {
				for _, m := range kind.metrics {
					if !m.plot {
						continue
					}
					var lines []Line
					for _, n := range kind.names {
						ln := Line{Name: n}
						for _, g := range byFixed[fixed] {
							e, ok := g.Metrics[kind.kind+"/"+n+"/"+m.field]
							if !ok {
								continue
							}
							ln.X = append(ln.X, xAt[g.Params[xi].Value])
							ln.Y = append(ln.Y, e.Mean)
							ln.HalfWidth = append(ln.HalfWidth, halfWidth(g, kind.kind, n, m))
						}
						if slices.ContainsFunc(ln.Y, func(v float64) bool { return !math.IsNaN(v) }) {
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
					caption := fmt.Sprintf("%s against `%s`, one line per %s; %s: 95%% CI (across the sweep's seeds, or the run's own over its seeds where the sweep has one).", m.title, xp.Key, singular(kind.kind), ci)
					if fewSeeds {
						caption += " Over two seeds that CI is not meaningful (see above)."
					}
					if fixed != "" {
						name += "__" + fixedNames[fixed]
						caption += " Fixed: " + fixed + "."
					}
					f, err := metricVsParamCI(name, xLabel, m.axisLabel(), lines, entityStyles(lines, kind.names), m.logY, ticks, fewSeeds)
					if err != nil {
						return nil, nil, err
					}
					if r, ok := referenceOf(kind.kind, m.field); ok {
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
						if err := baselineAt1(f, xs, m.reference()); err != nil {
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

func shortDigest(d string) string {
	if d == "" {
		return "absent"
	}
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}

// sweepTiming adds the policies' wall-clock decision times, read from
// each complete point's timing.json: they are measurements of the machine
// that ran the point, kept out of summary.json and so out of the
// aggregate (whose decision times would all be 0), and said to be so.
func sweepTiming(md *strings.Builder, dir string) error {
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return err
	}
	means := map[string][]float64{}
	var names []string
	for _, p := range spec.Points {
		if ok, _ := sweep.IsComplete(dir, p); !ok {
			continue
		}
		b, err := sweep.ReadPointFile(sweep.PointDir(dir, p), TimingFile)
		if err != nil {
			continue // a data-path point has none
		}
		t, err := parseTiming(b)
		if err != nil {
			return fmt.Errorf("point %s: %w", p.ID, err)
		}
		for _, q := range t.Policies {
			if q.Decisions == 0 {
				continue
			}
			if _, ok := means[q.Name]; !ok {
				names = append(names, q.Name)
			}
			means[q.Name] = append(means[q.Name], float64(q.DecisionUS.Mean))
		}
	}
	if len(names) == 0 {
		return nil
	}
	md.WriteString("\n## Decision time (wall clock)\n\n")
	md.WriteString("Measured on the machine that ran each point (its `timing.json`), not simulated: not in aggregate.json, and not reproducible. Per policy, over the points: the median and the range of the mean time per call.\n\n")
	md.WriteString("| policy | points | median of the means (µs) | range (µs) |\n|---|---:|---:|---:|\n")
	for _, n := range names {
		v := slices.Clone(means[n])
		slices.Sort(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		fmt.Fprintf(md, "| %s | %d | %s | %s to %s |\n", n, len(v), fmtSig(med), fmtSig(v[0]), fmtSig(v[len(v)-1]))
	}
	return nil
}

// metricNamed is the metric of ms with the given field.
func metricNamed(ms []metric, field string) metric {
	for _, m := range ms {
		if m.field == field {
			return m
		}
	}
	panic("reports: no metric " + field)
}

// noPoolNotes says, per pool policy of a training sweep, at how many
// combinations it held no slot at all (see NoJobAggregated): its rows
// there are the host ring's and its comparison with another pool policy
// is void.
func noPoolNotes(agg SweepAggregate) []string {
	var out []string
	for _, p := range agg.Training {
		if p == "none" {
			continue
		}
		var at []string
		for _, g := range agg.Groups {
			if e, ok := g.Metrics["training/"+p+"/mean_slots_held"]; ok && e.Mean == 0 {
				at = append(at, groupAt(g))
			}
		}
		if len(at) > 0 {
			out = append(out, fmt.Sprintf("**%s aggregated no job at %d of %d combinations** (%s): no aggregator slot held, every spanning job ran its host all-reduce there (by ina.use when-faster, or for want of a partition or a slot), so its rows are the host ring's and its comparisons with other pool policies say nothing of the pool.", p, len(at), len(agg.Groups), strings.Join(at, "; ")))
		}
	}
	return out
}

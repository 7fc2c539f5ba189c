package reports

// The metrics a sweep aggregates: each kind's fields from summary.json,
// with their labels, plotting and CI companions.

import (
	"math"
	"unicode/utf8"

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
	if r.LLM != nil {
		for i, v := range llmValues(r.LLM) {
			m["llm/"+LLMEntity+"/"+llmMetrics[i].field] = v
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
		{"llm", "LLM serving", agg.LLM, llmMetrics},
	}
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

// metricNamed is the metric of ms with the given field.
func metricNamed(ms []metric, field string) metric {
	for _, m := range ms {
		if m.field == field {
			return m
		}
	}
	panic("reports: no metric " + field)
}

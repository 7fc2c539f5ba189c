package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// Run is one run directory as compare reads it: its result and the
// resolved inputs of its summary.json.
type Run struct {
	Dir    string
	Result Result
	Inputs map[string]any
	// Label names the run in figures (the inputs that set it apart).
	Label string
	// Sweep is a sweep directory's aggregate (nil for a single run); its
	// metrics are the means over seeds of each parameter combination, with
	// their 95% CIs.
	Sweep *SweepAggregate
}

// ReadRun reads dir/summary.json, or a sweep directory's points.
func ReadRun(dir string) (Run, error) {
	p := filepath.Join(dir, ResultFile)
	if !exists(p) && exists(filepath.Join(dir, "sweep.json")) {
		return readSweepRun(dir)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Run{}, fmt.Errorf("compare: %s: %w (give run directories, each holding %s, or sweep directories, each holding sweep.json)", dir, err, ResultFile)
	}
	r, err := ParseResult(p, b)
	if err != nil {
		return Run{}, fmt.Errorf("compare: %w", err)
	}
	var meta struct {
		Inputs map[string]any `json:"inputs"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return Run{}, fmt.Errorf("compare: %s: %w", p, err)
	}
	return Run{Dir: dir, Result: r, Inputs: meta.Inputs}, nil
}

// Metric is one number of a run with the half-width of its 95% confidence
// interval (NaN when the run has none).
type Metric struct {
	Value, CI float64
}

// readSweepRun reads a sweep directory as one side of a comparison: its
// aggregate over the complete points, and as inputs its identity (the
// scenario, --set overrides, version), its swept values and its seeds.
func readSweepRun(dir string) (Run, error) {
	agg, err := AggregateSweep(dir)
	if err != nil {
		return Run{}, fmt.Errorf("compare: %s: %w", dir, err)
	}
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return Run{}, fmt.Errorf("compare: %s: %w", dir, err)
	}
	in := map[string]any{}
	for k, v := range spec.Meta {
		in["sweep."+k] = v
	}
	for _, p := range spec.Params {
		in["sweep.param."+p.Key] = strings.Join(p.Values, ",")
	}
	seeds := make([]string, len(spec.Seeds))
	for i, sd := range spec.Seeds {
		seeds[i] = fmt.Sprint(sd)
	}
	in["sweep.seeds"] = strings.Join(seeds, ",")
	in["sweep.complete_points"] = fmt.Sprintf("%d of %d", agg.Complete, agg.Total)
	r := Result{Version: spec.Meta["version"], Scenario: spec.Meta["scenario"]}
	return Run{Dir: dir, Result: r, Inputs: in, Sweep: &agg}, nil
}

// runMetrics is metrics for a run, or every group's estimates for a
// sweep, keyed "[key=value, ...] kind/name/quantity".
func runMetrics(r Run) map[string]Metric {
	if r.Sweep == nil {
		return metrics(r.Result)
	}
	m := map[string]Metric{}
	for _, g := range r.Sweep.Groups {
		parts := make([]string, len(g.Params))
		for i, kv := range g.Params {
			parts[i] = kv.Key + "=" + kv.Value
		}
		at := "[" + strings.Join(parts, ", ") + "] "
		for k, e := range g.Metrics {
			m[at+k] = Metric{e.Mean, e.HalfWidth}
		}
	}
	return m
}

// metrics flattens the comparable numbers of a result, keyed
// "kind/name/quantity".
func metrics(r Result) map[string]Metric {
	m := map[string]Metric{}
	nan := math.NaN()
	// The headline gap, and every path's against host-rdma (one seed: no
	// CI of its own).
	for name, vs := range derivedValues(r) {
		for i, v := range vs {
			m["derived/"+name+"/"+derivedMetrics[i].field] = Metric{v, nan}
		}
	}
	for _, p := range r.Paths {
		k := "path/" + p.Name + "/"
		m[k+"mean_latency_us"] = Metric{float64(p.LatencyUS.Mean), float64(p.LatencyUS.CI95Mean)}
		m[k+"p50_latency_us"] = Metric{float64(p.LatencyUS.P50), nan}
		m[k+"p99_latency_us"] = Metric{float64(p.LatencyUS.P99), nan}
		m[k+"throughput_rps"] = Metric{float64(p.ThroughputRPS), nan}
		m[k+"host_cpu_us_per_request"] = Metric{float64(p.HostCPUUSPerRequest), nan}
	}
	for _, c := range r.Cost {
		k := "cost/" + c.Name + "/"
		m[k+"cost_effectiveness"] = Metric{float64(c.CostEffectiveness), nan}
		m[k+"power_efficiency"] = Metric{float64(c.PowerEfficiency), nan}
	}
	for _, q := range r.Policies {
		k := "policy/" + q.Name + "/"
		ci := nan // one seed, or an older result: no CI
		if q.Seeds > 1 {
			ci = float64(q.GPUHoursCI95)
		}
		m[k+"gpu_hours"] = Metric{float64(q.GPUHours), ci}
		m[k+"mean_jct_s"] = Metric{float64(q.JCTS.Mean), nan}
		m[k+"mean_queue_s"] = Metric{float64(q.QueueS.Mean), nan}
		if v := q.VsBaseline; v != nil {
			ci := nan
			if q.Seeds > 1 {
				ci = float64(v.CI95)
			}
			m[k+"vs_"+v.Baseline+"_pct"] = Metric{float64(v.Pct), ci}
		}
	}
	for _, a := range r.Allocation {
		for _, at := range a.At {
			ci := float64(at.CI95)
			if at.Seeds < 2 {
				ci = nan // one seed has no CI (summary.json leaves it out)
			}
			m[fmt.Sprintf("allocation/%s/alloc_pct_at_%d", a.Name, at.ArrivedPct)] = Metric{float64(at.Mean), ci}
		}
	}
	return m
}

// Row is one metric across the runs.
type Row struct {
	Metric string
	Values []Metric // per run; Value NaN where the run lacks the metric
	// Diff is the difference to the first run, in percent of its value
	// (NaN where either lacks the metric or the first is 0); for a
	// metric that is itself a percentage (Points), the difference in
	// percentage points: a gap of 6.03% against 15.56% is +9.53 points,
	// not +158%.
	Diff []float64
	// Points says that the metric is a percentage and Diff is in
	// percentage points.
	Points bool
	// Beyond says whether the difference to the first run exceeds the sum
	// of both CI half-widths: "yes", "no", or "" where a CI is missing.
	Beyond []string
}

// InputDiff is one resolved input key whose value differs between runs.
type InputDiff struct {
	Key    string
	Values []string // per run; "(absent)" where a run lacks the key
}

// Comparison is runs side by side.
type Comparison struct {
	Runs   []Run
	Rows   []Row
	Inputs []InputDiff
	// Missing lists, per metric present in some runs only, the runs that
	// lack it: what cannot be compared (an older version, another
	// scenario).
	Missing []string
}

// Compare puts runs side by side: every metric any of them has (rows in
// name order), its difference to the first run and whether that exceeds
// the runs' confidence intervals, and the inputs that differ.
func Compare(runs []Run) Comparison {
	c := Comparison{Runs: runs}
	ms := make([]map[string]Metric, len(runs))
	keys := map[string]bool{}
	for i, r := range runs {
		ms[i] = runMetrics(r)
		for k := range ms[i] {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		row := Row{Metric: k, Points: isPercent(k)}
		var lacking []string
		for i := range runs {
			v, ok := ms[i][k]
			if !ok {
				v = Metric{math.NaN(), math.NaN()}
				lacking = append(lacking, runs[i].Dir)
			}
			row.Values = append(row.Values, v)
			base := row.Values[0]
			d, beyond := math.NaN(), ""
			switch {
			case i == 0 || math.IsNaN(v.Value) || math.IsNaN(base.Value):
			case row.Points:
				d = v.Value - base.Value
			case base.Value != 0:
				d = 100 * (v.Value - base.Value) / math.Abs(base.Value)
			}
			if i > 0 && !math.IsNaN(v.CI) && !math.IsNaN(base.CI) && !math.IsNaN(v.Value) && !math.IsNaN(base.Value) {
				beyond = "no"
				if math.Abs(v.Value-base.Value) > v.CI+base.CI {
					beyond = "yes"
				}
			}
			row.Diff = append(row.Diff, d)
			row.Beyond = append(row.Beyond, beyond)
		}
		if len(lacking) > 0 {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: not in %s", k, strings.Join(lacking, ", ")))
		}
		c.Rows = append(c.Rows, row)
	}
	c.Inputs = inputDiffs(runs)
	return c
}

// isPercent says whether the metric of key ("kind/name/quantity",
// a sweep's behind "[k=v, ...] ") is itself a percentage: a quantity
// named in percent (gap_pct, vs_naive-share_pct, alloc_pct_at_100,
// vs_baseline.pct) or a sweep metric whose label is in %. Its change is
// a difference in percentage points.
func isPercent(key string) bool {
	parts := strings.Split(key[strings.LastIndex(key, "] ")+1:], "/")
	q := parts[len(parts)-1]
	if strings.HasSuffix(q, "_pct") || strings.HasSuffix(q, ".pct") || strings.Contains(q, "_pct_") || strings.Contains(q, "_pct.") {
		return true
	}
	if len(parts) >= 3 { // a name may hold a slash: conspirator/mig
		for _, k := range metricKinds(SweepAggregate{}) {
			if k.kind == strings.TrimSpace(parts[0]) {
				for _, m := range k.metrics {
					if m.field == q {
						return strings.HasSuffix(m.label, "(%)")
					}
				}
			}
		}
	}
	return false
}

// inputDiffs lists the resolved input keys (flattened, "a.b.c") whose
// values differ between runs.
func inputDiffs(runs []Run) []InputDiff {
	flat := make([]map[string]string, len(runs))
	keys := map[string]bool{}
	for i, r := range runs {
		flat[i] = map[string]string{}
		flatten("", r.Inputs, flat[i])
		for k := range flat[i] {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []InputDiff
	for _, k := range names {
		var vals []string
		for i := range runs {
			v, ok := flat[i][k]
			if !ok {
				v = "(absent)"
			}
			vals = append(vals, v)
		}
		if slices.ContainsFunc(vals, func(v string) bool { return v != vals[0] }) {
			out = append(out, InputDiff{Key: k, Values: vals})
		}
	}
	return out
}

// flatten writes the leaves of a decoded JSON value as "a.b.c" = text;
// lists are leaves, written as JSON.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	if prefix == "" {
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}

// WriteText writes the comparison as aligned text tables: the metrics
// (value ± CI per run, then the difference to the first run in percent,
// in percentage points ("pp") for a metric that is a percentage, and
// whether it exceeds the CIs), the inputs that differ, and what could not
// be compared.
func (c Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "metric")
	for i, r := range c.Runs {
		fmt.Fprintf(tw, "\t[%d] %s", i, r.Dir)
		if i > 0 {
			fmt.Fprintf(tw, "\tvs [0]\tbeyond CI")
		}
	}
	fmt.Fprintln(tw)
	for _, row := range c.Rows {
		fmt.Fprint(tw, row.Metric)
		for i, v := range row.Values {
			cell := fmtSig(v.Value)
			if !math.IsNaN(v.CI) && !math.IsNaN(v.Value) {
				cell += " ± " + fmtSig(v.CI)
			}
			fmt.Fprintf(tw, "\t%s", cell)
			if i > 0 {
				d := "-"
				switch {
				case math.IsNaN(row.Diff[i]):
				case row.Points:
					d = fmt.Sprintf("%+.2f pp", row.Diff[i])
					if math.Abs(row.Diff[i]) < 0.005 {
						d = "+0.00 pp" // not "-0.00": a rounding's sign says nothing
					}
				default:
					d = fmt.Sprintf("%+.2f%%", row.Diff[i])
				}
				b := row.Beyond[i]
				if b == "" {
					b = "n/a"
				}
				fmt.Fprintf(tw, "\t%s\t%s", d, b)
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Inputs) > 0 {
		fmt.Fprintln(w, "\ninputs that differ:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, d := range c.Inputs {
			fmt.Fprintf(tw, "  %s\t%s\n", d.Key, strings.Join(d.Values, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "\ninputs: identical")
	}
	vs := map[string]bool{}
	for _, r := range c.Runs {
		vs[r.Result.Version+" "+r.Result.Commit] = true
	}
	if len(vs) > 1 {
		fmt.Fprintln(w, "\nnote: the runs come from different versions or commits of conspirator; a metric may differ because the model changed")
		for _, r := range c.Runs {
			fmt.Fprintf(w, "  %s: %s %s\n", r.Dir, orUnknown(r.Result.Version), orUnknown(r.Result.Commit))
		}
	}
	if len(c.Missing) > 0 {
		fmt.Fprintln(w, "\ncannot compare (metric missing in some runs):")
		for _, m := range c.Missing {
			fmt.Fprintln(w, "  "+m)
		}
	}
	return nil
}

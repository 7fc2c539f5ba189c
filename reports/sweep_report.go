package reports

// A sweep's aggregate (means and CIs over its seeds per combination) and
// its report: tables, figures, maps, timing and notes.

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

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
	LLM      []string      `json:"llm,omitempty"`
	Derived  []string      `json:"derived,omitempty"`
	Groups   []sweep.Group `json:"groups"`
	// prov is what the points say of themselves (not in aggregate.json).
	prov sweepProv
	// llmSeeds is, per parameter combination (paramsKey), an LLM point's
	// per-seed values (LLMResult.PerSeed); nil for a combination run at
	// more than one sweep seed, whose seeds do not pair.
	llmSeeds map[string]map[string][]float64
}

// paramsKey names a parameter combination.
func paramsKey(kvs []sweep.KV) string {
	var b strings.Builder
	for _, kv := range kvs {
		b.WriteString(kv.Key + "=" + kv.Value + "\x00")
	}
	return b.String()
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
		if r.LLM != nil && len(agg.LLM) == 0 {
			agg.LLM = []string{LLMEntity}
		}
		if r.LLM != nil {
			if agg.llmSeeds == nil {
				agg.llmSeeds = map[string]map[string][]float64{}
			}
			k := paramsKey(p.Params)
			if _, twice := agg.llmSeeds[k]; twice {
				agg.llmSeeds[k] = nil
			} else {
				agg.llmSeeds[k] = r.LLM.PerSeed
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
	if t := agg.prov.trainingLine(); t != "" {
		if b := agg.prov.baseline; b != "" {
			t += "; the baseline " + b
		}
		fmt.Fprintf(&md, "Training: %s.\n\n", t)
	}
	fmt.Fprintf(&md, "%d of %d points complete", agg.Complete, agg.Total)
	if agg.Complete < agg.Total {
		md.WriteString(" (**incomplete**: rerun the sweep with `--resume` to finish it)")
	}
	md.WriteString(". Means across seeds with 95% confidence intervals (Student t)")
	if len(agg.Seeds) == 1 {
		md.WriteString("; with one sweep seed, the ± of GPU-hours, JCT, savings and the LLM serving metrics is each run's own CI over the scenario's seeds (cluster.seeds, training.seeds, llm.seeds), where it has several")
	}
	md.WriteString(".\n\n")
	for _, p := range agg.Params {
		fmt.Fprintf(&md, "- `%s`: %s\n", p.Key, strings.Join(p.Values, ", "))
	}
	if len(agg.Groups) > fullTablesUpTo {
		sweepSummary(&md, agg)
	} else {
		for _, k := range metricKinds(agg) {
			sweepTable(&md, agg, k)
		}
	}
	if err := sweepTiming(&md, dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	maps, mapNote, err := sweepHeatmaps(dir, agg)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	llmMaps := llmWinnerMaps(agg)
	maxFixed := 0
	if len(maps)+len(llmMaps) > 0 {
		maxFixed = 4
	}
	figs, notes, err := sweepLineFigures(agg, maxFixed)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	figs = append(figs, maps...)
	figs = append(figs, llmMaps...)
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

// fullTablesUpTo is the most parameter combinations whose every plotted
// metric report.md lists; a larger sweep (paper/e2e-regimes: 800) is
// summed up by parameter instead, every value staying in aggregate.csv.
const fullTablesUpTo = 50

// sweepSummary stands for the tables of every combination in a large
// sweep: where the whole table is (aggregate.csv, aggregate.json), and
// the headline metric over the other parameters at each value of each
// swept parameter.
func sweepSummary(md *strings.Builder, agg SweepAggregate) {
	rows := 0
	var kinds []string
	for _, k := range metricKinds(agg) {
		n := 0
		for _, g := range agg.Groups {
			for _, name := range k.names {
				for _, m := range k.metrics {
					if _, ok := g.Metrics[k.kind+"/"+name+"/"+m.field]; ok {
						n++
					}
				}
			}
		}
		if n > 0 {
			kinds = append(kinds, strings.ToLower(k.title[:1])+k.title[1:])
		}
		rows += n
	}
	fmt.Fprintf(md, "\n## Every combination: %s\n\n", AggregateCSV)
	fmt.Fprintf(md, "The sweep has %d parameter combinations, too many to list here (more than %d): `%s` has every metric of every combination (%s), %d rows of mean, 95%% CI half-width and seeds, and `%s` the same; the maps below draw the plotted ones, and the tables below give the headline at each value of each parameter.\n",
		len(agg.Groups), fullTablesUpTo, AggregateCSV, strings.Join(kinds, ", "), rows, AggregateJSON)
	for _, h := range sweepHeadlines {
		key := h.kind + "/" + h.name + "/" + h.m.field
		found := false
		for _, g := range agg.Groups {
			if _, ok := g.Metrics[key]; ok {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		full, marked := agg.prov.headlineWhat(h.kind, h.what)
		what, _, _ := strings.Cut(full, ", ")
		fmt.Fprintf(md, "\n## The headline by parameter\n\n%s (%s): at each value of a parameter, over the combinations of the others, the lowest, the median and the highest", capitalFirst(what), h.unit)
		if marked {
			fmt.Fprintf(md, ", and at how many the paper's %s%s is reached", fmtSig(h.mark), h.unit)
		}
		md.WriteString(".\n")
		undefinedAny := false
		for _, g := range agg.Groups {
			if e, ok := g.Metrics[key]; ok && math.IsNaN(e.Mean) {
				undefinedAny = true
			}
		}
		for i, p := range agg.Params {
			fmt.Fprintf(md, "\n| %s | combinations | lowest | median | highest |", p.Key)
			sep := "|---|---:|---:|---:|---:|"
			if marked {
				fmt.Fprintf(md, " the paper's %s%s reached |", fmtSig(h.mark), h.unit)
				sep += "---:|"
			}
			if undefinedAny {
				md.WriteString(" not defined (a path unstable) |")
				sep += "---:|"
			}
			md.WriteString("\n" + sep + "\n")
			for _, v := range p.Values {
				var xs []float64
				n, undefined, reach := 0, 0, 0
				for _, g := range agg.Groups {
					e, ok := g.Metrics[key]
					if !ok || i >= len(g.Params) || g.Params[i].Value != v {
						continue
					}
					n++
					if math.IsNaN(e.Mean) {
						undefined++
						continue
					}
					xs = append(xs, e.Mean)
					if h.lower && e.Mean <= h.mark || !h.lower && e.Mean >= h.mark {
						reach++
					}
				}
				lo, med, hi := math.NaN(), math.NaN(), math.NaN()
				if len(xs) > 0 {
					slices.Sort(xs)
					lo, hi = xs[0], xs[len(xs)-1]
					med = xs[len(xs)/2]
					if len(xs)%2 == 0 {
						med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
					}
				}
				// To the headline's own precision: a gap of 9.971e-05%
				// is the 0.00% it reads as.
				d := map[string]int{"%": 2, "x": 3}[h.unit]
				fmt.Fprintf(md, "| %s | %d | %s | %s | %s |", v, n, fmtFixed(lo, d), fmtFixed(med, d), fmtFixed(hi, d))
				if marked {
					fmt.Fprintf(md, " %d |", reach)
				}
				if undefinedAny {
					fmt.Fprintf(md, " %d |", undefined)
				}
				md.WriteString("\n")
			}
		}
		return
	}
}

// fmtFixed writes v with d decimals, "-" for NaN, never "-0.00": a
// value that rounds to zero has no sign.
func fmtFixed(v float64, d int) string {
	if math.IsNaN(v) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// capitalFirst writes s with its first letter capital.
func capitalFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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

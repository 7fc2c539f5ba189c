package reports

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/policies/ina"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Files of a training run.
const (
	TrainingJobsFile = "training_jobs.csv"
	OccupancyFile    = "occupancy.csv"
)

// TrainingResult is summary.json's training section: the aggregating
// device and one entry per aggregator memory policy.
type TrainingResult struct {
	Device   string `json:"device"`
	Slots    int    `json:"slots"`
	Window   int    `json:"window"`
	InFlight int    `json:"in_flight"`
	// Use is ina.use ("" in summaries before it).
	Use      string `json:"use"`
	Fallback string `json:"fallback"`
	Hash     string `json:"hash"`
	// Placement is server where each server's SmartNIC sums first;
	// absent for rack.
	Placement string           `json:"placement"`
	ServerNIC string           `json:"server_nic"`
	Jobs      int              `json:"jobs"`
	Baseline  string           `json:"baseline"`
	Policies  []TrainingPolicy `json:"policies"`
}

// TrainingPolicy is one aggregator memory policy's outcome, means over
// seeds.
type TrainingPolicy struct {
	Name string `json:"name"`
	JCT  struct {
		Mean Num `json:"mean"`
		P50  Num `json:"p50"`
		P99  Num `json:"p99"`
	} `json:"jct_s"`
	JCTCI   Num `json:"jct_mean_ci95"`
	Speedup *struct {
		Baseline string `json:"baseline"`
		X        Num    `json:"x"`
		CI95     Num    `json:"ci95"`
		Min      Num    `json:"min"`
		Max      Num    `json:"max"`
	} `json:"vs_baseline,omitempty"`
	VsNone *struct {
		X    Num `json:"x"`
		CI95 Num `json:"ci95"`
	} `json:"vs_none,omitempty"`
	MakespanS   Num `json:"makespan_s"`
	Unscheduled Num `json:"unscheduled"`
	// HostRingJobs: spanning jobs that kept their host all-reduce
	// (ina.use when-faster).
	HostRingJobs Num `json:"jobs_on_host_ring"`
	// NoAggregatorJobs: spanning jobs under a pool policy that held no
	// aggregator in any phase (sim/training's PolicyResult).
	NoAggregatorJobs Num `json:"jobs_without_aggregators"`
	Iteration        struct {
		ComputeS Num `json:"compute_s"`
		CommS    Num `json:"comm_s"`
		WaitS    Num `json:"wait_s"`
	} `json:"iteration"`
	MeanSlots Num   `json:"mean_slots_held"`
	Events    int64 `json:"events"`
	Stepped   int64 `json:"stepped_iterations"`
	FastFwd   int64 `json:"fast_forwarded_iterations"`
	Seeds     int   `json:"seeds"`
}

var trainingMetrics = []metric{
	{field: "jct_s.mean", label: "mean job completion time (s)", title: "Mean JCT of the training jobs", plot: true, ci: "jct_s.mean.ci95"},
	{field: "jct_s.p99", label: "p99 job completion time (s)"},
	{field: "vs_baseline.x", label: "speedup of mean JCT over the baseline (x)", short: "JCT speedup over the baseline (x)", title: "Speedup over the baseline", plot: true, ci: "vs_baseline.ci95", ratio: true},
	{field: "iteration.comm_s", label: "communication per iteration (s)"},
	{field: "iteration.wait_s", label: "waiting for aggregators per iteration (s)", short: "aggregator wait / iteration (s)", title: "Waiting for aggregators", plot: true},
	{field: "mean_slots_held", label: "aggregator slots held (time mean)"},
	{field: "makespan_s", label: "makespan (s)"},
	{field: "unscheduled", label: "jobs larger than the rack"},
	{field: "jct_s.mean.ci95", label: "95% CI half-width of the mean JCT over the scenario's seeds (s)"},
	{field: "vs_baseline.ci95", label: "95% CI half-width of the speedup over the scenario's seeds (x)"},
	{field: "vs_none.x", label: "speedup of mean JCT over no in-network aggregation (x)", short: "JCT speedup over none (x)", title: "Speedup over no in-network aggregation", plot: true, ci: "vs_none.ci95", ratio: true, at1: "none (no aggregation)"},
	{field: "vs_none.ci95", label: "95% CI half-width of the speedup over none across the scenario's seeds (x)"},
}

func trainingValues(q TrainingPolicy) []float64 {
	x, xci := math.NaN(), math.NaN()
	if q.Speedup != nil {
		x, xci = float64(q.Speedup.X), float64(q.Speedup.CI95)
	}
	nx, nci := math.NaN(), math.NaN()
	if q.VsNone != nil {
		nx, nci = float64(q.VsNone.X), float64(q.VsNone.CI95)
	}
	return []float64{float64(q.JCT.Mean), float64(q.JCT.P99), x, float64(q.Iteration.CommS), float64(q.Iteration.WaitS),
		float64(q.MeanSlots), float64(q.MakespanS), float64(q.Unscheduled), float64(q.JCTCI), xci, nx, nci}
}

// Speedup is a training policy's mean-JCT speedup over the baseline
// (the baseline's mean JCT over the policy's, seed by seed) with the
// half-width of its 95% CI (NaN or 0: none).
type Speedup struct {
	Name  string
	X, CI float64
}

// esaMark is ESA's own claim, measured against ATP-style sharing.
const esaMark = "ESA: up to 1.35x over ATP-style sharing"

// TrainingHeadline names the policy with the shortest mean JCT against
// the baseline, and esa's speedup beside it, so that a headline never
// reads as if esa led where another policy beats both: "best mean JCT:
// static, 1.42x ± 0.21 faster than atp (the baseline); esa 1.20x ± 0.11
// (ESA: up to 1.35x over ATP-style sharing)". ps are the policies other
// than the baseline; the baseline is the best where none beats it.
// ESA's mark is named only against atp, the baseline it was measured
// against. "" without a baseline or a speedup.
func TrainingHeadline(baseline string, ps []Speedup) string {
	if baseline == "" || len(ps) == 0 {
		return ""
	}
	x := func(p Speedup) string {
		s := fmt.Sprintf("%.2fx", p.X)
		if p.CI > 0 {
			s += fmt.Sprintf(" ± %.2f", p.CI)
		}
		if p.Name == "esa" && baseline == "atp" {
			s += " (" + esaMark + ")"
		}
		return s
	}
	best, esa := -1, -1
	for i, p := range ps {
		if math.IsNaN(p.X) || p.Name == baseline {
			continue
		}
		if p.X > 1 && (best < 0 || p.X > ps[best].X) {
			best = i
		}
		if p.Name == "esa" {
			esa = i
		}
	}
	var s string
	if best >= 0 {
		s = fmt.Sprintf("best mean JCT: %s, %s faster than %s (the baseline)", ps[best].Name, x(ps[best]), baseline)
	} else {
		s = fmt.Sprintf("best mean JCT: %s (the baseline), no policy faster", baseline)
	}
	if esa >= 0 && esa != best {
		s += "; esa " + x(ps[esa])
	}
	return s
}

// trainingSpeedups are t's policies' speedups over its baseline.
func trainingSpeedups(t *TrainingResult) []Speedup {
	var ps []Speedup
	for _, p := range t.Policies {
		if p.Speedup != nil {
			ps = append(ps, Speedup{p.Name, float64(p.Speedup.X), float64(p.Speedup.CI95)})
		}
	}
	return ps
}

// writeTrainingTable writes the training section of a run's report.
func writeTrainingTable(md *strings.Builder, t *TrainingResult) {
	if t == nil {
		return
	}
	fmt.Fprintf(md, "\n## Training\n\n%d jobs; aggregating device %s, a pool of %d slots, a window of %d per job", t.Jobs, t.Device, t.Slots, t.Window)
	if t.Fallback != "" {
		fmt.Fprintf(md, ", of which a synchronising job holds %d in flight (its bandwidth-delay product); chunks not aggregated go to the fallback %s; atp and esa hash with %s", t.InFlight, t.Fallback, t.Hash)
	}
	if t.Use != "" {
		fmt.Fprintf(md, "; which spanning jobs aggregate: %s", t.Use)
		if t.Use == "when-faster" {
			md.WriteString(" (a job whose in-network phase alone would be slower keeps its host all-reduce: the table's \"on host ring\"; training_jobs.csv's on_host_ring)")
		}
	}
	if t.Placement != "" {
		fmt.Fprintf(md, "; placement %s: each server's %s sums its own GPUs' gradients first, then the servers' sums cross the device; none runs the plain host ring, with no SmartNIC summation", t.Placement, t.ServerNIC)
	}
	md.WriteString(".")
	if len(t.Policies) > 0 && t.Policies[0].Seeds > 1 {
		fmt.Fprintf(md, " Means over %d seeds with 95%% CIs; the speedup is the baseline's mean JCT over the policy's, seed by seed.", t.Policies[0].Seeds)
		if c := FewSeedsCaveat(t.Policies[0].Seeds); c != "" {
			md.WriteString(" " + strings.Trim(c, "()") + ".")
		}
	}
	md.WriteString("\n\n| policy | mean JCT (s) | ±95% CI | p99 JCT (s) | speedup | vs none | compute (ms/iter) | comm (ms/iter) | wait (ms/iter) | slots held | unscheduled | on host ring |\n")
	md.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range t.Policies {
		sp := ""
		switch {
		case p.Speedup != nil:
			sp = fmt.Sprintf("%.3fx", float64(p.Speedup.X))
			if !math.IsNaN(float64(p.Speedup.CI95)) && p.Speedup.CI95 != 0 {
				sp += fmt.Sprintf(" ± %.3f", float64(p.Speedup.CI95))
			}
		case p.Name == t.Baseline:
			sp = "(baseline)"
		}
		vn := ""
		if p.VsNone != nil {
			vn = fmt.Sprintf("%.3fx", float64(p.VsNone.X))
			if !math.IsNaN(float64(p.VsNone.CI95)) && p.VsNone.CI95 != 0 {
				vn += fmt.Sprintf(" ± %.3f", float64(p.VsNone.CI95))
			}
		}
		fmt.Fprintf(md, "| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.0f | %s | %s |\n", p.Name, fmtSig(float64(p.JCT.Mean)), fmtSig(nan0(float64(p.JCTCI))),
			fmtSig(float64(p.JCT.P99)), sp, vn, 1e3*float64(p.Iteration.ComputeS), 1e3*float64(p.Iteration.CommS), 1e3*float64(p.Iteration.WaitS),
			float64(p.MeanSlots), fmtSig(float64(p.Unscheduled)), fmtSig(nan0(float64(p.HostRingJobs))))
	}
	if n := ina.CRCUnusedSlots(t.Hash, t.Slots, t.policyNames()); n > 0 {
		fmt.Fprintf(md, "\n**Hash crc on a pool of %d slots**: ATP's hash is 16 bits and names only %d of them, so %d are never used by atp and esa; hash uniform uses them all.\n", t.Slots, t.Slots-n, n)
	}
	for _, p := range t.Policies {
		if n := float64(p.NoAggregatorJobs); n > 0 && !NoJobAggregated(p.Name, p.MeanSlots) {
			fmt.Fprintf(md, "\n%s: %s spanning jobs held no aggregator in any phase (%s).\n", p.Name, fmtSig(n), NoAggregatorWhy(p.Name))
		}
		if NoJobAggregated(p.Name, p.MeanSlots) {
			fmt.Fprintf(md, "\n**%s aggregated no job in the network** (no aggregator slot held): every spanning job ran its host all-reduce (by ina.use when-faster, or for want of a partition or a slot), so its row is the host ring's and says nothing of its pool.\n", p.Name)
		}
	}
}

// policyNames is the names of t's policies.
func (t *TrainingResult) policyNames() []string {
	var n []string
	for _, p := range t.Policies {
		n = append(n, p.Name)
	}
	return n
}

// NoAggregatorWhy says what a spanning job that held no aggregator did
// instead under policy: static's ran its host all-reduce (no partition
// came free: SwitchML has no fallback), atp's and esa's sent every chunk
// to their fallback.
func NoAggregatorWhy(policy string) string {
	if strings.HasPrefix(policy, "static") {
		return "no partition came free for them, so they ran their host all-reduce throughout: SwitchML has no fallback"
	}
	return "every chunk went to the fallback"
}

// NoJobAggregated says whether a policy other than none aggregated
// nothing in the network: it held no aggregator slot over the run, so
// every spanning job ran its host all-reduce (ina.use when-faster kept
// it there, or static found no partition for it) and its comparison with
// another pool policy is two runs of the host ring.
func NoJobAggregated(policy string, meanSlots Num) bool {
	return policy != "none" && !strings.HasPrefix(policy, "none(") && meanSlots == 0
}

// TrainingJob is one row of training_jobs.csv.
type TrainingJob struct {
	Policy string
	Job    int // row within its policy, the occupancy series' job index
	JCT    float64
}

// ReadTrainingJobs reads the completion times of training_jobs.csv; a job
// that never ran has jct_s -1 and is left out of the CDF.
func ReadTrainingJobs(path string) ([]TrainingJob, error) {
	t, err := readTable(path, "policy", "jct_s")
	if err != nil {
		return nil, err
	}
	var out []TrainingJob
	n := map[string]int{}
	for i := range t.rows {
		pol := strings.TrimSpace(t.rows[i][t.col["policy"]])
		jct, err := t.float(i, "jct_s")
		if err != nil {
			return nil, err
		}
		out = append(out, TrainingJob{Policy: pol, Job: n[pol], JCT: jct})
		n[pol]++
	}
	return out, nil
}

// trainingJCTCDF is the completion-time CDF of the training jobs, a line
// per policy.
func trainingJCTCDF(jobs []TrainingJob) (*figure, error) {
	var names []string
	samples := map[string][]float64{}
	for _, j := range jobs {
		if !slices.Contains(names, j.Policy) {
			names = append(names, j.Policy)
		}
		if j.JCT >= 0 {
			samples[j.Policy] = append(samples[j.Policy], j.JCT)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return len(samples[n]) == 0 })
	if len(names) == 0 {
		return nil, nil
	}
	f, err := cdfFigure("training_jct_cdf", "job completion time (s)", names, samples)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// iterationSplit stacks each policy's mean iteration into compute,
// communication and waiting for aggregators.
func iterationSplit(t *TrainingResult) (*figure, error) {
	if t == nil || len(t.Policies) == 0 {
		return nil, nil
	}
	n := len(t.Policies)
	names := make([]string, n)
	parts := [3]plotter.Values{make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n)}
	for i, p := range t.Policies {
		k := n - 1 - i // the first policy on top
		names[k] = p.Name
		parts[0][k] = 1e3 * nan0(float64(p.Iteration.ComputeS))
		parts[1][k] = 1e3 * nan0(float64(p.Iteration.CommS))
		parts[2][k] = 1e3 * nan0(float64(p.Iteration.WaitS))
	}
	p := newPlot("time per iteration (ms)", "", true)
	p.NominalY(names...)
	p.Y.Padding = vg.Points(12)
	labels := []string{"compute", "communication", "waiting for aggregators"}
	colours := []int{7, 0, 1}
	leg := newLegend()
	var below *plotter.BarChart
	for i, v := range parts {
		b, err := plotter.NewBarChart(v, vg.Points(14))
		if err != nil {
			return nil, fmt.Errorf("plot iteration_split: %w", err)
		}
		b.Horizontal = true
		b.Color = kindColours[colours[i]]
		b.LineStyle.Width = vg.Points(0.5)
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		leg.add(labels[i], b)
	}
	p.X.Min = 0
	p.X.Tick.Marker = linearTicks{}
	h := max(figH, vg.Length(n)*0.9*vg.Centimeter+2*vg.Centimeter)
	return &figure{name: "iteration_split", panels: []*plot.Plot{p}, legend: leg, w: figW, h: h}, nil
}

// Occupancy is one policy's aggregator slots per job over time: job j
// holds Slots from T until its next point.
type Occupancy struct {
	Policy string
	T      []float64
	Job    []int
	Slots  []float64
}

// ReadOccupancy reads occupancy.csv, one series per policy in file order.
func ReadOccupancy(path string) ([]Occupancy, error) {
	t, err := readTable(path, "policy", "time_s", "job", "slots")
	if err != nil {
		return nil, err
	}
	var out []Occupancy
	at := map[string]int{}
	for i := range t.rows {
		pol := strings.TrimSpace(t.rows[i][t.col["policy"]])
		k, ok := at[pol]
		if !ok {
			k = len(out)
			at[pol] = k
			out = append(out, Occupancy{Policy: pol})
		}
		ts, err := t.float(i, "time_s")
		if err != nil {
			return nil, err
		}
		job, err := t.float(i, "job")
		if err != nil {
			return nil, err
		}
		s, err := t.float(i, "slots")
		if err != nil {
			return nil, err
		}
		if job < 0 || job != math.Trunc(job) || job > 1e9 {
			return nil, fmt.Errorf("%s:%d: column job: %v is not a job index", path, i+2, job)
		}
		o := &out[k]
		if n := len(o.T); n > 0 && ts < o.T[n-1] {
			return nil, fmt.Errorf("%s:%d: time_s %v is before the previous row's %v of policy %s: the file is not in time order", path, i+2, ts, o.T[n-1], pol)
		}
		o.T, o.Job, o.Slots = append(o.T, ts), append(o.Job, int(job)), append(o.Slots, s)
	}
	return out, nil
}

// occupancyBins is the slots each job held, averaged over each of bins
// equal bins of [0, end]: the exact time average of its step function, so
// a bin's stack is the pool's mean occupancy over it.
func occupancyBins(o Occupancy, end float64, bins int) (jobs []int, avg [][]float64) {
	idx := map[int]int{}
	cur := map[int]float64{}
	w := end / float64(bins)
	add := func(j int, from, to, v float64) {
		if v == 0 || to <= from {
			return
		}
		k := idx[j]
		for b := int(from / w); b < bins && float64(b)*w < to; b++ {
			lo, hi := math.Max(from, float64(b)*w), math.Min(to, float64(b+1)*w)
			if hi > lo {
				avg[k][b] += v * (hi - lo) / w
			}
		}
	}
	for _, j := range o.Job {
		if _, ok := idx[j]; !ok {
			idx[j] = len(jobs)
			jobs = append(jobs, j)
			avg = append(avg, make([]float64, bins))
		}
	}
	last := map[int]float64{}
	for i, t := range o.T {
		j := o.Job[i]
		add(j, last[j], t, cur[j])
		last[j], cur[j] = t, o.Slots[i]
	}
	for _, j := range jobs {
		add(j, last[j], end, cur[j])
	}
	return jobs, avg
}

// occupancyFigure stacks the aggregator slots held per job over time, a
// panel per policy that uses the pool, binned to 200 time averages.
func occupancyFigure(occ []Occupancy, pool int) (*figure, error) {
	end := 0.0
	var used []Occupancy
	for _, o := range occ {
		if len(o.T) == 0 {
			continue
		}
		used = append(used, o)
		end = math.Max(end, o.T[len(o.T)-1])
	}
	if len(used) == 0 || !(end > 0) {
		return nil, nil
	}
	const bins = 200
	unit, div := timeUnit(end)
	// The pool is drawn where the stacks reach near it; a pool far above
	// every stack (a SmartNIC's memory) would flatten them.
	top := 0.0
	binned := make([][][]float64, len(used))
	held := make([][]int, len(used))
	for i, o := range used {
		held[i], binned[i] = occupancyBins(o, end, bins)
		for b := range bins {
			sum := 0.0
			for k := range binned[i] {
				sum += binned[i][k][b]
			}
			top = math.Max(top, sum)
		}
	}
	showPool := pool > 0 && float64(pool) <= 3*top
	var panels []*plot.Plot
	for i, o := range used {
		jobs, avg := held[i], binned[i]
		p := newPlot("", "slots held", true)
		if i == len(used)-1 {
			p.X.Label.Text = fmt.Sprintf("simulated time (%s; means over bins of %s)", unit, fmtSig(end/bins/div))
		}
		title := fmt.Sprintf("%s (%d jobs held slots; dashed: the pool of %d)", o.Policy, len(jobs), pool)
		if !showPool {
			title = fmt.Sprintf("%s (%d jobs held slots; the pool of %d is off the scale)", o.Policy, len(jobs), pool)
		}
		panelTitle(p, title)
		below := make([]float64, bins)
		for k := range jobs {
			pts := make(plotter.XYs, 0, 2*bins+2)
			for b := range bins {
				pts = append(pts, plotter.XY{X: float64(b) * end / bins / div, Y: below[b] + avg[k][b]})
				pts = append(pts, plotter.XY{X: float64(b+1) * end / bins / div, Y: below[b] + avg[k][b]})
			}
			for b := bins - 1; b >= 0; b-- {
				pts = append(pts, plotter.XY{X: float64(b+1) * end / bins / div, Y: below[b]})
				pts = append(pts, plotter.XY{X: float64(b) * end / bins / div, Y: below[b]})
				below[b] += avg[k][b]
			}
			poly, err := plotter.NewPolygon(pts)
			if err != nil {
				return nil, fmt.Errorf("plot occupancy: %s: %w", o.Policy, err)
			}
			poly.Color = stageColour(k, max(len(jobs), len(palette)+1))
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		if showPool {
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(pool)}, {X: end / div, Y: float64(pool)}})
			if err != nil {
				return nil, fmt.Errorf("plot occupancy: %w", err)
			}
			l.LineStyle.Width = vg.Points(1)
			l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
		}
		p.X.Min, p.X.Max = 0, end/div
		p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{most: 4}
		p.Y.Min, p.Y.Max = 0, top*1.08
		if showPool {
			p.Y.Max = math.Max(top, float64(pool)) * 1.08
		}
		panels = append(panels, p)
	}
	h := vg.Length(len(used))*3.2*vg.Centimeter + 1.5*vg.Centimeter
	return &figure{name: "occupancy", panels: panels, cols: 1, w: figW, h: h}, nil
}

// trainingFigures adds the training run's figures: the JCT CDF (from
// training_jobs.csv), the iteration split (from the summary) and the
// aggregator occupancy (from occupancy.csv); a file that is absent
// leaves its figure out.
func trainingFigures(dir string, t *TrainingResult, add func(*figure, error) error) error {
	jobs, err := ReadTrainingJobs(filepath.Join(dir, TrainingJobsFile))
	switch {
	case err == nil:
		if err := add(trainingJCTCDF(jobs)); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := add(iterationSplit(t)); err != nil {
		return err
	}
	occ, err := ReadOccupancy(filepath.Join(dir, OccupancyFile))
	switch {
	case err == nil:
		return add(occupancyFigure(occ, t.Slots))
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}

// referenceAt1 draws the line at 1 of a ratio figure, named in the
// legend: in the style of the entity it is (style, as the figure's
// lines), or grey and dashed (style < 0).
func referenceAt1(f *figure, xs []float64, name string, style int) error {
	l, err := plotter.NewLine(plotter.XYs{{X: slices.Min(xs), Y: 1}, {X: slices.Max(xs), Y: 1}})
	if err != nil {
		return fmt.Errorf("plot %s: %w", f.name, err)
	}
	l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 120}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	if style >= 0 {
		l.LineStyle = lineStyle(style)
	}
	f.panels[0].Add(l)
	f.legend.add(name, l)
	return nil
}

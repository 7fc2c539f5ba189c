package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Summary is the mean and 99th percentile (nearest rank) of a quantity.
type Summary struct {
	Mean float64 `json:"mean"`
	P99  float64 `json:"p99"`
}

// SeriesPoint is the number of GPUs holding at least one task from time T
// (seconds from the start of the run) until the next point.
type SeriesPoint struct {
	T      float64 `json:"t_s"`
	Active int     `json:"active"`
}

// JobRecord is what happened to one job.
type JobRecord struct {
	ID         string  `json:"id"`
	ArrivalS   float64 `json:"arrival_s"`
	QueueS     float64 `json:"queue_s"`  // first placement - arrival; -1 if never placed
	JCTS       float64 `json:"jct_s"`    // completion - arrival; -1 if not completed
	GPUType    string  `json:"gpu_type"` // of the first task at its first placement
	Profile    string  `json:"profile"`  // MIG profile there; "" for a fraction
	Speed      float64 `json:"speed"`    // at the first placement
	Migrations int     `json:"migrations"`
	Kind       string  `json:"kind"`     // service or batch (Config.JobKind)
	Censored   bool    `json:"censored"` // still running at the end of the trace: held its recorded time, no JCT
}

// PolicyResult holds one policy's metrics (see the package documentation).
type PolicyResult struct {
	Name               string  `json:"name"`
	GPUHours           float64 `json:"gpu_hours"`
	GPUHoursFractional float64 `json:"gpu_hours_fractional"`
	JCT                Summary `json:"jct_s"`
	Queue              Summary `json:"queue_s"`
	Utilization        float64 `json:"utilization"`
	// CapacityUsed is GPUHours over the cluster's GPU-hours from the first
	// arrival to the last completion; PeakActive the most GPUs held at
	// once; QueuedPct the share of jobs that waited before their first
	// placement. They say whether capacity binds.
	CapacityUsed float64 `json:"capacity_used"`
	PeakActive   float64 `json:"peak_active_gpus"`
	// ByType is what the policy used of each GPU type: beside each
	// seed's sample (Clusters) it says what part of the sampled cluster
	// the policy uses, and so why its GPU-hours may not vary with the
	// sample. Types it never used are absent.
	ByType    map[string]TypeUse `json:"by_type,omitempty"`
	QueuedPct float64            `json:"jobs_queued_pct"`
	// Migrations and Unscheduled are counts per run (means over seeds).
	Migrations  float64 `json:"migrations"`
	Unscheduled float64 `json:"unscheduled"`
	// Censored counts the jobs still running when the trace ended: each
	// held its placement for the time the trace recorded (the end of the
	// trace, had it started on arrival), wherever it ran, and is left out
	// of JCT; its GPU time counts.
	Censored float64 `json:"censored"`
	// Spanned counts the batch gangs that ran across servers (gang_span)
	// and their mean speed there under gang_comm (absent when none did).
	Spanned *Spanned `json:"spanned,omitempty"`
	// ByKind splits the jobs by kind (Config.JobKind).
	ByKind []KindResult `json:"by_kind,omitempty"`
	// LLMServices is what the policy made of each LLM service's replicas
	// (cluster.llm_services; absent without), in Result.LLMServices'
	// order.
	LLMServices []LLMServiceRun `json:"llm_services,omitempty"`
	// Top10Share is the share of the GPU time held (gpu_hours_fractional)
	// that the ten jobs holding the most held: how heavy the tail is.
	Top10Share float64 `json:"top10_share"`
	// LeftOut is the saving against the baseline with the longest jobs
	// left out, one entry per Config.LeaveOutLongest (absent without).
	LeftOut []LeftOut `json:"left_out_longest,omitempty"`
	// Seeds is the number of runs the metrics average; GPUHoursCI95 the
	// half-width of the 95% CI of GPUHours over them (absent with one).
	Seeds        int      `json:"seeds"`
	GPUHoursCI95 *float64 `json:"gpu_hours_ci95,omitempty"`
	// VsBaseline compares GPUHours with the baseline policy's, seed by
	// seed (absent for the baseline itself and without one).
	VsBaseline *Saving `json:"vs_baseline,omitempty"`
	// VsBest compares a conspirator policy's GPUHours with the best
	// established baseline's (bestBaseline), seed by seed; absent for the
	// other policies and with fewer than two baselines.
	VsBest        *Saving  `json:"vs_best_baseline,omitempty"`
	DecisionUS    Summary  `json:"decision_us"`
	OptimalityGap *float64 `json:"optimality_gap"`
	// Solves says, for an exact policy, how many of its decisions were
	// proven optimal and how many were cut by its time limit (absent for
	// heuristics).
	Solves *snapshot.SolveStats `json:"solves,omitempty"`
	// CPUPods sums up the trace's CPU-only pods (cluster.cpu_pods), which
	// the simulator places; absent without any.
	CPUPods *PodStats `json:"cpu_pods,omitempty"`

	// Horizon is the offline bound's own record (optimal-horizon only);
	// VsHorizon compares the other policies' GPU-hours with that bound.
	// Both are absent when no offline policy ran.
	Horizon   *HorizonRecord `json:"horizon,omitempty"`
	VsHorizon *HorizonGap    `json:"vs_horizon,omitempty"`

	// Decisions counts policy calls; Series and Jobs are kept when the
	// config asks for them. None of them is in the JSON summary.
	Decisions int           `json:"-"`
	Series    []SeriesPoint `json:"-"`
	Jobs      []JobRecord   `json:"-"`

	// One seed's run, for the horizon comparison: jobs that waited or
	// were preempted, jobs never finished, the policy's MIG mode and
	// whether it shares MIG instances.
	waited, unfinished       int
	usesMIG, sharesInstances bool
}

// Saving is a policy's GPU-hours against a baseline's under the same
// seeds: Pct is the mean over seeds of 100 x (policy - baseline) /
// baseline (negative: fewer GPU-hours), CI95 its 95% half-width (absent
// with one seed), Min and Max the extremes over the seeds.
type Saving struct {
	Baseline string   `json:"baseline"`
	Pct      float64  `json:"pct"`
	CI95     *float64 `json:"ci95,omitempty"`
	Min      float64  `json:"min_pct"`
	Max      float64  `json:"max_pct"`
}

// LeftOut is a policy's saving against the baseline in a replay without
// the longest jobs of the trace (Config.LeaveOutLongest): Jobs of them,
// by duration.
type LeftOut struct {
	Entry      string  `json:"entry"`
	Jobs       int     `json:"jobs"`
	GPUHours   float64 `json:"gpu_hours"`
	VsBaseline *Saving `json:"vs_baseline,omitempty"`
}

// SeedCluster is the cluster one seed ran on: its GPUs by model (with
// node_fraction below 1, each seed draws its own servers).
type SeedCluster struct {
	Seed    uint64         `json:"seed"`
	GPUs    int            `json:"gpus"`
	ByModel map[string]int `json:"by_model"`
}

// Timing is the wall-clock decision time of one policy: not deterministic,
// so kept apart from the results.
type Timing struct {
	Name       string  `json:"name"`
	DecisionUS Summary `json:"decision_us"`
	Decisions  int     `json:"decisions"`
	TotalS     float64 `json:"total_s"` // summed decision time

	// LargeUS is the decision time over the calls whose snapshot holds at
	// least LargeJobs jobs, LargeCalls of them: the calls where an exact
	// solver's cost grows, which the overall mean, dominated by calls on
	// one to three jobs, hides.
	LargeUS    Summary `json:"decision_us_large"`
	LargeCalls int     `json:"large_calls"`
	// BySize splits the calls by the number of jobs in the snapshot
	// (SizeBuckets); buckets without calls are left out.
	BySize []SizeBucket `json:"by_size"`
	// Calls holds the first MaxCalls calls in order, for decisions.csv;
	// CallsDropped counts those beyond.
	Calls        []Call `json:"-"`
	CallsDropped int    `json:"calls_dropped,omitempty"`
}

// LargeJobs is the snapshot size from which a call counts in
// Timing.LargeUS.
const LargeJobs = 10

// MaxCalls caps Timing.Calls (24 bytes each: 2.4 MB per policy at most),
// enough for every call of a whole-openb replay.
const MaxCalls = 100000

// Call is one policy call: the size of its snapshot (jobs, i.e. tasks, and
// GPUs shown; for a policy that keeps a session, which holds every GPU,
// the GPUs in use) and its wall-clock time.
type Call struct {
	Jobs, GPUs int
	US         float64
}

// SizeBucket is the decision time of the calls whose snapshot holds
// MinJobs to MaxJobs jobs (MaxJobs 0: no upper end).
type SizeBucket struct {
	MinJobs    int     `json:"min_jobs"`
	MaxJobs    int     `json:"max_jobs"`
	Calls      int     `json:"calls"`
	DecisionUS Summary `json:"decision_us"`
	MeanGPUs   float64 `json:"mean_gpus"`
}

// SizeBuckets are the lower ends of the Timing.BySize buckets: 1, 2-4,
// 5-9, 10-19, 20-49, 50-99, 100 and more jobs. 0 holds empty snapshots.
var SizeBuckets = [...]int{0, 1, 2, 5, 10, 20, 50, 100}

// sizeBucket returns the index in SizeBuckets of a snapshot of n jobs.
func sizeBucket(n int) int {
	i, found := slices.BinarySearch(SizeBuckets[:], n)
	if !found {
		i--
	}
	return i
}

// DecisionsCSV writes one row per recorded policy call (Timing.Calls) of
// every policy: policy,jobs,gpus,decision_us. The times are wall clock:
// the file is not reproducible, unlike the rest of a run's output.
func DecisionsCSV(r *Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,jobs,gpus,decision_us\n")
	for _, t := range r.Timing {
		for _, c := range t.Calls {
			fmt.Fprintf(&b, "%s,%d,%d,%s\n", t.Name, c.Jobs, c.GPUs, strconv.FormatFloat(c.US, 'f', 3, 64))
		}
	}
	return b.Bytes()
}

// Result is the outcome of Run. Its JSON form is deterministic: the same
// config and seed give the same bytes.
type Result struct {
	Policies []PolicyResult `json:"policies"`
	// Inputs reports the rows of the trace and the node list: read, used,
	// and left out with the reasons (absent for jobs given in the config).
	Inputs []InputReport `json:"inputs,omitempty"`
	// Baseline is the policy the others are compared with (VsBaseline);
	// empty when none of the policies is the configured baseline.
	Baseline string `json:"-"`
	// Clusters lists each seed's cluster, in seed order.
	Clusters []SeedCluster `json:"clusters"`
	// LLMServices is how each of cluster.llm_services was resolved: the
	// configuration chosen and why, or why none was (absent without).
	LLMServices []LLMServiceReport `json:"llm_services,omitempty"`
	// PerSeed holds every policy's result under each seed, in seed order
	// (Policies holds their means); jobs and series are left out.
	PerSeed [][]PolicyResult `json:"-"`
	// Timing holds the measured decision times, in Policies' order (the
	// first seed's).
	Timing []Timing `json:"-"`
}

// merge combines the seeds' runs: each policy's metrics are means over the
// seeds, with the CI of GPU-hours and the seed-by-seed comparison with the
// baseline; jobs, series and timing are the first seed's.
func merge(cfg Config, runs []seedRun) *Result {
	res := &Result{Timing: runs[0].timing}
	for _, sr := range runs {
		res.Clusters = append(res.Clusters, sr.cluster)
		ps := slices.Clone(sr.policies)
		for k := range ps {
			ps[k].Jobs, ps[k].Series = nil, nil
			ps[k].Seeds = 1
		}
		res.PerSeed = append(res.PerSeed, ps)
	}
	ci := seedInterval(cfg)
	name := cfg.baseline()
	base := slices.Index(cfg.Policies, name)
	if base >= 0 {
		res.Baseline = name
	}
	for k := range cfg.Policies {
		m := runs[0].policies[k] // name, jobs, series, solves of the first seed
		m.Seeds = len(runs)
		if len(runs) > 1 {
			m = mean(runs, k, m)
			hw := ci(column(runs, k, func(p *PolicyResult) float64 { return p.GPUHours }))
			m.GPUHoursCI95 = &hw
		}
		if base >= 0 && k != base {
			m.VsBaseline = saving(runs, k, base, name, ci)
		}
		if b := bestBaseline(cfg, runs); b >= 0 && strings.HasPrefix(cfg.Policies[k], "conspirator") {
			m.VsBest = saving(runs, k, b, cfg.Policies[b], ci)
		}
		m.LeftOut = leftOut(runs, k, base, name, ci)
		res.Policies = append(res.Policies, m)
	}
	return res
}

// column returns metric f of policy k under every seed.
func column(runs []seedRun, k int, f func(*PolicyResult) float64) []float64 {
	out := make([]float64, len(runs))
	for s := range runs {
		out[s] = f(&runs[s].policies[k])
	}
	return out
}

// mean returns m with its metrics replaced by their means over the seeds.
func mean(runs []seedRun, k int, m PolicyResult) PolicyResult {
	avg := func(f func(*PolicyResult) float64) float64 {
		var sum float64
		for _, v := range column(runs, k, f) {
			sum += v
		}
		return sum / float64(len(runs))
	}
	m.GPUHours = avg(func(p *PolicyResult) float64 { return p.GPUHours })
	m.GPUHoursFractional = avg(func(p *PolicyResult) float64 { return p.GPUHoursFractional })
	m.JCT = Summary{Mean: avg(func(p *PolicyResult) float64 { return p.JCT.Mean }), P99: avg(func(p *PolicyResult) float64 { return p.JCT.P99 })}
	m.Queue = Summary{Mean: avg(func(p *PolicyResult) float64 { return p.Queue.Mean }), P99: avg(func(p *PolicyResult) float64 { return p.Queue.P99 })}
	m.Utilization = avg(func(p *PolicyResult) float64 { return p.Utilization })
	m.CapacityUsed = avg(func(p *PolicyResult) float64 { return p.CapacityUsed })
	m.PeakActive = avg(func(p *PolicyResult) float64 { return p.PeakActive })
	m.ByType = meanByType(runs, k)
	m.QueuedPct = avg(func(p *PolicyResult) float64 { return p.QueuedPct })
	m.Migrations = avg(func(p *PolicyResult) float64 { return p.Migrations })
	m.Unscheduled = avg(func(p *PolicyResult) float64 { return p.Unscheduled })
	m.Censored = avg(func(p *PolicyResult) float64 { return p.Censored })
	m.Spanned = meanSpanned(runs, k)
	m.Top10Share = avg(func(p *PolicyResult) float64 { return p.Top10Share })
	m.ByKind = meanByKind(runs, k)
	m.LLMServices = meanLLM(runs, k)
	if m.OptimalityGap != nil {
		g := avg(func(p *PolicyResult) float64 { return *p.OptimalityGap })
		m.OptimalityGap = &g
	}
	if m.CPUPods != nil {
		// Every seed replays the same pods.
		pod := func(f func(*PodStats) float64) float64 {
			return avg(func(p *PolicyResult) float64 { return f(p.CPUPods) })
		}
		m.CPUPods = &PodStats{
			Pods:      pod(func(s *PodStats) float64 { return s.Pods }),
			QueuedPct: pod(func(s *PodStats) float64 { return s.QueuedPct }),
			QueueS:    pod(func(s *PodStats) float64 { return s.QueueS }),
			Unplaced:  pod(func(s *PodStats) float64 { return s.Unplaced }),
		}
	}
	if m.Solves != nil {
		st := *m.Solves
		for s := 1; s < len(runs); s++ {
			st = st.Add(*runs[s].policies[k].Solves)
		}
		m.Solves = &st
	}
	if m.Horizon != nil {
		h := *m.Horizon // the first seed's counts and note
		h.UpperGPUHours = avg(func(p *PolicyResult) float64 { return p.Horizon.UpperGPUHours })
		for s := 1; s < len(runs) && h.Note == ""; s++ {
			h.Note = runs[s].policies[k].Horizon.Note
		}
		m.Horizon = &h
	}
	if m.VsHorizon != nil {
		g := *m.VsHorizon
		g.Pct = avg(func(p *PolicyResult) float64 { return p.VsHorizon.Pct })
		for s := 1; s < len(runs); s++ {
			if o := runs[s].policies[k].VsHorizon; !o.Covered && g.Covered {
				g.Covered, g.Why = false, o.Why
			}
		}
		m.VsHorizon = &g
	}
	return m
}

// meanByKind averages policy k's ByKind over the seeds, kind by kind (a
// kind missing in a seed counts as zero there); FirstUnscheduled is the
// first seed's that has one.
func meanByKind(runs []seedRun, k int) []KindResult {
	var out []KindResult
	at := map[string]int{}
	for s := range runs {
		for _, kr := range runs[s].policies[k].ByKind {
			i, ok := at[kr.Kind]
			if !ok {
				i = len(out)
				at[kr.Kind] = i
				out = append(out, KindResult{Kind: kr.Kind})
			}
			o := &out[i]
			o.Jobs += kr.Jobs
			o.Completed += kr.Completed
			o.Censored += kr.Censored
			o.Unscheduled += kr.Unscheduled
			o.HeldGPUHours += kr.HeldGPUHours
			o.JCT.Mean += kr.JCT.Mean
			o.JCT.P99 += kr.JCT.P99
			o.Queue.Mean += kr.Queue.Mean
			o.Queue.P99 += kr.Queue.P99
			if o.FirstUnscheduled == "" {
				o.FirstUnscheduled = kr.FirstUnscheduled
			}
		}
	}
	n := float64(len(runs))
	for i := range out {
		o := &out[i]
		o.Jobs, o.Completed, o.Censored, o.Unscheduled, o.HeldGPUHours = o.Jobs/n, o.Completed/n, o.Censored/n, o.Unscheduled/n, o.HeldGPUHours/n
		o.JCT = Summary{Mean: o.JCT.Mean / n, P99: o.JCT.P99 / n}
		o.Queue = Summary{Mean: o.Queue.Mean / n, P99: o.Queue.P99 / n}
	}
	return out
}

// leftOut is policy k's GPU-hours in the replays without the longest
// jobs, per entry, with the saving against the baseline b seed by seed
// (none for the baseline itself, or without one).
func leftOut(runs []seedRun, k, b int, name string, ci func([]float64) float64) []LeftOut {
	var out []LeftOut
	for e := range runs[0].leftOut {
		lo := LeftOut{Entry: runs[0].leftOut[e].entry, Jobs: runs[0].leftOut[e].jobs}
		pct := make([]float64, 0, len(runs))
		for s := range runs {
			h := runs[s].leftOut[e].gpuHours
			lo.GPUHours += h[k] / float64(len(runs))
			if b >= 0 && h[b] > 0 {
				pct = append(pct, 100*(h[k]-h[b])/h[b])
			}
		}
		if b >= 0 && k != b && len(pct) == len(runs) {
			mean, hw := stat.Mean(pct, nil), ci(pct)
			lo.VsBaseline = &Saving{Baseline: name, Pct: mean, Min: slices.Min(pct), Max: slices.Max(pct)}
			if len(runs) > 1 {
				lo.VsBaseline.CI95 = &hw
			}
		}
		out = append(out, lo)
	}
	return out
}

// seedInterval is the half-width of the 95% interval the summary gives
// over seeds. Where seeds vary only the sampled servers (seed_varies:
// cluster) it is the CI of the mean over server samples, t·SD/sqrt(n).
// Where each seed also replays a bootstrap of the jobs, the seeds are
// bootstrap replicates of one trace: the trace's sampling error is their
// spread, which does not shrink with more seeds, so the interval is
// t·SD (the normal bootstrap interval with Student's t for few
// replicates); t·SD/sqrt(n) would be only the Monte Carlo error of their
// mean (a review of issue 39 found it 2.8x too narrow).
func seedInterval(cfg Config) func([]float64) float64 {
	return func(xs []float64) float64 {
		_, hw := stats.MeanCI(xs, 0.95)
		if cfg.SeedVaries == SeedVariesWorkload {
			hw *= math.Sqrt(float64(len(xs)))
		}
		return hw
	}
}

// saving compares policy k with the baseline b seed by seed.
func saving(runs []seedRun, k, b int, name string, ci func([]float64) float64) *Saving {
	pct := make([]float64, len(runs))
	for s := range runs {
		bh := runs[s].policies[b].GPUHours
		if !(bh > 0) {
			return nil // nothing to compare with
		}
		pct[s] = 100 * (runs[s].policies[k].GPUHours - bh) / bh
	}
	mean, hw := stat.Mean(pct, nil), ci(pct)
	sv := &Saving{Baseline: name, Pct: mean, Min: slices.Min(pct), Max: slices.Max(pct)}
	if len(runs) > 1 {
		sv.CI95 = &hw
	}
	return sv
}

// Policy returns the result of the named policy.
func (r *Result) Policy(name string) (*PolicyResult, bool) {
	for k := range r.Policies {
		if r.Policies[k].Name == name {
			return &r.Policies[k], true
		}
	}
	return nil, false
}

// WithTiming returns a copy of r whose decision_us fields hold the measured
// wall-clock times (for display; its JSON is no longer reproducible).
func (r *Result) WithTiming() *Result {
	c := &Result{Policies: slices.Clone(r.Policies), Inputs: r.Inputs, Timing: slices.Clone(r.Timing)}
	for k := range c.Policies {
		if k < len(c.Timing) {
			c.Policies[k].DecisionUS = c.Timing[k].DecisionUS
		}
	}
	return c
}

// JSON returns the deterministic summary, indented.
func (r *Result) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// Spanned is the batch gangs that ran across servers: how many, and their
// mean speed factor from communication at their placements (1: free).
type Spanned struct {
	Jobs      float64 `json:"jobs"`
	MeanSpeed float64 `json:"mean_speed"`
}

// meanSpanned averages policy k's Spanned over the seeds (a seed without
// spanning gangs counts 0 jobs).
func meanSpanned(runs []seedRun, k int) *Spanned {
	var jobs, speed float64
	n := 0
	for s := range runs {
		if sp := runs[s].policies[k].Spanned; sp != nil {
			jobs += sp.Jobs
			speed += sp.MeanSpeed
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return &Spanned{Jobs: jobs / float64(len(runs)), MeanSpeed: speed / float64(n)}
}

// TypeUse is one GPU type's use by a policy: the most GPUs of it held at
// once and the GPU-hours on it; over seeds, the most held in any seed and
// the range of the GPU-hours (a seed whose sample lacks the type, or that
// did not use it, counts 0).
type TypeUse struct {
	Peak     int     `json:"peak_gpus"`
	HoursMin float64 `json:"gpu_hours_min"`
	HoursMax float64 `json:"gpu_hours_max"`
}

// meanByType combines policy k's use of each GPU type over the seeds.
func meanByType(runs []seedRun, k int) map[string]TypeUse {
	var out map[string]TypeUse
	for _, sr := range runs {
		for t, u := range sr.policies[k].ByType {
			if out == nil {
				out = map[string]TypeUse{}
			}
			o, seen := out[t]
			if !seen {
				o.HoursMin = u.HoursMin
			}
			o.Peak = max(o.Peak, u.Peak)
			o.HoursMin = min(o.HoursMin, u.HoursMin)
			o.HoursMax = max(o.HoursMax, u.HoursMax)
			out[t] = o
		}
	}
	// A type some seed did not use: its minimum is 0.
	for t, o := range out {
		for _, sr := range runs {
			if _, ok := sr.policies[k].ByType[t]; !ok {
				o.HoursMin = 0
			}
		}
		out[t] = o
	}
	return out
}

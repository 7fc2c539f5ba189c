package training

import (
	"cmp"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/parallel"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"runtime"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// OccupancyPoint is job Job holding Slots aggregator slots from time T
// (seconds) until its next point; a fast-forwarded job's Slots are its
// slots averaged over its iterations.
type OccupancyPoint struct {
	T     float64 `json:"t_s"`
	Job   int     `json:"job"`
	Slots float64 `json:"slots"`
}

// Summary is a mean with percentiles.
type Summary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// Split is the time of an average iteration, over the jobs' iterations:
// computing, communicating, and waiting for aggregators: the share of a
// synchronisation's time that its grant (fewer slots than its window,
// chunks sent to its parameter server) added over its whole window, with
// link contention counted as communication (see waitShare).
type Split struct {
	ComputeS float64 `json:"compute_s"`
	CommS    float64 `json:"comm_s"`
	WaitS    float64 `json:"wait_s"`
}

// Speedup is a policy's mean JCT against the baseline's, seed by seed:
// X = baseline JCT / policy JCT (above 1: faster), its 95% CI and range.
type Speedup struct {
	Baseline string   `json:"baseline"`
	X        float64  `json:"x"`
	CI95     *float64 `json:"ci95,omitempty"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
}

// PolicyResult is one aggregation policy's outcome (means over seeds).
type PolicyResult struct {
	Name    string   `json:"name"`
	JCT     Summary  `json:"jct_s"`
	JCTCI   *float64 `json:"jct_mean_ci95,omitempty"`
	Speedup *Speedup `json:"vs_baseline,omitempty"`
	// VsNone is the speedup over no in-network aggregation (the policy
	// none, the host all-reduce), when it runs: what aggregating gains.
	VsNone *Speedup `json:"vs_none,omitempty"`
	// MakespanS is when the last job ended.
	MakespanS float64 `json:"makespan_s"`
	Jobs      float64 `json:"jobs"`
	// Unscheduled counts jobs asking for more GPUs than the rack has.
	Unscheduled float64 `json:"unscheduled"`
	// HostRingJobs counts spanning jobs that ran their host all-reduce
	// because in-network aggregation would have been slower for them
	// alone (ina.use when-faster; mean over seeds).
	HostRingJobs float64 `json:"jobs_on_host_ring"`
	// NoAggregatorJobs counts spanning jobs under a pool policy that
	// finished without holding an aggregator in any phase: under static,
	// jobs to which no partition came free, which ran their host
	// all-reduce throughout (SwitchML has no fallback); under atp and
	// esa, jobs whose every chunk went to the fallback (mean over seeds).
	NoAggregatorJobs float64 `json:"jobs_without_aggregators"`
	Iteration        Split   `json:"iteration"`
	// MeanSlots is the pool's time-averaged occupancy (slots held).
	MeanSlots float64 `json:"mean_slots_held"`
	// Events, SteppedIterations and FastForwarded say what the replay
	// cost: engine events, iterations simulated phase by phase, and
	// iterations run at a fixed pace in one event.
	Events            int64 `json:"events"`
	SteppedIterations int64 `json:"stepped_iterations"`
	FastForwarded     int64 `json:"fast_forwarded_iterations"`
	// Regrants counts grant changes to jobs in their synchronisation,
	// each a re-split of the job's flows (mean over seeds): with Events,
	// what atp and esa cost.
	Regrants int64 `json:"regrants"`
	// GrantsUnsettled counts the policy's grant calls whose holdings did
	// not reach their fixed point (atp, esa; see ina.Settler).
	GrantsUnsettled int64 `json:"grants_unsettled"`
	Seeds           int   `json:"seeds"`

	JobRecords []JobRecord      `json:"-"`
	Occupancy  []OccupancyPoint `json:"-"`
}

// JobRecord is one job under one policy (the first seed's).
type JobRecord struct {
	ID         string
	Model      string
	GPUs       int
	Servers    int
	Iterations int
	ArrivalS   float64
	StartS     float64 // -1: never ran
	EndS       float64
	ComputeS   float64
	CommS      float64
	WaitS      float64
	// OnHostRing: it ran its host all-reduce under a pool's policy
	// (ina.use when-faster).
	OnHostRing bool
}

// Result is the outcome of Run.
type Result struct {
	Policies []PolicyResult
	Baseline string
	// PerSeed holds every policy's result under each seed.
	PerSeed [][]PolicyResult
	// Device is the aggregating device, with the pool and window used.
	Device string
	Slots  int
	Window int
	// InFlight is the slots a synchronising job holds at once (its
	// bandwidth-delay product); Fallback and Hash as configured.
	InFlight int
	// Use is ina.use (see PolicyResult's HostRingJobs).
	Use      string
	Fallback string
	Hash     string
	// Placement is where the aggregation happens (rack or server), and
	// ServerNIC the SmartNIC in each server under server.
	Placement string
	ServerNIC string
	Jobs      int
	// Models are the models the jobs trained, timed on the rack's GPU.
	Models []ModelInfo
}

// Env is what the assembly gives the model: the readers of job lists and
// traces (the model reads no file itself).
type Env struct {
	ReadList  func(path string) ([]train.Job, error)
	ReadTrace func(path string) ([]train.Job, error)
	// Progress, when not nil, is told how many of the seeds x policies
	// replays are done, fractional while one runs (its share of jobs
	// finished). Calls are serialised, from any goroutine; it has no
	// effect on the results.
	Progress progress.Func
}

// Run replays every policy of cfg on the same jobs, under cfg.Seeds seeds
// (synthetic jobs and atp's hashing are drawn per seed).
func Run(cfg Config, seed uint64, env Env) (*Result, error) {
	st, err := cfg.resolve()
	if err != nil {
		return nil, fmt.Errorf("training config:\n%w", err)
	}
	var listed []train.Job
	switch cfg.Jobs.Source {
	case SourceList:
		if env.ReadList == nil {
			return nil, fmt.Errorf("training.jobs.list: no reader given (the assembly sets training.Env)")
		}
		if listed, err = env.ReadList(cfg.Jobs.List); err != nil {
			return nil, err
		}
	case SourceTrace:
		if env.ReadTrace == nil {
			return nil, fmt.Errorf("training.jobs.trace: no reader given (the assembly sets training.Env)")
		}
		if listed, err = env.ReadTrace(cfg.Jobs.Trace); err != nil {
			return nil, err
		}
	}
	if err := st.addJobs(listed); err != nil {
		return nil, err
	}
	runs := make([][]PolicyResult, cfg.Seeds)
	errs := make([]error, cfg.Seeds)
	parts := progress.NewParts(env.Progress, cfg.Seeds*len(cfg.Policies))
	parallel.Each(cfg.Seeds, runtime.GOMAXPROCS(0), func(s int) {
		runs[s], errs[s] = runSeed(st, listed, seed+uint64(s), parts, s*len(cfg.Policies))
	})
	for s, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed+uint64(s), err)
		}
	}
	dev := st.dev
	res := &Result{PerSeed: runs, Device: dev.Name, Slots: dev.Slots, Window: dev.PerJobSlots, InFlight: st.need, Use: cfg.INA.Use, Fallback: cfg.INA.Fallback, Hash: cfg.INA.Hash, Placement: cfg.INA.Placement, Baseline: cfg.Baseline, Models: st.modelInfos()}
	if cfg.INA.Placement == PlacementServer {
		res.ServerNIC = st.snic.name
	}
	res.Jobs = int(runs[0][0].Jobs)
	for k := range cfg.Policies {
		res.Policies = append(res.Policies, mergePolicy(cfg, runs, k))
	}
	return res, nil
}

// jobsOf is one seed's jobs: the list or trace windowed and scaled, or
// synthetic ones drawn from the seed.
func jobsOf(cfg Config, listed []train.Job, seed uint64) ([]train.Job, error) {
	jobs := slices.Clone(listed)
	if cfg.Jobs.Source == SourceSynthetic {
		s := cfg.Jobs.Synthetic
		gap := 0.0
		if float64(s.Rate) > 0 {
			gap = 1 / float64(s.Rate)
		}
		var w, mw []float64
		if len(s.GPUWeights) > 0 {
			w = s.GPUWeights
		}
		if len(s.ModelWeights) > 0 {
			mw = s.ModelWeights
		}
		var err error
		jobs, err = train.Synthesize(s.Jobs, train.Mix{GPUs: s.GPUs, GPUWeights: w, Models: s.Models, ModelWeights: mw,
			MinIterations: s.MinIterations, MaxIterations: s.MaxIterations, MeanGapS: gap}, engine.NewStream(seed, "training/synthetic"))
		if err != nil {
			return nil, err
		}
	}
	// Jobs of one arrival are ordered by what they are, not by where they
	// stood in the list, so that permuting them changes nothing (placement
	// is first come, first served, and atp hashes by position).
	slices.SortStableFunc(jobs, func(a, b train.Job) int {
		switch {
		case a.Arrival != b.Arrival:
			return cmp.Compare(a.Arrival, b.Arrival)
		case a.GPUs != b.GPUs:
			return cmp.Compare(a.GPUs, b.GPUs)
		case a.Iterations != b.Iterations:
			return cmp.Compare(a.Iterations, b.Iterations)
		}
		return strings.Compare(a.Model, b.Model)
	})
	if cfg.Jobs.Skip > 0 {
		if cfg.Jobs.Skip >= len(jobs) {
			return nil, fmt.Errorf("training.jobs.skip: %d skips every one of the %d jobs; use at most %d", cfg.Jobs.Skip, len(jobs), len(jobs)-1)
		}
		jobs = jobs[cfg.Jobs.Skip:]
	}
	if cfg.Jobs.Limit > 0 && cfg.Jobs.Limit < len(jobs) {
		jobs = jobs[:cfg.Jobs.Limit]
	}
	if len(jobs) > 0 {
		t0 := jobs[0].Arrival
		for i := range jobs {
			jobs[i].Arrival = engine.Time(float64(jobs[i].Arrival-t0) / cfg.Jobs.Compress)
			if cfg.Jobs.IterationScale > 1 {
				jobs[i].Iterations = max(1, int(float64(jobs[i].Iterations)/cfg.Jobs.IterationScale))
			}
		}
	}
	if err := CheckJobs(cfg, jobs, cfg.jobsFile()); err != nil {
		return nil, err
	}
	return jobs, nil
}

// jobsFile names the file the jobs came from, for messages.
func (c Config) jobsFile() string {
	switch c.Jobs.Source {
	case SourceList:
		return c.Jobs.List
	case SourceTrace:
		return c.Jobs.Trace
	}
	return "training.jobs.synthetic"
}

// Jobs returns the jobs a run of cfg replays under seed, from listed (a
// list's or trace's jobs), as the run prepares them: skip, limit,
// compress, iteration_scale, then the horizon check (CheckJobs).
// validate calls it so that it refuses what the run would.
func Jobs(cfg Config, listed []train.Job, seed uint64) ([]train.Job, error) {
	return jobsOf(cfg, listed, seed)
}

// runSeed replays every policy on one seed's jobs.
func runSeed(st *setup, listed []train.Job, seed uint64, parts *progress.Parts, item int) ([]PolicyResult, error) {
	cfg := st.cfg
	jobs, err := jobsOf(cfg, listed, seed)
	if err != nil {
		return nil, err
	}
	var out []PolicyResult
	for i, name := range cfg.Policies {
		pol, err := ina.New(name, st.pool(seed), cfg.PolicyArgs[name])
		if err != nil {
			return nil, err
		}
		r, err := newRack(st, jobs, pol, name)
		if err != nil {
			return nil, err
		}
		r.report = parts.Item(item + i)
		pr, err := r.run()
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", name, err)
		}
		parts.Done(item + i)
		pr.Name = name
		out = append(out, pr)
	}
	return out, nil
}

// result sums one replay up.
func (r *rack) result() PolicyResult {
	pr := PolicyResult{Jobs: float64(len(r.jobs)), Seeds: 1, Events: int64(r.sim.Fired()), SteppedIterations: r.stepped, FastForwarded: r.ffIters,
		Regrants: r.regrants, HostRingJobs: float64(r.hostRingJobs), NoAggregatorJobs: float64(r.noAggJobs)}
	if s, ok := r.pol.(ina.Settler); ok {
		pr.GrantsUnsettled = s.Unsettled()
	}
	if r.jct.Count() > 0 {
		pr.JCT = Summary{Mean: r.jct.Mean(), P50: r.jct.Quantile(0.5), P99: r.jct.Quantile(0.99)}
	}
	var iters float64
	var end engine.Time
	for _, j := range r.jobs {
		if j.state != done {
			pr.Unscheduled++
			continue
		}
		end = max(end, j.finished)
		iters += float64(j.spec.Iterations)
		pr.Iteration.ComputeS += j.computeS
		pr.Iteration.CommS += j.commS
		pr.Iteration.WaitS += j.waitS
	}
	if iters > 0 {
		pr.Iteration.ComputeS /= iters
		pr.Iteration.CommS /= iters
		pr.Iteration.WaitS /= iters
	}
	pr.MakespanS = end.Seconds()
	// Time-averaged occupancy, over the makespan.
	if end > 0 {
		held := map[int]float64{}
		var last, integral float64
		total := 0.0
		for _, o := range r.occupancy {
			integral += total * (o.T - last)
			last = o.T
			total += o.Slots - held[o.Job]
			held[o.Job] = o.Slots
		}
		integral += total * (end.Seconds() - last)
		pr.MeanSlots = integral / end.Seconds()
	}
	if r.cfg.RecordJobs {
		for _, j := range r.jobs {
			rec := JobRecord{ID: j.spec.ID, Model: j.model.Name, GPUs: j.spec.GPUs, Servers: len(j.servers), Iterations: j.spec.Iterations,
				ArrivalS: j.spec.Arrival.Seconds(), StartS: -1, EndS: -1, ComputeS: j.computeS, CommS: j.commS, WaitS: j.waitS, OnHostRing: j.hostRing}
			if j.state != queued {
				rec.StartS = j.started.Seconds()
			}
			if j.state == done {
				rec.EndS = j.finished.Seconds()
			}
			pr.JobRecords = append(pr.JobRecords, rec)
		}
		pr.Occupancy = r.occupancy
	}
	return pr
}

// mergePolicy averages policy k over the seeds, with the CI of its mean
// JCT and its speedup over the baseline seed by seed.
func mergePolicy(cfg Config, runs [][]PolicyResult, k int) PolicyResult {
	m := runs[0][k]
	m.Seeds = len(runs)
	col := func(f func(*PolicyResult) float64) []float64 {
		out := make([]float64, len(runs))
		for s := range runs {
			out[s] = f(&runs[s][k])
		}
		return out
	}
	avg := func(f func(*PolicyResult) float64) float64 {
		v := col(f)
		var sum float64
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	if len(runs) > 1 {
		m.JCT = Summary{Mean: avg(func(p *PolicyResult) float64 { return p.JCT.Mean }), P50: avg(func(p *PolicyResult) float64 { return p.JCT.P50 }), P99: avg(func(p *PolicyResult) float64 { return p.JCT.P99 })}
		_, hw := stats.MeanCI(col(func(p *PolicyResult) float64 { return p.JCT.Mean }), 0.95)
		m.JCTCI = &hw
		m.MakespanS = avg(func(p *PolicyResult) float64 { return p.MakespanS })
		m.Jobs = avg(func(p *PolicyResult) float64 { return p.Jobs })
		m.Unscheduled = avg(func(p *PolicyResult) float64 { return p.Unscheduled })
		m.HostRingJobs = avg(func(p *PolicyResult) float64 { return p.HostRingJobs })
		m.NoAggregatorJobs = avg(func(p *PolicyResult) float64 { return p.NoAggregatorJobs })
		m.MeanSlots = avg(func(p *PolicyResult) float64 { return p.MeanSlots })
		m.Iteration = Split{ComputeS: avg(func(p *PolicyResult) float64 { return p.Iteration.ComputeS }), CommS: avg(func(p *PolicyResult) float64 { return p.Iteration.CommS }), WaitS: avg(func(p *PolicyResult) float64 { return p.Iteration.WaitS })}
		var ev, st, ff, rg, un int64
		for s := range runs {
			ev += runs[s][k].Events
			st += runs[s][k].SteppedIterations
			ff += runs[s][k].FastForwarded
			rg += runs[s][k].Regrants
			un += runs[s][k].GrantsUnsettled
		}
		n := int64(len(runs))
		m.Events, m.SteppedIterations, m.FastForwarded = ev/n, st/n, ff/n
		m.Regrants = rg / n
		m.GrantsUnsettled = un // a total: any is worth a warning
	}
	m.Speedup = speedup(cfg, runs, k, cfg.Baseline)
	if cfg.Baseline != "none" {
		m.VsNone = speedup(cfg, runs, k, "none")
	}
	return m
}

// speedup is policy k's mean JCT against policy base's, seed by seed:
// nil when base is not run, is k, or a mean is not positive.
func speedup(cfg Config, runs [][]PolicyResult, k int, base string) *Speedup {
	b := slices.Index(cfg.Policies, base)
	if b < 0 || b == k {
		return nil
	}
	x := make([]float64, len(runs))
	for s := range runs {
		if !(runs[s][k].JCT.Mean > 0) {
			return nil
		}
		x[s] = runs[s][b].JCT.Mean / runs[s][k].JCT.Mean
	}
	mean, hw := stats.MeanCI(x, 0.95)
	sp := &Speedup{Baseline: base, X: mean, Min: slices.Min(x), Max: slices.Max(x)}
	if len(runs) > 1 {
		sp.CI95 = &hw
	}
	return sp
}

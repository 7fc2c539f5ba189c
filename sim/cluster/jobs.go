package cluster

// The jobs a seed replays: synthesised, or windowed from those read;
// checked, and fed to the replay in arrival order.

import (
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

const maxReportedRows = 5

// jobFeed yields a run's GPU jobs in arrival order, one at a time, so
// that a replay holds the jobs alive, not every job of the run.
type jobFeed interface {
	// next returns the next job; false when there is none.
	next() (workloads.Job, bool, error)
	// size is how many jobs the feed yields in all, at most (for
	// progress only; 0: not known).
	size() int
}

// sliceFeed yields jobs from a slice (a trace's window).
type sliceFeed struct {
	jobs []workloads.Job
	k    int
}

func (f *sliceFeed) size() int { return len(f.jobs) }

func (f *sliceFeed) next() (workloads.Job, bool, error) {
	if f.k >= len(f.jobs) {
		return workloads.Job{}, false, nil
	}
	f.k++
	return f.jobs[f.k-1], true, nil
}

// synthFeed draws synthetic jobs as they are needed: the jobs that
// trace.SynthesizeAtRate would give, windowed (skip, jobs), compressed
// and shifted to start at 0 as prepareJobs treats a trace.
type synthFeed struct {
	g           *trace.Synthesizer
	n, skip, lo int // jobs drawn in all; skipped; kept (0: all after skip)
	compress    float64
	made        int
	t0          engine.Time
	started     bool
}

func (f *synthFeed) size() int {
	if n := f.n - f.skip; f.lo == 0 || f.lo > n {
		return max(n, 0)
	}
	return f.lo
}

func (f *synthFeed) next() (workloads.Job, bool, error) {
	for f.made < f.n {
		j := f.g.Next()
		i := f.made
		f.made++
		if i < f.skip {
			continue
		}
		if f.lo > 0 && i-f.skip >= f.lo {
			f.made = f.n
			break
		}
		if f.compress > 1 {
			j.Arrival = engine.Time(math.Round(float64(j.Arrival) / f.compress))
		}
		if !f.started {
			f.t0, f.started = j.Arrival, true
		}
		j.Arrival -= f.t0
		if err := checkJob(i-f.skip, &j); err != nil {
			return workloads.Job{}, false, err
		}
		return j, true, nil
	}
	return workloads.Job{}, false, nil
}

// mergeFeed yields the jobs of a and of b (in arrival order) by arrival,
// a's first on ties.
type mergeFeed struct {
	a       jobFeed
	b       []workloads.Job
	head    workloads.Job
	hasHead bool
	done    bool
}

func (f *mergeFeed) size() int { return f.a.size() + len(f.b) }

func (f *mergeFeed) next() (workloads.Job, bool, error) {
	if !f.hasHead && !f.done {
		j, ok, err := f.a.next()
		if err != nil {
			return workloads.Job{}, false, err
		}
		f.head, f.hasHead, f.done = j, ok, !ok
	}
	if len(f.b) > 0 && (!f.hasHead || f.b[0].Arrival < f.head.Arrival) {
		j := f.b[0]
		f.b = f.b[1:]
		return j, true, nil
	}
	if f.hasHead {
		f.hasHead = false
		return f.head, true, nil
	}
	return workloads.Job{}, false, nil
}

// mergeByArrival merges a and b, each in arrival order, a's first on
// ties, into a new slice.
func mergeByArrival(a, b []workloads.Job) []workloads.Job {
	out := make([]workloads.Job, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) > 0 && (len(a) == 0 || b[0].Arrival < a[0].Arrival) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return out
}

// checkJob is what every job of a run must satisfy.
func checkJob(k int, j *workloads.Job) error {
	if err := j.Validate(); err != nil {
		return fmt.Errorf("cluster jobs[%d]: %w", k, err)
	}
	if j.NumGPU == 0 {
		return fmt.Errorf("cluster jobs[%d] (%s): CPU-only job; the cluster simulation needs GPU jobs (cluster.cpu_pods replays a trace's)", k, j.ID)
	}
	if j.NumGPU >= 1<<taskBits {
		return fmt.Errorf("cluster jobs[%d] (%s): %d GPUs; at most %d per job", k, j.ID, j.NumGPU, 1<<taskBits-1)
	}
	return nil
}

// prepareJobs returns what one seed's run replays: a maker of its GPU job
// feed (each policy's replay takes a fresh one; all give the same jobs),
// the source jobs every run job is one of or a copy of (to check and plan
// before the run), and the CPU-only pods. The jobs are synthesised from
// what readJobs read or windowed from it, in arrival order, the first
// arriving at 0. A window (skip, jobs) selects GPU jobs and keeps the pods
// arriving between its first and last GPU job; there are no pods with
// synthetic jobs. It does not modify all.
func prepareJobs(cfg Config, all []workloads.Job, seed uint64) (feed func() jobFeed, src, pods []workloads.Job, err error) {
	var jobs []workloads.Job
	for _, j := range all {
		if j.NumGPU == 0 && cfg.replaysPods() {
			pods = append(pods, j)
			continue
		}
		jobs = append(jobs, j)
	}
	jobs = slices.Clone(jobs)
	if n := cfg.Synthetic.Jobs; n > 0 {
		rate := float64(cfg.Synthetic.Rate) * 3600
		if rate <= 0 {
			if rate = trace.Rate(jobs); rate <= 0 {
				return nil, nil, nil, fmt.Errorf("cluster.synthetic: trace: cannot estimate an arrival rate from %d source jobs with no spread in arrival; use SynthesizeAtRate", len(jobs))
			}
		}
		if _, err := trace.NewSynthesizer(jobs, rate, engine.NewStream(seed, "cluster/synthetic")); err != nil {
			return nil, nil, nil, fmt.Errorf("cluster.synthetic: %w", err)
		}
		if cfg.Window.Skip >= n {
			return nil, nil, nil, &InputError{fmt.Errorf("cluster.window.skip: %d skips every one of the %d jobs; use at most %d", cfg.Window.Skip, n, n-1)}
		}
		for k := range jobs {
			if err := checkJob(k, &jobs[k]); err != nil {
				return nil, nil, nil, err
			}
		}
		if err := checkHorizon(cfg, jobs); err != nil {
			return nil, nil, nil, err
		}
		if err := cfg.llm.checkIDs(jobs); err != nil {
			return nil, nil, nil, err
		}
		feed = func() jobFeed {
			g, _ := trace.NewSynthesizer(jobs, rate, engine.NewStream(seed, "cluster/synthetic"))
			f := jobFeed(&synthFeed{g: g, n: n, skip: cfg.Window.Skip, lo: cfg.Window.Jobs, compress: cfg.Window.Compress})
			if cfg.llm.count() > 0 {
				f = &mergeFeed{a: f, b: cfg.llm.jobs}
			}
			return f
		}
		// The source jobs the planner checks: the trace's, then the
		// services' (synthetic ones are copies of the trace's).
		if cfg.llm.count() > 0 {
			jobs = append(jobs, cfg.llm.jobs...)
		}
		return feed, jobs, nil, nil
	}
	byArrival := func(a, b workloads.Job) int {
		switch {
		case a.Arrival < b.Arrival:
			return -1
		case a.Arrival > b.Arrival:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(jobs, byArrival)
	slices.SortStableFunc(pods, byArrival)
	if cfg.Window.Skip > 0 {
		if cfg.Window.Skip >= len(jobs) {
			return nil, nil, nil, &InputError{fmt.Errorf("cluster.window.skip: %d skips every one of the %d jobs; use at most %d", cfg.Window.Skip, len(jobs), len(jobs)-1)}
		}
		jobs = jobs[cfg.Window.Skip:]
	}
	if cfg.Window.Jobs > 0 && cfg.Window.Jobs < len(jobs) {
		jobs = jobs[:cfg.Window.Jobs]
	}
	if len(jobs) > 0 && (cfg.Window.Skip > 0 || cfg.Window.Jobs > 0) {
		lo, hi := jobs[0].Arrival, jobs[len(jobs)-1].Arrival
		pods = slices.DeleteFunc(pods, func(p workloads.Job) bool { return p.Arrival < lo || p.Arrival > hi })
	}
	if cfg.SeedVaries == SeedVariesWorkload {
		// Checked on the trace's own jobs first, so that the first row
		// past the horizon is named whichever jobs a seed's bootstrap
		// draws (and validate, which prepares one seed, sees it too).
		if err := checkHorizon(cfg, jobs); err != nil {
			return nil, nil, nil, err
		}
		jobs = resampleJobs(jobs, seed)
	}
	if cfg.Window.Compress > 1 {
		if jobs, err = trace.CompressTime(jobs, cfg.Window.Compress); err != nil {
			return nil, nil, nil, fmt.Errorf("cluster.window.compress: %w", err)
		}
		if pods, err = trace.CompressTime(pods, cfg.Window.Compress); err != nil {
			return nil, nil, nil, fmt.Errorf("cluster.window.compress: %w", err)
		}
	}
	if len(jobs) > 0 {
		// A window starts the simulation at its first arrival.
		t0 := jobs[0].Arrival
		if len(pods) > 0 {
			t0 = min(t0, pods[0].Arrival)
		}
		for k := range jobs {
			jobs[k].Arrival -= t0
		}
		for k := range pods {
			pods[k].Arrival -= t0
		}
	}
	for k := range jobs {
		if err := checkJob(k, &jobs[k]); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := checkHorizon(cfg, jobs); err != nil {
		return nil, nil, nil, err
	}
	if err := checkLeaveOut(cfg, len(jobs)); err != nil {
		return nil, nil, nil, err
	}
	if cfg.llm.count() > 0 {
		// The services arrive at their own times from the replay's start,
		// after the trace's window, bootstrap and compression.
		if err := cfg.llm.checkIDs(jobs); err != nil {
			return nil, nil, nil, err
		}
		jobs = mergeByArrival(jobs, cfg.llm.jobs)
	}
	return func() jobFeed { return &sliceFeed{jobs: jobs} }, jobs, pods, nil
}

// Job kinds as results name them (PolicyResult.ByKind, jobs.csv).
const (
	KindService = "service"
	KindBatch   = "batch"
)

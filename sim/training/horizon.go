package training

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// Bounds on the inputs that set a training run's times, so that it ends
// within engine.Horizon (issue 40); see docs/decisions/engine.md.
const (
	// MaxLatency bounds cluster.net_latency and ina.chunk_rtt: a second
	// is 10^5 times a RoCE hop (1.3 us) and 10^3 times a congested
	// switch's round trip, and keeps 2(n-1) hops of a 4,096-server ring
	// far within the horizon.
	MaxLatency = engine.Second
	// MaxIterations bounds a job's iterations (job lists, synthetic
	// max_iterations): BERT-large pre-training takes about 10^6.
	MaxIterations = train.MaxIterations
)

// checkTimes reports, at their keys, the times of c that would carry a
// run past the horizon: latencies, and synthetic jobs whose iterations
// at their models' compute time on cluster.gpu, one job after another
// after the last expected arrival, pass it (a conservative bound: a run
// that still crosses it stops with an *engine.HorizonError).
func (c Config) checkTimes(add func(key, format string, a ...any)) {
	if c.Cluster.NetLatency.Time() > MaxLatency {
		add("cluster.net_latency", "%v is above %v; a step of a ring across a rack takes microseconds", c.Cluster.NetLatency, MaxLatency)
	}
	// ina.chunk_rtt is bounded by resolve (above 0, at most 1 s = MaxLatency).
	if c.Jobs.Source != SourceSynthetic {
		return
	}
	s := c.Jobs.Synthetic
	if s.MaxIterations > MaxIterations {
		add("jobs.synthetic.max_iterations", "%d is above %d iterations (BERT-large pre-training takes about 10^6)", s.MaxIterations, MaxIterations)
		return
	}
	if s.Jobs < 1 || s.Jobs > 10_000_000 || s.MaxIterations < 1 {
		return // reported by Validate
	}
	slowest := 0.0
	for _, m := range s.Models {
		if mod, err := train.Lookup(m); err == nil {
			if sec, err := mod.ComputeSecondsAt(c.Cluster.GPU, c.Cluster.Precision); err == nil {
				slowest = max(slowest, sec)
			}
		}
	}
	last := 0.0
	if r := float64(s.Rate); r > 0 {
		last = float64(s.Jobs) / r
	}
	if end := last + float64(s.Jobs)*float64(s.MaxIterations)*slowest; end > engine.HorizonSeconds {
		add("jobs.synthetic.max_iterations", "%d jobs of up to %d iterations (%.3g s each on %s) after arrivals over %.3g s end by %.3g s, past the simulator's horizon of %s (%.4g s); lower max_iterations or jobs, or raise rate",
			s.Jobs, s.MaxIterations, slowest, c.Cluster.GPU, last, end, engine.HorizonText, engine.HorizonSeconds)
	}
}

// CheckJobs reports the first job of a list or trace (file names it)
// whose compute alone, iterations at its model's compute time on
// cluster.gpu, would end past the horizon, naming its row; and a list
// whose jobs, run one after another after the last arrival, would (a
// conservative bound on the run's end, naming the file). A run that
// still crosses the horizon stops with an *engine.HorizonError.
func CheckJobs(c Config, jobs []train.Job, file string) error {
	last, total := 0.0, 0.0
	for _, j := range jobs {
		m, err := train.Lookup(j.Model)
		if err != nil {
			continue // the reader names it
		}
		sec, err := m.ComputeSecondsAt(c.Cluster.GPU, c.Cluster.Precision)
		if err != nil {
			continue
		}
		if j.Iterations > MaxIterations { // a trace job's, from its duration: a list's row is refused by its reader
			return &trace.RowError{File: file, Row: j.Row, Reason: fmt.Sprintf(
				"%d iterations of %s (its duration at %.3g s an iteration on %s) are above %d; give the job a slower model (training.jobs.model) or shorten it",
				j.Iterations, j.Model, sec, c.Cluster.GPU, MaxIterations)}
		}
		arr := j.Arrival.Seconds()
		own := float64(j.Iterations) * sec
		if arr+own > engine.HorizonSeconds {
			return &trace.RowError{File: file, Row: j.Row, Column: "iterations", Reason: fmt.Sprintf(
				"%d iterations of %s (%.3g s each on %s) arriving at %.0f s end at %.4g s, past the simulator's horizon of %s (%.4g s); give fewer iterations",
				j.Iterations, j.Model, sec, c.Cluster.GPU, arr, arr+own, engine.HorizonText, engine.HorizonSeconds)}
		}
		last = max(last, arr)
		total += own
	}
	if last+total > engine.HorizonSeconds {
		return &trace.RowError{File: file, Reason: fmt.Sprintf(
			"the jobs' compute, one after another after the last arrival (%.0f s), ends at %.4g s, past the simulator's horizon of %s (%.4g s); use fewer jobs (training.jobs.limit) or iterations (training.jobs.iteration_scale)",
			last, last+total, engine.HorizonText, engine.HorizonSeconds)}
	}
	return nil
}

// MaxSlots bounds ina.slots and ina.window, counts that size the pool's
// tables (8 bytes a slot in static's owner table): 2^24 slots, 16 times
// a BlueField-3's pool of 2^20 and 800 times a Tofino's, 128 MiB.
const MaxSlots = 1 << 24

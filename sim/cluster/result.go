package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"slices"
	"strconv"
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
}

// PolicyResult holds one policy's metrics (see the package documentation).
type PolicyResult struct {
	Name               string   `json:"name"`
	GPUHours           float64  `json:"gpu_hours"`
	GPUHoursFractional float64  `json:"gpu_hours_fractional"`
	JCT                Summary  `json:"jct_s"`
	Queue              Summary  `json:"queue_s"`
	Utilization        float64  `json:"utilization"`
	Migrations         int      `json:"migrations"`
	Unscheduled        int      `json:"unscheduled"`
	DecisionUS         Summary  `json:"decision_us"`
	OptimalityGap      *float64 `json:"optimality_gap"`
	// Solves says, for an exact policy, how many of its decisions were
	// proven optimal and how many were cut by its time limit (absent for
	// heuristics).
	Solves *snapshot.SolveStats `json:"solves,omitempty"`

	// Decisions counts policy calls; Series and Jobs are kept when the
	// config asks for them. None of them is in the JSON summary.
	Decisions int           `json:"-"`
	Series    []SeriesPoint `json:"-"`
	Jobs      []JobRecord   `json:"-"`
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
// GPUs shown) and its wall-clock time.
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
	// Timing holds the measured decision times, in Policies' order.
	Timing []Timing `json:"-"`
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

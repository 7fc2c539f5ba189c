package cluster

import (
	"encoding/json"
	"slices"
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
}

// Result is the outcome of Run. Its JSON form is deterministic: the same
// config and seed give the same bytes.
type Result struct {
	Policies []PolicyResult `json:"policies"`
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
	c := &Result{Policies: slices.Clone(r.Policies), Timing: slices.Clone(r.Timing)}
	for k := range c.Policies {
		if k < len(c.Timing) {
			c.Policies[k].DecisionUS = c.Timing[k].DecisionUS
		}
	}
	return c
}

// JSON returns the deterministic summary, indented.
func (r *Result) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

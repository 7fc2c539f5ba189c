package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// File names inside a run directory or a sweep point directory.
const (
	ResultFile     = "summary.json"
	RequestsFile   = "requests.csv"
	ActiveGPUsFile = "active_gpus.csv"
	JobsFile       = "jobs.csv"
	DecisionsFile  = "decisions.csv"
	AllocationFile = "allocation.csv"
)

// Num is a float64 that reads JSON null as NaN (a quantity that is not
// defined, such as the mean latency of an unstable path) and writes NaN or
// an infinity as null.
type Num float64

// UnmarshalJSON accepts a number or null.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("want a number or null, got %s", b)
	}
	*n = Num(f)
	return nil
}

// MarshalJSON writes null for NaN and infinities.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Latency is a latency summary in microseconds.
type Latency struct {
	Mean     Num `json:"mean"`
	P50      Num `json:"p50"`
	P95      Num `json:"p95"`
	P99      Num `json:"p99"`
	CI95Mean Num `json:"ci95_mean"` // half-width of the 95% CI of the mean
}

// PathResult is one data path's summary (tcp, gpudirect, host-rdma,
// conspirator).
type PathResult struct {
	Name                string         `json:"name"`
	LatencyUS           Latency        `json:"latency_us"`
	ThroughputRPS       Num            `json:"throughput_rps"`
	HostCPUUSPerRequest Num            `json:"host_cpu_us_per_request"`
	SoCUtilization      Num            `json:"soc_utilization"`
	GPUUtilization      Num            `json:"gpu_utilization"`
	DMAUtilization      Num            `json:"dma_utilization"`
	PortUtilization     Num            `json:"port_utilization"`
	Bottleneck          string         `json:"bottleneck"`
	Dropped             int64          `json:"dropped"`
	Unstable            bool           `json:"unstable"`
	StagesUS            map[string]Num `json:"stages_us"`
	// StageKinds maps each stage to its kind (datapath.StageKind); absent
	// in results written before the vocabulary existed.
	StageKinds map[string]string `json:"stage_kinds"`
}

// CostRow is one piece of hardware doing the scheduling work: its price,
// power, throughput and the two ratios of the paper's cost table.
type CostRow struct {
	Name              string `json:"name"`
	PriceUSD          Num    `json:"price_usd"`
	PowerW            Num    `json:"power_w"`
	Throughput        Num    `json:"throughput"`
	CostEffectiveness Num    `json:"cost_effectiveness"`
	PowerEfficiency   Num    `json:"power_efficiency"`
}

// MeanP99 is a mean and a 99th percentile.
type MeanP99 struct {
	Mean Num `json:"mean"`
	P99  Num `json:"p99"`
}

// PolicyResult is one GPU scheduling policy's summary over a job trace.
type PolicyResult struct {
	Name               string  `json:"name"`
	GPUHours           Num     `json:"gpu_hours"`
	GPUHoursFractional Num     `json:"gpu_hours_fractional"`
	JCTS               MeanP99 `json:"jct_s"`
	QueueS             MeanP99 `json:"queue_s"`
	Utilization        Num     `json:"utilization"`
	Migrations         Num     `json:"migrations"`
	Unscheduled        Num     `json:"unscheduled"`
	DecisionUS         MeanP99 `json:"decision_us"`
	OptimalityGap      Num     `json:"optimality_gap"`
	// Since the multi-seed cluster runs (absent, so NaN or 0, in older
	// results): capacity, the number of seeds, the CI of GPU-hours and
	// the seed-by-seed comparison with the baseline.
	CapacityUsed Num `json:"capacity_used"`
	PeakActive   Num `json:"peak_active_gpus"`
	// ByType: per GPU type, the most held at once in any seed and the
	// range of its GPU-hours over the seeds.
	ByType       map[string]TypeUse `json:"by_type"`
	QueuedPct    Num                `json:"jobs_queued_pct"`
	Seeds        int                `json:"seeds"`
	GPUHoursCI95 Num                `json:"gpu_hours_ci95"`
	Censored     Num                `json:"censored"`
	Top10Share   Num                `json:"top10_share"`
	VsBaseline   *struct {
		Baseline string `json:"baseline"`
		Pct      Num    `json:"pct"`
		CI95     Num    `json:"ci95"`
		Min      Num    `json:"min_pct"`
		Max      Num    `json:"max_pct"`
	} `json:"vs_baseline,omitempty"`
	// VsBest is a conspirator policy's GPU-hours against the best
	// established baseline (absent in results before issue 39).
	VsBest *struct {
		Baseline string `json:"baseline"`
		Pct      Num    `json:"pct"`
		CI95     Num    `json:"ci95"`
	} `json:"vs_best_baseline,omitempty"`
	// Solves is an exact policy's proof record (absent for heuristics and
	// in results of older versions).
	Solves *struct {
		Total    int64 `json:"total"`
		Proven   int64 `json:"proven"`
		Unproven int64 `json:"unproven"`
		WorstGap Num   `json:"worst_gap"`
	} `json:"solves,omitempty"`
	// Horizon is the offline bound's record (optimal-horizon only);
	// VsHorizon a policy's GPU-hours above that bound and whether the
	// bound covers its runs (both absent without the bound).
	Horizon *struct {
		Starts        string `json:"starts"`
		UpperGPUHours Num    `json:"upper_gpu_hours"`
		Intervals     int64  `json:"intervals"`
		Distinct      int64  `json:"distinct_sets"`
		Note          string `json:"note"`
	} `json:"horizon,omitempty"`
	VsHorizon *struct {
		Bound   string `json:"bound"`
		Pct     Num    `json:"pct"`
		Covered bool   `json:"covered"`
		Why     string `json:"why"`
	} `json:"vs_horizon,omitempty"`
	// CPUPods sums up the CPU-only pods the simulator placed (absent
	// without any, and in results of older versions).
	CPUPods *struct {
		Pods      Num `json:"pods"`
		QueuedPct Num `json:"queued_pct"`
		QueueS    Num `json:"queue_mean_s"`
		Unplaced  Num `json:"unplaced"`
	} `json:"cpu_pods,omitempty"`
}

// Result is summary.json: the data-path part, the cluster part, or both.
type Result struct {
	// Provenance, shown by report.html (absent in hand-made results).
	Version string `json:"version,omitempty"`
	Commit  string `json:"commit,omitempty"`
	Seed    *int64 `json:"seed,omitempty"`
	// Inputs is the run's resolved scenario (every key, as run).
	Inputs map[string]any `json:"inputs"`
	// Gap is the data path's headline: conspirator's mean end-to-end time
	// below host-rdma's, in percent (absent without both paths).
	Gap *Num `json:"conspirator_vs_host_rdma_gap_pct,omitempty"`
	// InputsSHA256 is the run's identity (sim.InputsSHA256); a sweep's
	// aggregate refuses a point whose identity is not the one sweep.json
	// recorded for it.
	InputsSHA256 string `json:"inputs_sha256,omitempty"`
	// Calibration is what a calibration profile set (absent without one).
	Calibration *struct {
		Profile string   `json:"profile"`
		Date    string   `json:"date"`
		Tool    string   `json:"tool"`
		Machine string   `json:"machine"`
		Sources []string `json:"sources"`
		Values  []struct {
			Key             string `json:"key"`
			Value           string `json:"value"`
			From            string `json:"from"`
			OverriddenBySet bool   `json:"overridden_by_set"`
		} `json:"values"`
	} `json:"calibration,omitempty"`

	Scenario string       `json:"scenario,omitempty"`
	Paths    []PathResult `json:"paths,omitempty"`
	// Clusters is each seed's sampled cluster: its GPUs per type.
	Clusters []struct {
		Seed    uint64         `json:"seed"`
		ByModel map[string]int `json:"by_model"`
	} `json:"clusters,omitempty"`
	Cost       []CostRow          `json:"cost,omitempty"`
	Policies   []PolicyResult     `json:"policies,omitempty"`
	Allocation []AllocationResult `json:"allocation,omitempty"`
	Training   *TrainingResult    `json:"training,omitempty"`
	LLM        *LLMResult         `json:"llm,omitempty"`
}

// AllocationResult is one policy of an allocation experiment: the GPU
// allocation percent at each milestone of arrived GPU request.
type AllocationResult struct {
	Name string `json:"name"`
	At   []struct {
		ArrivedPct int `json:"arrived_pct"`
		Mean       Num `json:"mean"`
		CI95       Num `json:"ci95"`
		Seeds      int `json:"seeds"`
	} `json:"alloc_pct"`
	FailedPods Num `json:"failed_pods_mean"`
}

// ReadResult reads and checks a summary.json.
func ReadResult(path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	return ParseResult(path, b)
}

// ParseResult decodes summary.json bytes; name is used in errors. Unknown
// fields are ignored so newer simulators stay readable; a result with
// neither paths nor policies, an unnamed or repeated entry, or a value of
// the wrong type is an error naming the entry.
func ParseResult(name string, b []byte) (Result, error) {
	var r Result
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
			return Result{}, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		return Result{}, fmt.Errorf("%s: %v", name, err)
	}
	if len(r.Paths) == 0 && len(r.Policies) == 0 && len(r.Cost) == 0 && len(r.Allocation) == 0 && r.Training == nil && r.LLM == nil {
		return Result{}, fmt.Errorf("%s: no \"paths\", \"cost\", \"policies\", \"allocation\", \"training\" or \"llm\": not a conspirator result", name)
	}
	check := func(kind string, names []string) error {
		seen := map[string]bool{}
		for i, n := range names {
			if n == "" {
				return fmt.Errorf("%s: %s[%d] has no name", name, kind, i)
			}
			if seen[n] {
				return fmt.Errorf("%s: %s[%d]: name %q appears twice", name, kind, i, n)
			}
			seen[n] = true
		}
		return nil
	}
	var pn, cn, qn []string
	for _, p := range r.Paths {
		pn = append(pn, p.Name)
	}
	for _, c := range r.Cost {
		cn = append(cn, c.Name)
	}
	for _, p := range r.Policies {
		qn = append(qn, p.Name)
	}
	if err := check("paths", pn); err != nil {
		return Result{}, err
	}
	if err := check("cost", cn); err != nil {
		return Result{}, err
	}
	if err := check("policies", qn); err != nil {
		return Result{}, err
	}
	if r.Training != nil {
		var tn []string
		for _, p := range r.Training.Policies {
			tn = append(tn, p.Name)
		}
		if err := check("training.policies", tn); err != nil {
			return Result{}, err
		}
	}
	return r, nil
}

// table is a CSV file read by header name.
type table struct {
	name   string
	header []string
	col    map[string]int
	rows   [][]string
}

func readTable(path string, required ...string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTable(path, f, required...)
}

func parseTable(name string, r io.Reader, required ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header with %s", name, strings.Join(required, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	t := &table{name: name, header: header, col: map[string]int{}}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := t.col[h]; dup {
			return nil, fmt.Errorf("%s:1: column %q appears twice", name, h)
		}
		t.col[h] = i
	}
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column (header %q; want %s)", name, c, strings.Join(header, ","), strings.Join(required, ","))
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		t.rows = append(t.rows, rec)
	}
	return t, nil
}

// float reads column c of row i (0-based data row; line i+2 of the file).
func (t *table) float(i int, c string) (float64, error) {
	s := strings.TrimSpace(t.rows[i][t.col[c]])
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a number", t.name, i+2, c, s)
	}
	return v, nil
}

func (t *table) str(i int, c string) string { return strings.TrimSpace(t.rows[i][t.col[c]]) }

// Requests is requests.csv: per-request latencies by path and the stage
// columns in the order the file lists them (the pipeline order).
type Requests struct {
	Stages    []string
	Paths     []string             // in order of first appearance
	LatencyUS map[string][]float64 // per path, in file order
}

// ReadRequests reads requests.csv.
func ReadRequests(path string) (Requests, error) {
	f, err := os.Open(path)
	if err != nil {
		return Requests{}, err
	}
	defer f.Close()
	return parseRequests(path, f)
}

func parseRequests(name string, r io.Reader) (Requests, error) {
	t, err := parseTable(name, r, "path", "latency_us")
	if err != nil {
		return Requests{}, err
	}
	q := Requests{LatencyUS: map[string][]float64{}}
	// Stage columns are the per-stage times: every *_us column but the
	// request's own start, end and total. Other columns (id, client, gpu,
	// dropped) describe the request.
	for _, h := range t.header {
		switch h = strings.TrimSpace(h); h {
		case "start_us", "end_us", "latency_us":
		default:
			if strings.HasSuffix(h, "_us") {
				q.Stages = append(q.Stages, strings.TrimSuffix(h, "_us"))
			}
		}
	}
	droppedCol := -1
	for j, h := range t.header {
		if strings.TrimSpace(h) == "dropped" {
			droppedCol = j
		}
	}
	for i := range t.rows {
		p := t.str(i, "path")
		if p == "" {
			return Requests{}, fmt.Errorf("%s:%d: empty path", name, i+2)
		}
		if droppedCol >= 0 && strings.TrimSpace(t.rows[i][droppedCol]) == "true" {
			continue // a dropped request has no end-to-end latency
		}
		v, err := t.float(i, "latency_us")
		if err != nil {
			return Requests{}, err
		}
		if v < 0 || math.IsNaN(v) {
			return Requests{}, fmt.Errorf("%s:%d: latency_us %v: want a non-negative number", name, i+2, v)
		}
		if _, ok := q.LatencyUS[p]; !ok {
			q.Paths = append(q.Paths, p)
		}
		q.LatencyUS[p] = append(q.LatencyUS[p], v)
	}
	return q, nil
}

// Series is a named sequence of (x, y) points in file order.
type Series struct {
	Name string
	X, Y []float64
}

// readSeries reads columns key, x, y of a CSV into one series per key value,
// in order of first appearance.
func readSeries(path, key, x, y string) ([]Series, error) {
	t, err := readTable(path, key, x, y)
	if err != nil {
		return nil, err
	}
	var out []Series
	at := map[string]int{}
	for i := range t.rows {
		k := t.str(i, key)
		if k == "" {
			return nil, fmt.Errorf("%s:%d: empty %s", path, i+2, key)
		}
		xv, err := t.float(i, x)
		if err != nil {
			return nil, err
		}
		yv, err := t.float(i, y)
		if err != nil {
			return nil, err
		}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, Series{Name: k})
		}
		out[j].X = append(out[j].X, xv)
		out[j].Y = append(out[j].Y, yv)
	}
	return out, nil
}

// ReadActiveGPUs reads active_gpus.csv: per policy, the number of GPUs in
// use from time_s on (a step function).
func ReadActiveGPUs(path string) ([]Series, error) {
	return readSeries(path, "policy", "time_s", "active_gpus")
}

// ReadAllocation reads allocation.csv: per policy, the GPU allocation
// percent (y) against the arrived GPU request in percent of capacity (x).
func ReadAllocation(path string) ([]Series, error) {
	return readSeries(path, "policy", "arrived_pct", "alloc_pct")
}

// ReadJobs reads jobs.csv: per policy, (queue_s, jct_s) of each job. A job
// never placed or never completed (queue_s or jct_s of -1) has no JCT and is
// left out.
func ReadJobs(path string) ([]Series, error) {
	ss, err := readSeries(path, "policy", "queue_s", "jct_s")
	if err != nil {
		return nil, err
	}
	for k := range ss {
		x, y := ss[k].X[:0], ss[k].Y[:0]
		for i := range ss[k].X {
			if ss[k].X[i] >= 0 && ss[k].Y[i] >= 0 {
				x, y = append(x, ss[k].X[i]), append(y, ss[k].Y[i])
			}
		}
		ss[k].X, ss[k].Y = x, y
	}
	return ss, nil
}

// JobRow is one row of jobs.csv as the figures read it: the policy, the
// job's kind ("" in results written before kinds) and its completion time
// (-1: never completed, or censored).
type JobRow struct {
	Policy, Kind string
	Arrival, JCT float64
}

// ReadJobRows reads jobs.csv row by row.
func ReadJobRows(path string) ([]JobRow, error) {
	t, err := readTable(path, "policy", "arrival_s", "jct_s")
	if err != nil {
		return nil, err
	}
	_, hasKind := t.col["kind"]
	out := make([]JobRow, len(t.rows))
	for i := range t.rows {
		a, err := t.float(i, "arrival_s")
		if err != nil {
			return nil, err
		}
		j, err := t.float(i, "jct_s")
		if err != nil {
			return nil, err
		}
		out[i] = JobRow{Policy: t.str(i, "policy"), Arrival: a, JCT: j}
		if hasKind {
			out[i].Kind = t.str(i, "kind")
		}
	}
	return out, nil
}

// ReadDecisions reads decisions.csv: per policy, wall-clock decision time
// in microseconds against problem size (jobs in the snapshot).
func ReadDecisions(path string) ([]Series, error) {
	return readSeries(path, "policy", "jobs", "decision_us")
}

// calibration is the calibration profile the run used ("" for none).
func (r Result) calibration() string {
	c, _ := r.Inputs["calibration"].(string)
	return c
}

// TypeUse is a policy's use of one GPU type (sim/cluster.TypeUse).
type TypeUse struct {
	Peak     int     `json:"peak_gpus"`
	HoursMin float64 `json:"gpu_hours_min"`
	HoursMax float64 `json:"gpu_hours_max"`
}

package train

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// Job is one training job: GPUs workers of Model, Iterations iterations,
// arriving at Arrival (from the start of the list).
type Job struct {
	ID         string
	Arrival    engine.Time
	GPUs       int
	Iterations int
	Model      string
	Row        int // the source line, 0 for synthetic jobs
}

// MaxIterations bounds a job's iterations (a row of a job list, a
// synthetic job): BERT-large pre-training takes about 10^6; a billion at
// a millisecond each is 11.6 days, at a second 31.7 years, within the
// simulator's horizon (engine.Horizon), which sim/training checks against
// each job's compute time.
const MaxIterations = 1_000_000_000

// MaxFileBytes bounds a job list read whole: the public list of 5,335 jobs
// is 133 KB.
const MaxFileBytes = 256 << 20

// ReadJobList reads a job list with a header naming at least num_gpu,
// submit_time (seconds), iterations and model, in any order (other
// columns, such as SwitchML-omnetpp's duration, are ignored). Jobs come
// back in arrival order (ties: file order), shifted so that the first
// arrives at 0. A bad row is a *trace.RowError naming the file, row and
// column; so is a model the catalog does not know.
func ReadJobList(path string) ([]Job, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give the job list file", path)
	}
	return ParseJobList(path, &limited{r: bufio.NewReader(f), left: MaxFileBytes, name: path})
}

// limited fails a read past its limit (a plain io.LimitReader would end
// the file there, and the last row would read as a short one).
type limited struct {
	r    io.Reader
	left int64
	name string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%s is larger than %d MiB; a job list of 10 million jobs is about 250 MiB", l.name, MaxFileBytes>>20)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// ParseJobList is ReadJobList from a reader; name is used in errors.
func ParseJobList(name string, r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	hdr, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &trace.RowError{File: name, Reason: "file is empty; want a header num_gpu,submit_time,iterations,model"}
	}
	if err != nil {
		return nil, &trace.RowError{File: name, Row: 1, Reason: "bad header: " + err.Error()}
	}
	col := map[string]int{}
	for i, h := range hdr {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; dup {
			return nil, &trace.RowError{File: name, Row: 1, Col: i + 1, Column: h, Reason: "column appears twice in the header"}
		}
		col[h] = i
	}
	need := []string{"num_gpu", "submit_time", "iterations", "model"}
	var missing []string
	for _, c := range need {
		if _, ok := col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, &trace.RowError{File: name, Row: 1, Reason: fmt.Sprintf("header lacks column(s) %s; want num_gpu,submit_time,iterations,model (the SwitchML-omnetpp job list format)", strings.Join(missing, ", "))}
	}
	var jobs []Job
	total := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, &trace.RowError{File: name, Row: pe.Line, Reason: "CSV syntax: " + pe.Err.Error()}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		total++
		if total > 10_000_000 {
			return nil, &trace.RowError{File: name, Row: line, Reason: "more than 10 million jobs; split the list"}
		}
		if len(rec) != len(hdr) {
			return nil, &trace.RowError{File: name, Row: line, Reason: fmt.Sprintf("row has %d fields but the header names %d columns", len(rec), len(hdr))}
		}
		bad := func(c, format string, a ...any) error {
			return &trace.RowError{File: name, Row: line, Col: col[c] + 1, Column: c, Reason: fmt.Sprintf(format, a...)}
		}
		field := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		gpus, err := strconv.Atoi(field("num_gpu"))
		if err != nil || gpus < 1 || gpus > 4096 {
			return nil, bad("num_gpu", "%q; want a whole number of GPUs from 1 to 4096", field("num_gpu"))
		}
		sub, err := strconv.ParseFloat(field("submit_time"), 64)
		if err != nil || !(sub >= 0) || math.IsInf(sub, 0) || sub > engine.HorizonSeconds {
			return nil, bad("submit_time", "%q; want seconds from 0 to %.0f (the simulator's horizon, %s)", field("submit_time"), engine.HorizonSeconds, engine.HorizonText)
		}
		it, err := strconv.Atoi(field("iterations"))
		if err != nil || it < 1 || it > MaxIterations {
			return nil, bad("iterations", "%q; want a whole number of iterations from 1 to %d", field("iterations"), MaxIterations)
		}
		m, err := Lookup(field("model"))
		if err != nil {
			return nil, bad("model", "%v", err)
		}
		jobs = append(jobs, Job{ID: fmt.Sprintf("job-%d", total), Arrival: engine.Seconds(sub), GPUs: gpus, Iterations: it, Model: m.Name, Row: line})
	}
	if len(jobs) == 0 {
		return nil, &trace.RowError{File: name, Reason: "no job in the list"}
	}
	return inArrivalOrder(jobs), nil
}

// inArrivalOrder sorts jobs by arrival (stable: ties keep their order)
// and shifts them so that the first arrives at 0.
func inArrivalOrder(jobs []Job) []Job {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Arrival < jobs[b].Arrival })
	if len(jobs) > 0 {
		t0 := jobs[0].Arrival
		for i := range jobs {
			jobs[i].Arrival -= t0
		}
	}
	return jobs
}

// FromTrace turns the GPU jobs of a cluster trace into training jobs by a
// stated rule: every job trains model (the trace names none), with one
// worker per requested GPU, and runs as many iterations as its trace
// duration holds at the model's compute time on gpuType (communication
// would have been part of that duration too, so the rule overstates the
// work of a job that communicated; said in the scenario key). Jobs of
// fractional GPUs take one whole worker each.
func FromTrace(src []workloads.Job, model, gpuType string) ([]Job, error) {
	m, err := Lookup(model)
	if err != nil {
		return nil, err
	}
	c, err := m.ComputeSeconds(gpuType)
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, j := range src {
		if j.NumGPU < 1 || j.Duration <= 0 {
			continue
		}
		it := max(1, int(math.Round(j.Duration.Seconds()/c)))
		out = append(out, Job{ID: j.ID, Arrival: j.Arrival, GPUs: j.NumGPU, Iterations: it, Model: m.Name, Row: j.Row})
	}
	if len(out) == 0 {
		return nil, errors.New("the trace has no GPU job with a run time to turn into a training job")
	}
	return inArrivalOrder(out), nil
}

package datapath

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// Result is the outcome of one Run: one entry per path, in the order of
// Config.Paths. Its JSON form is the public contract (summary.json).
type Result struct {
	Paths []PathResult `json:"paths"`
}

// PathResult summarises one path. Latencies are end to end: from the
// client issuing the request to the last byte of the reply arriving back.
type PathResult struct {
	Name    string         `json:"name"`
	Latency LatencySummary `json:"latency_us"`
	// ThroughputRPS is completed requests per second over the measured
	// window (first measured issue to last completion).
	ThroughputRPS float64 `json:"throughput_rps"`
	// HostCPUUsPerRequest is host core-time per completed request,
	// interference included (time-sharing stretches the wall time, not the
	// CPU time).
	HostCPUUsPerRequest float64 `json:"host_cpu_us_per_request"`
	// SoCUtilization is the mean fraction of Arm cores busy (0 on paths
	// without a SmartNIC); GPUUtilization the mean over GPU instances;
	// both over the whole run.
	SoCUtilization float64 `json:"soc_utilization"`
	GPUUtilization float64 `json:"gpu_utilization"`
	// DMAUtilization is the SmartNIC DMA engine's bandwidth in use (0
	// without one), PortUtilization the inbound port's (the SmartNIC's or
	// the host NIC's), both over the whole run; Bottleneck names the most
	// used of the Arm cores (soc), the DMA engine, the port and the GPUs:
	// the resource that saturates first as the offered load grows.
	DMAUtilization  float64 `json:"dma_utilization"`
	PortUtilization float64 `json:"port_utilization"`
	Bottleneck      string  `json:"bottleneck"`
	Completed       int     `json:"completed"`
	Dropped         int     `json:"dropped"`
	// Unstable flags a run whose queues grew without bound (offered load
	// above capacity); its latencies then depend on the run length and
	// mean nothing.
	Unstable       bool   `json:"unstable"`
	UnstableReason string `json:"unstable_reason,omitempty"`
	// Stages is the mean time per stage in microseconds; StageOrder lists
	// the stages in pipeline order (JSON objects are unordered);
	// StageKinds gives each stage's kind (see StageKind).
	Stages     map[string]float64   `json:"stages_us"`
	StageOrder []string             `json:"stage_order"`
	StageKinds map[string]StageKind `json:"stage_kinds"`
	// ControlPlane is the processor that runs this path's control plane
	// and what it could sustain; see CostTable.
	ControlPlane ControlPlane `json:"control_plane"`

	records []RequestRecord
	events  uint64 // callbacks the simulator ran for this path
}

// LatencySummary is in microseconds. CI95Mean is the half-width of the 95%
// confidence interval of the mean, from batch means (20 batches) of the
// latencies in completion order; NaN with too few requests (JSON null).
type LatencySummary struct {
	Mean     jsonFloat `json:"mean"`
	P50      jsonFloat `json:"p50"`
	P95      jsonFloat `json:"p95"`
	P99      jsonFloat `json:"p99"`
	CI95Mean jsonFloat `json:"ci95_mean"`
}

// jsonFloat marshals NaN and infinities as null (encoding/json refuses
// them).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// RequestRecord is one request, for CSV output. Times are simulated
// microseconds; Stages are durations in pipeline order.
type RequestRecord struct {
	Path    string
	ID      int
	Client  int
	GPU     string // "" when dropped before the decision
	Dropped bool
	Start   float64
	End     float64
	Stages  []float64
}

// Records returns the per-request records (nil unless
// Config.RecordRequests).
func (p *PathResult) Records() []RequestRecord { return p.records }

// Events returns how many events the simulator ran for this path, warm-up
// included: the model's granularity, which with the engine's cost per
// event sets a floor on its run time (BenchmarkConspirator reports both).
func (p *PathResult) Events() uint64 { return p.events }

// Path returns the named path's result, or nil.
func (r *Result) Path(name string) *PathResult {
	for i := range r.Paths {
		if r.Paths[i].Name == name {
			return &r.Paths[i]
		}
	}
	return nil
}

// WriteCSV writes every recorded request of every path, one row each:
// path, id, client, gpu, dropped, start_us, end_us, latency_us, then one
// column per stage name over all paths (empty where a path has no such
// stage), in the order the stages first appear.
func (r *Result) WriteCSV(w io.Writer) error {
	var cols []string
	index := map[string]int{}
	for _, p := range r.Paths {
		for _, st := range p.StageOrder {
			if _, ok := index[st]; !ok {
				index[st] = len(cols)
				cols = append(cols, st)
			}
		}
	}
	cw := csv.NewWriter(w)
	header := []string{"path", "id", "client", "gpu", "dropped", "start_us", "end_us", "latency_us"}
	for _, c := range cols {
		header = append(header, c+"_us")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, p := range r.Paths {
		for _, rec := range p.records {
			row = row[:8]
			row[0], row[1], row[2], row[3] = rec.Path, strconv.Itoa(rec.ID), strconv.Itoa(rec.Client), rec.GPU
			row[4], row[5], row[6], row[7] = strconv.FormatBool(rec.Dropped), f(rec.Start), f(rec.End), f(rec.End-rec.Start)
			stages := make([]string, len(cols))
			for i, st := range p.StageOrder {
				stages[index[st]] = f(rec.Stages[i])
			}
			row = append(row, stages...)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// recorder gathers one path's statistics as requests finish.
type recorder struct {
	warmup    int
	latency   stats.Tally // microseconds, measured requests
	stageSum  []float64   // seconds, measured requests
	measured  int
	dropped   int
	completed int
	first     engine.Time // issue of the first measured request
	last      engine.Time // latest completion
	firstSet  bool
	keep      bool
	records   []RequestRecord
	slab      []float64
	stageBuf  int

	// Open-loop stability check: mean requests in flight over the first
	// and second half of the arrival window.
	clientsDone int
	halfAt      engine.Time
	halfArea    float64
	halfTaken   bool
	endAt       engine.Time
	endArea     float64
	endTaken    bool
	arrivedEnd  int
	finishedEnd int
	overflow    bool
}

func newRecorder(cfg Config, path string, stages int) recorder {
	rc := recorder{warmup: cfg.WarmupRequests, stageSum: make([]float64, stages), keep: cfg.RecordRequests, stageBuf: stages}
	// Every measured request adds one latency: room for all of them at
	// once (Validate has bounded the count by MemoryLimit).
	rc.latency.Grow(cfg.Clients.Count*cfg.Clients.Requests - cfg.WarmupRequests)
	return rc
}

func (rc *recorder) record(s *system, r *request) {
	now := s.sim.Now()
	rc.completed++
	if r.dropped {
		rc.dropped++
	}
	if rc.keep {
		start := len(rc.slab)
		for _, t := range r.times {
			rc.slab = append(rc.slab, t.Micros())
		}
		gpuName := ""
		if r.gpu != nil {
			gpuName = r.gpu.Name
		}
		rc.records = append(rc.records, RequestRecord{
			Path: s.path, ID: r.id, Client: r.client.id, GPU: gpuName, Dropped: r.dropped,
			Start: r.start.Micros(), End: now.Micros(), Stages: rc.slab[start:len(rc.slab):len(rc.slab)],
		})
	}
	if r.id < rc.warmup || r.dropped {
		return
	}
	if !rc.firstSet || r.start < rc.first {
		rc.first, rc.firstSet = r.start, true
	}
	rc.last = max(rc.last, now)
	rc.measured++
	rc.latency.Add((now - r.start).Micros())
	for i, t := range r.times {
		rc.stageSum[i] += t.Seconds()
	}
}

// scheduleHalf takes the snapshots of the in-flight area at half and at
// the end of the expected arrival window of an open-loop run (requests /
// rate). The end is the expected one, not the last client's last issue:
// with many clients the last one's Poisson tail ends a tenth later, by
// when an overloaded path has drained its backlog and looked stable
// (paper/soc-capacity's DMA-bound points did).
func (rc *recorder) scheduleHalf(s *system) {
	if s.cfg.Clients.Mode != ModeOpen {
		return
	}
	rc.halfAt = engine.Seconds(float64(s.cfg.Clients.Requests) / float64(s.cfg.Clients.Rate) / 2)
	s.sim.MustAt(rc.halfAt, func() {
		rc.halfArea = s.inFlightTW.Integral(s.sim.Now())
		rc.halfTaken = true
	})
	s.sim.MustAt(engine.AddSat(rc.halfAt, rc.halfAt), func() { // saturates: the engine refuses it past its horizon
		rc.endAt = s.sim.Now()
		rc.endArea = s.inFlightTW.Integral(rc.endAt)
		rc.endTaken = true
		rc.arrivedEnd = s.nextID
		rc.finishedEnd = rc.completed
	})
}

// arrivalsDone is called as each open-loop client issues its last request.
func (rc *recorder) arrivalsDone(s *system) { rc.clientsDone++ }

// unstable judges an open-loop run: a stable queue holds about the same
// number of requests in flight in both halves of the arrival window and
// finishes about as many as arrive; an overloaded one grows linearly, so
// its second-half mean is about three times its first-half mean and a
// finite fraction of the arrivals is still in flight at the end.
func (rc *recorder) unstable() (bool, string) {
	if rc.overflow {
		return true, "requests in flight exceeded max_in_flight: offered load above capacity"
	}
	if !rc.halfTaken || !rc.endTaken || rc.endAt <= rc.halfAt {
		return false, ""
	}
	first := rc.halfArea / rc.halfAt.Seconds()
	second := (rc.endArea - rc.halfArea) / (rc.endAt - rc.halfAt).Seconds()
	backlog := rc.arrivedEnd - rc.finishedEnd
	// A stable queue's backlog at the end is about its mean in flight; a
	// growing one's twice its first half's (and a few percent of the
	// arrivals, where a mild overload grows slowly).
	if second > 1.5*first+1 && float64(backlog) > math.Max(0.01*float64(rc.arrivedEnd), 2*first) {
		return true, fmt.Sprintf("queue grew during the arrivals: mean in flight %.1f in the first half, %.1f in the second; %d of %d requests unfinished when arrivals ended",
			first, second, backlog, rc.arrivedEnd)
	}
	return false, ""
}

// summarize builds the path's result.
func (s *system) summarize() PathResult {
	rc := &s.rec
	pr := PathResult{Name: s.path, Completed: rc.measured, Dropped: rc.dropped, Stages: map[string]float64{}, StageKinds: map[string]StageKind{}}
	for i, st := range s.stages {
		pr.StageOrder = append(pr.StageOrder, st.name)
		pr.StageKinds[st.name] = st.kind
		mean := math.NaN()
		if rc.measured > 0 {
			mean = rc.stageSum[i] / float64(rc.measured) * 1e6
		}
		pr.Stages[st.name] = mean
	}
	pr.Latency = LatencySummary{
		Mean: jsonFloat(rc.latency.Mean()),
		P50:  jsonFloat(rc.latency.Quantile(0.50)),
		P95:  jsonFloat(rc.latency.Quantile(0.95)),
		P99:  jsonFloat(rc.latency.Quantile(0.99)),
	}
	_, hw := stats.MeanCI(stats.BatchMeans(rc.latency.Samples(), 20), 0.95)
	pr.Latency.CI95Mean = jsonFloat(hw)
	if rc.measured > 0 && rc.last > rc.first {
		pr.ThroughputRPS = float64(rc.measured) / (rc.last - rc.first).Seconds()
	}
	if rc.completed > rc.dropped {
		pr.HostCPUUsPerRequest = s.host.CPUSeconds() / float64(rc.completed-rc.dropped) * 1e6
	}
	// Utilisations over the whole run, from the work done (the resources'
	// own statistics are off, see stopResourceStats).
	if el := s.sim.Now().Seconds(); el > 0 {
		if s.snic != nil {
			pr.SoCUtilization = s.snic.ArmSeconds() / (float64(s.cfg.SmartNIC.ArmCores) * el)
		}
		pr.GPUUtilization = s.gpuBusy / (float64(len(s.gpus)) * el)
		if s.snic != nil && s.snic.DMA != nil {
			pr.DMAUtilization = s.snic.DMA.Utilization(el)
		}
		if s.inbound != nil {
			pr.PortUtilization = s.inbound.Utilization(el)
		}
		best := 0.0
		for _, u := range []struct {
			name string
			v    float64
		}{{"gpu", pr.GPUUtilization}, {"soc", pr.SoCUtilization}, {"dma", pr.DMAUtilization}, {"port", pr.PortUtilization}} {
			if u.v > best {
				best, pr.Bottleneck = u.v, u.name
			}
		}
	}
	pr.Unstable, pr.UnstableReason = rc.unstable()

	pr.ControlPlane = s.controlPlane()
	pr.records = rc.records
	pr.events = s.sim.Fired()
	return pr
}

// Run simulates every path of cfg with the given seed. The same (cfg,
// seed) gives the same Result, bit for bit.
func Run(cfg Config, seed uint64) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res := &Result{}
	for _, path := range cfg.Paths {
		s, err := newSystem(cfg, path, seed)
		if err != nil {
			return nil, err
		}
		s.rec.scheduleHalf(s)
		s.start()
		s.sim.Run()
		if err := s.sim.Err(); err != nil {
			return nil, fmt.Errorf("path %s: %w", path, err) // stopped at the horizon: no clipped result
		}
		res.Paths = append(res.Paths, s.summarize())
	}
	return res, nil
}

package cluster

import (
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// InputError is a problem with the run's input files (a missing or
// malformed trace or node list), as opposed to a failure of the
// simulation: the command line reports it as a configuration error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Env is everything the model takes from outside the simulation. The
// assembly (sim.Run) fills it, so that the model itself does no file I/O
// and reads no clock: the same Config, seed and Env give the same result.
type Env struct {
	// Import reads the trace or node list a Config names (in the assembly:
	// trace.ImportFile). A missing file must give an error that wraps
	// fs.ErrNotExist. Needed only when Config.Trace or Config.Nodes is set.
	Import func(path string, opt trace.Options) (trace.Result, error)
	// Now is the wall clock that times the policies' decisions (timing.json).
	// Nil: decision times are not measured and read 0.
	Now func() time.Time
	// Progress, when not nil, is told how many of the run's replays
	// (seeds x policies x leave-out variants) are done: fractional while
	// a replay runs (the share of its jobs arrived; an offline policy
	// moves at its end). Calls are serialised but may come from any
	// goroutine; it must not block for long. It is for a person watching
	// (a progress bar) and has no effect on the results.
	Progress progress.Func
	// Geometry reads a MIG geometry file of Config.MIGGeometry (in the
	// assembly: mig.ReadYAML of the file). Needed only when it is set.
	Geometry func(path string) (*mig.Geometry, error)
}

// Files lists the input files c reads, with the key naming each, so that
// the assembly can check them before a run (`validate`).
func (c Config) Files() (keys, paths []string) {
	if c.Jobs == nil && c.Trace != "" {
		keys, paths = append(keys, "cluster.trace"), append(paths, c.Trace)
	}
	if c.Nodes != "" {
		keys, paths = append(keys, "cluster.nodes"), append(paths, c.Nodes)
	}
	if files, err := c.geometryFiles(nil); err == nil {
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			keys, paths = append(keys, "cluster.mig_geometry"), append(paths, files[n])
		}
	}
	return keys, paths
}

// readGeometries reads the geometry files of cfg.MIGGeometry through
// env.Geometry: each must describe the GPU type it is given for.
func readGeometries(cfg Config, env Env, tm gpu.TraceTypeMap) (map[string]*mig.Geometry, error) {
	files, err := cfg.geometryFiles(tm)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	if env.Geometry == nil {
		return nil, fmt.Errorf("cluster.mig_geometry: no reader given (the assembly sets cluster.Env.Geometry)")
	}
	out := map[string]*mig.Geometry{}
	for name, path := range files {
		g, err := env.Geometry(path)
		if err != nil {
			return nil, &InputError{fmt.Errorf("cluster.mig_geometry %s=%s: %w", name, path, err)}
		}
		if g.Model != name {
			return nil, &InputError{fmt.Errorf("cluster.mig_geometry %s=%s: the file describes %q, not %s; re-import with --name %s or give it for %s", name, path, g.Model, name, name, g.Model)}
		}
		out[name] = g
	}
	return out, nil
}

// NotFound is the error for an input file that does not exist: the key,
// the path, where the data can be downloaded (trace.Source) and the key
// to point at a copy. The assembly adds where a relative path led
// (sim.MissingInput); the model reads no working directory.
func NotFound(key, path string) error {
	return &InputError{fmt.Errorf("%s: file %s not found; %s", key, path, Hint(key, path))}
}

// Hint is the end of every message about a missing input file: where its
// data comes from and how to give another path.
func Hint(key, path string) string {
	return trace.Source(path, "") + "; download the file there, or point " + key + " at your copy"
}

// importInput reads one input file through env, turning a missing file
// into NotFound and any other failure into an InputError naming the key.
func importInput(env Env, key, path string, opt trace.Options) (trace.Result, error) {
	if env.Import == nil {
		return trace.Result{}, fmt.Errorf("%s: no importer given (the assembly sets cluster.Env.Import)", key)
	}
	r, err := env.Import(path, opt)
	if errors.Is(err, fs.ErrNotExist) {
		return r, NotFound(key, path)
	}
	var fe *trace.FormatError
	if errors.As(err, &fe) {
		how := "set cluster.trace_format"
		if key == "cluster.nodes" {
			how = "a node list is an openb node list (header sn,cpu_milli,memory_mib,gpu,model) or Alibaba v2020's pai_machine_spec.csv"
		}
		return r, &InputError{fmt.Errorf("%s: %w; %s", key, err, how)}
	}
	if err != nil {
		if re := (*trace.RowError)(nil); opt.Strict && errors.As(err, &re) && re.Row > 1 { // a data row, not the header
			err = fmt.Errorf("%w (cluster.bad_rows: skip leaves bad rows out and reports them)", err)
		}
		return r, &InputError{fmt.Errorf("%s: %w", key, err)}
	}
	return r, nil
}

// InputReport says what became of the rows of an input file (the trace or
// the node list): how many were read and used, and why the others were
// left out, so that no row vanishes without a word.
type InputReport struct {
	Key      string         `json:"key"` // the scenario key that named the file
	File     string         `json:"file"`
	Format   string         `json:"format"`
	Read     int            `json:"rows_read"`
	Used     int            `json:"rows_used"`
	Rejected int            `json:"rows_rejected"`
	ByKind   map[string]int `json:"rejected_by_kind,omitempty"`
	// First lists the first rejected rows (at most maxReportedRows) in
	// file order.
	First []trace.Rejection `json:"first_rejected,omitempty"`
}

const maxReportedRows = 5

// ReportOf summarises what an import made of a file named by key.
func ReportOf(key string, r *trace.Result) InputReport {
	rep := InputReport{Key: key, File: r.Source, Format: r.Format, Read: r.Read, Used: r.Used, Rejected: r.RejectedTotal()}
	if len(r.RejectCounts) > 0 {
		rep.ByKind = maps.Clone(r.RejectCounts)
	}
	rep.First = slices.Clone(r.Rejected[:min(len(r.Rejected), maxReportedRows)])
	return rep
}

// Summary is one line for a person: "8152 rows read, 6203 used, 1949 left
// out (cpu-only 1800, never scheduled 149)".
func (r InputReport) Summary() string {
	s := fmt.Sprintf("%s %s: %d rows read, %d used", r.Key, r.File, r.Read, r.Used)
	if r.Rejected == 0 {
		return s
	}
	kinds := slices.Sorted(maps.Keys(r.ByKind))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, r.ByKind[k])
	}
	s += fmt.Sprintf(", %d left out (%s)", r.Rejected, strings.Join(parts, ", "))
	if len(r.First) > 0 {
		f := r.First[0]
		s += fmt.Sprintf("; first: row %d: %s", f.Row, f.Reason)
	}
	return s
}

// readJobs returns the jobs the run starts from: cfg.Jobs, or the trace's
// rows, with the report of the trace's rows (nil for cfg.Jobs). A trace
// with no usable job is an InputError that says why.
func readJobs(cfg Config, env Env) ([]workloads.Job, *InputReport, error) {
	if cfg.Jobs != nil {
		return cfg.Jobs, nil, nil
	}
	r, err := importInput(env, "cluster.trace", cfg.Trace, trace.Options{Format: cfg.TraceFormat, KeepCPUOnly: cfg.replaysPods(), Strict: cfg.BadRows == BadRowsError, KnownQoS: cfg.knownQoS()})
	if err != nil {
		return nil, nil, err
	}
	ir := ReportOf("cluster.trace", &r)
	if !slices.ContainsFunc(r.Jobs, func(j workloads.Job) bool { return j.NumGPU > 0 }) {
		return nil, &ir, &InputError{fmt.Errorf("no usable GPU job in the trace (%d CPU-only pods, and the replay needs GPU jobs): %s", len(r.Jobs), ir.Summary())}
	}
	return r.Jobs, &ir, nil
}

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
		feed = func() jobFeed {
			g, _ := trace.NewSynthesizer(jobs, rate, engine.NewStream(seed, "cluster/synthetic"))
			return &synthFeed{g: g, n: n, skip: cfg.Window.Skip, lo: cfg.Window.Jobs, compress: cfg.Window.Compress}
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
	return func() jobFeed { return &sliceFeed{jobs: jobs} }, jobs, pods, nil
}

// gpuType is one GPU model present in the cluster.
type gpuType struct {
	name  string
	spec  gpu.Spec
	count int
	rel   float64 // whole-GPU RelSpeed of the speed model
	// Views of the model for policies that use MIG and for those that
	// run the GPU whole.
	migModel, wholeModel snapshot.GPUModel
}

// clusterGPU is one GPU of the cluster.
type clusterGPU struct {
	typ int // index into types
	srv int // index into the servers
}

// clusterServer is one server: its GPUs are consecutive, first .. first+n-1.
// CPU and memory 0 are not modelled.
type clusterServer struct {
	cpu, mem int64
	first, n int
}

// readNodes reads the node list cfg names, with the report of its rows;
// nil, nil without one (the cluster is cfg.GPUs).
func readNodes(cfg Config, env Env) ([]trace.Node, *InputReport, error) {
	if cfg.Nodes == "" {
		return nil, nil, nil
	}
	r, err := importInput(env, "cluster.nodes", cfg.Nodes, trace.Options{Strict: cfg.BadRows == BadRowsError})
	if err != nil {
		return nil, nil, err
	}
	ir := ReportOf("cluster.nodes", &r)
	return r.Nodes, &ir, nil
}

// buildCluster returns one seed's cluster: the GPU types (sorted by name)
// and the GPUs in ID order, from the node list readNodes read (in the
// seed's order, sampled by node_fraction) or from cfg.GPUs, and the node
// list's report completed with the servers left out (nil without one).
func buildCluster(cfg Config, listed []trace.Node, read *InputReport, seed uint64, tm gpu.TraceTypeMap) ([]gpuType, []clusterGPU, []clusterServer, *InputReport, error) {
	var names []string
	var servers []clusterServer
	addServer := func(name string, n int, cpu, mem int64) {
		servers = append(servers, clusterServer{cpu: cpu, mem: mem, first: len(names), n: n})
		for range n {
			names = append(names, name)
		}
	}
	var rep *InputReport
	if read != nil {
		ir := *read
		ir.ByKind = maps.Clone(read.ByKind)
		ir.First = slices.Clone(read.First)
		rep = &ir
		nodes := slices.Clone(listed)
		if cfg.NodeOrder == NodeOrderSeeded {
			slices.SortStableFunc(nodes, func(a, b trace.Node) int { return strings.Compare(a.Name, b.Name) })
			rs := engine.NewStream(seed, "cluster/node-order")
			for i := len(nodes) - 1; i > 0; i-- {
				j := rs.IntN(i + 1)
				nodes[i], nodes[j] = nodes[j], nodes[i]
			}
		}
		keep := nodesKept(nodes, cfg.NodeFraction, tm)
		for i, n := range nodes {
			if !keep[i] {
				ir.Used--
				ir.Rejected++
				if ir.ByKind == nil {
					ir.ByKind = map[string]int{}
				}
				ir.ByKind["not sampled"]++
				continue
			}
			if n.NumGPU == 0 || n.GPUType == "" {
				// A CPU-only node hosts no GPU job: counted, not silent.
				ir.Used--
				ir.Rejected++
				if ir.ByKind == nil {
					ir.ByKind = map[string]int{}
				}
				ir.ByKind["no GPU"]++
				if len(ir.First) < maxReportedRows {
					ir.First = append(ir.First, trace.Rejection{Row: n.Row, Column: "gpu", Kind: "no GPU", Reason: "node " + n.Name + " has no GPU: it hosts no GPU job"})
				}
				continue
			}
			name, err := resolveType(n.GPUType, tm)
			if err != nil {
				return nil, nil, nil, nil, &InputError{fmt.Errorf("cluster.nodes %s row %d: %w", cfg.Nodes, n.Row, err)}
			}
			if n.NumGPU > MaxGPUsPerServer {
				return nil, nil, nil, nil, &InputError{fmt.Errorf("cluster.nodes %s row %d, column gpu: %d GPUs on one server; at most %d fit a server", cfg.Nodes, n.Row, n.NumGPU, MaxGPUsPerServer)}
			}
			addServer(name, n.NumGPU, int64(n.CPUMilli), n.MemoryMiB)
		}
		if len(names) == 0 {
			return nil, nil, nil, rep, &InputError{fmt.Errorf("cluster.nodes: no GPU node: %s", ir.Summary())}
		}
	} else {
		for i, g := range cfg.GPUs {
			name, err := resolveType(g.Model, tm)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("cluster.gpus[%d].model: %w", i, err)
			}
			per := g.perServer()
			for left := g.Count; left > 0; left -= per {
				addServer(name, min(per, left), g.CPUMilli, g.MemoryMiB)
			}
		}
	}
	distinct := slices.Clone(names)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	types := make([]gpuType, len(distinct))
	for k, n := range distinct {
		s, err := gpu.Lookup(n)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if g, ok := cfg.Geometries[s.Name]; ok {
			s.MIG = g // the device's geometry in place of the catalog's (s is a copy)
		} else if cfg.MIGGeometry != "" && cfg.Geometries == nil {
			return nil, nil, nil, nil, fmt.Errorf("cluster.mig_geometry is set but its files were not read (Run and Check read them)")
		}
		rel := s.RelSpeed[cfg.SpeedModel]
		if !(rel > 0) {
			return nil, nil, nil, nil, fmt.Errorf("GPU %s has no relative speed for model %q", n, cfg.SpeedModel)
		}
		m := snapshot.ModelFromSpec(s)
		types[k] = gpuType{name: s.Name, spec: s, rel: rel, migModel: m,
			wholeModel: snapshot.GPUModel{Name: s.Name}}
	}
	gpus := make([]clusterGPU, len(names))
	for si, sv := range servers {
		for k := sv.first; k < sv.first+sv.n; k++ {
			t, _ := slices.BinarySearch(distinct, names[k])
			gpus[k] = clusterGPU{typ: t, srv: si}
			types[t].count++
		}
	}
	return types, gpus, servers, rep, nil
}

// nodesKept marks the servers that node_fraction keeps: of each GPU
// model's servers, the first round(fraction x count) in the given order (at
// least one), so that the model mix of the cluster is kept. A server whose
// model does not resolve is kept, for buildCluster to report.
func nodesKept(nodes []trace.Node, fraction float64, tm gpu.TraceTypeMap) []bool {
	keep := make([]bool, len(nodes))
	if fraction >= 1 {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	count := map[string]int{}
	model := make([]string, len(nodes))
	for i, n := range nodes {
		if n.NumGPU == 0 || n.GPUType == "" {
			keep[i] = true // reported as a node without GPU
			continue
		}
		name, err := resolveType(n.GPUType, tm)
		if err != nil {
			keep[i] = true
			continue
		}
		model[i] = name
		count[name]++
	}
	taken := map[string]int{}
	for i, m := range model {
		if m == "" {
			continue
		}
		want := max(1, int(math.Round(fraction*float64(count[m]))))
		if taken[m] < want {
			taken[m]++
			keep[i] = true
		}
	}
	return keep
}

// mostCommon returns the index of the type with the most GPUs among allowed
// (nil = all), ties to the lower index; -1 when none is present.
func mostCommon(types []gpuType, allowed []int) int {
	best := -1
	consider := func(t int) {
		if best < 0 || types[t].count > types[best].count {
			best = t
		}
	}
	if allowed == nil {
		for t := range types {
			consider(t)
		}
	} else {
		for _, t := range allowed {
			consider(t)
		}
	}
	return best
}

// jobPlan is what the simulator works out for one job when it arrives:
// its tasks' options in both MIG modes, its tenant and its work.
type jobPlan struct {
	src    *workloads.Job
	tenant string
	// work is the reference run time of a batch job, and the time a
	// service holds its placement (its options all run at speed 1).
	work engine.Time
	// service: the job holds its placement for work whatever its GPU
	// (Config.JobKind). censored: the trace stopped recording the job
	// while it ran, so its duration is all the trace knows of it: it
	// holds its placement for that duration (speed 1 everywhere, as a
	// service) and has no completion time.
	service, censored  bool
	optsMIG, optsWhole []snapshot.Option
}

// kind names the job's kind in results: "service" or "batch".
func (p *jobPlan) kind() string {
	if p.service {
		return KindService
	}
	return KindBatch
}

// Job kinds as results name them (PolicyResult.ByKind, jobs.csv).
const (
	KindService = "service"
	KindBatch   = "batch"
)

// taskCPUMem returns what task t of the job takes of its server: the job's
// CPU and memory split evenly over its tasks, the remainder on the first
// (a gang's tasks share one server, so the server holds the job's total).
func (p *jobPlan) taskCPUMem(t int) (cpu, mem int64) {
	n := int64(max(1, p.src.NumGPU))
	cpu, mem = int64(p.src.CPUMilli)/n, p.src.MemoryMiB/n
	if t == 0 {
		cpu += int64(p.src.CPUMilli) % n
		mem += p.src.MemoryMiB % n
	}
	return cpu, mem
}

// planner resolves types, reference speeds and options of jobs, one job
// at a time as they arrive.
type planner struct {
	cfg    Config
	types  []gpuType
	tm     gpu.TraceTypeMap
	index  map[string]int
	refRel float64
	refMem float64 // the reference GPU's memory, bytes
	// Jobs with equal options share one slice: the policies' pack.View
	// then knows them for one shape and skips the rest of a shape that
	// found no room (PlacePending), the main cost on a loaded cluster.
	// byKey caches the options of a job's (share, allowed types), which
	// are all they depend on; shared interns them by content.
	byKey  map[optsKey][2][]snapshot.Option
	shared map[string][]snapshot.Option
}

type optsKey struct {
	milli             int
	allowed           string
	service, censored bool
}

func newPlanner(cfg Config, types []gpuType, tm gpu.TraceTypeMap) (*planner, error) {
	pl := &planner{cfg: cfg, types: types, tm: tm, index: map[string]int{},
		byKey: map[optsKey][2][]snapshot.Option{}, shared: map[string][]snapshot.Option{}}
	for k, t := range types {
		pl.index[t.name] = k
	}
	if cfg.ReferenceGPU != "" {
		n, err := resolveType(cfg.ReferenceGPU, tm)
		if err != nil {
			return nil, fmt.Errorf("cluster.reference_gpu: %w", err)
		}
		s, _ := gpu.Lookup(n) // a type outside the cluster is fine: only its speed and memory are used
		if pl.refRel = s.RelSpeed[cfg.SpeedModel]; !(pl.refRel > 0) {
			return nil, fmt.Errorf("cluster.reference_gpu: %s has no relative speed for model %q", n, cfg.SpeedModel)
		}
		pl.refMem = float64(s.MemoryBytes)
	} else {
		t := &types[mostCommon(types, nil)]
		pl.refRel, pl.refMem = t.rel, float64(t.spec.MemoryBytes)
	}
	return pl, nil
}

func (pl *planner) intern(o []snapshot.Option) []snapshot.Option {
	if len(o) == 0 {
		return o
	}
	key := fmt.Sprint(o) // %v of a float64 round-trips exactly
	if s, ok := pl.shared[key]; ok {
		return s
	}
	pl.shared[key] = o
	return o
}

// plan returns job j's plan; k is its position in the run (per-job
// tenants are named by it). p.src is j.
func (pl *planner) plan(k int, j *workloads.Job) (jobPlan, error) {
	cfg, types := &pl.cfg, pl.types
	p := jobPlan{src: j, work: j.Duration}
	switch cfg.Tenants {
	case TenantsTrace:
		p.tenant = j.Tenant
	case TenantsPerJob:
		p.tenant = fmt.Sprintf("job-%d", k)
	}
	var allowed []int
	if len(j.GPUTypes) > 0 {
		allowed = []int{}
		for _, code := range j.GPUTypes {
			n, err := resolveType(code, pl.tm)
			if err != nil {
				return p, fmt.Errorf("job %s (row %d) gpu type: %w", j.ID, j.Row, err)
			}
			if t, ok := pl.index[n]; ok && !slices.Contains(allowed, t) {
				allowed = append(allowed, t)
			}
		}
		slices.Sort(allowed)
	}
	p.service, p.censored = cfg.isService(j), j.Censored && cfg.Censored == CensoredRecorded
	key := optsKey{milli: j.GPUMilli, allowed: fmt.Sprint(allowed), service: p.service, censored: p.censored}
	if allowed == nil {
		key.allowed = "any"
	}
	if o, ok := pl.byKey[key]; ok {
		p.optsWhole, p.optsMIG = o[0], o[1]
		return p, nil
	}
	rel, mem := pl.refRel, pl.refMem
	if allowed != nil {
		if t := mostCommon(types, allowed); t >= 0 {
			rel, mem = types[t].rel, float64(types[t].spec.MemoryBytes)
		} else {
			// No allowed type in the cluster: the job never runs.
			pl.byKey[key] = [2][]snapshot.Option{}
			return p, nil
		}
	}
	share := float64(j.GPUMilli) / workloads.MaxGPUMilli
	for t := range types {
		if allowed != nil && !slices.Contains(allowed, t) {
			continue
		}
		if p.service {
			pl.serviceOptions(&p, &types[t], share, rel, mem)
		} else {
			pl.batchOptions(&p, &types[t], share, rel)
		}
	}
	if p.censored {
		// A censored job holds its place for the time the trace recorded
		// whatever its speed: a faster GPU shortens nothing.
		p.optsWhole, p.optsMIG = withSpeed1(p.optsWhole), withSpeed1(p.optsMIG)
	}
	p.optsWhole, p.optsMIG = pl.intern(p.optsWhole), pl.intern(p.optsMIG)
	pl.byKey[key] = [2][]snapshot.Option{p.optsWhole, p.optsMIG}
	return p, nil
}

// batchOptions adds a batch job's options on type ty: on a GPU run whole
// (or without MIG) the trace's share of whichever GPU it lands on, at the
// speed of that GPU relative to the reference's (rel); on a MIG GPU every
// profile that covers the share in compute and memory (k/7 and m/8 at
// least the share), at the speed its slices give.
func (pl *planner) batchOptions(p *jobPlan, ty *gpuType, share, rel float64) {
	demand := share * rel
	// A job never runs faster than its requested share of the GPU type
	// allows: more slices than it asked for do not help it.
	top := ty.rel / rel
	p.optsWhole = append(p.optsWhole, snapshot.Option{GPUType: ty.name, Fraction: share, Speed: top})
	if ty.spec.MIG == nil {
		p.optsMIG = append(p.optsMIG, p.optsWhole[len(p.optsWhole)-1])
		return
	}
	for k := range ty.spec.MIG.Profiles { // smallest first
		pr := &ty.spec.MIG.Profiles[k]
		if !ty.spec.MIG.Covers(pr, share) {
			continue
		}
		c := gpu.InstanceSpeedFraction(ty.spec, pr, pl.cfg.SpeedModel, pl.cfg.migBasis()) * ty.rel
		p.optsMIG = append(p.optsMIG, snapshot.Option{GPUType: ty.name, Profile: pr.Name, Speed: min(top, c/demand),
			Fraction: shareOfInstance(ty.spec.MIG, pr, share)})
		if pl.cfg.MIGOptions == MIGOptionsSmallest {
			break
		}
	}
}

// serviceOptions adds a service's options on type ty. A service serves
// the load it served on its reference GPU (throughput rel, memory mem
// bytes) with the trace's share of it: it needs the capacity
// D = share x rel and the memory share x mem. On a GPU run whole it takes
// the larger of D / RelSpeed(ty) and its memory over the GPU's (a faster
// GPU: less of it; a slower one: more, or none when that is above the
// whole GPU); on a MIG GPU every profile whose slices give D (SpeedFraction
// x RelSpeed) and whose memory holds it. It runs at speed 1 everywhere:
// it holds its placement for its duration.
func (pl *planner) serviceOptions(p *jobPlan, ty *gpuType, share, rel, mem float64) {
	const tol = 1e-9 // a service on its own reference type fits exactly
	d, m := share*rel, share*mem
	f := max(d/ty.rel, m/float64(ty.spec.MemoryBytes))
	if f <= 1+tol {
		p.optsWhole = append(p.optsWhole, snapshot.Option{GPUType: ty.name, Fraction: min(1, f), Speed: 1})
		if ty.spec.MIG == nil {
			p.optsMIG = append(p.optsMIG, p.optsWhole[len(p.optsWhole)-1])
		}
	}
	if ty.spec.MIG == nil {
		return
	}
	for k := range ty.spec.MIG.Profiles { // smallest first
		pr := &ty.spec.MIG.Profiles[k]
		c := gpu.InstanceSpeedFraction(ty.spec, pr, pl.cfg.SpeedModel, pl.cfg.migBasis()) * ty.rel
		if c < d*(1-tol) || float64(pr.MemoryBytes) < m*(1-tol) {
			continue
		}
		p.optsMIG = append(p.optsMIG, snapshot.Option{GPUType: ty.name, Profile: pr.Name, Speed: 1,
			Fraction: min(1, max(d/c, m/float64(pr.MemoryBytes)))})
		if pl.cfg.MIGOptions == MIGOptionsSmallest {
			break
		}
	}
}

// withSpeed1 is opts with every speed 1 (a copy).
func withSpeed1(opts []snapshot.Option) []snapshot.Option {
	out := slices.Clone(opts)
	for k := range out {
		out[k].Speed = 1
	}
	return out
}

// shareOfInstance is the share of an instance of pr that a job asking for
// share of a GPU needs where instances are shared (Option.Fraction on a MIG
// option): the larger of its compute and memory shares of the instance, at
// most the whole instance.
func shareOfInstance(g *mig.Geometry, pr *mig.Profile, share float64) float64 {
	return min(1, max(share*float64(g.ComputeSlices)/float64(pr.Compute), share*float64(g.MemorySlices)/float64(pr.MemSlices)))
}

package cluster

import (
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/parallel"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// Job states.
const (
	statePending = iota
	stateSetup   // placed, waiting for MIG reconfiguration or a migration
	stateRunning
	stateDone
)

// taskBits: task t of job k has the ID k<<taskBits + t, so that IDs follow
// arrival and a task's job is found without a table.
const taskBits = 20

func taskID(k, t int) int { return k<<taskBits + t }

// jobState is an arrived job until it finishes; finished jobs are
// dropped (their records kept only with record_jobs).
type jobState struct {
	job       workloads.Job
	plan      jobPlan
	tasks     []taskState
	firstTask int // snapshot IDs firstTask .. firstTask+NumGPU-1
	state     int
	remaining engine.Time // reference work left
	speed     float64
	last      engine.Time // when remaining was last brought up to date
	ev        engine.Handle
	hasEv     bool
	placed    bool // placed at least once
	rec       JobRecord
	// held is the GPU time the job's tasks held, in GPU-seconds of their
	// shares (attributed GPU-hours: the heavy tail's measure).
	held float64
	// spanned: a batch gang that ran across servers at least once.
	spanned bool
}

type taskState struct {
	job int
	gpu int // -1 when not placed
	pl  snapshot.Placement
	// since and share: when the task took its place and the share of
	// the GPU it holds there (fraction, or compute slices of its MIG
	// instance over the GPU's), for jobState.held.
	since engine.Time
	share float64
}

// instance is one MIG instance of a GPU: n tasks run on it (0: idle; more
// than 1 only where the policy shares instances, all of one tenant, their
// instance shares summing to used).
type instance struct {
	snapshot.Instance
	n      int
	used   float64
	tenant string
}

type gpuState struct {
	typ       int
	srv       int // index into run.servers
	tasks     int
	used      float64 // non-MIG: fraction sum
	tenant    string
	compute   int        // MIG: compute slices of busy instances
	slices    int        // MIG: the GPU's compute slices (its geometry's); 0 when not partitioned
	instances []instance // MIG: the current layout, idle instances included
	members   []int      // the tasks time-sharing the GPU (non-MIG) or its instances (shared MIG), in arrival order
}

// instanceAt returns the instance of g at (profile, start), nil if none.
func (g *gpuState) instanceAt(profile string, start int) *instance {
	for k := range g.instances {
		if in := &g.instances[k]; in.Profile == profile && in.Start == start {
			return in
		}
	}
	return nil
}

// serverState is one server: its capacity (0: not modelled), what its
// placed tasks and its CPU-only pods take, how many of its GPUs hold a
// task and how many pods it runs.
type serverState struct {
	clusterServer
	cpu, mem       int64 // taken by GPU tasks
	podCPU, podMem int64 // taken by CPU-only pods
	busy, pods     int
}

// fits reports whether cpu and mem more fit on the server.
func (sv *serverState) fits(cpu, mem int64) bool {
	return (sv.clusterServer.cpu == 0 || sv.cpu+sv.podCPU+cpu <= sv.clusterServer.cpu) &&
		(sv.clusterServer.mem == 0 || sv.mem+sv.podMem+mem <= sv.clusterServer.mem)
}

// share is the allocated part of the GPU counted in gpu_hours_fractional.
func (g *gpuState) share() float64 {
	if g.slices > 0 {
		return float64(g.compute) / float64(g.slices)
	}
	return min(g.used, 1)
}

// run is one policy's simulation.
type run struct {
	now     func() time.Time // Env.Now; nil: decisions are not timed
	cfg     Config
	sim     *engine.Simulator
	pol     snapshot.Policy
	mig     bool // the policy partitions MIG GPUs
	share   bool // the policy puts several tasks on one MIG instance (snapshot.InstanceSharer)
	types   []gpuType
	gpus    []gpuState
	servers []serverState
	// classes groups the servers whose empty states are interchangeable
	// (one GPU type, GPU count, CPU and memory), indices ascending.
	classes [][]int

	// Jobs arrive from feed (next is the upcoming one, the next-th) and
	// are planned then; live holds them until they finish.
	feed     jobFeed
	planner  *planner
	upcoming workloads.Job
	live     map[int]*jobState
	alive    []int // indices of arrived, unfinished, schedulable jobs, ascending
	next     int   // jobs arrived so far
	// report is told the share of the feed's size jobs arrived, each
	// time it moves by a thousandth (nil: nobody watches).
	report    func(frac float64)
	size      int
	reported  int // thousandths told
	records   []JobRecord
	neverRan  int // jobs with no GPU type of the cluster allowed
	queued    int // jobs that waited before their first placement
	preempted int // placed jobs sent back to pending

	pendingTasks int
	aliveTasks   int // tasks of the alive jobs
	scheduled    bool
	err          error

	// sess is the policy's session when it keeps one (Incremental): it is
	// told every arrival, completion and pod, and decides without a
	// snapshot. Nil: every call builds a snapshot.
	sess snapshot.Session
	// freed lists the GPUs that lost a task since the last call
	// (Snapshot.Freed), when snapshots are built (a session keeps its own).
	freed []int

	// metrics
	lastT        engine.Time
	active, peak int
	// activeBy, peakBy and hoursBy are active, peak and gpuHours per
	// GPU type (r.types' index): what part of the sampled cluster a
	// policy uses.
	activeBy, peakBy   []int
	hoursBy            []float64
	touched            []int // scratch: GPUs whose tasks changed in one event
	alloc              float64
	gpuHours, fracHour float64
	migrations         int
	jct, queue         stats.Tally
	kinds              [2]kindTally // batch, service
	censored           int          // jobs stopped at the end of the trace
	heavy              topHeld      // the jobs that held the most GPU time
	decisions          stats.Tally
	decisionTotal      time.Duration
	timing             callLog
	series             []SeriesPoint

	// comm slows batch gangs that span servers (GangComm); spanned counts
	// the batch jobs that ever ran so, and spanSpeed sums their speed
	// factor at each such placement (spanPlaced of them).
	comm                *gangComm
	spanned, spanPlaced int
	spanSpeed           float64

	// CPU-only pods, placed by the simulator (pods.go).
	pods    []podState
	podNext int
	podWait []int // arrived, not yet placed, by arrival
	gpuEnd  engine.Time

	// Buffers reused by every snapshot: a policy must not keep the
	// snapshot it is given (snapshot.Policy), so one set of slices serves
	// all calls, and a call allocates nothing in steady state.
	snap    snapshot.Snapshot
	snapSrv []int
	snapIDs []int
	snapIns []snapshot.Instance
	snapCur []snapshot.Placement
}

// Run simulates every policy of cfg on the same jobs and returns their
// results, in cfg.Policies order. It runs cfg.Seeds seeds, seed ..
// seed+Seeds-1; a seed drives synthetic jobs and, with node_order seeded,
// the order of the node list's servers (the GPU IDs) and which of them
// node_fraction keeps. With several seeds a policy's metrics are means
// over them (merge); its jobs, series and timing are the first seed's.
func Run(cfg Config, seed uint64, env Env) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cluster config:\n%w", err)
	}
	tm, _ := gpu.ParseTraceTypeMap(cfg.TypeMap)
	geoms, err := readGeometries(cfg, env, tm)
	if err != nil {
		return nil, err
	}
	cfg.Geometries = geoms
	nodes, nodesRead, err := readNodes(cfg, env)
	if err != nil {
		return nil, err
	}
	jobs, traceRep, err := readJobs(cfg, env)
	if err != nil {
		return nil, err
	}
	runs := make([]seedRun, cfg.Seeds)
	errs := make([]error, cfg.Seeds)
	// Seeds are independent simulations of immutable inputs: they run on
	// as many goroutines as there are CPUs and are merged in seed order,
	// so the result does not depend on the parallelism.
	workers := min(cfg.Seeds, runtime.GOMAXPROCS(0))
	if anyExact(cfg) {
		// An exact solver's time limit reads the wall clock: running
		// seeds side by side would change which solves are cut.
		workers = 1
	}
	perSeed := len(cfg.Policies) * (1 + len(cfg.LeaveOutLongest))
	parts := progress.NewParts(env.Progress, cfg.Seeds*perSeed)
	parallel.Each(cfg.Seeds, workers, func(s int) {
		runs[s], errs[s] = runSeed(cfg, nodes, nodesRead, jobs, seed+uint64(s), tm, env.Now, parts, s*perSeed)
	})
	for s, err := range errs {
		if err != nil {
			if cfg.Seeds > 1 {
				return nil, fmt.Errorf("seed %d: %w", seed+uint64(s), err)
			}
			return nil, err
		}
	}
	res := merge(cfg, runs)
	if traceRep != nil {
		res.Inputs = append(res.Inputs, *traceRep)
	}
	if runs[0].nodes != nil {
		res.Inputs = append(res.Inputs, *runs[0].nodes)
	}
	return res, nil
}

// Check reads the inputs and prepares every seed's replay as Run does
// (trace and node list read and checked, each seed's cluster built, its
// jobs windowed or synthesised and planned on that cluster), without
// simulating anything: a scenario that passes Check can fail Run only in
// a policy's own decisions. The validate command runs it, so that it
// finds what a run would refuse before any time is spent.
func Check(cfg Config, seed uint64, env Env) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("cluster config:\n%w", err)
	}
	tm, _ := gpu.ParseTraceTypeMap(cfg.TypeMap)
	geoms, err := readGeometries(cfg, env, tm)
	if err != nil {
		return err
	}
	cfg.Geometries = geoms
	nodes, nodesRead, err := readNodes(cfg, env)
	if err != nil {
		return err
	}
	jobs, _, err := readJobs(cfg, env)
	if err != nil {
		return err
	}
	for s := range cfg.Seeds {
		if err := prepareSeed(cfg, nodes, nodesRead, jobs, seed+uint64(s), tm); err != nil {
			if cfg.Seeds > 1 {
				return fmt.Errorf("seed %d: %w", seed+uint64(s), err)
			}
			return err
		}
	}
	return nil
}

// prepareSeed is the part of runSeed before any replay.
func prepareSeed(cfg Config, nodes []trace.Node, nodesRead *InputReport, raw []workloads.Job, seed uint64, tm gpu.TraceTypeMap) error {
	types, _, _, _, err := buildCluster(cfg, nodes, nodesRead, seed, tm)
	if err != nil {
		return err
	}
	_, src, _, err := prepareJobs(cfg, raw, seed)
	if err != nil {
		return err
	}
	pl, err := newPlanner(cfg, types, tm)
	if err != nil {
		return err
	}
	for k := range src {
		if _, err := pl.plan(k, &src[k]); err != nil {
			return err
		}
	}
	return nil
}

// anyExact reports whether a policy of cfg is an exact solver (one whose
// result depends on a time limit).
func anyExact(cfg Config) bool {
	for _, name := range cfg.Policies {
		if p, err := snapshot.New(name, cfg.PolicyArgs[name]); err == nil {
			if c := snapshot.CapabilitiesOf(p); c.Solves != nil || c.Offline != nil {
				return true
			}
		}
	}
	return false
}

// seedRun is every policy's result under one seed.
type seedRun struct {
	seed     uint64
	cluster  SeedCluster
	nodes    *InputReport
	policies []PolicyResult
	timing   []Timing
	// leftOut holds, per Config.LeaveOutLongest entry, the jobs left out
	// and every policy's GPU-hours without them.
	leftOut []leftOutRun
}

type leftOutRun struct {
	entry    string
	jobs     int
	gpuHours []float64 // in Config.Policies order
}

// runSeed simulates every policy of cfg under one seed.
func runSeed(cfg Config, nodes []trace.Node, nodesRead *InputReport, raw []workloads.Job, seed uint64, tm gpu.TraceTypeMap, now func() time.Time, parts *progress.Parts, item int) (seedRun, error) {
	types, gpus, servers, nodesRep, err := buildCluster(cfg, nodes, nodesRead, seed, tm)
	if err != nil {
		return seedRun{}, err
	}
	feed, src, pods, err := prepareJobs(cfg, raw, seed)
	if err != nil {
		return seedRun{}, err
	}
	pl, err := newPlanner(cfg, types, tm)
	if err != nil {
		return seedRun{}, err
	}
	for k := range src { // every run job is one of these or a copy
		if _, err := pl.plan(k, &src[k]); err != nil {
			return seedRun{}, err
		}
	}
	sr := seedRun{seed: seed, nodes: nodesRep, cluster: SeedCluster{Seed: seed, GPUs: len(gpus), ByModel: map[string]int{}}}
	for _, t := range types {
		sr.cluster.ByModel[t.name] = t.count
	}
	replay := replayer{cfg: cfg, types: types, gpus: gpus, servers: servers, pl: pl, pods: pods, now: now, parts: parts, item: item}
	if sr.policies, sr.timing, err = replay.all(feed); err != nil {
		return seedRun{}, err
	}
	for _, e := range cfg.LeaveOutLongest {
		lo, _ := parseLeaveOut(e) // checked by Validate
		kept, n := withoutLongest(src, lo.jobs(len(src)))
		prs, _, err := replay.all(func() jobFeed { return &sliceFeed{jobs: kept} })
		if err != nil {
			return seedRun{}, fmt.Errorf("leave_out_longest %s: %w", e, err)
		}
		run := leftOutRun{entry: lo.label, jobs: n}
		for _, pr := range prs {
			run.gpuHours = append(run.gpuHours, pr.GPUHours)
		}
		sr.leftOut = append(sr.leftOut, run)
	}
	compareHorizon(sr.policies)
	if opt := slices.IndexFunc(sr.policies, func(p PolicyResult) bool { return p.Name == "optimal" }); opt >= 0 && sr.policies[opt].GPUHours > 0 {
		o := sr.policies[opt].GPUHours
		for k := range sr.policies {
			g := (sr.policies[k].GPUHours - o) / o
			sr.policies[k].OptimalityGap = &g
		}
	}
	return sr, nil
}

// replayer replays every policy of cfg on one seed's cluster.
type replayer struct {
	cfg     Config
	types   []gpuType
	gpus    []clusterGPU
	servers []clusterServer
	pl      *planner
	pods    []workloads.Job
	now     func() time.Time
	// parts reports progress; item is the progress item of the next
	// replay (one per policy and variant, in order).
	parts *progress.Parts
	item  int
}

// all replays every policy on the jobs of feed (each replay takes a fresh
// one), in cfg.Policies order.
func (rp *replayer) all(feed func() jobFeed) ([]PolicyResult, []Timing, error) {
	var classes []snapshot.WorkloadClass // FGD's target workload, when asked
	var prs []PolicyResult
	var tms []Timing
	for _, name := range rp.cfg.Policies {
		pol, err := snapshot.New(name, rp.cfg.PolicyArgs[name])
		if err != nil {
			return nil, nil, err
		}
		caps := snapshot.CapabilitiesOf(pol)
		if w := caps.Workload; w != nil {
			if classes == nil {
				if classes, err = workloadClasses(feed(), rp.pl); err != nil {
					return nil, nil, err
				}
			}
			w.SetWorkload(classes)
		}
		var pr PolicyResult
		var tm Timing
		if caps.Offline != nil {
			pr, tm, err = horizon(caps.Offline, caps.UsesMIG, rp.types, rp.gpus, feed(), rp.pl, rp.now)
		} else {
			pr, tm, err = simulate(rp.cfg, pol, rp.types, rp.gpus, rp.servers, feed(), rp.pl, rp.pods, rp.now, rp.parts.Item(rp.item))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("policy %s: %w", name, err)
		}
		pr.Name, tm.Name = name, name
		if rep := caps.Solves; rep != nil {
			st := rep.SolveStats()
			pr.Solves = &st
		}
		pr.usesMIG, pr.sharesInstances = caps.UsesMIG, caps.SharesInstances
		prs = append(prs, pr)
		tms = append(tms, tm)
		rp.parts.Done(rp.item)
		rp.item++
	}
	return prs, tms, nil
}

// withoutLongest is jobs without the n of longest duration (ties: the
// later in the list goes first), in their order, and how many it left
// out.
func withoutLongest(jobs []workloads.Job, n int) ([]workloads.Job, int) {
	idx := make([]int, len(jobs))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch da, db := jobs[a].Duration, jobs[b].Duration; {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return b - a
	})
	drop := map[int]bool{}
	for _, k := range idx[:n] {
		drop[k] = true
	}
	kept := make([]workloads.Job, 0, len(jobs)-n)
	for k, j := range jobs {
		if !drop[k] {
			kept = append(kept, j)
		}
	}
	return kept, n
}

// workloadClasses is FGD's target workload: the per-task demand and allowed
// types of every job of the feed, weighted by task count.
func workloadClasses(feed jobFeed, pl *planner) ([]snapshot.WorkloadClass, error) {
	out := []snapshot.WorkloadClass{}
	idx := map[string]int{}
	for k := 0; ; k++ {
		j, ok, err := feed.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		p, err := pl.plan(k, &j)
		if err != nil {
			return nil, err
		}
		if len(p.optsWhole) == 0 {
			continue
		}
		var types []string
		if len(p.src.GPUTypes) > 0 {
			for _, o := range p.optsWhole {
				types = append(types, o.GPUType)
			}
		}
		d := p.optsWhole[0].Fraction
		key := fmt.Sprint(d, types)
		if c, ok := idx[key]; ok {
			out[c].Weight += float64(p.src.NumGPU)
			continue
		}
		idx[key] = len(out)
		out = append(out, snapshot.WorkloadClass{Demand: d, Types: types, Weight: float64(p.src.NumGPU)})
	}
}

func simulate(cfg Config, pol snapshot.Policy, types []gpuType, gpus []clusterGPU, servers []clusterServer, feed jobFeed, pl *planner, pods []workloads.Job, now func() time.Time, report func(frac float64)) (PolicyResult, Timing, error) {
	r := &run{now: now, cfg: cfg, sim: engine.New(nil), pol: pol, mig: true, types: types, feed: feed, planner: pl, report: report, size: feed.size(),
		live: map[int]*jobState{}, gpus: make([]gpuState, len(gpus)), servers: make([]serverState, len(servers)),
		activeBy: make([]int, len(types)), peakBy: make([]int, len(types)), hoursBy: make([]float64, len(types))}
	comm, err := newGangComm(cfg.GangComm)
	if err != nil {
		return PolicyResult{}, Timing{}, err
	}
	r.comm = comm
	caps := snapshot.CapabilitiesOf(pol)
	r.mig = caps.UsesMIG
	r.share = caps.SharesInstances && caps.UsesMIG
	for k, g := range gpus {
		r.gpus[k].typ, r.gpus[k].srv = g.typ, g.srv
		if m := r.model(g.typ).MIG; m != nil {
			r.gpus[k].slices = m.ComputeSlices
		}
	}
	type class struct {
		typ, n   int
		cpu, mem int64
	}
	byClass := map[class]int{}
	for k, sv := range servers {
		r.servers[k].clusterServer = sv
		c := class{gpus[sv.first].typ, sv.n, sv.cpu, sv.mem}
		ci, ok := byClass[c]
		if !ok {
			ci = len(r.classes)
			byClass[c] = ci
			r.classes = append(r.classes, nil)
		}
		r.classes[ci] = append(r.classes[ci], k)
	}
	if caps.Incremental != nil && !cfg.snapshotCalls && !r.share { // sessions carry no shared instances
		r.sess = caps.Incremental.Begin(r.cluster())
	}
	r.jct.KeepSamples(true)
	for k := range r.kinds {
		r.kinds[k].jct.KeepSamples(true)
		r.kinds[k].queue.KeepSamples(true)
	}
	if err := r.pull(); err != nil {
		return PolicyResult{}, Timing{}, err
	}
	r.pods = make([]podState, len(pods))
	for k := range pods {
		r.pods[k] = podState{src: &pods[k], srv: -1}
	}
	if len(pods) > 0 {
		r.sim.MustAt(pods[0].Arrival, r.podArrive)
	}
	r.sim.Run()
	if r.err != nil {
		return PolicyResult{}, Timing{}, r.err
	}
	if err := r.sim.Err(); err != nil {
		return PolicyResult{}, Timing{}, err // stopped at the horizon: no clipped JCTs
	}
	r.advance()
	pr := PolicyResult{
		GPUHours: r.gpuHours, GPUHoursFractional: r.fracHour,
		JCT: summarize(&r.jct), Queue: summarize(&r.queue),
		Migrations: float64(r.migrations), Decisions: r.decisions.Count(),
		PeakActive: float64(r.peak), Seeds: 1,
	}
	for t, n := range r.peakBy {
		if n > 0 {
			if pr.ByType == nil {
				pr.ByType = map[string]TypeUse{}
			}
			pr.ByType[r.types[t].name] = TypeUse{Peak: n, HoursMin: r.hoursBy[t], HoursMax: r.hoursBy[t]}
		}
	}
	if r.gpuHours > 0 {
		pr.Utilization = r.fracHour / r.gpuHours
	}
	end := r.sim.Now()
	if len(pods) > 0 {
		end = r.gpuEnd
		pr.CPUPods = r.podStats()
	}
	if span := end.Seconds() / 3600; span > 0 && len(r.gpus) > 0 {
		pr.CapacityUsed = r.gpuHours / (float64(len(r.gpus)) * span)
	}
	pr.Unscheduled = float64(r.neverRan + len(r.live))
	pr.Censored = float64(r.censored)
	if r.spanned > 0 {
		pr.Spanned = &Spanned{Jobs: float64(r.spanned), MeanSpeed: r.spanSpeed / float64(r.spanPlaced)}
	}
	for _, k := range r.alive { // never finished: their time so far counts
		js := r.live[k]
		for t := range js.tasks {
			r.settle(&js.tasks[t])
		}
		r.heavy.add(js.held, &r.kinds[btoi(js.plan.service)])
	}
	pr.ByKind = r.kindResults()
	pr.Top10Share = r.heavy.top10Share()
	pr.waited, pr.unfinished = r.queued+r.preempted, len(r.live)
	if r.next > 0 {
		pr.QueuedPct = 100 * float64(r.queued) / float64(r.next)
	}
	if cfg.RecordSeries {
		pr.Series = r.series
	}
	if cfg.RecordJobs {
		for k, js := range r.live {
			r.records[k] = js.rec
		}
		pr.Jobs = r.records
	}
	tm := Timing{DecisionUS: summarize(&r.decisions), Decisions: r.decisions.Count(), TotalS: r.decisionTotal.Seconds()}
	r.timing.fill(&tm)
	return pr, tm, nil
}

func summarize(t *stats.Tally) Summary {
	if t.Count() == 0 {
		return Summary{}
	}
	return Summary{Mean: t.Mean(), P99: t.Quantile(0.99)}
}

// fail stops the run with err.
func (r *run) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("at t=%.3fs: %w", r.sim.Now().Seconds(), err)
	}
	r.sim.Stop()
}

// pull takes the next job from the feed and schedules its arrival.
func (r *run) pull() error {
	j, ok, err := r.feed.next()
	if err != nil || !ok {
		return err
	}
	r.upcoming = j
	r.sim.MustAt(j.Arrival, r.arrive)
	return nil
}

// arrive admits the upcoming job and schedules the one after it.
func (r *run) arrive() {
	k := r.next
	r.next++
	if r.report != nil && r.size > 0 {
		if pm := r.next * 1000 / r.size; pm != r.reported {
			r.reported = pm
			r.report(float64(r.next) / float64(r.size))
		}
	}
	js := &jobState{job: r.upcoming, firstTask: taskID(k, 0)}
	if err := r.pull(); err != nil {
		r.fail(err)
		return
	}
	p, err := r.planner.plan(k, &js.job)
	if err != nil {
		r.fail(err)
		return
	}
	js.plan, js.remaining = p, p.work
	js.rec = JobRecord{ID: js.job.ID, ArrivalS: js.job.Arrival.Seconds(), QueueS: -1, JCTS: -1, Kind: p.kind(), Censored: p.censored}
	if r.cfg.RecordJobs {
		r.records = append(r.records, js.rec)
	}
	kt := &r.kinds[btoi(p.service)]
	kt.jobs++
	if len(r.options(&p)) == 0 {
		// No GPU of the cluster can run it: no type allowed, or a
		// service that needs more than a whole GPU of every allowed type.
		r.neverRan++
		kt.neverRan++
		if kt.firstNever == "" {
			kt.firstNever = fmt.Sprintf("%s (row %d)", js.job.ID, js.job.Row)
		}
		return
	}
	if p.work <= 0 {
		// Nothing to run (an arrival-only trace): done at once.
		if r.cfg.RecordJobs {
			r.records[k].QueueS, r.records[k].JCTS = 0, 0
		}
		return
	}
	js.tasks = make([]taskState, js.job.NumGPU)
	for t := range js.tasks {
		js.tasks[t] = taskState{job: k, gpu: -1}
	}
	r.live[k] = js
	r.alive = append(r.alive, k) // arrivals come in index order
	r.pendingTasks += js.job.NumGPU
	r.aliveTasks += js.job.NumGPU
	if r.sess != nil {
		for t := range js.job.NumGPU {
			r.sess.Arrive(r.taskJob(js, t))
		}
	}
	r.request()
}

// job returns arrived job k until it finishes (nil after).
func (r *run) job(k int) *jobState { return r.live[k] }

// task returns the task with snapshot ID id of a job not finished, or nil.
func (r *run) task(id int) *taskState {
	js := r.live[id>>taskBits]
	if js == nil || id < 0 {
		return nil
	}
	t := id & (1<<taskBits - 1)
	if t >= len(js.tasks) {
		return nil
	}
	return &js.tasks[t]
}

// cluster is what a policy's session starts from: every GPU and server,
// with the IDs snapshots give them.
func (r *run) cluster() *snapshot.Cluster {
	c := &snapshot.Cluster{GangSpan: r.cfg.GangSpan}
	for k := range r.servers {
		sv := &r.servers[k]
		c.Servers = append(c.Servers, snapshot.Server{ID: k, CPUMilli: sv.clusterServer.cpu, MemoryMiB: sv.clusterServer.mem})
	}
	for g := range r.gpus {
		c.GPUs = append(c.GPUs, snapshot.GPU{ID: g, Model: *r.model(r.gpus[g].typ), Server: r.gpus[g].srv})
	}
	return c
}

// taskJob is task t of job js as a policy sees it (not its placement).
func (r *run) taskJob(js *jobState, t int) snapshot.Job {
	gang := 0
	if js.plan.src.NumGPU > 1 {
		gang = js.firstTask + 1 // any ID unique to the job, not 0
	}
	cpu, mem := js.plan.taskCPUMem(t)
	return snapshot.Job{ID: js.firstTask + t, Tenant: js.plan.tenant, Options: r.options(&js.plan),
		MigrationCost: r.cfg.MigrationCost, Gang: gang, CPUMilli: cpu, MemoryMiB: mem}
}

// request asks for one policy call at now + batch window.
func (r *run) request() {
	if r.scheduled {
		return
	}
	r.scheduled = true
	r.sim.MustAfter(r.cfg.BatchWindow.Time(), r.schedule)
}

// advance integrates the metrics up to now.
func (r *run) advance() {
	now := r.sim.Now()
	if now > r.lastT {
		dt := (now - r.lastT).Seconds() / 3600
		r.gpuHours += float64(r.active) * dt
		r.peak = max(r.peak, r.active) // held for dt > 0, not a transient
		for t, n := range r.activeBy {
			r.peakBy[t] = max(r.peakBy[t], n)
			r.hoursBy[t] += float64(n) * dt
		}
		r.fracHour += r.alloc * dt
		r.lastT = now
	}
}

// noteActive records the active-GPU count after a change.
func (r *run) noteActive() {
	if !r.cfg.RecordSeries {
		return
	}
	t := r.sim.Now().Seconds()
	if n := len(r.series); n > 0 && r.series[n-1].T == t {
		r.series[n-1].Active = r.active
		if n > 1 && r.series[n-2].Active == r.active {
			r.series = r.series[:n-1]
		}
		return
	}
	if n := len(r.series); n > 0 && r.series[n-1].Active == r.active {
		return
	}
	r.series = append(r.series, SeriesPoint{T: t, Active: r.active})
}

func (r *run) options(p *jobPlan) []snapshot.Option { return p.options(r.mig) }

func (r *run) model(t int) *snapshot.GPUModel { return r.types[t].model(r.mig) }

// options are the job's options as a policy that partitions MIG GPUs
// (mig) or runs them whole sees them.
func (p *jobPlan) options(mig bool) []snapshot.Option {
	if mig {
		return p.optsMIG
	}
	return p.optsWhole
}

// model is the type's model as a policy that partitions MIG GPUs (mig) or
// runs them whole sees it.
func (t *gpuType) model(mig bool) *snapshot.GPUModel {
	if mig && t.spec.MIG != nil {
		return &t.migModel
	}
	return &t.wholeModel
}

// snapshot builds the policy's view: alive tasks, the servers that hold a
// task (all their GPUs) and, of each class of interchangeable servers, as
// many of the lowest-index empty servers as there are pending tasks.
func (r *run) snapshot(hidden map[int]bool) *snapshot.Snapshot {
	s := &r.snap
	s.Now = r.sim.Now()
	s.GangSpan = r.cfg.GangSpan
	s.ShareInstances = r.share
	srvs := r.snapSrv[:0]
	for k := range r.servers {
		if r.servers[k].busy > 0 || r.servers[k].pods > 0 {
			srvs = append(srvs, k)
		}
	}
	if r.pendingTasks > 0 {
		for _, cl := range r.classes {
			n := 0
			for _, k := range cl {
				if n >= r.pendingTasks {
					break
				}
				if r.servers[k].busy == 0 && r.servers[k].pods == 0 {
					srvs = append(srvs, k)
					n++
				}
			}
		}
	}
	slices.Sort(srvs)
	r.snapSrv = srvs
	s.Servers = slices.Grow(s.Servers[:0], len(srvs))[:len(srvs)]
	ids := r.snapIDs[:0]
	for k, si := range srvs {
		sv := &r.servers[si]
		s.Servers[k] = snapshot.Server{ID: si, CPUMilli: sv.clusterServer.cpu, MemoryMiB: sv.clusterServer.mem,
			HeldCPUMilli: sv.podCPU, HeldMemoryMiB: sv.podMem}
		for g := sv.first; g < sv.first+sv.n; g++ {
			ids = append(ids, g)
		}
	}
	r.snapIDs = ids
	s.GPUs = slices.Grow(s.GPUs[:0], len(ids))[:len(ids)]
	ins := r.snapIns[:0]
	for k, g := range ids {
		gs := &r.gpus[g]
		s.GPUs[k] = snapshot.GPU{ID: g, Model: *r.model(gs.typ), Server: gs.srv}
		if s.GPUs[k].Model.IsMIG() && len(gs.instances) > 0 {
			start := len(ins)
			for _, in := range gs.instances {
				ins = append(ins, in.Instance)
			}
			// Full slice expression: a policy appending to one GPU's
			// instances cannot write into the next GPU's.
			s.GPUs[k].Instances = ins[start:len(ins):len(ins)]
		}
	}
	r.snapIns = ins
	s.Jobs = s.Jobs[:0]
	cur := r.snapCur[:0]
	for _, j := range r.alive {
		if hidden[j] {
			continue
		}
		js := r.job(j)
		for t := range js.plan.src.NumGPU {
			if ts := r.task(js.firstTask + t); ts.gpu >= 0 {
				cur = append(cur, ts.pl)
			}
			s.Jobs = append(s.Jobs, r.taskJob(js, t))
		}
	}
	// Point Current at the placements only now: cur may have moved while
	// it grew.
	c := 0
	for k := range s.Jobs {
		if ts := r.task(s.Jobs[k].ID); ts.gpu >= 0 {
			s.Jobs[k].Current = &cur[c]
			c++
		}
	}
	r.snapCur = cur
	s.Freed = append(s.Freed[:0], r.freed...)
	slices.Sort(s.Freed)
	s.Freed = slices.Compact(s.Freed)
	return s
}

// schedule calls the policy and applies its decision. Snapshots name the
// gangs, and the built-in policies place a gang whole or not at all; for
// any other policy, when a decision places only part of a pending gang,
// the policy is asked again without that gang (it stays pending until a
// later event), so a gang that does not fit never holds GPUs that other
// jobs could use. A policy with a session decides there instead, from
// what it was told; with verify_decisions the snapshot call is made too
// and must give the same changes.
func (r *run) schedule() {
	r.scheduled = false
	r.placePods() // pods first: they wait in the same queue, and arrived earlier
	if len(r.alive) == 0 {
		return
	}
	if r.sess != nil {
		r.scheduleSession()
		return
	}
	var hidden map[int]bool
	for {
		s := r.snapshot(hidden)
		var begin time.Time
		if r.now != nil {
			begin = r.now()
		}
		d, err := r.pol.Schedule(s)
		r.timeCall(begin, len(s.Jobs), len(s.GPUs))
		if err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		if r.cfg.VerifyDecisions {
			if err := verify(s, &d); err != nil {
				r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
				return
			}
		}
		if partial := r.partialPendingGangs(d.Placements); len(partial) > 0 {
			if hidden == nil {
				hidden = map[int]bool{}
			}
			for _, k := range partial {
				hidden[k] = true
			}
			continue
		}
		if err := r.checkIDs(d.Placements); err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		r.freed = r.freed[:0]
		if err := r.apply(snapshot.Diff(s, &d)); err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		}
		return
	}
}

// scheduleSession asks the policy's session for its changes and applies
// them.
func (r *run) scheduleSession() {
	var want *snapshot.Changes
	if r.cfg.VerifyDecisions {
		// The snapshot call first: the session's changes count as applied.
		s := r.snapshot(nil)
		d, err := r.pol.Schedule(s)
		if err == nil {
			err = verify(s, &d)
		}
		if err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		c := snapshot.Diff(s, &d)
		want = &c
	}
	var begin time.Time
	if r.now != nil {
		begin = r.now()
	}
	c, err := r.sess.Schedule(r.sim.Now())
	r.timeCall(begin, r.aliveTasks, r.active)
	if err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		return
	}
	if want != nil && !sameChanges(*want, c) {
		r.fail(fmt.Errorf("policy %s: its session decided %v, its snapshot call %v (the two must agree)", r.pol.Name(), c, *want))
		return
	}
	if partial := r.partialPendingGangs(c.Placements); len(partial) > 0 {
		r.fail(fmt.Errorf("policy %s: its session placed part of gang %s; a session places a gang whole or not at all", r.pol.Name(), r.job(partial[0]).job.ID))
		return
	}
	if err := r.checkIDs(c.Placements); err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		return
	}
	r.freed = r.freed[:0]
	if err := r.apply(c); err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
	}
}

// timeCall records one policy call's wall-clock time (when timed).
func (r *run) timeCall(begin time.Time, jobs, gpus int) {
	var el time.Duration
	if r.now != nil {
		el = r.now().Sub(begin)
	}
	r.decisionTotal += el
	us := float64(el.Nanoseconds()) / 1e3
	r.decisions.Add(us)
	r.timing.add(Call{Jobs: jobs, GPUs: gpus, US: us})
}

// verify checks a snapshot the simulator built and a decision on it.
func verify(s *snapshot.Snapshot, d *snapshot.Decision) error {
	if err := snapshot.CheckSnapshot(s); err != nil {
		return fmt.Errorf("simulator built an invalid snapshot: %w", err)
	}
	if err := snapshot.CheckDecision(s, *d); err != nil {
		return fmt.Errorf("broke a rule: %w", err)
	}
	return nil
}

// sameChanges reports whether a and b change the same jobs the same way.
func sameChanges(a, b snapshot.Changes) bool {
	return slices.Equal(a.Placements, b.Placements) && slices.Equal(a.Preempted, b.Preempted)
}

// checkIDs refuses placements that name a task twice or no task at all.
func (r *run) checkIDs(ps []snapshot.Placement) error {
	seen := make(map[int]bool, len(ps))
	for _, p := range ps {
		if seen[p.JobID] {
			return fmt.Errorf("job %d placed twice", p.JobID)
		}
		if r.task(p.JobID) == nil {
			return fmt.Errorf("placement for unknown job %d", p.JobID)
		}
		seen[p.JobID] = true
	}
	return nil
}

// partialPendingGangs returns the pending multi-GPU jobs that d places in
// part.
func (r *run) partialPendingGangs(ps []snapshot.Placement) []int {
	var out []int
	count := map[int]int{}
	for _, p := range ps {
		if r.task(p.JobID) == nil {
			continue // apply reports it
		}
		k := r.task(p.JobID).job
		if r.job(k).plan.src.NumGPU > 1 && r.task(r.job(k).firstTask).gpu < 0 {
			count[k]++
		}
	}
	for k, n := range count {
		if n < r.job(k).plan.src.NumGPU {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// progress brings a running job's remaining work up to now.
func (r *run) progress(js *jobState) {
	if js.state != stateRunning {
		return
	}
	dt := r.sim.Now() - js.last
	done := dt
	if js.speed != 1 {
		done = engine.Time(float64(dt) * js.speed)
	}
	js.remaining = max(0, js.remaining-done)
	js.last = r.sim.Now()
}

func (r *run) cancel(js *jobState) {
	if js.hasEv {
		r.sim.Cancel(js.ev)
		js.hasEv = false
	}
}

// startRunning runs a placed job from now and schedules its completion.
func (r *run) startRunning(k int) {
	js := r.job(k)
	js.state, js.last = stateRunning, r.sim.Now()
	left := js.remaining
	if js.speed != 1 {
		left = engine.CeilNanos(float64(js.remaining) / js.speed) // saturates: the engine refuses it past its horizon
	}
	js.ev, js.hasEv = r.sim.MustAfter(left, func() { r.complete(k) }), true
}

// complete finishes job k: its work is done, or a service's (or a
// censored job's) time is up. A censored job has no completion time: the
// trace stopped recording it while it ran, so it is counted as censored
// and left out of JCT.
func (r *run) complete(k int) {
	js := r.job(k)
	js.hasEv = false
	js.remaining = 0
	r.finish(k)
	kt := &r.kinds[btoi(js.plan.service)]
	if js.plan.censored {
		r.censored++
		kt.censored++
	} else {
		js.rec.JCTS = (r.sim.Now() - js.plan.src.Arrival).Seconds()
		r.jct.Add(js.rec.JCTS)
		kt.completed++
		kt.jct.Add(js.rec.JCTS)
	}
	if r.cfg.RecordJobs {
		r.records[k] = js.rec
	}
}

// finish takes job k, which has finished, off its GPUs and drops it.
func (r *run) finish(k int) {
	js := r.job(k)
	js.state = stateDone
	r.advance()
	touched := r.touched[:0]
	for t := range js.plan.src.NumGPU {
		id := js.firstTask + t
		if g := r.task(id).gpu; g >= 0 {
			touched = append(touched, g)
			if r.sess == nil || r.cfg.VerifyDecisions {
				r.freed = append(r.freed, g) // for the snapshot's Freed
			}
		}
		if r.sess != nil {
			r.sess.Finish(id)
		}
		r.release(id)
	}
	r.aliveTasks -= js.plan.src.NumGPU
	r.respeed(touched)
	r.touched = touched
	r.noteActive()
	r.gpuEnd = r.sim.Now()
	r.heavy.add(js.held, &r.kinds[btoi(js.plan.service)])
	delete(r.live, k) // finished: only its record and the tallies remain
	i, _ := slices.BinarySearch(r.alive, k)
	r.alive = slices.Delete(r.alive, i, i+1)
	r.request()
}

// release takes task id off its GPU (a MIG instance stays, idle).
func (r *run) release(id int) {
	ts := r.task(id)
	if ts.gpu < 0 {
		return
	}
	r.settle(ts)
	g := &r.gpus[ts.gpu]
	r.alloc -= g.share()
	g.tasks--
	if ts.pl.Profile != "" {
		if in := g.instanceAt(ts.pl.Profile, ts.pl.Start); in != nil && in.n > 0 {
			in.n--
			in.used -= r.instanceShare(id, ts.pl)
			if in.n == 0 {
				in.used, in.tenant = 0, ""
				m := r.model(g.typ)
				p, _ := m.Profile(ts.pl.Profile)
				g.compute -= p.Compute
			}
		}
	} else {
		g.used -= ts.pl.Fraction
	}
	if k := slices.Index(g.members, id); k >= 0 {
		g.members = slices.Delete(g.members, k, k+1)
	}
	if g.tasks == 0 {
		g.used, g.tenant = 0, ""
		r.active--
		r.activeBy[g.typ]--
		r.servers[g.srv].busy--
	}
	cpu, mem := r.job(ts.job).plan.taskCPUMem(id - r.job(ts.job).firstTask)
	r.servers[g.srv].cpu -= cpu
	r.servers[g.srv].mem -= mem
	r.alloc += g.share()
	ts.gpu = -1
}

// overlaps reports whether two instances of model m share a memory slice.
func overlaps(m *snapshot.GPUModel, a, b snapshot.Instance) bool {
	pa, _ := m.Profile(a.Profile)
	pb, _ := m.Profile(b.Profile)
	return mig.Mask(pa, a.Start)&mig.Mask(pb, b.Start) != 0
}

// acquire puts task id at p and returns the setup delay (MIG operations).
func (r *run) acquire(id int, p snapshot.Placement, tenant string) (engine.Time, error) {
	if p.GPU < 0 || p.GPU >= len(r.gpus) {
		return 0, fmt.Errorf("task %d placed on unknown GPU %d", id, p.GPU)
	}
	g := &r.gpus[p.GPU]
	m := r.model(g.typ)
	var delay engine.Time
	r.alloc -= g.share()
	if m.IsMIG() {
		want := snapshot.Instance{Profile: p.Profile, Start: p.Start}
		prof, ok := m.Profile(p.Profile)
		if !ok {
			return 0, fmt.Errorf("task %d: profile %q not on GPU %d (%s)", id, p.Profile, p.GPU, m.Name)
		}
		sh := r.instanceShare(id, p)
		in := g.instanceAt(want.Profile, want.Start)
		joins := in != nil && in.n > 0
		switch {
		case joins && !r.share:
			return 0, fmt.Errorf("task %d joins the busy MIG instance %s@%d of GPU %d; this policy runs one task per instance", id, want.Profile, want.Start, p.GPU)
		case joins && in.tenant != tenant:
			return 0, fmt.Errorf("task %d of tenant %q joins tenant %q on MIG instance %s@%d of GPU %d", id, tenant, in.tenant, want.Profile, want.Start, p.GPU)
		case joins && in.used+sh > 1+1e-9:
			return 0, fmt.Errorf("task %d: MIG instance %s@%d of GPU %d would hold shares summing to %v > 1", id, want.Profile, want.Start, p.GPU, in.used+sh)
		case in != nil:
			in.n++
			in.used += sh
			in.tenant = tenant
		}
		if in == nil {
			ops := 1 // create
			kept := g.instances[:0]
			for _, in := range g.instances {
				if overlaps(m, in.Instance, want) {
					if in.n > 0 {
						return 0, fmt.Errorf("task %d: instance %s@%d of GPU %d overlaps %s@%d, which runs %d task(s)", id, want.Profile, want.Start, p.GPU, in.Profile, in.Start, in.n)
					}
					ops++ // destroy the idle instance in the way
					continue
				}
				kept = append(kept, in)
			}
			g.instances = append(kept, instance{Instance: want, n: 1, used: sh, tenant: tenant})
			// Idle instances may still exceed the compute slices or a
			// profile's count: destroy them, lowest start first.
			for snapshot.CheckLayout(m, layout(g)) != nil {
				k := slices.IndexFunc(g.instances, func(in instance) bool { return in.n == 0 })
				if k < 0 {
					return 0, fmt.Errorf("GPU %d (%s): illegal MIG layout: %v", p.GPU, m.Name, snapshot.CheckLayout(m, layout(g)))
				}
				g.instances = slices.Delete(g.instances, k, k+1)
				ops++
			}
			slices.SortFunc(g.instances, func(a, b instance) int { return a.Start - b.Start })
			delay = engine.MulSat(int64(ops), r.cfg.MIGReconfigTime.Time())
		}
		if !joins {
			g.compute += prof.Compute
		}
		if r.share {
			g.members = append(g.members, id)
		}
	} else {
		if g.tasks > 0 && g.tenant != tenant {
			return 0, fmt.Errorf("task %d of tenant %q joins tenant %q on non-MIG GPU %d", id, tenant, g.tenant, p.GPU)
		}
		if g.used+p.Fraction > 1+1e-9 {
			return 0, fmt.Errorf("GPU %d: fractions sum to %v > 1", p.GPU, g.used+p.Fraction)
		}
		g.used += p.Fraction
		g.tenant = tenant
		g.members = append(g.members, id)
	}
	sv := &r.servers[g.srv]
	cpu, mem := r.job(r.task(id).job).plan.taskCPUMem(id - r.job(r.task(id).job).firstTask)
	if !sv.fits(cpu, mem) {
		return 0, fmt.Errorf("task %d on GPU %d: server %d would hold %d of %d milli-CPU and %d of %d MiB (CPU-only pods included)", id, p.GPU, g.srv,
			sv.cpu+sv.podCPU+cpu, sv.clusterServer.cpu, sv.mem+sv.podMem+mem, sv.clusterServer.mem)
	}
	sv.cpu += cpu
	sv.mem += mem
	if g.tasks == 0 {
		r.active++
		r.activeBy[g.typ]++
		sv.busy++
	}
	g.tasks++
	r.alloc += g.share()
	ts := r.task(id)
	ts.gpu, ts.pl = p.GPU, p
	ts.since, ts.share = r.sim.Now(), p.Fraction
	if p.Profile != "" {
		pr, _ := m.Profile(p.Profile)
		ts.share = float64(pr.Compute) / float64(m.MIG.ComputeSlices)
	}
	return delay, nil
}

// settle adds the GPU time task ts held since it was last settled to its
// job's held time.
func (r *run) settle(ts *taskState) {
	if ts.gpu < 0 {
		return
	}
	now := r.sim.Now()
	r.live[ts.job].held += ts.share * (now - ts.since).Seconds()
	ts.since = now
}

// instanceShare is the share of its MIG instance task id takes at p where
// the policy shares instances; 0 where it does not (nothing reads it then).
func (r *run) instanceShare(id int, p snapshot.Placement) float64 {
	if !r.share {
		return 0
	}
	return r.options(&r.job(r.task(id).job).plan)[p.Option].InstanceShare()
}

func layout(g *gpuState) []snapshot.Instance {
	out := make([]snapshot.Instance, len(g.instances))
	for k, in := range g.instances {
		out[k] = in.Instance
	}
	return out
}

// apply carries out the changes c (checkIDs has passed them). Jobs the
// snapshot hid are not in c and stay pending.
func (r *run) apply(c snapshot.Changes) error {
	if len(c.Placements) == 0 && len(c.Preempted) == 0 {
		return nil
	}
	// The jobs c touches, ascending, and where each of their tasks ends:
	// a placement of c, pending when preempted, else where it is.
	var affected []int
	for _, p := range c.Placements {
		affected = append(affected, r.task(p.JobID).job)
	}
	for _, id := range c.Preempted {
		if r.task(id) == nil {
			return fmt.Errorf("preemption of unknown job %d", id)
		}
		affected = append(affected, r.task(id).job)
	}
	slices.Sort(affected)
	affected = slices.Compact(affected)
	placed := make(map[int]snapshot.Placement, len(c.Placements))
	for _, k := range affected {
		js := r.job(k)
		for t := range js.plan.src.NumGPU {
			if ts := r.task(js.firstTask + t); ts.gpu >= 0 {
				placed[js.firstTask+t] = ts.pl
			}
		}
	}
	for _, id := range c.Preempted {
		delete(placed, id)
	}
	for _, p := range c.Placements {
		placed[p.JobID] = p
	}
	type change struct {
		job       int
		moved     int // tasks that leave or change place
		wasPlaced bool
	}
	var changes []change
	var news []int // tasks to acquire
	for _, k := range affected {
		js := r.job(k)
		n := js.plan.src.NumGPU
		got := 0
		for t := range n {
			if p, ok := placed[js.firstTask+t]; ok {
				got++
				opts := r.options(&js.plan)
				if p.Option < 0 || p.Option >= len(opts) {
					return fmt.Errorf("job %d: option %d of %d", p.JobID, p.Option, len(opts))
				}
			}
		}
		if got > 0 && got < n {
			// Part of a gang: applied as none of it.
			for t := range n {
				delete(placed, js.firstTask+t)
			}
		}
		if got == n && n > 1 && !r.cfg.GangSpan {
			srv := -1
			for t := range n {
				p := placed[js.firstTask+t]
				if p.GPU < 0 || p.GPU >= len(r.gpus) {
					continue // acquire reports it
				}
				g := r.gpus[p.GPU].srv
				if srv >= 0 && g != srv {
					return fmt.Errorf("job %s: its %d tasks span servers %d and %d; a gang stays on one server (cluster.gang_span: false)", js.plan.src.ID, n, srv, g)
				}
				srv = g
			}
		}
		c := change{job: k, wasPlaced: r.task(js.firstTask).gpu >= 0}
		for t := range n {
			id := js.firstTask + t
			p, ok := placed[id]
			cur := *r.task(id)
			if (cur.gpu >= 0 && ok && snapshot.SameInstance(cur.pl, p)) || (cur.gpu < 0 && !ok) {
				continue // stays where it is, or stays pending
			}
			c.moved++
			if ok {
				news = append(news, id)
			}
		}
		if c.moved > 0 {
			changes = append(changes, c)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	r.advance()
	touched := r.touched[:0]
	for _, c := range changes {
		js := r.job(c.job)
		r.progress(js)
		for t := range js.plan.src.NumGPU {
			id := js.firstTask + t
			if p, ok := placed[id]; !ok || r.task(id).gpu < 0 || !snapshot.SameInstance(r.task(id).pl, p) {
				touched = append(touched, r.task(id).gpu)
				r.release(id)
			}
		}
	}
	for _, id := range news {
		touched = append(touched, placed[id].GPU)
	}
	defer func() { r.touched = touched }()
	delays := map[int]engine.Time{}
	for _, id := range news {
		k := r.task(id).job
		dl, err := r.acquire(id, placed[id], r.job(k).plan.tenant)
		if err != nil {
			return err
		}
		delays[k] = max(delays[k], dl)
	}
	r.noteActive()
	for _, c := range changes {
		k := c.job
		js := r.job(k)
		r.cancel(js)
		nowPlaced := r.task(js.firstTask).gpu >= 0
		if c.wasPlaced {
			r.migrations += c.moved
			js.rec.Migrations += c.moved
		}
		if !nowPlaced {
			if c.wasPlaced {
				js.state = statePending
				r.pendingTasks += js.plan.src.NumGPU
				r.preempted++
			}
			continue
		}
		js.speed = r.jobSpeed(js)
		if !js.plan.service && !js.plan.censored {
			if f := r.spreadSpeed(js); f != 1 {
				if !js.spanned {
					js.spanned = true
					r.spanned++
				}
				r.spanPlaced++
				r.spanSpeed += f
			}
		}
		if !c.wasPlaced {
			r.pendingTasks -= js.plan.src.NumGPU
		}
		if !js.placed {
			js.placed = true
			js.rec.QueueS = (r.sim.Now() - js.plan.src.Arrival).Seconds()
			r.queue.Add(js.rec.QueueS)
			r.kinds[btoi(js.plan.service)].queue.Add(js.rec.QueueS)
			if js.rec.QueueS > 0 {
				r.queued++
			}
			pl := r.task(js.firstTask).pl
			js.rec.GPUType, js.rec.Profile, js.rec.Speed = r.types[r.gpus[pl.GPU].typ].name, pl.Profile, js.speed
		}
		delay := delays[k]
		if c.wasPlaced {
			delay += r.cfg.MigrationTime.Time()
		}
		if delay == 0 {
			r.startRunning(k)
			continue
		}
		js.state = stateSetup
		js.ev, js.hasEv = r.sim.MustAfter(delay, func() {
			js.hasEv = false
			r.startRunning(k)
		}), true
	}
	r.respeed(touched)
	if r.pendingTasks < 0 {
		return errors.New("internal error: negative pending task count")
	}
	return nil
}

// jobSpeed is a placed job's speed: the slowest of its tasks, each at its
// option's speed, slowed on a time-shared GPU by its co-runners
// (timeshare_slowdown x the share of the GPU they hold, at most 1). A MIG
// instance is isolated from the others: only the tasks sharing it (where
// the policy shares instances) slow a task, by the same rule with shares
// of the instance.
func (r *run) jobSpeed(js *jobState) float64 {
	if js.plan.service || js.plan.censored {
		// It holds its placement for a time, not a quantity of work: its
		// co-runners slow its requests, not its end (how much latency it
		// loses is not modelled).
		return 1
	}
	opts := r.options(&js.plan)
	speed := math.Inf(1)
	for t := range js.plan.src.NumGPU {
		ts := r.task(js.firstTask + t)
		v := opts[ts.pl.Option].Speed
		if sl := r.cfg.TimeshareSlowdown; sl > 0 && ts.pl.Profile == "" && ts.gpu >= 0 {
			others := min(1, max(0, r.gpus[ts.gpu].used-ts.pl.Fraction))
			v *= 1 - sl*others
		} else if sl > 0 && r.share && ts.gpu >= 0 {
			if in := r.gpus[ts.gpu].instanceAt(ts.pl.Profile, ts.pl.Start); in != nil {
				v *= 1 - sl*min(1, max(0, in.used-opts[ts.pl.Option].InstanceShare()))
			}
		}
		speed = min(speed, v)
	}
	// A gang spread over servers synchronises over their NICs.
	return speed * r.spreadSpeed(js)
}

// spreadSpeed is the speed factor of job js's communication where its
// tasks are: 1 on one server (or not placed yet), else GangComm's.
func (r *run) spreadSpeed(js *jobState) float64 {
	n := js.plan.src.NumGPU
	if n < 2 || r.comm == nil || r.comm.off {
		return 1
	}
	var srv, on []int
	typ := -1
	for t := range n {
		ts := r.task(js.firstTask + t)
		if ts.gpu < 0 {
			return 1
		}
		g := &r.gpus[ts.gpu]
		if typ < 0 {
			typ = g.typ
		}
		if i := slices.Index(srv, g.srv); i >= 0 {
			on[i]++
		} else {
			srv, on = append(srv, g.srv), append(on, 1)
		}
	}
	if len(srv) < 2 {
		return 1
	}
	v, err := r.comm.speed(r.types[typ].name, on)
	if err != nil {
		r.fail(fmt.Errorf("job %s: %w", js.plan.src.ID, err))
		return 1
	}
	return v
}

// respeed brings the jobs time-sharing the given GPUs to their new speed
// after tasks joined or left them: work done so far at the old speed,
// completion moved to the new one.
func (r *run) respeed(gpus []int) {
	if r.cfg.TimeshareSlowdown == 0 {
		return
	}
	for _, gi := range gpus {
		if gi < 0 {
			continue
		}
		for _, id := range r.gpus[gi].members {
			k := r.task(id).job
			js := r.job(k)
			if js.state != stateRunning && js.state != stateSetup {
				continue
			}
			v := r.jobSpeed(js)
			if v == js.speed {
				continue
			}
			if js.state == stateSetup {
				js.speed = v // used when it starts
				continue
			}
			r.progress(js) // at the old speed, up to now
			js.speed = v
			r.cancel(js)
			r.startRunning(k)
		}
	}
}

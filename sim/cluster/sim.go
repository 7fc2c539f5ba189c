package cluster

// The replay of one policy: the run's state (jobs, tasks, GPUs, servers),
// its event loop (arrivals, snapshots, completions) and the queue of jobs.

import (
	"fmt"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
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
	llm                []llmTally   // per LLM service (Config.LLMServices)
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

func simulate(cfg Config, pol snapshot.Policy, types []gpuType, gpus []clusterGPU, servers []clusterServer, feed jobFeed, pl *planner, pods []workloads.Job, now func() time.Time, report func(frac float64)) (PolicyResult, Timing, error) {
	r := &run{now: now, cfg: cfg, sim: engine.New(nil), pol: pol, mig: true, types: types, feed: feed, planner: pl, report: report, size: feed.size(),
		live: map[int]*jobState{}, gpus: make([]gpuState, len(gpus)), servers: make([]serverState, len(servers)),
		activeBy: make([]int, len(types)), peakBy: make([]int, len(types)), hoursBy: make([]float64, len(types))}
	comm, err := newGangComm(cfg.GangComm)
	if err != nil {
		return PolicyResult{}, Timing{}, err
	}
	r.comm = comm
	if pl.llm != nil {
		r.llm = make([]llmTally, len(pl.llm.reports))
	}
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
		r.llmHeld(js)
	}
	pr.ByKind = r.kindResults()
	pr.LLMServices = r.llmResults()
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
	var lt *llmTally
	if p.llm > 0 {
		lt = &r.llm[p.llm-1]
		lt.jobs++
	}
	if len(r.options(&p)) == 0 {
		if lt != nil {
			lt.neverRan++
		}
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

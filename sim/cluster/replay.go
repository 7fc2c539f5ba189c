package cluster

// The seeds and policies of a run: Run and Check, each seed's replay of
// every policy over the same jobs, in parallel, merged in seed order.

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/internal/parallel"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

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
	if cfg.llm, err = resolveLLMServices(cfg, env, nodes, tm, seed); err != nil {
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
	if cfg.llm != nil {
		res.LLMServices = cfg.llm.reports
	}
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
	if len(cfg.LLMServices) > 0 {
		// The services' GPU types and profiles against the cluster, without
		// the search (it simulates): every service as if it met its SLO
		// on one whole GPU of its first allowed type.
		env.LLMServices = func(svc LLMService, types []gpu.Spec, _ uint64) (LLMChoice, error) {
			return LLMChoice{GPU: types[0].Name, TP: 1, Replicas: 1}, nil
		}
		if cfg.llm, err = resolveLLMServices(cfg, env, nodes, tm, seed); err != nil {
			return err
		}
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
	if err := pl.drawRegimes(src, seed); err != nil {
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
	if err := pl.drawRegimes(src, seed); err != nil {
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
		kept, n := withoutLongest(src, lo.jobs(len(src)-pl.llm.count()), pl.llm)
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
func withoutLongest(jobs []workloads.Job, n int, lp *llmPlan) ([]workloads.Job, int) {
	idx := make([]int, 0, len(jobs))
	for k := range jobs {
		if !lp.has(jobs[k].ID) { // LLM services are kept: not the trace's
			idx = append(idx, k)
		}
	}
	n = min(n, len(idx))
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

package cluster

// A job's plan: the options (GPU type, MIG profile or share, speed) a
// policy may place each of its tasks on, built once per job.

import (
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
)

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
	// llm is 1 + the index of the LLM service the job is a replica of
	// (Config.LLMServices), 0 for the trace's jobs.
	llm int
}

// kind names the job's kind in results: "service" or "batch".
func (p *jobPlan) kind() string {
	if p.service {
		return KindService
	}
	return KindBatch
}

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
	// The seed's draws over the run's jobs, by job ID (drawRegimes):
	// job_kind batch-fraction's batch jobs, and a tenant count's tenants.
	batchJob map[string]bool
	tenantOf map[string]string
	// llm is the run's resolved LLM services (nil without).
	llm *llmPlan
}

type optsKey struct {
	milli             int
	allowed           string
	service, censored bool
}

func newPlanner(cfg Config, types []gpuType, tm gpu.TraceTypeMap) (*planner, error) {
	pl := &planner{cfg: cfg, types: types, tm: tm, index: map[string]int{}, llm: cfg.llm,
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
	if pl.llm != nil {
		if lj, ok := pl.llm.byID[j.ID]; ok {
			return pl.planLLM(p, lj)
		}
	}
	switch cfg.Tenants {
	case TenantsTrace:
		p.tenant = j.Tenant
	case TenantsPerJob:
		p.tenant = fmt.Sprintf("job-%d", k)
	case TenantsSingle:
	default: // a count: drawn per seed (drawRegimes)
		p.tenant = pl.tenantOf[j.ID]
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
	p.service, p.censored = pl.isService(j), j.Censored && cfg.Censored == CensoredRecorded
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

// planLLM plans a replica of an LLM service: always a service, of its
// service's own tenant whatever cluster.tenants says, on its GPU type
// only. A gang of whole GPUs is any service job of a whole GPU of that
// type (whose MIG option is the whole-GPU profile); a slice replica's
// options are llmOptions'.
func (pl *planner) planLLM(p jobPlan, lj llmJob) (jobPlan, error) {
	j := p.src
	p.service, p.tenant, p.llm = true, j.Tenant, lj.service+1
	t, ok := pl.index[j.GPUTypes[0]]
	if !ok {
		return p, nil // not in this seed's cluster: never runs, counted
	}
	key := optsKey{milli: j.GPUMilli, allowed: "llm:" + j.GPUTypes[0] + "/" + lj.profile, service: true}
	if o, ok := pl.byKey[key]; ok {
		p.optsWhole, p.optsMIG = o[0], o[1]
		return p, nil
	}
	ty := &pl.types[t]
	if lj.profile == "" {
		pl.serviceOptions(&p, ty, float64(j.GPUMilli)/workloads.MaxGPUMilli, ty.rel, float64(ty.spec.MemoryBytes))
	} else {
		pl.llmOptions(&p, lj, ty)
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

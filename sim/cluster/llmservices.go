package cluster

// LLM services (cluster.llm_services): each is resolved once, before the
// replay, into the replicas of the cheapest configuration meeting its SLO
// on the cluster's GPU types (Env.LLMServices: sim/llmcap's search, which
// imports this package, so the assembly hands it in), and each replica
// becomes a service job that the policies place like any job.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	llmhw "github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// LLMService is one entry of cluster.llm_services: an LLM served at a
// request rate within an SLO for a span of the replay. The SLO and the
// workload are the llm section's keys, with its defaults.
type LLMService struct {
	Name     string               `yaml:"name" doc:"the service's name in the results; unique among the services" default:""`
	Model    string               `yaml:"model" doc:"the served model, a built-in model of hw/llm (llama-3.1-8b, llama-3.1-70b, qwen2-7b, ...)" default:"llama-3.1-8b"`
	SLO      llmserve.SLOConfig   `yaml:"slo" doc:"the SLO the chosen configuration meets (llm.slo's keys and defaults)"`
	Workload llmserve.SynthConfig `yaml:"workload" doc:"the service's requests (llm.workload.synthetic's keys and defaults): rate is the rate it must serve, requests how many each probe of the search draws, prompt and output their lengths"`
	Seeds    int                  `yaml:"seeds" doc:"seeds of each probe of the search: a configuration meets the SLO where the mean attainment over them does" default:"1"`
	Arrival  units.Duration       `yaml:"arrival" doc:"when the service's replicas arrive, from the start of the replay (the first trace job's arrival)" default:"0s"`
	Duration units.Duration       `yaml:"duration" doc:"how long the service holds its replicas once placed (a service holds its time)" default:"1h"`
	Count    int                  `yaml:"count" doc:"copies of the service, each with its own replicas and tenant (e.g. one per team)" default:"1"`
	GPUTypes []string             `yaml:"gpu_types" doc:"GPU types its replicas may use (catalog names); empty: every type of the cluster" default:"[]"`
	TP       []int                `yaml:"tp" doc:"tensor-parallel degrees tried on whole GPUs: a replica of tp t is a gang of t GPUs on one server" default:"[1]"`
	MIG      []string             `yaml:"mig" doc:"MIG profiles tried as replicas beside whole GPUs, one slice each at tp 1, on the allowed types that have them (e.g. [3g.40gb, 4g.40gb]); empty: whole GPUs only" default:"[]"`
	MaxGPUs  int                  `yaml:"max_gpus" doc:"the most GPUs one copy's configuration may take (replicas x tp x the slice's share)" default:"8"`
}

// LLMChoice is what the configuration search found for one service: the
// cheapest configuration meeting its SLO on the allowed types (Replicas
// 0: none does), and every configuration it tried, cheapest first.
type LLMChoice struct {
	GPU string
	// MIG is the replicas' profile ("" for whole GPUs); Share the part of
	// a GPU one takes (the larger of its compute and memory slice shares).
	MIG          string
	Share        float64
	TP, Replicas int
	PricePerHour float64 // of the configuration, $/h (0: unpriced)
	PriceBasis   string
	Attainment   float64 // SLO attainment of the chosen configuration
	Tried        []string
}

// LLMResolver is the configuration search Env.LLMServices gives: the
// cheapest configuration of svc on the GPU types types (catalog specs,
// those of the cluster svc may use), with seed for the synthetic
// requests.
type LLMResolver func(svc LLMService, types []gpu.Spec, seed uint64) (LLMChoice, error)

// LLMServiceReport is how one service was resolved (Result.LLMServices,
// summary.json's llm_services): the configuration chosen and why, or why
// none was, and the jobs it added to the replay.
type LLMServiceReport struct {
	Name    string  `json:"name"`
	Model   string  `json:"model"`
	RateRPS float64 `json:"rate_rps"`
	Count   int     `json:"count"`
	// Met is false where no configuration meets the SLO on the allowed
	// types: the service is left out of the replay (Jobs 0), and LeftOut
	// says why.
	Met     bool   `json:"met"`
	LeftOut string `json:"left_out,omitempty"`
	GPU     string `json:"gpu,omitempty"`
	MIG     string `json:"mig,omitempty"`
	TP      int    `json:"tp,omitempty"`
	// Replicas per copy; Share the part of a GPU each replica takes (1:
	// whole GPUs); GPUs the copy's replicas x tp x share.
	Replicas     int     `json:"replicas"`
	Share        float64 `json:"share,omitempty"`
	GPUs         float64 `json:"gpus"`
	PricePerHour float64 `json:"price_per_hour,omitempty"`
	PriceBasis   string  `json:"price_basis,omitempty"`
	Attainment   float64 `json:"slo_attainment,omitempty"`
	// Jobs is the service jobs added: count x replicas.
	Jobs int `json:"jobs"`
	// Why is the search's verdict in words; Tried every configuration it
	// ran, cheapest first.
	Why   string   `json:"why"`
	Tried []string `json:"tried,omitempty"`
}

// LLMServiceRun is what one policy made of one service's replicas
// (PolicyResult.LLMServices; means over the seeds).
type LLMServiceRun struct {
	Name string `json:"name"`
	// Replicas of all copies; Placed those that got a GPU; Unscheduled
	// those that never did (no GPU of the allowed type, or still waiting
	// at the end).
	Replicas    float64 `json:"replicas"`
	Placed      float64 `json:"placed"`
	Unscheduled float64 `json:"unscheduled"`
	// Queue is the time a replica waited for its first placement, over
	// the placed ones.
	Queue Summary `json:"queue_s"`
	// HeldGPUHours is the GPU time the replicas held, in GPU-hours of
	// their shares as gpu_hours_fractional counts them.
	HeldGPUHours float64 `json:"held_gpu_hours"`
}

// llmTally is what one replay counts of one service.
type llmTally struct {
	jobs, placed, neverRan int
	queue                  stats.Tally
	held                   float64 // GPU-seconds of shares
}

// llmPlan is the run's resolved services: the jobs they add (in arrival
// order) and, by job ID, the service and MIG profile of each.
type llmPlan struct {
	reports []LLMServiceReport
	jobs    []workloads.Job
	byID    map[string]llmJob
}

type llmJob struct {
	service int // index into reports
	profile string
	share   float64
}

// has says whether job id is one of the services' (false on nil).
func (lp *llmPlan) has(id string) bool {
	if lp == nil {
		return false
	}
	_, ok := lp.byID[id]
	return ok
}

// checkIDs refuses a trace job named as a service's would be.
func (lp *llmPlan) checkIDs(jobs []workloads.Job) error {
	for k := range jobs {
		if lp.has(jobs[k].ID) {
			return &InputError{fmt.Errorf("cluster jobs[%d]: job %q of the trace has the name of an llm service's replica; rename the service (cluster.llm_services)", k, jobs[k].ID)}
		}
	}
	return nil
}

// count is the services' jobs (0 on nil).
func (lp *llmPlan) count() int {
	if lp == nil {
		return 0
	}
	return len(lp.jobs)
}

// llmIDPrefix starts every service job's ID; no trace's IDs do.
const llmIDPrefix = "llm:"

// validateLLMServices checks cluster.llm_services at its keys.
func (c Config) validateLLMServices(add func(key, format string, args ...any), tm gpu.TraceTypeMap) {
	seen := map[string]bool{}
	var clusterTypes []string // catalog names of declared GPUs (nil with a node list)
	for _, g := range c.GPUs {
		if n, err := resolveType(g.Model, tm); err == nil && !slices.Contains(clusterTypes, n) {
			clusterTypes = append(clusterTypes, n)
		}
	}
	for i, s := range c.LLMServices {
		key := func(k string) string { return fmt.Sprintf("llm_services[%d].%s", i, k) }
		switch {
		case strings.TrimSpace(s.Name) == "":
			add(key("name"), "empty; name the service (e.g. chat), unique among llm_services")
		case strings.ContainsAny(s.Name, "/,\n"):
			add(key("name"), "%q; use a name without '/', ',' or line breaks", s.Name)
		case seen[s.Name]:
			add(key("name"), "%q given twice; each service needs its own name", s.Name)
		}
		seen[s.Name] = true
		if _, err := llmhw.Lookup(s.Model); err != nil {
			add(key("model"), "%v; a service takes built-in models only", err)
		}
		if r := float64(s.Workload.Rate); !(r > 0) || math.IsInf(r, 0) {
			add(key("workload.rate"), "%v; want the requests per second the service serves, above 0, e.g. 5/s", s.Workload.Rate)
		}
		if s.Workload.Requests < 1 {
			add(key("workload.requests"), "%d; want at least 1 request per probe, e.g. 1000", s.Workload.Requests)
		}
		if s.Seeds < 1 || s.Seeds > 100 {
			add(key("seeds"), "%d; want 1 to 100 seeds per probe", s.Seeds)
		}
		if !(s.SLO.Quantile > 0 && s.SLO.Quantile <= 1) {
			add(key("slo.quantile"), "%v; want a share in (0, 1], e.g. 0.9", s.SLO.Quantile)
		}
		if s.SLO.TTFT <= 0 || s.SLO.TPOT <= 0 {
			add(key("slo"), "ttft %v, tpot %v; want both above 0, e.g. {ttft: 1s, tpot: 100ms}", s.SLO.TTFT, s.SLO.TPOT)
		}
		if s.Count < 1 || s.Count > 1000 {
			add(key("count"), "%d; want 1 to 1000 copies", s.Count)
		}
		if s.MaxGPUs < 1 || s.MaxGPUs > 1024 {
			add(key("max_gpus"), "%d; want 1 to 1024 GPUs per copy", s.MaxGPUs)
		}
		if len(s.TP) == 0 && len(s.MIG) == 0 {
			add(key("tp"), "empty and no mig profiles: nothing to try; give e.g. [1] (whole GPUs) or mig: [3g.40gb]")
		}
		for k, tp := range s.TP {
			if tp < 1 || tp > MaxGPUsPerServer {
				add(fmt.Sprintf("llm_services[%d].tp[%d]", i, k), "%d; want 1 to %d (a replica's gang is on one server)", tp, MaxGPUsPerServer)
			}
		}
		if s.Arrival < 0 {
			add(key("arrival"), "%v is negative; use 0s (the start of the replay) or later", s.Arrival)
		}
		if s.Duration <= 0 {
			add(key("duration"), "%v; want a time above 0 that the service holds its replicas, e.g. 1h", s.Duration)
		} else if s.Arrival >= 0 && int64(s.Arrival) > math.MaxInt64-int64(s.Duration) {
			add(key("duration"), "arrival %v plus duration %v overflow the clock (int64 nanoseconds: about 292 years in all); shorten them", s.Arrival, s.Duration)
		} else if end := s.Arrival.Time() + s.Duration.Time(); end.Seconds() > engine.HorizonSeconds {
			add(key("duration"), "arrival %v plus duration %v end past the simulator's horizon of %s; shorten them", s.Arrival, s.Duration, engine.HorizonText)
		}
		types := clusterTypes
		if len(s.GPUTypes) > 0 {
			types = nil
			for k, t := range s.GPUTypes {
				n, err := resolveType(t, tm)
				if err != nil {
					add(fmt.Sprintf("llm_services[%d].gpu_types[%d]", i, k), "%v", err)
					continue
				}
				if clusterTypes != nil && !slices.Contains(clusterTypes, n) {
					add(fmt.Sprintf("llm_services[%d].gpu_types[%d]", i, k), "%s is not among the cluster's gpus (%s); list one of them", n, strings.Join(clusterTypes, ", "))
					continue
				}
				types = append(types, n)
			}
		}
		for k, prof := range s.MIG {
			if types == nil { // a node list: checked when it is read
				break
			}
			if !slices.ContainsFunc(types, func(n string) bool { return hasProfile(n, prof) }) {
				add(fmt.Sprintf("llm_services[%d].mig[%d]", i, k), "%q is a MIG profile of none of its GPU types (%s); use one of theirs (%s), or drop it", prof, strings.Join(types, ", "), profilesOf(types))
			}
		}
	}
}

// profilesOf lists the MIG profiles of the catalog GPUs names ("none"
// where none has MIG).
func profilesOf(names []string) string {
	var out []string
	for _, n := range names {
		if s, err := gpu.Lookup(n); err == nil && s.MIG != nil {
			for _, p := range s.MIG.Profiles {
				if !slices.Contains(out, p.Name) {
					out = append(out, p.Name)
				}
			}
		}
	}
	if len(out) == 0 {
		return "none: no MIG on these types"
	}
	return strings.Join(out, ", ")
}

// hasProfile says whether catalog GPU name has MIG profile prof.
func hasProfile(name, prof string) bool {
	s, err := gpu.Lookup(name)
	if err != nil {
		return false
	}
	_, err = s.Profile(prof)
	return err == nil
}

// clusterTypeNames is the catalog names of the GPU types the cluster has:
// of cfg.GPUs, or of the node list's GPU servers, sorted.
func clusterTypeNames(cfg Config, nodes []trace.Node, tm gpu.TraceTypeMap) []string {
	var out []string
	addName := func(code string) {
		if n, err := resolveType(code, tm); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if cfg.Nodes != "" {
		for _, n := range nodes {
			if n.NumGPU > 0 && n.GPUType != "" {
				addName(n.GPUType)
			}
		}
	} else {
		for _, g := range cfg.GPUs {
			addName(g.Model)
		}
	}
	slices.Sort(out)
	return out
}

// resolveLLMServices runs the configuration search of every service once
// (the same for every seed and policy) and turns each chosen
// configuration into its jobs. nil without services.
func resolveLLMServices(cfg Config, env Env, nodes []trace.Node, tm gpu.TraceTypeMap, seed uint64) (*llmPlan, error) {
	if len(cfg.LLMServices) == 0 {
		return nil, nil
	}
	if env.LLMServices == nil {
		return nil, errors.New("cluster.llm_services: no configuration search given (the assembly sets cluster.Env.LLMServices; sim/llmcap registers it in sim.ClusterEnv)")
	}
	have := clusterTypeNames(cfg, nodes, tm)
	plan := &llmPlan{byID: map[string]llmJob{}}
	for i, s := range cfg.LLMServices {
		names := have
		if len(s.GPUTypes) > 0 {
			names = nil
			for _, t := range s.GPUTypes {
				n, _ := resolveType(t, tm) // checked by Validate
				if slices.Contains(have, n) && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
		rep := LLMServiceReport{Name: s.Name, Model: s.Model, RateRPS: float64(s.Workload.Rate), Count: s.Count}
		if len(names) == 0 {
			return nil, &InputError{fmt.Errorf("cluster.llm_services[%d].gpu_types: none of %s is in the cluster (%s); list one of those", i, strings.Join(s.GPUTypes, ", "), strings.Join(have, ", "))}
		}
		specs := make([]gpu.Spec, 0, len(names))
		for _, n := range names {
			sp, err := gpu.Lookup(n)
			if err != nil {
				return nil, err
			}
			specs = append(specs, sp)
		}
		for k, prof := range s.MIG {
			if !slices.ContainsFunc(names, func(n string) bool { return hasProfile(n, prof) }) {
				return nil, &InputError{fmt.Errorf("cluster.llm_services[%d].mig[%d]: %q is a MIG profile of none of its GPU types in the cluster (%s); use one of theirs (%s), or drop it", i, k, prof, strings.Join(names, ", "), profilesOf(names))}
			}
		}
		ch, err := env.LLMServices(s, specs, seed)
		if err != nil {
			return nil, fmt.Errorf("cluster.llm_services[%d] (%s): %w", i, s.Name, err)
		}
		rep.Tried = ch.Tried
		if ch.Replicas < 1 {
			rep.LeftOut = fmt.Sprintf("no configuration of %s on %s (tp %v, mig %v, at most %d GPUs) meets ttft %v, tpot %v for %.3g of requests at %v: left out of the replay",
				s.Model, strings.Join(names, ", "), s.TP, s.MIG, s.MaxGPUs, s.SLO.TTFT, s.SLO.TPOT, s.SLO.Quantile, s.Workload.Rate)
			rep.Why = rep.LeftOut
			plan.reports = append(plan.reports, rep)
			continue
		}
		share := 1.0
		if ch.MIG != "" {
			share = ch.Share
		}
		rep.Met, rep.GPU, rep.MIG, rep.TP, rep.Replicas = true, ch.GPU, ch.MIG, ch.TP, ch.Replicas
		rep.Share, rep.GPUs = share, float64(ch.Replicas*ch.TP)*share
		rep.PricePerHour, rep.PriceBasis, rep.Attainment = ch.PricePerHour, ch.PriceBasis, ch.Attainment
		rep.Why = fmt.Sprintf("cheapest of %d configurations tried meeting the SLO (ttft %v, tpot %v for %.3g) at %v: %s (%.3g GPUs, attainment %.3f)",
			len(ch.Tried), s.SLO.TTFT, s.SLO.TPOT, s.SLO.Quantile, s.Workload.Rate, rep.Config(), rep.GPUs, ch.Attainment)
		for c := range s.Count {
			for r := range ch.Replicas {
				j := llmServiceJob(s, c, r, ch)
				plan.byID[j.ID] = llmJob{service: len(plan.reports), profile: ch.MIG, share: share}
				plan.jobs = append(plan.jobs, j)
			}
		}
		rep.Jobs = s.Count * ch.Replicas
		plan.reports = append(plan.reports, rep)
	}
	slices.SortStableFunc(plan.jobs, func(a, b workloads.Job) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for k := range plan.jobs {
		if err := checkJob(k, &plan.jobs[k]); err != nil {
			return nil, err
		}
	}
	if err := checkHorizon(cfg, plan.jobs); err != nil {
		return nil, err
	}
	return plan, nil
}

// Config is the chosen configuration in words: "2 x h100-80gb tp 1" or
// "3 x h100-80gb 3g.40gb".
func (r LLMServiceReport) Config() string {
	if !r.Met {
		return "none"
	}
	if r.MIG != "" {
		return fmt.Sprintf("%d x %s %s", r.Replicas, r.GPU, r.MIG)
	}
	return fmt.Sprintf("%d x %s tp %d", r.Replicas, r.GPU, r.TP)
}

// llmServiceJob is replica r of copy c of service s under choice ch: a
// service job on ch's GPU type, a gang of tp whole GPUs or one job of the
// slice's share (its MIG options are the profile itself: plan).
func llmServiceJob(s LLMService, c, r int, ch LLMChoice) workloads.Job {
	j := workloads.Job{
		ID:       fmt.Sprintf("%s%s/%d/%d", llmIDPrefix, s.Name, c, r),
		Tenant:   fmt.Sprintf("%s%s/%d", llmIDPrefix, s.Name, c),
		Arrival:  s.Arrival.Time(),
		Duration: s.Duration.Time(),
		NumGPU:   ch.TP,
		GPUMilli: workloads.MaxGPUMilli,
		GPUTypes: []string{ch.GPU},
		Model:    s.Model,
		QoS:      "LS",
	}
	if ch.MIG != "" {
		j.NumGPU = 1
		j.GPUMilli = max(1, min(workloads.MaxGPUMilli, int(math.Ceil(ch.Share*workloads.MaxGPUMilli-1e-9))))
	}
	return j
}

// llmOptions are a MIG-slice replica's options: on a MIG GPU under a
// policy that uses MIG, exactly the profile the search served it on (the
// whole instance: replicas of one service do not share one); on a GPU run
// whole, the slice's share, time-shared as any service's share.
func (pl *planner) llmOptions(p *jobPlan, lj llmJob, ty *gpuType) {
	p.optsWhole = append(p.optsWhole, snapshot.Option{GPUType: ty.name, Fraction: lj.share, Speed: 1})
	if ty.spec.MIG == nil {
		p.optsMIG = append(p.optsMIG, p.optsWhole[len(p.optsWhole)-1])
		return
	}
	if _, err := ty.spec.MIG.Lookup(lj.profile); err == nil {
		p.optsMIG = append(p.optsMIG, snapshot.Option{GPUType: ty.name, Profile: lj.profile, Fraction: 1, Speed: 1})
	}
}

// llmHeld counts a finished (or never finished) replica's held GPU time.
func (r *run) llmHeld(js *jobState) {
	if js.plan.llm > 0 {
		r.llm[js.plan.llm-1].held += js.held
	}
}

// llmResults is the run's LLMServices (nil without services).
func (r *run) llmResults() []LLMServiceRun {
	if r.planner.llm == nil {
		return nil
	}
	out := make([]LLMServiceRun, len(r.llm))
	for i := range r.llm {
		t := &r.llm[i]
		unfinished := 0
		for _, k := range r.alive {
			if js := r.live[k]; js.plan.llm == i+1 && !js.placed {
				unfinished++
			}
		}
		out[i] = LLMServiceRun{Name: r.planner.llm.reports[i].Name, Replicas: float64(t.jobs), Placed: float64(t.placed),
			Unscheduled: float64(t.neverRan + unfinished), Queue: summarize(&t.queue), HeldGPUHours: t.held / 3600}
	}
	return out
}

// meanLLM averages policy k's LLMServices over the seeds.
func meanLLM(runs []seedRun, k int) []LLMServiceRun {
	first := runs[0].policies[k].LLMServices
	if first == nil {
		return nil
	}
	out := make([]LLMServiceRun, len(first))
	n := float64(len(runs))
	for i := range out {
		o := LLMServiceRun{Name: first[i].Name}
		for s := range runs {
			v := runs[s].policies[k].LLMServices[i]
			o.Replicas += v.Replicas / n
			o.Placed += v.Placed / n
			o.Unscheduled += v.Unscheduled / n
			o.Queue.Mean += v.Queue.Mean / n
			o.Queue.P99 += v.Queue.P99 / n
			o.HeldGPUHours += v.HeldGPUHours / n
		}
		out[i] = o
	}
	return out
}

// LLMServiceLines is the console's account of the services: per service
// the configuration chosen and why (or that none meets its SLO, and that
// it was left out), then per policy its replicas placed, waiting and
// GPU-hours.
func LLMServiceLines(res *Result) []string {
	if len(res.LLMServices) == 0 {
		return nil
	}
	var out []string
	left := 0
	for _, s := range res.LLMServices {
		if !s.Met {
			left++
			out = append(out, fmt.Sprintf("WARNING: llm service %s (%s at %.4g/s): %s", s.Name, s.Model, s.RateRPS, s.LeftOut))
			continue
		}
		copies := "copies"
		if s.Count == 1 {
			copies = "copy"
		}
		out = append(out, fmt.Sprintf("llm service %s (%s at %.4g/s, %d %s): %s per copy, %d service jobs; %s", s.Name, s.Model, s.RateRPS, s.Count, copies, s.Config(), s.Jobs, s.Why))
	}
	if left > 0 {
		out = append(out, fmt.Sprintf("WARNING: %d of %d llm services left out: no configuration meets their SLO on the cluster's GPU types", left, len(res.LLMServices)))
	}
	for _, p := range res.Policies {
		for _, s := range p.LLMServices {
			out = append(out, fmt.Sprintf("  %s: %s: %.4g of %.4g replicas placed, %.4g never; waited %.4g s mean (p99 %.4g s); held %.2f GPU-hours",
				p.Name, s.Name, s.Placed, s.Replicas, s.Unscheduled, s.Queue.Mean, s.Queue.P99, s.HeldGPUHours))
		}
	}
	return out
}

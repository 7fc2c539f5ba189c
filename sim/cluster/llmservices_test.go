package cluster

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	"github.com/conspirator-sim/conspirator/workloads"
)

// llmSvc is a service with the scenario's defaults where the test does
// not care.
func llmSvc(name string, rate float64) LLMService {
	return LLMService{Name: name, Model: "llama-3.1-8b", Seeds: 1, Count: 1, TP: []int{1}, MaxGPUs: 8,
		SLO:      llmserve.SLOConfig{TTFT: units.Duration(engine.Second), TPOT: units.Duration(100 * engine.Millisecond), Quantile: 0.9},
		Workload: llmserve.SynthConfig{Requests: 100, Rate: units.Rate(rate)},
		Duration: units.Duration(engine.Hour)}
}

// fixed is a resolver that answers the choice of each service by name,
// as the search would, without simulating; it records what it was asked.
type fixed struct {
	by    map[string]LLMChoice
	asked map[string][]string
}

func (f *fixed) resolve(svc LLMService, types []gpu.Spec, _ uint64) (LLMChoice, error) {
	if f.asked == nil {
		f.asked = map[string][]string{}
	}
	for _, t := range types {
		f.asked[svc.Name] = append(f.asked[svc.Name], t.Name)
	}
	return f.by[svc.Name], nil
}

func servicesConfig(gpus []GPUGroup, svcs []LLMService, policies ...string) Config {
	c := Defaults()
	c.Trace, c.Nodes = "", ""
	c.GPUs = gpus
	c.LLMServices = svcs
	c.Policies = policies
	c.VerifyDecisions = true
	c.SeedVaries = SeedVariesCluster
	c.CPUPods = false
	return c
}

// Hand-derived: a service whose cheapest configuration is 2 x TP 1 whole
// H100s becomes 2 service jobs, each one whole H100; a TP 2 choice one
// gang of 2 GPUs per replica; a 3g.40gb choice one job of half a GPU
// (max(3/7, 4/8)) whose MIG option is that very profile, whole, and whose
// option on a GPU run whole is half of it.
func TestLLMServiceJobsHandDerived(t *testing.T) {
	svcs := []LLMService{llmSvc("two", 10), llmSvc("gang", 3), llmSvc("slice", 2)}
	svcs[1].Count = 3
	svcs[1].TP = []int{2}
	svcs[2].MIG = []string{"3g.40gb"}
	svcs[2].Arrival = units.Duration(10 * engine.Minute)
	f := &fixed{by: map[string]LLMChoice{
		"two":   {GPU: "h100-80gb", TP: 1, Replicas: 2},
		"gang":  {GPU: "h100-80gb", TP: 2, Replicas: 1},
		"slice": {GPU: "h100-80gb", MIG: "3g.40gb", Share: 0.5, TP: 1, Replicas: 1},
	}}
	cfg := servicesConfig([]GPUGroup{{Model: "h100-80gb", Count: 8}, {Model: "a100-80gb", Count: 8}}, svcs, "first-fit")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	lp, err := resolveLLMServices(cfg, Env{LLMServices: f.resolve}, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Every type of the cluster is offered where gpu_types is empty.
	if got := f.asked["two"]; !slices.Equal(got, []string{"a100-80gb", "h100-80gb"}) {
		t.Errorf("types offered to the search %v; want the cluster's, a100-80gb and h100-80gb", got)
	}
	type shape struct {
		id          string
		gpus, milli int
		arrival     engine.Time
	}
	var got []shape
	for _, j := range lp.jobs {
		if !slices.Equal(j.GPUTypes, []string{"h100-80gb"}) || j.Duration != engine.Hour {
			t.Errorf("%s: types %v, duration %v; want [h100-80gb], 1h", j.ID, j.GPUTypes, j.Duration)
		}
		got = append(got, shape{j.ID, j.NumGPU, j.GPUMilli, j.Arrival})
	}
	want := []shape{
		{"llm:two/0/0", 1, 1000, 0}, {"llm:two/0/1", 1, 1000, 0},
		{"llm:gang/0/0", 2, 1000, 0}, {"llm:gang/1/0", 2, 1000, 0}, {"llm:gang/2/0", 2, 1000, 0},
		{"llm:slice/0/0", 1, 500, 10 * engine.Minute},
	}
	if !slices.Equal(got, want) {
		t.Errorf("service jobs\n got %v\nwant %v", got, want)
	}
	reps := lp.reports
	if r := reps[0]; !r.Met || r.Jobs != 2 || r.GPUs != 2 || r.Config() != "2 x h100-80gb tp 1" {
		t.Errorf("two: %+v; want met, 2 jobs, 2 GPUs", r)
	}
	if r := reps[1]; r.Jobs != 3 || r.GPUs != 2 {
		t.Errorf("gang: %d jobs, %v GPUs per copy; want 3 jobs (3 copies x 1 replica), 2 GPUs", r.Jobs, r.GPUs)
	}
	if r := reps[2]; r.Share != 0.5 || r.GPUs != 0.5 || r.Config() != "1 x h100-80gb 3g.40gb" {
		t.Errorf("slice: share %v, GPUs %v, %s; want 0.5, 0.5", r.Share, r.GPUs, r.Config())
	}

	// The planner: a slice replica is a service of its own tenant whose
	// options are the profile (MIG) or half a GPU (whole), on H100s only.
	cfg.llm = lp
	types, _, _, _, err := buildCluster(cfg, nil, nil, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := newPlanner(cfg, types, nil)
	if err != nil {
		t.Fatal(err)
	}
	slice := lp.jobs[len(lp.jobs)-1]
	p, err := pl.plan(0, &slice)
	if err != nil {
		t.Fatal(err)
	}
	if !p.service || p.llm != 3 || p.tenant != "llm:slice/0" {
		t.Errorf("slice plan: service %v, llm %d, tenant %q; want true, 3, llm:slice/0", p.service, p.llm, p.tenant)
	}
	if len(p.optsMIG) != 1 || p.optsMIG[0].Profile != "3g.40gb" || p.optsMIG[0].GPUType != "h100-80gb" || p.optsMIG[0].Fraction != 1 || p.optsMIG[0].Speed != 1 {
		t.Errorf("slice MIG options %+v; want one: h100-80gb 3g.40gb, whole instance, speed 1", p.optsMIG)
	}
	if len(p.optsWhole) != 1 || p.optsWhole[0].Fraction != 0.5 || p.optsWhole[0].GPUType != "h100-80gb" {
		t.Errorf("slice whole-GPU options %+v; want one: half an h100-80gb", p.optsWhole)
	}
	whole := lp.jobs[0]
	if p, _ = pl.plan(1, &whole); len(p.optsWhole) != 1 || p.optsWhole[0].Fraction != 1 || p.optsWhole[0].GPUType != "h100-80gb" {
		t.Errorf("whole replica options %+v; want one whole h100-80gb", p.optsWhole)
	}
	// Kind: a service whatever job_kind says.
	cfg.JobKind = JobKindAllBatch
	pl, _ = newPlanner(cfg, types, nil)
	if p, _ = pl.plan(1, &whole); !p.service {
		t.Error("an llm replica under job_kind all-batch is a batch job; want a service")
	}
}

// On one H100, two services of one 3g.40gb replica each for an hour: a
// MIG policy runs both at once (1 GPU-hour, nobody waits); exclusive runs
// them one after the other (2 GPU-hours, the second waits an hour), and
// so does naive-share, as the two are different tenants.
func TestLLMServicesPlacedByPolicies(t *testing.T) {
	svcs := []LLMService{llmSvc("a", 2), llmSvc("b", 2)}
	ch := LLMChoice{GPU: "h100-80gb", MIG: "3g.40gb", Share: 0.5, TP: 1, Replicas: 1}
	f := &fixed{by: map[string]LLMChoice{"a": ch, "b": ch}}
	cfg := servicesConfig([]GPUGroup{{Model: "h100-80gb", Count: 1}}, svcs, "exclusive", "naive-share", "first-fit")
	cfg.MIGReconfigTime = 0
	res, err := Run(cfg, 1, Env{LLMServices: f.resolve})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Policies {
		var wantHours, wantWait float64 = 2, 1800 // the second waits 3600 s: mean 1800
		if p.Name == "first-fit" {
			wantHours, wantWait = 1, 0
		}
		if math.Abs(p.GPUHours-wantHours) > 1e-9 {
			t.Errorf("%s: %v GPU-hours; want %v", p.Name, p.GPUHours, wantHours)
		}
		if len(p.LLMServices) != 2 {
			t.Fatalf("%s: %d services; want 2", p.Name, len(p.LLMServices))
		}
		wait := (p.LLMServices[0].Queue.Mean + p.LLMServices[1].Queue.Mean) / 2
		if math.Abs(wait-wantWait) > 1e-6 {
			t.Errorf("%s: mean wait %v s; want %v", p.Name, wait, wantWait)
		}
		for _, s := range p.LLMServices {
			if s.Replicas != 1 || s.Placed != 1 || s.Unscheduled != 0 {
				t.Errorf("%s %s: %+v; want 1 replica placed", p.Name, s.Name, s)
			}
		}
	}
	if len(res.LLMServices) != 2 || !res.LLMServices[0].Met {
		t.Errorf("reports %+v", res.LLMServices)
	}
}

// Services beside trace jobs: the jobs keep their window and the services
// arrive at their own time; two runs give the same bytes.
func TestLLMServicesWithTraceDeterministic(t *testing.T) {
	var jobs []workloads.Job
	for k := range 40 {
		jobs = append(jobs, job("j"+string(rune('a'+k%26))+string(rune('0'+k/26)), float64(60*k), 900, 250*(1+k%4)))
	}
	svcs := []LLMService{llmSvc("chat", 2), llmSvc("code", 8)}
	svcs[0].Count = 3
	svcs[1].Arrival = units.Duration(20 * engine.Minute)
	f := &fixed{by: map[string]LLMChoice{
		"chat": {GPU: "a100-80gb", MIG: "3g.40gb", Share: 0.5, TP: 1, Replicas: 2},
		"code": {GPU: "a100-80gb", TP: 2, Replicas: 1},
	}}
	cfg := servicesConfig([]GPUGroup{{Model: "a100-80gb", Count: 8}}, svcs, "exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator")
	cfg.Jobs = jobs
	cfg.Seeds = 2
	cfg.SeedVaries = SeedVariesWorkload
	cfg.JobKind = JobKindBatchFraction
	run := func() []byte {
		res, err := Run(cfg, 3, Env{LLMServices: f.resolve})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Policies {
			if got := p.LLMServices[0].Replicas + p.LLMServices[1].Replicas; got != 7 {
				t.Errorf("%s: %v replicas; want 7 (3 x 2 + 1)", p.Name, got)
			}
			if p.LLMServices[0].Placed+p.LLMServices[0].Unscheduled != 6 {
				t.Errorf("%s chat: %+v: placed and unscheduled do not add up to 6", p.Name, p.LLMServices[0])
			}
		}
		b, err := res.JSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := run(), run()
	if !bytes.Equal(a, b) {
		t.Error("two runs differ")
	}
}

// Bad inputs are errors naming the key and the fix.
func TestLLMServiceBadInputs(t *testing.T) {
	h100 := []GPUGroup{{Model: "h100-80gb", Count: 8}}
	for _, tc := range []struct {
		name string
		edit func(*LLMService)
		key  string
	}{
		{"unknown model", func(s *LLMService) { s.Model = "llama-9" }, "llm_services[0].model"},
		{"rate 0", func(s *LLMService) { s.Workload.Rate = 0 }, "llm_services[0].workload.rate"},
		{"rate negative", func(s *LLMService) { s.Workload.Rate = -1 }, "llm_services[0].workload.rate"},
		{"profile the GPU lacks", func(s *LLMService) { s.MIG = []string{"3g.20gb"} }, "llm_services[0].mig[0]"},
		{"overflow", func(s *LLMService) {
			s.Arrival = units.Duration(math.MaxInt64 / 2)
			s.Duration = units.Duration(math.MaxInt64/2 + 2)
		}, "llm_services[0].duration"},
		{"past the horizon", func(s *LLMService) { s.Duration = units.Duration(math.MaxInt64 / 2) }, "llm_services[0].duration"},
		{"no duration", func(s *LLMService) { s.Duration = 0 }, "llm_services[0].duration"},
		{"negative arrival", func(s *LLMService) { s.Arrival = -1 }, "llm_services[0].arrival"},
		{"no name", func(s *LLMService) { s.Name = "" }, "llm_services[0].name"},
		{"type not in the cluster", func(s *LLMService) { s.GPUTypes = []string{"a100-80gb"} }, "llm_services[0].gpu_types[0]"},
		{"count 0", func(s *LLMService) { s.Count = 0 }, "llm_services[0].count"},
		{"tp 9", func(s *LLMService) { s.TP = []int{9} }, "llm_services[0].tp[0]"},
	} {
		s := llmSvc("x", 2)
		tc.edit(&s)
		err := servicesConfig(h100, []LLMService{s}, "first-fit").Validate()
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v; want one naming %s", tc.name, err, tc.key)
		}
	}
	// Twice the same name.
	err := servicesConfig(h100, []LLMService{llmSvc("x", 2), llmSvc("x", 3)}, "first-fit").Validate()
	if err == nil || !strings.Contains(err.Error(), "llm_services[1].name") {
		t.Errorf("duplicate name: %v", err)
	}
	// Without a trace and without services: the trace is named.
	if err := servicesConfig(h100, nil, "first-fit").Validate(); err == nil || !strings.Contains(err.Error(), "trace") {
		t.Errorf("no trace, no services: %v", err)
	}
	// Without a search the run says who must give one.
	if _, err := Run(servicesConfig(h100, []LLMService{llmSvc("x", 2)}, "first-fit"), 1, Env{}); err == nil || !strings.Contains(err.Error(), "Env.LLMServices") {
		t.Errorf("no resolver: %v", err)
	}
}

// A service no configuration serves is left out, said so, and the run
// goes on with the others.
func TestLLMServiceLeftOut(t *testing.T) {
	f := &fixed{by: map[string]LLMChoice{"ok": {GPU: "h100-80gb", TP: 1, Replicas: 1}, "none": {Tried: []string{"1 x h100-80gb tp 1: none within 8 GPUs"}}}}
	cfg := servicesConfig([]GPUGroup{{Model: "h100-80gb", Count: 2}}, []LLMService{llmSvc("ok", 1), llmSvc("none", 500)}, "first-fit")
	cfg.MIGReconfigTime = 0
	res, err := Run(cfg, 1, Env{LLMServices: f.resolve})
	if err != nil {
		t.Fatal(err)
	}
	r := res.LLMServices[1]
	if r.Met || r.Jobs != 0 || !strings.Contains(r.LeftOut, "left out") {
		t.Errorf("none: %+v; want not met, no jobs, left out", r)
	}
	lines := strings.Join(LLMServiceLines(res), "\n")
	for _, want := range []string{"WARNING: llm service none", "WARNING: 1 of 2 llm services left out", "first-fit: ok: 1 of 1 replicas placed"} {
		if !strings.Contains(lines, want) {
			t.Errorf("console lines lack %q:\n%s", want, lines)
		}
	}
	if p := res.Policies[0]; p.LLMServices[1].Replicas != 0 || p.GPUHours != 1 {
		t.Errorf("first-fit: %v replicas of none, %v GPU-hours; want 0 and 1", p.LLMServices[1].Replicas, p.GPUHours)
	}
}

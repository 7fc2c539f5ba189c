package llmcap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
)

func loadBuiltin(t *testing.T, name string, sets ...string) *scenarios.Scenario {
	t.Helper()
	var sc scenarios.Scenario
	if err := scenarios.Load(name, sets, nil, &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// The built-in llm/cluster-services runs through sim.Run (the search is
// registered in sim.ClusterEnv by this package), twice to the same bytes,
// and every service is reported with its configuration and placement.
func TestClusterServicesScenario(t *testing.T) {
	sc := loadBuiltin(t, "llm/cluster-services")
	if err := sim.Check(sc); err != nil {
		t.Fatalf("validate: %v", err)
	}
	a, err := sim.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range a.Files {
		if name == "timing.json" || name == "decisions.csv" {
			continue // wall-clock
		}
		if !bytes.Equal(f, b.Files[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	s := a.Summary
	if len(s.LLMServices) != 3 {
		t.Fatalf("%d services reported; want 3", len(s.LLMServices))
	}
	for _, r := range s.LLMServices {
		t.Logf("%s: %s (%s)", r.Name, r.Config(), r.Why)
		for _, tr := range r.Tried {
			t.Logf("    %s", tr)
		}
		if !r.Met || r.Jobs != r.Count*r.Replicas {
			t.Errorf("%s: met %v, %d jobs for %d copies of %d replicas", r.Name, r.Met, r.Jobs, r.Count, r.Replicas)
		}
	}
	for _, line := range cluster.LLMServiceLines(&cluster.Result{LLMServices: s.LLMServices, Policies: s.Policies}) {
		t.Log(line)
	}
	for _, p := range s.Policies {
		t.Logf("%s: %.4g GPU-hours", p.Name, p.GPUHours)
		if len(p.LLMServices) != 3 {
			t.Errorf("%s: %d services; want 3", p.Name, len(p.LLMServices))
		}
	}
	js, _ := json.Marshal(s)
	if !strings.Contains(string(js), `"llm_services"`) {
		t.Error("summary.json has no llm_services")
	}
}

// A service no configuration serves is reported as left out, with no
// jobs, and the run goes on; the console says so.
func TestClusterServiceLeftOut(t *testing.T) {
	sc := loadBuiltin(t, "llm/cluster-services", "cluster.llm_services[2].slo.ttft=1ms", "cluster.policies=[first-fit]")
	out, err := sim.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Summary.LLMServices[2]
	if r.Met || r.Jobs != 0 || !strings.Contains(r.LeftOut, "left out") {
		t.Errorf("big with ttft 1ms: met %v, jobs %d, left_out %q; want left out", r.Met, r.Jobs, r.LeftOut)
	}
	lines := strings.Join(cluster.LLMServiceLines(&cluster.Result{LLMServices: out.Summary.LLMServices, Policies: out.Summary.Policies}), "\n")
	if !strings.Contains(lines, "WARNING: 1 of 3 llm services left out") {
		t.Errorf("console lines do not count the service left out:\n%s", lines)
	}
	if got := out.Summary.Policies[0].LLMServices[2].Replicas; got != 0 {
		t.Errorf("left-out service has %v replicas in the replay; want 0", got)
	}
}

// Bad service inputs are errors naming the key.
func TestClusterServiceConfigErrors(t *testing.T) {
	h100, _ := gpu.Lookup("h100-80gb")
	svc := cluster.LLMService{Name: "x", Model: "llama-3.1-8b", Seeds: 1, TP: []int{1}, MaxGPUs: 8}
	base, err := ServiceConfig(svc, []gpu.Spec{h100})
	if err == nil {
		t.Fatalf("a service with no workload rate and SLO passed: %+v", base)
	}
	if !strings.Contains(err.Error(), "workload") && !strings.Contains(err.Error(), "slo") {
		t.Errorf("error %q names neither workload nor slo", err)
	}
}

// Bad inputs in a scenario file are refused by the loader at their keys.
func TestClusterServiceScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"cluster.llm_services[0].model=llama-9", "cluster.llm_services[0].model"},
		{"cluster.llm_services[1].workload.rate=0/s", "cluster.llm_services[1].workload.rate"},
		{"cluster.llm_services[0].mig=[3g.20gb]", "cluster.llm_services[0].mig[0]"},
		{"cluster.llm_services[2].arrival=2562047h", "cluster.llm_services[2].duration"},
	} {
		var sc scenarios.Scenario
		err := scenarios.Load("llm/cluster-services", []string{tc.set}, nil, &sc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v; want an error naming %s", tc.set, err, tc.want)
		} else {
			t.Logf("--set %s: %v", tc.set, err)
		}
	}
	// Lengths the llm section refuses are refused naming the service.
	sc := loadBuiltin(t, "llm/cluster-services", "cluster.llm_services[0].workload.prompt={kind: fixed, mean: 0, sigma: 0}")
	_, err := sim.Run(sc)
	if err == nil || !strings.Contains(err.Error(), "llm_services[0]") || !strings.Contains(err.Error(), "workload.prompt") {
		t.Errorf("prompt of 0 tokens: %v; want an error naming llm_services[0] and workload.prompt", err)
	} else {
		t.Log(err)
	}
}

package llmcap

// The cluster's LLM services (cluster.llm_services): the configuration
// search for one service, which sim/cluster cannot run itself (this
// package imports it), handed to it through sim.ClusterEnv.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
)

// Every program that links the search (the CLI does) resolves the
// cluster's LLM services in sim.Run and sim.Check; one that does not is
// told so by sim/cluster, never left with the services ignored.
func init() { sim.ClusterEnv.LLMServices = ClusterService }

// ServiceConfig is the llm section one service's probes run: the llm
// section's defaults (the same tags a scenario's llm section starts from)
// with the service's model, SLO, synthetic workload and seeds, on the
// first of types, TP 1, one replica. An error names the service's key.
func ServiceConfig(svc cluster.LLMService, types []gpu.Spec) (llmserve.Config, error) {
	var sc scenarios.Scenario
	if err := scenarios.Decode(scenarios.Input{File: "llm defaults", Data: []byte("name: llm-service\nllm: {}\n")}, &sc); err != nil {
		return llmserve.Config{}, err
	}
	cfg := *sc.LLM
	cfg.Model, cfg.SLO, cfg.Seeds = svc.Model, svc.SLO, svc.Seeds
	cfg.Workload.Source, cfg.Workload.Synthetic = llmserve.SourceSynthetic, svc.Workload
	if len(types) > 0 {
		cfg.GPU = types[0].Name
	}
	cfg.TP, cfg.Replicas, cfg.GPUs, cfg.MIG = 1, 1, 0, ""
	// Only the service's own keys can be wrong here: a model that does
	// not fit the first GPU at tp 1 is a row of the search, not an error.
	var bad []string
	for _, e := range unjoin(cfg.Validate()) {
		var fe *units.FieldError
		if errors.As(e, &fe) && (fe.Field == "model" || fe.Field == "seeds" || strings.HasPrefix(fe.Field, "slo") || strings.HasPrefix(fe.Field, "workload")) {
			field := strings.Replace(fe.Field, "workload.synthetic", "workload", 1)
			bad = append(bad, fmt.Sprintf("%s: %s", field, fe.Msg))
		}
	}
	if len(bad) > 0 {
		return cfg, &cluster.InputError{Err: errors.New(strings.Join(bad, "; "))}
	}
	return cfg, nil
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// ClusterService finds the cheapest configuration of svc on types
// (SearchConfigs at the service's rate: every type at each of svc.TP and
// each of svc.MIG the type has, at most svc.MaxGPUs GPUs), seeded with
// seed. Replicas 0: none meets the SLO; Tried lists every row either way.
func ClusterService(svc cluster.LLMService, types []gpu.Spec, seed uint64) (cluster.LLMChoice, error) {
	cfg, err := ServiceConfig(svc, types)
	if err != nil {
		return cluster.LLMChoice{}, err
	}
	rate := float64(svc.Workload.Rate)
	var tables []RateTable
	for _, g := range types {
		// Each type with the profiles it has: a profile it lacks is no
		// configuration of the cluster's.
		var profs []string
		for _, p := range svc.MIG {
			if _, err := g.Profile(p); err == nil {
				profs = append(profs, p)
			}
		}
		t, err := SearchConfigs(cfg, seed, Space{GPUs: []gpu.Spec{g}, TPs: svc.TP, Rates: []float64{rate}, MaxGPUs: svc.MaxGPUs, MIG: profs}, rate, nil)
		if err != nil {
			return cluster.LLMChoice{}, err
		}
		tables = append(tables, t...)
	}
	var rows []ConfigRow
	for _, t := range tables {
		rows = append(rows, t.Rows...)
	}
	sortRows(rows)
	ch := cluster.LLMChoice{}
	for _, r := range rows {
		ch.Tried = append(ch.Tried, rowText(r))
	}
	if len(rows) > 0 && rows[0].Replicas > 0 {
		b := rows[0]
		ch.GPU, ch.MIG, ch.Share, ch.TP, ch.Replicas = b.GPU, b.MIG, b.share(), b.TP, b.Replicas
		ch.PricePerHour, ch.PriceBasis = b.Cost(), b.PriceBasis
		if b.Summary != nil {
			ch.Attainment = b.Summary.Result.SLOAttainment.Mean
		}
	}
	return ch, nil
}

// rowText is one row of the search in words.
func rowText(r ConfigRow) string {
	what := fmt.Sprintf("%s tp %d", r.GPU, r.TP)
	if r.MIG != "" {
		what = fmt.Sprintf("%s %s", r.GPU, r.MIG)
	}
	if r.Replicas == 0 {
		return what + ": " + r.Note
	}
	s := fmt.Sprintf("%d x %s: %.3g GPUs", r.Replicas, what, r.GPUs())
	if r.PricePerHour > 0 {
		s += fmt.Sprintf(", %.2f $/h", r.Cost())
	}
	if r.Summary != nil {
		s += fmt.Sprintf(", attainment %.3f", r.Summary.Result.SLOAttainment.Mean)
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

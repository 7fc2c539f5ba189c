package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/conspirator-sim/conspirator/sim/training"
)

// explain's text of background_load has no stray symbol: it once read
// "background CPU load u, 0% to below 100%", u a formula's name the
// reader never met. Neither it nor the keys whose formulas used u name
// it now.
func TestExplainNoStrayToken(t *testing.T) {
	stray := regexp.MustCompile(`(^|[\s*(])u([\s,.;:)*]|$)`)
	for _, key := range []string{"datapath.host.background_load", "datapath.host.background_model", "datapath.host.interference"} {
		code, out, stderr := cli(t, nil, "explain", key)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", key, code, stderr)
		}
		if doc := strings.SplitN(out, "\n", 3)[1]; stray.MatchString(doc) {
			t.Errorf("%s: a stray u in %q", key, doc)
		}
	}
	_, out, _ := cli(t, nil, "explain", "datapath.host.background_load")
	if !strings.Contains(out, "  background CPU load, 0% to below 100%: the share of each core's time that other work takes\n") {
		t.Errorf("explain background_load:\n%s", out)
	}
}

// A run of several seeds says so in its first line ("seeds 1-10 (means
// over 10 seeds)", not "seed 1"); with 2 seeds the console says, beside
// the ± it prints, that the CI is not meaningful (t of 1 degree of
// freedom); the training headline names the best policy and the
// baseline, esa beside it.
func TestPrintSeedsAndBest(t *testing.T) {
	ci := func(v float64) *float64 { return &v }
	tr := func(seeds int) *sim.Summary {
		s := &sim.Summary{Scenario: "paper/ina", Seed: 1, Version: "v"}
		s.Training = &sim.TrainingSummary{Baseline: "atp", Jobs: 48}
		for _, p := range []struct {
			name string
			x    float64
		}{{"static", 1.418}, {"atp", 0}, {"esa", 1.198}, {"none", 1.374}} {
			pr := training.PolicyResult{Name: p.name, Seeds: seeds, JCTCI: ci(3)}
			if p.x > 0 {
				pr.Speedup = &training.Speedup{Baseline: "atp", X: p.x, CI95: ci(0.2)}
			}
			s.Training.Policies = append(s.Training.Policies, pr)
		}
		return s
	}
	const caveat = "(2 seeds: CI not meaningful"
	var b bytes.Buffer
	printSummary(&b, tr(10), nil)
	out := b.String()
	if !strings.HasPrefix(out, "scenario paper/ina, seeds 1-10 (means over 10 seeds), ") || strings.Contains(out, caveat) {
		t.Errorf("10 seeds:\n%s", out)
	}
	if !strings.Contains(out, "\nbest mean JCT: static, 1.42x ± 0.20 faster than atp (the baseline); esa 1.20x ± 0.20 (ESA: up to 1.35x over ATP-style sharing)\n") {
		t.Errorf("no best-policy headline:\n%s", out)
	}
	b.Reset()
	printSummary(&b, tr(2), nil)
	if n := strings.Count(b.String(), caveat); n != 2 { // the means line and the headline
		t.Errorf("2 seeds: the caveat %d times, want 2:\n%s", n, b.String())
	}
	// A cluster run of 2 seeds too.
	c := &sim.Summary{Scenario: "paper/gpu-hours", Seed: 1}
	c.Policies = []cluster.PolicyResult{{Name: "naive-share", Seeds: 2}, {Name: "conspirator", Seeds: 2}}
	b.Reset()
	printSummary(&b, c, nil)
	if !strings.Contains(b.String(), "means over 2 seeds (1 .. 2;") || !strings.Contains(b.String(), caveat) ||
		!strings.HasPrefix(b.String(), "scenario paper/gpu-hours, seeds 1-2 (means over 2 seeds), ") {
		t.Errorf("cluster run of 2 seeds:\n%s", b.String())
	}
}

// The cost table's header says what each efficiency is normalised to.
func TestPrintCostHeader(t *testing.T) {
	rows, err := datapath.CostTable(datapath.PaperCostRows())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printSummary(&b, &sim.Summary{Scenario: "paper/cost", Seed: 1, Cost: rows, CostSource: "scenario"}, nil)
	if !strings.Contains(b.String(), "cost-effectiveness (per $, host = 1)  power efficiency (throughput per W)") ||
		!strings.Contains(b.String(), "1.25 (+0%)") || !strings.Contains(b.String(), "1.80 (+44%)") {
		t.Errorf("cost table:\n%s", b.String())
	}
}

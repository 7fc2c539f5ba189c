package llmcap

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
)

// small is a synthetic section that runs in a fraction of a second: 300
// requests of Llama-3.1-8B on one A100, two seeds.
func small(t *testing.T, sets ...string) llmserve.Config {
	t.Helper()
	var sc scenarios.Scenario
	yaml := "name: small\nllm:\n  model: llama-3.1-8b\n  gpu: a100-80gb\n  seeds: 2\n  workload:\n    synthetic:\n      requests: 300\n      rate: 4/s\n"
	if err := scenarios.Decode(scenarios.Input{File: "small.yaml", Data: []byte(yaml), Overrides: sets}, &sc); err != nil {
		t.Fatal(err)
	}
	return *sc.LLM
}

// The rate search ends with Lo meeting and Hi missing the SLO within the
// tolerance, each probe seen once, Lo the highest meeting probe and Hi
// the lowest missing one.
func TestSearchRateBrackets(t *testing.T) {
	cfg := small(t)
	var seen []Probe
	res, err := SearchRate(cfg, 1, 0.1, func(p Probe) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Bracketed || res.Lo == nil || res.Hi == nil {
		t.Fatalf("outcome %q (lo %v, hi %v); want bracketed", res.Outcome, res.Lo, res.Hi)
	}
	if !res.Lo.Meets || res.Hi.Meets {
		t.Errorf("lo meets %v, hi meets %v; want true, false", res.Lo.Meets, res.Hi.Meets)
	}
	if r := res.Hi.Factor / res.Lo.Factor; r <= 1 || r > 1.1+1e-12 {
		t.Errorf("hi/lo = %v; want in (1, 1.1]", r)
	}
	if len(seen) != len(res.Probes) {
		t.Errorf("OnProbe saw %d probes, the result holds %d", len(seen), len(res.Probes))
	}
	for _, p := range res.Probes {
		if p.Meets != (p.Summary.Result.SLOAttainment.Mean >= cfg.SLO.Quantile && p.Summary.Result.Rejected.Mean == 0) {
			t.Errorf("probe %s: Meets %v disagrees with its attainment %v", p.Label, p.Meets, p.Summary.Result.SLOAttainment.Mean)
		}
		if p.Meets && p.Factor > res.Lo.Factor && res.NotMonotone == "" {
			t.Errorf("probe at %v meets above lo %v but no monotonicity warning", p.Factor, res.Lo.Factor)
		}
		if !p.Meets && p.Factor < res.Hi.Factor && res.NotMonotone == "" {
			t.Errorf("probe at %v misses below hi %v but no monotonicity warning", p.Factor, res.Hi.Factor)
		}
	}
	// Deterministic: the same search gives the same probes.
	again, err := SearchRate(cfg, 1, 0.1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(factors(res.Probes), factors(again.Probes)) {
		t.Errorf("probes differ between two searches: %v and %v", factors(res.Probes), factors(again.Probes))
	}
}

func factors(ps []Probe) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Factor
	}
	return out
}

// An SLO no load can meet ends in two probes (factor 1, then
// 1/MaxLoadFactor); one every load meets ends at MaxLoadFactor, doubling
// from 1: 1 + log2(MaxLoadFactor) probes.
func TestSearchRateEnds(t *testing.T) {
	none, err := SearchRate(small(t, "llm.slo.tpot=1us"), 1, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	if none.Outcome != None || len(none.Probes) != 2 || none.Hi.Factor != 1.0/MaxLoadFactor {
		t.Errorf("tpot 1us: outcome %q after %d probes (hi %v); want none after 2 at 1/%d", none.Outcome, len(none.Probes), none.Hi, MaxLoadFactor)
	}
	cfg := small(t, "llm.slo.ttft=100000s", "llm.slo.tpot=100000s", "llm.workload.synthetic.requests=20")
	above, err := SearchRate(cfg, 1, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + int(math.Log2(MaxLoadFactor))
	if above.Outcome != Above || len(above.Probes) != want || above.Lo.Factor != MaxLoadFactor {
		t.Errorf("loose SLO: outcome %q after %d probes (lo %v); want above after %d at %d", above.Outcome, len(above.Probes), above.Lo, want, MaxLoadFactor)
	}
	if _, err := SearchRate(small(t), 1, 0, nil); err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Errorf("tolerance 0: err %v; want one naming the tolerance", err)
	}
}

// The configuration search: the fewest replicas meeting the SLO per GPU
// type and TP, sorted by cost; one replica more than the answer meets
// (the search's premise) and one fewer misses; a TP above the GPUs
// allowed and a cap too small for the load are rows saying so.
func TestSearchConfigs(t *testing.T) {
	cfg := small(t)
	a100, _ := gpu.Lookup("a100-80gb")
	h100, _ := gpu.Lookup("h100-80gb")
	ts, err := SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{a100, h100}, TPs: []int{1, 2}, Rates: []float64{16}, MaxGPUs: 16}, float64(cfg.Workload.Synthetic.Rate), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || len(ts[0].Rows) != 4 {
		t.Fatalf("%d tables; want 1 of 4 rows", len(ts))
	}
	tb := ts[0]
	if tb.Factor != 4 {
		t.Errorf("factor %v; want 16/4 = 4", tb.Factor)
	}
	for i, r := range tb.Rows {
		if r.Replicas == 0 {
			t.Fatalf("row %d (%s tp %d): none (%s); every one should meet 16/s within 16 GPUs", i, r.GPU, r.TP, r.Note)
		}
		if i > 0 && tb.Rows[i-1].Cost() > r.Cost() {
			t.Errorf("rows not sorted by cost: %v before %v", tb.Rows[i-1].Cost(), r.Cost())
		}
		if want := float64(r.Replicas*r.TP) * r.PricePerHour; r.Cost() != want {
			t.Errorf("cost %v; want replicas x tp x price %v", r.Cost(), want)
		}
		c := NewKnob(cfg).At(cfg, tb.Factor)
		c.GPU, c.TP, c.GPUs = r.GPU, r.TP, 0
		if r.Replicas > 1 {
			c.Replicas = r.Replicas - 1
			p, err := run(c, 1, "", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Meets {
				t.Errorf("%s tp %d: %d replicas meet the SLO too; the search said %d is the fewest", r.GPU, r.TP, r.Replicas-1, r.Replicas)
			}
		}
	}
	if c, ok := tb.Cheapest(); !ok || c != tb.Rows[0] {
		t.Errorf("cheapest %v, %v; want the first row", c, ok)
	}
	ts, err = SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{a100}, TPs: []int{2}, Rates: []float64{4000}, MaxGPUs: 1}, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts[0].Rows[0]; r.Replicas != 0 || !strings.Contains(r.Note, "above the 1 GPUs") {
		t.Errorf("tp 2 with 1 GPU allowed: %d replicas, note %q; want none, saying tp is above the GPUs", r.Replicas, r.Note)
	}
	ts, err = SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{a100}, TPs: []int{1}, Rates: []float64{4000}, MaxGPUs: 2}, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts[0].Rows[0]; r.Replicas != 0 || !strings.Contains(r.Note, "none within 2 GPUs") {
		t.Errorf("4000/s on at most 2 A100s: %d replicas, note %q; want none within 2 GPUs", r.Replicas, r.Note)
	}
	if _, err := SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{a100}, TPs: []int{1}, Rates: []float64{-1}, MaxGPUs: 2}, 4, nil); err == nil {
		t.Error("rate -1: no error")
	}
}

// MIG profiles are searched beside whole GPUs: a slice is charged its
// larger share of the compute and memory slices (an H100's 3g.40gb:
// max(3/7, 4/8) = 1/2),
// a profile the GPU lacks is a row saying so, and one too small for the
// model's weights a row saying it does not fit.
func TestSearchConfigsMIG(t *testing.T) {
	cfg := small(t)
	h100, _ := gpu.Lookup("h100-80gb")
	ts, err := SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{h100}, TPs: []int{1}, Rates: []float64{2}, MaxGPUs: 4, MIG: []string{"3g.40gb", "1g.10gb", "3g.71gb"}}, float64(cfg.Workload.Synthetic.Rate), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]ConfigRow{}
	for _, r := range ts[0].Rows {
		rows[r.MIG] = r
	}
	half := rows["3g.40gb"]
	if half.Share != 0.5 || half.Replicas < 1 || half.GPUs() != 0.5*float64(half.Replicas) || half.Cost() != half.GPUs()*h100.PricePerHour {
		t.Errorf("3g.40gb: share %v, %d replicas, %v GPUs, $%v; want 1/2 of a GPU each, priced so", half.Share, half.Replicas, half.GPUs(), half.Cost())
	}
	if r := rows["1g.10gb"]; r.Replicas != 0 || !strings.Contains(r.Note, "does not fit") {
		t.Errorf("1g.10gb (10 GB for 16 GB of weights): %d replicas, note %q; want a row saying it does not fit", r.Replicas, r.Note)
	}
	if r := rows["3g.71gb"]; r.Replicas != 0 || !strings.Contains(r.Note, "no such slice") {
		t.Errorf("3g.71gb on an H100-80GB: %d replicas, note %q; want no such slice", r.Replicas, r.Note)
	}
	if whole := rows[""]; whole.Share != 0 || whole.GPUs() != float64(whole.Replicas) {
		t.Errorf("whole GPUs: share %v, GPUs %v for %d replicas", whole.Share, whole.GPUs(), whole.Replicas)
	}
}

// A disaggregated run does not read llm.gpu, tp or replicas, which the
// configuration search varies: every row would be the same pools under
// another name, so the search refuses it, naming the key.
func TestSearchConfigsRefusesDisagg(t *testing.T) {
	cfg := small(t)
	cfg.Disagg.Enabled = true
	h100, _ := gpu.Lookup("h100-80gb")
	_, err := SearchConfigs(cfg, 1, Space{GPUs: []gpu.Spec{h100}, TPs: []int{1}, Rates: []float64{4}, MaxGPUs: 4}, float64(cfg.Workload.Synthetic.Rate), nil)
	if err == nil || !strings.Contains(err.Error(), "disagg.enabled") {
		t.Errorf("disaggregated search: %v, want an error naming disagg.enabled", err)
	}
}

package main

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/llm"
)

const dsGood = `{"facebook/opt-13b": {"2": {"decoding_large_small_bs_threshold": 95,
 "prefill": [10, 0.1, 1e-5], "decoding_smallbs": [20, 0.001, 0.05], "decoding_largebs": [1, 2, 3]}},
 "facebook/opt-7b": {"1": {"decoding_large_small_bs_threshold": 95,
 "prefill": [1, 1, 1], "decoding_smallbs": [1, 1, 1], "decoding_largebs": [1, 1, 1]}}}`

// A DistServe surface is read as its estimator evaluates it (milliseconds,
// decode below the threshold on the small-batch set); a model the bench
// cannot build is kept and marked, not dropped silently.
func TestReadDistServe(t *testing.T) {
	cs, err := readDistServe(strings.NewReader(dsGood), "good.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].model != "facebook/opt-13b" || cs[0].tp != 2 || cs[1].model != "facebook/opt-7b" {
		t.Fatalf("entries %+v, want opt-13b TP 2 then opt-7b", cs)
	}
	if cs[0].m == nil || cs[0].m.Layers != 40 || cs[1].m != nil {
		t.Fatalf("models: opt-13b %v, opt-7b %v; want the catalog's 40-layer opt-13b and nil", cs[0].m, cs[1].m)
	}
	// Prefill of 4 prompts of 512: 10 + 0.1 x 2048 + 1e-5 x 4 x 512^2 =
	// 10 + 204.8 + 10.48576 ms.
	if got, want := cs[0].surface("prefill", 4, 512), 225.28576e-3; math.Abs(got-want) > 1e-12 {
		t.Errorf("prefill surface %.9f s, want %.9f", got, want)
	}
	// Decode of 8 at context 256: 20 + 0.001 x 2048 + 0.05 x 8 = 22.448 ms;
	// of 95 (the threshold) on the large-batch set: 1 + 2 x 95 x 256 + 3 x
	// 95 = 48,926 ms.
	if got, want := cs[0].surface("decode", 8, 256), 22.448e-3; math.Abs(got-want) > 1e-12 {
		t.Errorf("decode surface %.9f s, want %.9f", got, want)
	}
	if got, want := cs[0].surface("decode", 95, 256), 48.926; math.Abs(got-want) > 1e-9 {
		t.Errorf("large-batch decode surface %.9f s, want %.9f", got, want)
	}
}

func TestReadDistServeRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"two coefficients", `{"facebook/opt-13b": {"1": {"decoding_large_small_bs_threshold": 95, "prefill": [1, 2], "decoding_smallbs": [1, 1, 1], "decoding_largebs": [1, 1, 1]}}}`, "prefill has 2 coefficients"},
		{"TP not a number", `{"facebook/opt-13b": {"x": {"decoding_large_small_bs_threshold": 95, "prefill": [1, 1, 1], "decoding_smallbs": [1, 1, 1], "decoding_largebs": [1, 1, 1]}}}`, `TP "x"`},
		{"TP 16", `{"facebook/opt-13b": {"16": {"decoding_large_small_bs_threshold": 95, "prefill": [1, 1, 1], "decoding_smallbs": [1, 1, 1], "decoding_largebs": [1, 1, 1]}}}`, `TP "16"`},
		{"threshold zero", `{"facebook/opt-13b": {"1": {"decoding_large_small_bs_threshold": 0, "prefill": [1, 1, 1], "decoding_smallbs": [1, 1, 1], "decoding_largebs": [1, 1, 1]}}}`, "threshold 0"},
		{"unknown key", `{"facebook/opt-13b": {"1": {"decoding_large_small_bs_threshold": 95, "prefil": [1, 1, 1]}}}`, "unknown field"},
		{"empty", `{}`, "no model"},
		{"not JSON", `model,tp`, "bad.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readDistServe(strings.NewReader(tc.in), "bad.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The host fit recovers a host term it was given: points timed as
// max(GPU, host) under PerLayer 500 us and PerSequence 200 us fit back to
// those values (both on the 2.5 us grid) with zero loss.
func TestFitHostPointsRecovers(t *testing.T) {
	want := llm.HostDispatch{PerLayer: 500e-6, PerSequence: 200e-6}
	var ps []hostPoint
	for _, seqs := range []int{1, 4, 16, 64} {
		for _, gpu := range []float64{5e-3, 30e-3} {
			ps = append(ps, hostPoint{gpu: gpu, meas: math.Max(gpu, want.Seconds(40, seqs, false)), layers: 40, seqs: seqs})
		}
	}
	got, loss := fitHostPoints(ps)
	if math.Abs(got.PerLayer-want.PerLayer) > 1e-9 || math.Abs(got.PerSequence-want.PerSequence) > 1e-9 || loss > 1e-12 {
		t.Fatalf("fit %+v (loss %g), want %+v and 0", got, loss, want)
	}
}

package calib

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// deviceCheck is realhw/cuda/device-check.sh's output on a real H200
// (2026-11-27), committed as fixtures.
var deviceCheck = filepath.Join("..", "data", "h200-2026-11-27", "device-check")

// The validation the H200 ran (calibrate --backend cuda --validate,
// validation.json: quantiles only, the held-out samples are not kept),
// re-judged with the pageable D2H factor fitted since.
//
// First, the model here, with the device's profile as written (no D2H
// factor: it takes pageable_factor, 24.3%), gives every model_us of
// validation.json: the test judges with the model the device did.
//
// Then with the D2H factor fitted from the device's cuda.csv (20.1%; its
// pinned/pageable D2H time ratios at 1-256 MiB are 0.206, 0.202, 0.201,
// 0.199, 0.201), a pageable D2H copy of n bytes costs
// 9.745 us + n / (56.35 GB/s x 0.201) = 9.745 us + n / 11.326 GB/s:
//
//	size     real p50 us  model us   p50 error
//	8 KiB       11.072     10.469     -5.45%   met (was -6.6%)
//	32 KiB      14.272     12.639    -11.44%   missed (was -14.9%)
//	128 KiB     24.864     21.318    -14.26%   missed (was -22.3%)
//	512 KiB     72.672     56.035    -22.89%   missed (was -33.9%)
//	2 MiB      231.616    194.902    -15.85%   missed (was -29.7%)
//	8 MiB      807.008    750.373     -7.02%   met (was -22.9%)
//	32 MiB    3116.03    2972.256     -4.61%   met (was -21.1%)
//	128 MiB  11682.5    11859.788     +1.52%   met (was -16.0%)
//
// (the model rounds each copy up to the nanosecond.)
// Every d2h-pageable cell moves toward the real time, and those at 8 MiB
// and above meet the target; 32 KiB to 2 MiB still miss, by less: the
// real copy there is slower than any one line of fixed cost and rate
// allows (to be within 10%, 512 KiB needs a rate of at most 9.4 GB/s and
// 128 MiB one of at least 10.5 GB/s). Every other cell is unchanged.
func TestDeviceCheckD2HFactor(t *testing.T) {
	p, err := LoadProfile(filepath.Join(deviceCheck, "calibrate-cuda", "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(deviceCheck, "calibrate-cuda", "validation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v CUDAValidation
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Stages) != 33 || v.Missed != 9 {
		t.Fatalf("validation.json: %d cells, %d missed; want 33 and 9", len(v.Stages), v.Missed)
	}
	const d2h = "datapath.host.pageable_d2h_factor"
	if _, ok := p.Scenario[d2h]; ok {
		t.Fatalf("the device's profile already has %s", d2h)
	}
	model, vals, err := cudaModel(p)
	if err != nil {
		t.Fatal(err)
	}
	if vals[d2h] != "24.3%" {
		t.Errorf("unset %s taken as %q, want pageable_factor's 24.3%%", d2h, vals[d2h])
	}
	for _, s := range v.Stages {
		m, ok := model(s.Stage, s.Bytes)
		if mus := m.Seconds() * 1e6; !ok || math.Abs(mus-s.ModelUS) > 1e-5*s.ModelUS {
			t.Errorf("%s at %d B: model %.3f us here, %.3f us on the device", s.Stage, s.Bytes, mus, s.ModelUS)
		}
	}

	// The D2H factor as calibrate --import fits it from cuda.csv.
	f, err := os.Open(filepath.Join(deviceCheck, "cuda.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, err := ParseCSV(f, "cuda.csv")
	if err != nil {
		t.Fatal(err)
	}
	fitted := FromSamples(samples)
	factor, ok := fitted.Scenario[d2h]
	if !ok || factor != "20.1%" {
		t.Fatalf("%s fitted from cuda.csv: %v, want 20.1%%", d2h, factor)
	}
	p.Scenario[d2h] = factor
	model, _, err = cudaModel(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]float64{8 << 10: -0.0545, 32 << 10: -0.1144, 128 << 10: -0.1426, 512 << 10: -0.2289, 2 << 20: -0.1585, 8 << 20: -0.0702, 32 << 20: -0.0461, 128 << 20: 0.0152}
	missed := 0
	for _, s := range v.Stages {
		m, _ := model(s.Stage, s.Bytes)
		mus := m.Seconds() * 1e6
		e := (mus - s.RealP50US) / s.RealP50US
		met := math.Abs(e) <= v.P50Target
		if !met {
			missed++
		}
		cell := fmt.Sprintf("%s at %d B", s.Stage, s.Bytes)
		if s.Stage != "cuda-d2h-pageable" {
			if math.Abs(mus-s.ModelUS) > 1e-5*s.ModelUS || met != s.Met {
				t.Errorf("%s moved: model %.3f us (was %.3f), met %v (was %v)", cell, mus, s.ModelUS, met, s.Met)
			}
			continue
		}
		if w, ok := want[s.Bytes]; !ok || math.Abs(e-w) > 0.00005 {
			t.Errorf("%s: p50 error %+.2f%%, want %+.2f%% (real %.3f us, model %.3f us)", cell, 100*e, 100*w, s.RealP50US, mus)
		}
		if math.Abs(e) >= math.Abs(s.P50Error) {
			t.Errorf("%s: error %+.1f%%, no better than the device's %+.1f%%", cell, 100*e, 100*s.P50Error)
		}
		if s.Bytes >= 8<<20 && !met {
			t.Errorf("%s: %+.1f%% misses the target", cell, 100*e)
		}
	}
	// 4 d2h-pageable cells (32 KiB-2 MiB) and 2 h2d-pageable ones (32 KiB,
	// 128 MiB) still miss, of 9.
	if missed != 6 {
		t.Errorf("%d cells miss with the D2H factor, want 6", missed)
	}
}

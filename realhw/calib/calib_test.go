package calib

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/realhw/host"
	"gonum.org/v1/gonum/stat"
)

// synthetic returns samples of latency = fixed + n/bw exactly, reps per size.
func synthetic(stage string, fixed, bw float64, sizes []int64, load float64) []realhw.Sample {
	var out []realhw.Sample
	for _, n := range sizes {
		for range 3 {
			out = append(out, realhw.Sample{Stage: stage, Bytes: n, Latency: engine.Seconds(fixed + float64(n)/bw), BackgroundLoad: load})
		}
	}
	return out
}

// Exact linear data: the fit returns the generating parameters, R^2 = 1
// and near-zero residuals. The samples are rounded to the nanosecond, which
// is a relative error of up to 3.4e-4 at the smallest size (0.5 ns of
// 1.46 us); the relative weights pass that on, so the bandwidth is
// recovered to 5e-4 and each residual is below 5e-4 of its latency.
func TestFitRecoversParameters(t *testing.T) {
	cases := []struct {
		fixed, bw float64
	}{
		{1.3e-6, 25e9},  // RDMA-class: 1.3 us + 25 GB/s
		{10e-6, 12.5e9}, // cudaMemcpy-class: 10 us + 12.5 GB/s
		{200e-9, 100e9}, // memcpy-class
	}
	sizes := []int64{4096, 65536, 1 << 20, 8 << 20}
	for _, c := range cases {
		f := FitLinear("s", synthetic("s", c.fixed, c.bw, sizes, 0))
		if !f.Applied || math.Abs(f.Fixed-c.fixed) > 2e-9 || math.Abs(f.Bandwidth()-c.bw)/c.bw > 5e-4 || f.RSquared < 0.99999 {
			t.Errorf("fixed %v bw %v: got fixed %v bw %v R2 %v applied %v (%s)", c.fixed, c.bw, f.Fixed, f.Bandwidth(), f.RSquared, f.Applied, f.Reason)
		}
		for i, r := range f.Residuals {
			if math.Abs(r) > 5e-4*f.Medians[i] {
				t.Errorf("residual %v at %d B (median %v)", r, f.Sizes[i], f.Medians[i])
			}
		}
	}
}

func TestPoorFitFlagged(t *testing.T) {
	sizes := []int64{1000, 2000, 3000, 4000}
	// Latencies 1, 10, 1, 10 us: no line fits. By hand, with the weights
	// 1/y^2 = 1, 0.01, 1, 0.01: weighted means x 2009.9 B, y 1.0891 us;
	// Sxy = 178.2 us*B, Sxx = 2.0398e6 B^2, slope 8.74e-5 us/B, so the
	// line is 0.913 + 8.74e-5 x us: at 2000 B it gives 1.09 us for the
	// measured 10 (89% off, the worst); SSreg = 0.01557, SStot = 1.6039:
	// R^2 = 0.0097.
	var zig []realhw.Sample
	for i, n := range sizes {
		us := 1.0
		if i%2 == 1 {
			us = 10
		}
		zig = append(zig, realhw.Sample{Stage: "z", Bytes: n, Latency: engine.Microseconds(us)})
	}
	cases := []struct {
		name    string
		samples []realhw.Sample
		reason  string
	}{
		{"two sizes", synthetic("s", 1e-6, 1e9, []int64{10, 20}, 0), "too few points: 2 sizes"},
		{"one size", synthetic("s", 1e-6, 1e9, []int64{10}, 0), "too few points: 1 size"},
		{"zigzag", zig, "poor fit: the line misses the 2000 B median (1e-05 s) by 89%, more than 25% (R-squared 0.010)"},
		{"flat", synthetic("s", 1e-6, math.Inf(1), sizes, 0), "does not grow with size"},
		{"no samples", nil, "no samples"},
	}
	for _, c := range cases {
		f := FitLinear("s", c.samples)
		if f.Applied || !strings.Contains(f.Reason, c.reason) {
			t.Errorf("%s: applied %v reason %q, want %q", c.name, f.Applied, f.Reason, c.reason)
		}
	}
	// The flag reaches the YAML as applied: false with the reason.
	p := FromSamples(synthetic("s", 1e-6, 1e9, []int64{10, 20}, 0))
	var buf bytes.Buffer
	if err := p.WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "applied: false") || !strings.Contains(buf.String(), "too few points") {
		t.Errorf("profile does not flag the fit:\n%s", buf.String())
	}
}

// Slowdown: median latency at load u is (1 + 0.5u) times the unloaded one,
// so the fitted slowdown per unit load is 0.5 with R^2 = 1.
func TestLoadSlowdownFit(t *testing.T) {
	sizes := []int64{1000, 10000, 100000}
	var ss []realhw.Sample
	for _, u := range []float64{0, 0.4, 0.8} {
		stretch := 1 + 0.5*u
		ss = append(ss, synthetic("s", 2e-6*stretch, 1e9/stretch, sizes, u)...)
	}
	p := FromSamples(ss)
	lf, ok := p.Load("s")
	if !ok || !lf.Applied || math.Abs(lf.SlowdownPerLoad-0.5) > 1e-3 || lf.RSquared < 0.999 {
		t.Fatalf("load fit %+v", lf)
	}
	if got := lf.Levels[2].MedianRatio; math.Abs(got-1.4) > 1e-3 {
		t.Errorf("median ratio at 0.8 = %v, want 1.4", got)
	}
}

// Write, read back: every fit survives with its units.
func TestProfileRoundTrip(t *testing.T) {
	ss := synthetic("rdma-write", 1.3e-6, 25e9, []int64{4096, 65536, 1 << 20}, 0)
	p := FromSamples(ss)
	p.Provenance.Date = "2026-01-02"
	var buf bytes.Buffer
	if err := p.WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fixed: 1.3us", "bandwidth: 25GB/s", "date: \"2026-01-02\""} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("YAML lacks %q:\n%s", want, buf.String())
		}
	}
	q, err := ReadProfile(strings.NewReader(buf.String()), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := q.Stage("rdma-write")
	if !ok || math.Abs(f.Fixed-1.3e-6) > 1e-12 || math.Abs(f.Bandwidth()-25e9) > 1 {
		t.Errorf("read back %+v", f)
	}
	for _, bad := range []struct{ in, want string }{
		{"version: 2\n", "version 2"},
		{"version: 1\nbogus: 1\n", "field bogus not found"},
		{"version: 1\nstages:\n  - stage: a\n    fixed: 3 parsecs\n", "stages[0] (a).fixed"},
		{"", "empty"},
	} {
		if _, err := ReadProfile(strings.NewReader(bad.in), "p.yaml"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.in, err, bad.want)
		}
	}
}

func TestParseCSV(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ss, err := ParseCSV(f, "samples.csv")
	if err != nil {
		t.Fatal(err)
	}
	// 85.24 us = 85240 ns, exactly.
	if len(ss) != 4 || ss[3].Bytes != 1048576 || ss[3].Latency != 85240 || ss[0].Source != "samples.csv:4" {
		t.Fatalf("%+v", ss)
	}
	// The fixture was made as 1.35us + n/12.5GB/s (rounded to 10 ns):
	// 1048576/12.5e9 = 83.886 us, + 1.35 = 85.236 -> 85.24.
	fit := FitLinear("rdma-write", ss)
	if !fit.Applied || math.Abs(fit.Bandwidth()-12.5e9)/12.5e9 > 0.01 || math.Abs(fit.Fixed-1.35e-6) > 0.05e-6 {
		t.Errorf("fit %+v bw %v", fit, fit.Bandwidth())
	}
	for _, c := range []struct{ in, want string }{
		{"stage,bytes\n", "x.csv:1: header has 2 columns"},
		{"stage,size,latency_us\n", "x.csv:1: header column 2 is \"size\""},
		{"stage,bytes,latency_us\na,1,2,3\n", "x.csv:2: 4 fields"},
		{"stage,bytes,latency_us\na,-1,2\n", "x.csv:2: bytes"},
		{"stage,bytes,latency_us\n\na,1,NaN\n", "x.csv:3: latency_us"},
		{"stage,bytes,latency_us,background_load\na,1,2,1.5\n", "x.csv:2: background_load"},
		{"# only a comment\n", "no header"},
		{"stage,bytes,latency_us\n", "x.csv:1: no measurement under the header"},
		{"# measured on x\nstage,bytes,latency_us\n\n", "x.csv:3: no measurement under the header"},
	} {
		if _, err := ParseCSV(strings.NewReader(c.in), "x.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseCSV(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "samples.csv"))
	f.Add(string(b))
	f.Add("stage,bytes,latency_us\na,1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		ss, err := ParseCSV(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for _, s := range ss {
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		FromSamples(ss) // must not panic on anything the parser accepts
	})
}

func FuzzReadProfile(f *testing.F) {
	p := FromSamples(synthetic("s", 1e-6, 1e9, []int64{1, 2, 3}, 0))
	var buf bytes.Buffer
	p.WriteYAML(&buf)
	f.Add(buf.String())
	f.Fuzz(func(t *testing.T, in string) {
		ReadProfile(strings.NewReader(in), "fuzz") // errors are fine, panics are not
	})
}

// A tcp-e2e fit at loads 0, 0.5 and 0.9 carries delay quantiles: the data are exact lines with a constant 2 us (at 0.5)
// and 6 us (at 0.9) added, so every delay quantile is that constant. A
// profile file without them (written by an older version) is refused with
// the key's name, not read as zero delays.
func TestDelayQuantilesFromSamples(t *testing.T) {
	sizes := []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10}
	ss := synthetic(host.StageTCPE2E, 10e-6, 5e9, sizes, 0)
	for _, c := range []struct{ u, add float64 }{{0.5, 2e-6}, {0.9, 6e-6}} {
		ss = append(ss, synthetic(host.StageTCPE2E, 10e-6+c.add, 5e9, sizes, c.u)...)
	}
	p := FromSamples(ss)
	lf, ok := p.Load(host.StageTCPE2E)
	if !ok || len(lf.Levels) != 3 {
		t.Fatalf("load fit %+v, want three levels", lf)
	}
	for i, want := range []float64{0, 2, 6} {
		for _, d := range lf.Levels[i].DelayQuantiles {
			if math.Abs(d-want) > 0.01 {
				t.Fatalf("level %v: delay quantiles %v, want all %v us", lf.Levels[i].Load, lf.Levels[i].DelayQuantiles, want)
			}
		}
	}
	var buf bytes.Buffer
	if err := p.WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProfile(bytes.NewReader(buf.Bytes()), "new.yaml"); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	var old []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "delay_quantiles_us") {
			old = append(old, line)
		}
	}
	_, err := ReadProfile(strings.NewReader(strings.Join(old, "\n")), "old.yaml")
	if err == nil || !strings.Contains(err.Error(), "delay_quantiles_us") || !strings.Contains(err.Error(), "old.yaml") {
		t.Errorf("profile without delay quantiles: error %v, want one naming old.yaml and delay_quantiles_us", err)
	}
}

// A short Validate on the real host backend: three levels, the JSON shape,
// and finite errors. The error sizes are reported, not asserted: they
// depend on the machine (see the package report).
func TestValidateShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real TCP path for about a second")
	}
	// Inside `go test ./...` other packages' processes compete for the
	// cores, and a calibration whose per-size medians stop lining up is
	// refused (ErrFitNotApplied), as designed. Three refusals in a row
	// skip, saying so; CI's serial TestValidateTarget runs the full check.
	var v *Validation
	var err error
	for attempt := 1; ; attempt++ {
		v, err = Validate(Options{Short: true, Requests: 200, Sizes: []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10}})
		if !errors.Is(err, ErrFitNotApplied) {
			break
		}
		if attempt == 3 {
			t.Skipf("machine too busy to calibrate: refused three times, last: %v", err)
		}
		t.Logf("attempt %d refused (busy machine): %v", attempt, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Levels) != 3 || len(v.Samples) != 3 || v.Model != "datapath" || v.Path != "loopback" {
		t.Fatalf("levels %d samples %d model %q path %q, want 3 levels of the datapath model's loopback path", len(v.Levels), len(v.Samples), v.Model, v.Path)
	}
	t.Logf("fit: %+v", v.Fit)
	for i, l := range v.Levels {
		if math.IsNaN(l.P50Error) || math.IsNaN(l.P99Error) || l.RealP50US <= 0 {
			t.Errorf("level %+v", l)
		}
		// The default validation loads 20/40/60% are held out of the fit
		// (0% and 80%), and the model ran as many requests as the real run.
		if l.UsedForFit || len(l.Stages) != 4 || l.DominantStage == "" || len(v.Samples[i].ModelUS) != len(v.Samples[i].RealUS) {
			t.Errorf("level %v: used for fit %v, %d stages, dominant %q, %d model vs %d real latencies", l.BackgroundLoad, l.UsedForFit, len(l.Stages), l.DominantStage, len(v.Samples[i].ModelUS), len(v.Samples[i].RealUS))
		}
		t.Logf("load %.1f: p50 error %+.3f, p99 error %+.3f (real p50 %.1fus p99 %.1fus), dominant stage %s", l.BackgroundLoad, l.P50Error, l.P99Error, l.RealP50US, l.RealP99US, l.DominantStage)
	}
	if _, ok := v.Profile.Stage(host.StageTCPE2E); !ok {
		t.Error("profile lacks the e2e stage")
	}
	// Run measures the decision time too and proposes it.
	if d := v.Profile.Decision; d == nil || !d.Applied || v.Profile.Scenario["datapath.host.decision_time"] != d.HostDecisionTime {
		t.Errorf("decision block %+v, overrides %v; want an applied decision time proposed as datapath.host.decision_time", d, v.Profile.Scenario)
	} else {
		t.Logf("decision time: %+v", d.Sizes)
	}
}

// The target on the host backend, checked with the full-size run:
// |p50 error| <= 10% and |p99 error| <= 25% at the held-out loads 20%,
// 40% and 60%, the model fitted at 0% and 80%. It
// needs a machine with nothing else running, so it is skipped unless
// CONSPIRATOR_VALIDATE_TARGET=1; .ci/run sets that and runs it alone after
// the other tests. A miss is retried once with a fresh calibration, because
// one other process waking at the wrong moment moves a p99; two misses in a
// row fail.
func TestValidateTarget(t *testing.T) {
	if os.Getenv("CONSPIRATOR_VALIDATE_TARGET") != "1" {
		t.Skip("set CONSPIRATOR_VALIDATE_TARGET=1 on a quiet machine to check the p50/p99 target (.ci/run does)")
	}
	for attempt := 1; ; attempt++ {
		v, err := Validate(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Levels) != 3 || len(v.Samples) != 3 || len(v.Samples[2].RealUS) != len(v.Samples[2].ModelUS) {
			t.Fatalf("levels %d samples %d, want 3 each with as many model as real latencies", len(v.Levels), len(v.Samples))
		}
		var missed []string
		t.Logf("attempt %d, fit: %+v", attempt, v.Fit)
		for _, l := range v.Levels {
			t.Logf("attempt %d, load %.0f%%: p50 error %+.1f%%, p99 error %+.1f%% (real p50 %.1f us, p99 %.1f us; model p50 %.1f us, p99 %.1f us; generator duty %.2f; dominant stage %s)",
				attempt, 100*l.BackgroundLoad, 100*l.P50Error, 100*l.P99Error, l.RealP50US, l.RealP99US, l.ModelP50US, l.ModelP99US, l.MeasuredLoad, l.DominantStage)
			if !l.Met() {
				missed = append(missed, fmt.Sprintf("%.0f%% (%s)", 100*l.BackgroundLoad, l.DominantStage))
			}
		}
		if len(missed) == 0 {
			return
		}
		if attempt == 2 {
			t.Fatalf("target (|p50| <= 10%%, |p99| <= 25%%) missed at loads %v on two runs in a row", missed)
		}
		t.Logf("target missed at %v; retrying once", missed)
	}
}

// A profile of the wrong shape is refused with the file, the line, what
// was found and what belongs there, never yaml.v3's Go type names.
func TestReadProfileTypeErrors(t *testing.T) {
	head := "version: 1\nprovenance:\n  tool: x\n  machine: {}\n  samples: {}\n"
	for _, c := range []struct {
		text string
		want []string
	}{
		{head + "stages: abc\n", []string{"p.yaml:6:", `"abc" (text)`, "a list of stage fits"}},
		{"version: one\n", []string{"p.yaml:1:", `"one" (text)`, "an integer"}},
		{head + "stages:\n  - stage: net\n    samples: many\n", []string{"p.yaml:8:", `"many"`, "an integer"}},
		{head + "stages: []\nscenario: [1, 2]\n", []string{"p.yaml:7:", "a list", "a mapping of scenario keys"}},
	} {
		_, err := ReadProfile(strings.NewReader(c.text), "p.yaml")
		if err == nil {
			t.Errorf("%q accepted", c.text)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.text, err, w)
			}
		}
		if strings.Contains(err.Error(), "calib.") || strings.Contains(err.Error(), "!!") {
			t.Errorf("%q: error %q shows YAML or Go internals", c.text, err)
		}
	}
}

// A stage name no tool writes (a typo in an imported CSV) is fitted but
// flagged in the profile's notes; a known one is not.
func TestUnknownStageNoted(t *testing.T) {
	mk := func(stage string) []realhw.Sample {
		var ss []realhw.Sample
		for _, b := range []int64{64, 4096, 65536} {
			ss = append(ss, realhw.Sample{Stage: stage, Bytes: b, Latency: engine.Time(1000 + b/10), Source: "t"})
		}
		return ss
	}
	if p := FromSamples(mk("netwrok")); len(p.Notes) != 1 || !strings.Contains(p.Notes[0], `"netwrok"`) || !strings.Contains(p.Notes[0], "sets no scenario value") {
		t.Errorf("notes %q, want one naming netwrok", p.Notes)
	}
	for _, known := range []string{"rdma-write", "tcp-e2e", "nvbandwidth/host_to_device_memcpy_ce"} {
		if p := FromSamples(mk(known)); len(p.Notes) != 0 {
			t.Errorf("%s: notes %q, want none", known, p.Notes)
		}
	}
}

// An ib_write_lat -a sweep (2 B to 8 MiB): a flat small-message latency,
// then bandwidth. Synthetic, shaped like a ConnectX-6 (1.3 us, 23 GB/s,
// 0.25 us more without inline data above 220 B, segmentation steps above
// the 4 KiB MTU, 1% noise on the two largest sizes). A line cannot follow
// the steps; what matters is where it errs. The unweighted least squares
// minimises microseconds, so the megabyte sizes rule it and it misses the
// 2-byte latency by about 18% (1.53 us for 1.30). The relative weights
// keep that under 10% (1.41 us) and still predict the 8 MiB latency within
// 5%.
func TestFitPerftestSweep(t *testing.T) {
	var samples []realhw.Sample
	for k := 1; k <= 23; k++ {
		n := int64(1) << k
		us := 1.3 + float64(n)/23e3 // 23 GB/s = 23e3 B/us
		if n > 220 {
			us += 0.25 // no inline data
		}
		if n > 4096 {
			us += 0.5 * float64(n/4096) / float64(n/4096+1) // MTU segmentation
		}
		switch n {
		case 1 << 23:
			us *= 1.01
		case 1 << 22:
			us *= 0.99
		}
		samples = append(samples, realhw.Sample{Stage: "network", Bytes: n, Latency: engine.Seconds(us * 1e-6)})
	}
	x, y := make([]float64, len(samples)), make([]float64, len(samples))
	for i, s := range samples {
		x[i], y[i] = float64(s.Bytes), s.Latency.Seconds()
	}
	relErr := func(fixed, slope float64, i int) float64 { return math.Abs(fixed+slope*x[i]-y[i]) / y[i] }
	last := len(x) - 1
	if a, b := stat.LinearRegression(x, y, nil, false); relErr(a, b, 0) < 0.15 {
		t.Fatalf("the unweighted fit misses 2 B by only %.1f%%; this case should show it missing by more than 15%%", 100*relErr(a, b, 0))
	}
	f := FitLinear("network", samples)
	if !f.Applied || relErr(f.Fixed, f.PerByte, 0) > 0.10 || relErr(f.Fixed, f.PerByte, last) > 0.05 {
		t.Errorf("weighted fit: fixed %v, bandwidth %v, applied %v (%s); 2 B off by %.1f%%, 8 MiB by %.1f%%",
			f.Fixed, f.Bandwidth(), f.Applied, f.Reason, 100*relErr(f.Fixed, f.PerByte, 0), 100*relErr(f.Fixed, f.PerByte, last))
	}
}

// A real ib_write_lat -a sweep: the t_typical column (us) of a public
// perftest 4.x output, ConnectX-3 (mlx4_0), FDR InfiniBand, RC, 220 B
// inline, 20,000 iterations per size (sizes and typical latencies only).
// One line cannot follow it: 0.98 us at 2 B, a step past the inline limit,
// 3.18 us at 2 KiB, then 2302 us at 8 MiB (3.64 GB/s). The weighted line
// misses 2 KiB by 45%, so the fit falls back to two regimes: the fixed
// cost is the median of the sizes up to 64 B (0.99 us, the 2 B latency
// within 1%), the bandwidth the relative-weighted slope over 64 KiB-8 MiB
// through it: b = sum(x (m - 0.99) / m) / sum(x^2) with x = n/m, worked
// out by hand (a few lines of Python) to 3.7298 GB/s, between the sizes'
// own 3.45 GB/s (64 KiB) and 3.84 GB/s (4 MiB), missing none of them by
// more than 7.1%; it is applied and says what it leaves out.
func TestFitRealPerftestSweep(t *testing.T) {
	typical := []struct {
		n  int64
		us float64
	}{
		{2, 0.98}, {4, 0.98}, {8, 0.99}, {16, 0.99}, {32, 1.04}, {64, 1.09}, {128, 1.22}, {256, 1.84},
		{512, 2.04}, {1024, 2.42}, {2048, 3.18}, {4096, 3.74}, {8192, 4.82}, {16384, 7.08}, {32768, 11.33},
		{65536, 19.97}, {131072, 36.95}, {262144, 71.00}, {524288, 139.16}, {1048576, 275.40},
		{2097152, 548.06}, {4194304, 1092.97}, {8388608, 2302.01},
	}
	var ss []realhw.Sample
	for _, r := range typical {
		ss = append(ss, realhw.Sample{Stage: "rdma-write", Bytes: r.n, Latency: engine.Seconds(r.us * 1e-6)})
	}
	f := FitLinear("rdma-write", ss)
	if f.Method != MethodTwoRegime || !f.Applied {
		t.Fatalf("method %q applied %v (%s), want an applied two-regime fit", f.Method, f.Applied, f.Reason)
	}
	if math.Abs(f.Fixed-0.99e-6) > 0.01e-6 {
		t.Errorf("fixed %v, want the small sizes' median 0.99 us", f.Fixed)
	}
	if bw := f.Bandwidth(); math.Abs(bw-3.7298e9) > 0.0005*3.7298e9 {
		t.Errorf("bandwidth %.5g B/s, want 3.7298e9", bw)
	}
	if !strings.Contains(f.Note, "2048 B median by") {
		t.Errorf("note %q does not name the worst size in between", f.Note)
	}
	// Through the profile: applied, method and note kept, and the fixed
	// cost proposed as the network latency.
	p := FromSamples(ss)
	if sf := p.Stages[0]; sf.Method != MethodTwoRegime || !sf.Applied || sf.Kind != "network" {
		t.Errorf("stage fit %+v", sf)
	}
	if got := p.Scenario["datapath.network.latency"]; got != "990ns" {
		t.Errorf("proposed latency %v, want 990ns", got)
	}
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "two-regime") {
		t.Errorf("notes %v, want the two-regime note", p.Notes)
	}
}

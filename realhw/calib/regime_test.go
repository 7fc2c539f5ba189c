package calib

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// A host copy whose 16 KiB size stays in cache (the 16-core GPU machine's
// tcp-copy and host-memcpy: one line missed the 16 KiB median by 42% and
// both fits were refused) is fitted in two regimes and applied, with a
// note naming the size it misses. By hand: 0.2 us + bytes / 10 GB/s,
// except 16 KiB at 58% of that (1.0663 us against the line's 1.8384): the
// fixed cost is 1 KiB's median less its bytes, 0.3024 - 0.1024 = 0.2 us,
// the rate 10 GB/s from 64 and 256 KiB, and 16 KiB is missed by
// 0.7721 / 1.0663 = 72%. The same medians under a NIC stage's name stay
// refused: the sweep spans 256x, not perftest's 4096x.
func TestHostCopyTwoRegimes(t *testing.T) {
	var samples []realhw.Sample
	for _, n := range []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10} {
		us := 0.2 + float64(n)/10e9*1e6
		if n == 16<<10 {
			us *= 0.58
		}
		for range 5 {
			samples = append(samples, realhw.Sample{Bytes: n, Latency: engine.Seconds(us * 1e-6)})
		}
	}
	for _, stage := range []string{"tcp-copy", "host-memcpy"} {
		f := FitLinear(stage, samples)
		if !f.Applied || f.Method != MethodTwoRegime {
			t.Fatalf("%s: applied %v, method %q (%s); want a two-regime fit applied", stage, f.Applied, f.Method, f.Reason)
		}
		// Sample latencies are whole nanoseconds (1 KiB's 302.4 ns is 302).
		if math.Abs(f.Fixed*1e6-0.2) > 1e-3 || math.Abs(1/f.PerByte/1e9-10) > 1e-3 {
			t.Errorf("%s: fixed %v us, rate %v GB/s; want 0.2 us, 10 GB/s", stage, f.Fixed*1e6, 1/f.PerByte/1e9)
		}
		if !strings.Contains(f.Note, "misses the 16384 B median by 72% (sizes the core's caches hold") {
			t.Errorf("%s: note %q", stage, f.Note)
		}
	}
	if f := FitLinear("tcp-network", samples); f.Applied || f.Method != MethodWeighted || !strings.Contains(f.Reason, "16384 B median") {
		t.Errorf("as a NIC stage: applied %v, method %q, reason %q; want refused, naming 16 KiB", f.Applied, f.Method, f.Reason)
	}
}

// A host-memcpy fit proposes datapath.host.memcpy_bandwidth when applied;
// when refused, the profile's notes say that the key keeps the catalog's
// value, rather than leaving it out without a word.
func TestMemcpyFitProposesOrSays(t *testing.T) {
	mk := func(sizes ...int64) []realhw.Sample {
		var ss []realhw.Sample
		for _, n := range sizes {
			ss = append(ss, realhw.Sample{Stage: "host-memcpy", Bytes: n, Latency: engine.Seconds(1e-7 + float64(n)/20e9)})
		}
		return ss
	}
	p := FromSamples(mk(1<<10, 64<<10, 256<<10))
	if got := p.Scenario["datapath.host.memcpy_bandwidth"]; got != "20GB/s" {
		t.Errorf("applied: proposes %v, want 20GB/s (notes %q)", got, p.Notes)
	}
	p = FromSamples(mk(1<<10, 64<<10))
	if _, ok := p.Scenario["datapath.host.memcpy_bandwidth"]; ok {
		t.Error("refused (2 sizes): a value was proposed")
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "host-memcpy: fit not applied (too few points: 2 sizes, need at least 3), so datapath.host.memcpy_bandwidth keeps the catalog's value") {
		t.Errorf("refused: notes %q", p.Notes)
	}
}

// copulaRho by hand: identical stages are perfectly coupled (1);
// independent ones are not (0, within the 0.01 standard error of a
// correlation over 10,000 requests, 3 sigma); stages that move against
// each other are taken as independent (0), not negative; a one-factor
// Gaussian model with rho 0.6 is read back within 0.03.
func TestCopulaRho(t *testing.T) {
	rng := engine.NewStream(1, "copula")
	const n = 10000
	mk := func(f func(i int, common float64) float64) [][]float64 {
		out := make([][]float64, 4)
		common := make([]float64, n)
		for i := range common {
			common[i] = rng.NormFloat64()
		}
		for k := range out {
			for i := range n {
				out[k] = append(out[k], f(i, common[i]))
			}
		}
		return out
	}
	same := mk(func(i int, _ float64) float64 { return float64(i % 97) })
	indep := mk(func(int, float64) float64 { return rng.Exp(1) })
	factor := mk(func(_ int, z float64) float64 {
		return math.Exp(math.Sqrt(0.6)*z + math.Sqrt(0.4)*rng.NormFloat64()) // any monotone map of the normal
	})
	against := mk(func(i int, z float64) float64 { return z })
	against[1] = slices.Clone(against[0])
	for i := range against[1] {
		against[1][i] = -against[1][i]
	}
	against[2], against[3] = slices.Clone(against[1]), slices.Clone(against[0])
	for _, c := range []struct {
		name     string
		r        [][]float64
		want, tl float64
	}{
		{"identical", same, 1, 1e-9},
		{"independent", indep, 0, 0.03},
		{"one factor 0.6", factor, 0.6, 0.03},
		{"opposite", against, 0, 0},
	} {
		if got := copulaRho(c.r); math.Abs(got-c.want) > c.tl {
			t.Errorf("%s: rho %v, want %v +- %v", c.name, got, c.want, c.tl)
		}
	}
}

package engine

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func draws(s *Stream, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = s.Uint64()
	}
	return out
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestStreamIdentity(t *testing.T) {
	a := draws(NewStream(42, "arrivals"), 100)
	if !equalU64(a, draws(NewStream(42, "arrivals"), 100)) {
		t.Error("same (seed, name) gave different sequences")
	}
	if equalU64(a, draws(NewStream(42, "service"), 100)) {
		t.Error("different names gave the same sequence")
	}
	if equalU64(a, draws(NewStream(43, "arrivals"), 100)) {
		t.Error("different seeds gave the same sequence")
	}
	// Names that are prefixes of each other must still differ.
	if equalU64(draws(NewStream(1, "gpu"), 10), draws(NewStream(1, "gpu0"), 10)) {
		t.Error(`streams "gpu" and "gpu0" coincide`)
	}
	if got := NewStream(1, "x").Name(); got != "x" {
		t.Errorf("Name() = %q, want %q", got, "x")
	}
}

// Adding a stream, and drawing from it in between, must not shift another
// stream's numbers: streams share no state.
func TestStreamIndependence(t *testing.T) {
	alone := draws(NewStream(7, "cpu"), 50)
	cpu := NewStream(7, "cpu")
	var mixed []uint64
	for i := range 50 {
		if i == 10 {
			nic := NewStream(7, "smartnic") // a model added later
			for range 1000 {
				nic.Float64()
			}
		}
		mixed = append(mixed, cpu.Uint64())
	}
	if !equalU64(alone, mixed) {
		t.Error("creating and drawing from another stream changed the draws of stream cpu")
	}
}

// fnv128a is FNV-1a with 128-bit arithmetic written from the published
// constants (offset basis 0x6c62272e07bb014262b821756295c58d, prime
// 2^88 + 0x13b), independently of hash/fnv.
func fnv128a(data []byte) []byte {
	h, _ := new(big.Int).SetString("6c62272e07bb014262b821756295c58d", 16)
	prime := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 88), big.NewInt(0x13b))
	mod := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, c := range data {
		h.Xor(h, big.NewInt(int64(c)))
		h.Mul(h, prime)
		h.Mod(h, mod)
	}
	out := make([]byte, 16)
	h.FillBytes(out)
	return out
}

// The stream derivation is part of the reproducibility contract (results
// must not change when the code is refactored): PCG keyed by FNV-1a-128 of
// the little-endian seed followed by the name. Checked against a second
// implementation of the hash.
func TestStreamDerivation(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		name string
	}{{0, ""}, {1, "arrivals"}, {1 << 63, "gpu/3/mig"}} {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], c.seed)
		sum := fnv128a(append(b[:], c.name...))
		want := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:])))
		got := NewStream(c.seed, c.name)
		for i := range 20 {
			if g, w := got.Uint64(), want.Uint64(); g != w {
				t.Fatalf("seed %d name %q draw %d: %x, want %x", c.seed, c.name, i, g, w)
			}
		}
	}
}

// Sample means against closed forms. With n draws the sample mean has
// standard error sd/sqrt(n); a correct sampler lands within 4 standard
// errors with probability 0.99994, and the seeds are fixed, so the test is
// deterministic. Theory (mean, sd) per distribution:
//   - exponential(mean 2): mean 2, sd 2.
//   - uniform(1,3): mean 2, sd 2/sqrt(12).
//   - lognormal(mu 0, sigma 0.5): mean e^{0.125}, sd sqrt((e^{0.25}-1) e^{0.25}).
//   - LogNormalFromMeanCV(10, 0.5): mean 10, sd 0.5*10 = 5.
//   - empirical{1,2,3,10}: mean 4, sd sqrt((1+4+9+100)/4 - 16) = sqrt(12.5).
//   - normal(5, 2) via Stream.Normal: mean 5, sd 2.
func TestDistMeans(t *testing.T) {
	emp, err := NewEmpirical([]float64{10, 1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	s2 := math.Exp(0.25)
	cases := []struct {
		d        Dist
		mean, sd float64
	}{
		{Exponential{MeanV: 2}, 2, 2},
		{Uniform{Lo: 1, Hi: 3}, 2, 2 / math.Sqrt(12)},
		{LogNormal{Mu: 0, Sigma: 0.5}, math.Exp(0.125), math.Sqrt((s2 - 1) * s2)},
		{LogNormalFromMeanCV(10, 0.5), 10, 5},
		{emp, 4, math.Sqrt(12.5)},
		{normalDist{5, 2}, 5, 2},
	}
	const n = 200_000
	for _, c := range cases {
		if m := c.d.Mean(); math.Abs(m-c.mean) > 1e-12*c.mean {
			t.Errorf("%v: Mean() = %v, closed form %v", c.d, m, c.mean)
		}
		s := NewStream(2024, c.d.String())
		var sum, sumsq float64
		for range n {
			x := c.d.Sample(s)
			if _, normal := c.d.(normalDist); x < 0 && !normal {
				t.Fatalf("%v: negative sample %v from a distribution of non-negative values", c.d, x)
			}
			sum += x
			sumsq += x * x
		}
		mean := sum / n
		se := c.sd / math.Sqrt(n)
		if math.Abs(mean-c.mean) > 4*se {
			t.Errorf("%v: sample mean %.5f, theory %.5f, |diff| %.2g > 4 SE (%.2g)", c.d, mean, c.mean, math.Abs(mean-c.mean), 4*se)
		}
		// The sample sd within 3% of theory: a scale bug (e.g. rate used as
		// mean) would miss by far more.
		sd := math.Sqrt(sumsq/n - mean*mean)
		if math.Abs(sd-c.sd) > 0.03*c.sd {
			t.Errorf("%v: sample sd %.5f, theory %.5f", c.d, sd, c.sd)
		}
		if c.d.String() == "" {
			t.Errorf("%T: empty String()", c.d)
		}
	}
}

// normalDist adapts Stream.Normal to Dist for the table above.
type normalDist struct{ mu, sigma float64 }

func (d normalDist) Sample(s *Stream) float64 { return s.Normal(d.mu, d.sigma) }
func (d normalDist) Mean() float64            { return d.mu }
func (d normalDist) String() string           { return "normal" }

func TestDeterministicDist(t *testing.T) {
	d := Deterministic{V: 3}
	s := NewStream(1, "det")
	for range 100 {
		if v := d.Sample(s); v != 3 {
			t.Fatalf("Deterministic{3}.Sample = %v", v)
		}
	}
	if d.Mean() != 3 || d.String() != "deterministic(3)" {
		t.Errorf("Mean=%v String=%q", d.Mean(), d.String())
	}
}

// Empirical draws only observed values, uniformly: with 4 values and 40000
// draws each count is Binomial(40000, 1/4): mean 10000, sd sqrt(7500) ~ 87;
// 4 sd = 346.
func TestEmpiricalDraws(t *testing.T) {
	in := []float64{5, 1, 3, 1}
	d, err := NewEmpirical(in)
	if err != nil {
		t.Fatal(err)
	}
	in[0] = 99 // the distribution owns a copy
	s := NewStream(3, "emp")
	counts := map[float64]int{}
	for range 40000 {
		counts[d.Sample(s)]++
	}
	if len(counts) != 3 || counts[99] != 0 {
		t.Fatalf("drew values %v, want only 1, 3, 5", counts)
	}
	// 1 appears twice among 4 samples: expected 20000, sd sqrt(40000*.5*.5)=100.
	for v, want := range map[float64]float64{1: 20000, 3: 10000, 5: 10000} {
		sd := math.Sqrt(40000 * (want / 40000) * (1 - want/40000))
		if math.Abs(float64(counts[v])-want) > 4*sd {
			t.Errorf("value %v drawn %d times, want %v +- %.0f", v, counts[v], want, 4*sd)
		}
	}
	// Input order does not matter: the samples are sorted on construction.
	d2, _ := NewEmpirical([]float64{3, 1, 1, 5})
	a, b := NewStream(9, "o"), NewStream(9, "o")
	d3, _ := NewEmpirical([]float64{1, 5, 3, 1})
	for range 100 {
		if d2.Sample(a) != d3.Sample(b) {
			t.Fatal("same samples in a different order drew differently")
		}
	}
}

func TestNewEmpiricalErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want string
	}{
		{"nil", nil, "at least one sample"},
		{"empty", []float64{}, "at least one sample"},
		{"NaN", []float64{1, math.NaN()}, "sample 1 is NaN"},
		{"+Inf", []float64{math.Inf(1)}, "sample 0 is +Inf"},
		{"-Inf", []float64{2, 3, math.Inf(-1)}, "sample 2 is -Inf"},
	}
	for _, c := range cases {
		d, err := NewEmpirical(c.in)
		if err == nil || d != nil {
			t.Errorf("%s: NewEmpirical = %v, %v; want nil and an error", c.name, d, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q lacks %q", c.name, err, c.want)
		}
	}
}

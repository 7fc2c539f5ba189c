package llm

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

func baseConfig() SyntheticConfig {
	return SyntheticConfig{Requests: 1000, Rate: 5,
		Prompt: LengthDist{Kind: KindLognormal, Mean: 1000, Sigma: 1},
		Output: Empirical([]int{10, 20, 30})}
}

// The same seed and stream name give the same trace; another seed another.
func TestSynthesizeDeterministic(t *testing.T) {
	for _, arrival := range []string{ArrivalPoisson, ArrivalGamma} {
		c := baseConfig()
		c.Arrival = arrival
		if arrival == ArrivalGamma {
			c.CV = 3
		}
		a, err := Synthesize(c, engine.NewStream(7, "llm/synthetic"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Synthesize(c, engine.NewStream(7, "llm/synthetic"))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with seed 7 differ", arrival)
		}
		other, _ := Synthesize(c, engine.NewStream(8, "llm/synthetic"))
		if reflect.DeepEqual(a.Requests, other.Requests) {
			t.Errorf("%s: seeds 7 and 8 gave the same trace", arrival)
		}
		r1, _ := Synthesize(c, rand.New(rand.NewPCG(1, 2)))
		r2, _ := Synthesize(c, rand.New(rand.NewPCG(1, 2)))
		if !reflect.DeepEqual(r1, r2) {
			t.Errorf("%s: two runs with the same *rand.Rand state differ", arrival)
		}
		for i, r := range a.Requests {
			if r.ID != i || i == 0 && r.Arrival != 0 || i > 0 && r.Arrival < a.Requests[i-1].Arrival || r.BlockHashes != nil {
				t.Fatalf("%s: request %d is %+v; want ID %d, the first at 0, arrivals non-decreasing, no hashes", arrival, i, r, i)
			}
		}
		if a.Format != FormatSynthetic || len(a.Notes) != 1 {
			t.Errorf("format %q notes %q", a.Format, a.Notes)
		}
	}
}

// Over n = 20,000 requests the mean gap's relative standard error is
// cv/sqrt(n-1) (0.71% for Poisson) and the sample coefficient of
// variation's is about sqrt((kurtosis-1)/(4n)), a gamma of shape k having
// kurtosis 3+6/k; each is checked within five standard errors.
func TestSynthesizeRate(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		arrival string
		cv      float64
	}{{ArrivalPoisson, 0}, {ArrivalGamma, 0.5}, {ArrivalGamma, 1}, {ArrivalGamma, 2}} {
		cfg := SyntheticConfig{Requests: n, Rate: 10, Arrival: c.arrival, CV: c.cv,
			Prompt: LengthDist{Kind: KindFixed, Mean: 100}, Output: LengthDist{Kind: KindFixed, Mean: 10}}
		tr, err := Synthesize(cfg, engine.NewStream(1, "llm/rate"))
		if err != nil {
			t.Fatal(err)
		}
		cv := c.cv
		if cv == 0 {
			cv = 1
		}
		s := tr.Stats()
		if tol := 5 * cv / math.Sqrt(n-1); math.Abs(s.Rate/10-1) > tol {
			t.Errorf("%s cv %g: rate %.4f/s; want 10/s within %.1f%%", c.arrival, cv, s.Rate, 100*tol)
		}
		var sum, ss float64
		for i := 1; i < n; i++ {
			sum += (tr.Requests[i].Arrival - tr.Requests[i-1].Arrival).Seconds()
		}
		mean := sum / (n - 1)
		for i := 1; i < n; i++ {
			d := (tr.Requests[i].Arrival - tr.Requests[i-1].Arrival).Seconds() - mean
			ss += d * d
		}
		got := math.Sqrt(ss/(n-2)) / mean
		k := 1 / (cv * cv)
		if tol := 5 * math.Sqrt((3+6/k-1)/(4*n)); math.Abs(got/cv-1) > tol {
			t.Errorf("%s: gaps' coefficient of variation %.3f; want %g within %.1f%%", c.arrival, got, cv, 100*tol)
		}
		t.Logf("%s cv %g: rate %.4f/s, gap cv %.3f", c.arrival, cv, s.Rate, got)
	}
}

// FitLognormal by hand: {1, 100} has logs 0 and ln 100, so the mean log
// is ln 10 and the population deviation of the logs ln 10 = 2.302585;
// the mean is 101/2. Values <= 0 are left out.
func TestFitLognormal(t *testing.T) {
	for _, c := range []struct {
		xs          []int
		mean, sigma float64
	}{
		{[]int{1, 100}, 50.5, math.Log(10)},
		{[]int{7, 7, 7}, 7, 0},
		{[]int{0, -3, 5}, 5, 0},
		{nil, 0, 0},
	} {
		d := FitLognormal(c.xs)
		if d.Kind != KindLognormal || math.Abs(d.Mean-c.mean) > 1e-12 || math.Abs(d.Sigma-c.sigma) > 1e-12 {
			t.Errorf("FitLognormal(%v) = %+v; want mean %g sigma %g", c.xs, d, c.mean, c.sigma)
		}
	}
	// Fitted to no positive length, the distribution is refused.
	c := baseConfig()
	c.Prompt = FitLognormal([]int{0})
	wantErr(t, c.Validate(), "prompt.mean 0; want a mean length of 1..100000000 tokens (FitLognormal gives 0 for no positive lengths)")
}

// Drawn from lognormal(mean 1000, sigma 1), 20,000 lengths fit back to
// it: the sample mean's standard error is 1000 sqrt(e-1)/sqrt(20000) = 9.3
// tokens (5 of them: 4.6%), the log deviation's sigma/sqrt(2n) = 0.005
// (5 of them: 0.025, 0.03 allowing for rounding to whole tokens).
func TestLognormalRoundTrip(t *testing.T) {
	c := SyntheticConfig{Requests: 20000, Rate: 1,
		Prompt: LengthDist{Kind: KindLognormal, Mean: 1000, Sigma: 1}, Output: LengthDist{Kind: KindFixed, Mean: 1}}
	tr, err := Synthesize(c, engine.NewStream(3, "llm/lengths"))
	if err != nil {
		t.Fatal(err)
	}
	d := FitLognormal(tr.PromptLengths())
	if math.Abs(d.Mean/1000-1) > 0.046 || math.Abs(d.Sigma-1) > 0.03 {
		t.Errorf("fit %+v; want mean 1000 within 4.6%%, sigma 1 within 0.03", d)
	}
	t.Logf("fit: %s", d)
}

// Fixed lengths are the given value; empirical ones come from the list,
// each value appearing.
func TestLengthKinds(t *testing.T) {
	c := SyntheticConfig{Requests: 200, Rate: 1,
		Prompt: Empirical([]int{3, 9}), Output: LengthDist{Kind: KindFixed, Mean: 7}}
	tr, err := Synthesize(c, engine.NewStream(1, "llm/kinds"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, r := range tr.Requests {
		seen[r.PromptTokens]++
		if r.OutputTokens != 7 {
			t.Fatalf("output %d; want the fixed 7", r.OutputTokens)
		}
	}
	if len(seen) != 2 || seen[3] == 0 || seen[9] == 0 {
		t.Errorf("prompts %v; want both 3 and 9 and nothing else", seen)
	}
	if e := Empirical([]int{3, 9}); e.Mean != 6 || e.Kind != KindEmpirical {
		t.Errorf("Empirical = %+v; want mean 6", e)
	}
}

func TestSyntheticValidate(t *testing.T) {
	if err := baseConfig().Validate(); err != nil {
		t.Fatalf("base config: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*SyntheticConfig)
		want []string
	}{
		{"no requests and a negative rate", func(c *SyntheticConfig) { c.Requests, c.Rate = 0, -1 },
			[]string{"llm: synthetic: requests 0; want 1..100000000", "rate -1/s; want a mean arrival rate > 0"}},
		{"NaN rate", func(c *SyntheticConfig) { c.Rate = math.NaN() }, []string{"rate NaN/s"}},
		{"rate past the clock", func(c *SyntheticConfig) { c.Rate = 2e9 }, []string{"at most 1e+09/s (one request a nanosecond)"}},
		// 1 request at 1e-12/s spans 1e12 s, past half the horizon (1.578e9 s).
		{"rate 1e-12", func(c *SyntheticConfig) { c.Requests, c.Rate = 1, 1e-12 },
			[]string{"1 request at 1e-12/s span 1e+12 s, more than half the simulator's horizon (100 years, engine.Horizon); raise the rate to at least 6.34e-10/s"}},
		{"unknown arrival", func(c *SyntheticConfig) { c.Arrival = "uniform" }, []string{`arrival "uniform"; want poisson or gamma`}},
		{"cv with poisson", func(c *SyntheticConfig) { c.CV = 2 }, []string{"cv 2 with poisson arrivals, whose cv is 1; set arrival to gamma or remove cv"}},
		{"gamma without cv", func(c *SyntheticConfig) { c.Arrival = ArrivalGamma }, []string{"cv 0; want gamma's coefficient of variation"}},
		{"gamma cv too high", func(c *SyntheticConfig) { c.Arrival, c.CV = ArrivalGamma, 11 }, []string{"cv 11; want"}},
		{"1e12 output tokens", func(c *SyntheticConfig) { c.Output = LengthDist{Kind: KindFixed, Mean: 1e12} },
			[]string{"output.mean 1e+12; want the length, a whole number of tokens 1..100000000"}},
		{"fractional fixed", func(c *SyntheticConfig) { c.Output = LengthDist{Kind: KindFixed, Mean: 2.5} }, []string{"output.mean 2.5"}},
		{"sigma too wide", func(c *SyntheticConfig) { c.Prompt.Sigma = 5 }, []string{"prompt.sigma 5; want the standard deviation of the log length, 0..4"}},
		{"negative sigma", func(c *SyntheticConfig) { c.Prompt.Sigma = -1 }, []string{"prompt.sigma -1"}},
		{"values on lognormal", func(c *SyntheticConfig) { c.Prompt.Values = []int{1} }, []string{"prompt.values has 1 lengths; values are for kind empirical"}},
		{"empty empirical", func(c *SyntheticConfig) { c.Output = Empirical(nil) }, []string{"output.values is empty"}},
		{"zero in empirical", func(c *SyntheticConfig) { c.Output = Empirical([]int{4, 0}) }, []string{"output.values[1] = 0; want 1..100000000 tokens"}},
		{"no kind", func(c *SyntheticConfig) { c.Prompt = LengthDist{} }, []string{`prompt.kind ""; want lognormal, empirical or fixed`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := baseConfig()
			c.edit(&cfg)
			err := cfg.Validate()
			for _, w := range c.want {
				wantErr(t, err, w)
			}
			if _, serr := Synthesize(cfg, engine.NewStream(1, "x")); serr == nil {
				t.Errorf("Synthesize accepted what Validate refuses")
			}
		})
	}
}

// maxDraw is a source at the top of its range: every exponential gap is
// -ln(1e-6) = 13.8 mean gaps.
type maxDraw struct{}

func (maxDraw) Float64() float64     { return 1 - 1e-6 }
func (maxDraw) NormFloat64() float64 { return 0 }

// Validate lets 2 requests at 4/Horizon per second through (span half
// the horizon); a gap of 13.8 means, 3.5 horizons, is refused.
func TestSynthesizeRefusesPastHorizon(t *testing.T) {
	c := SyntheticConfig{Requests: 2, Rate: 4 / engine.HorizonSeconds,
		Prompt: LengthDist{Kind: KindFixed, Mean: 1}, Output: LengthDist{Kind: KindFixed, Mean: 1}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err := Synthesize(c, maxDraw{})
	wantErr(t, err, "request 1 would arrive past the simulator's horizon (100 years, engine.Horizon)")
	_, err = Synthesize(c, nil)
	wantErr(t, err, "no random source")
}

package llm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
)

// Bounds of a synthetic workload.
const (
	// MaxSyntheticRequests bounds SyntheticConfig.Requests: 1e8 requests
	// take about 5.6 GB as Requests, more than a run should hold.
	MaxSyntheticRequests = 100_000_000
	// MaxRate bounds SyntheticConfig.Rate: one request a nanosecond, the
	// clock's resolution; a faster rate would put most requests at the
	// same instant.
	MaxRate = 1e9
	// MaxCV bounds a gamma process's coefficient of variation. At 10
	// (shape 0.01) about four gaps in five are already under a nanosecond
	// at 10 requests a second, (1e-9 s / 10 s)^0.01 = 0.79, and the rate
	// rests on a few long gaps; beyond it the process is bursts, not a
	// rate.
	MaxCV = 10
	// MaxSigma bounds a lognormal's sigma (of the log length). Half of a
	// lognormal's mean comes from the draws whose normal deviate exceeds
	// sigma; at 4 those are 1 in 31,600, so a trace of ordinary size
	// falls well short of the mean it was configured with.
	MaxSigma = 4
)

// Length distribution kinds.
const (
	KindLognormal = "lognormal"
	KindEmpirical = "empirical"
	KindFixed     = "fixed"
)

// Arrival processes.
const (
	ArrivalPoisson = "poisson"
	ArrivalGamma   = "gamma"
)

// Rand is the random source Synthesize draws from; *engine.Stream and
// math/rand/v2's *rand.Rand both satisfy it. The same source state gives
// the same trace.
type Rand interface {
	Float64() float64     // uniform in [0, 1)
	NormFloat64() float64 // standard normal
}

var (
	_ Rand = (*engine.Stream)(nil)
	_ Rand = (*rand.Rand)(nil)
)

// LengthDist is the distribution of a token length.
type LengthDist struct {
	// Kind is "lognormal", "empirical" or "fixed".
	Kind string
	// Mean is, for lognormal, the mean length in tokens (not the mean of
	// the log); for fixed, the length (a whole number); for empirical it
	// is not used (Empirical sets it to the sample mean, for reading).
	Mean float64
	// Sigma is, for lognormal, the standard deviation of the log length,
	// 0..MaxSigma; 0 for the other kinds.
	Sigma float64
	// Values are, for empirical, the lengths drawn from, each equally
	// likely, each 1..MaxTokens; empty for the other kinds.
	Values []int
}

// FitLognormal returns the lognormal distribution with the mean of xs and
// the standard deviation (population) of their logs as Sigma: the mean
// keeps the trace's load in tokens exactly, the log spread keeps its
// shape without letting a few long requests dominate. Values <= 0 are
// left out; with none left the Mean is 0, which Validate refuses.
func FitLognormal(xs []int) LengthDist {
	d := LengthDist{Kind: KindLognormal}
	var sum, logSum float64
	n := 0
	for _, x := range xs {
		if x > 0 {
			sum += float64(x)
			logSum += math.Log(float64(x))
			n++
		}
	}
	if n == 0 {
		return d
	}
	mu := logSum / float64(n)
	var ss float64
	for _, x := range xs {
		if x > 0 {
			dx := math.Log(float64(x)) - mu
			ss += dx * dx
		}
	}
	d.Mean = sum / float64(n)
	d.Sigma = math.Sqrt(ss / float64(n))
	return d
}

// Empirical returns the distribution that draws one of xs, each equally
// likely (a copy of xs; Validate checks every value).
func Empirical(xs []int) LengthDist {
	d := LengthDist{Kind: KindEmpirical, Values: slices.Clone(xs)}
	for _, x := range xs {
		d.Mean += float64(x)
	}
	if len(xs) > 0 {
		d.Mean /= float64(len(xs))
	}
	return d
}

// validate appends every problem of d to errs, naming it by field.
func (d LengthDist) validate(field string, errs []error) []error {
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("llm: synthetic: "+field+format, a...))
	}
	switch d.Kind {
	case KindLognormal:
		if !(d.Mean >= 1 && d.Mean <= MaxTokens) {
			bad(".mean %g; want a mean length of 1..%d tokens (FitLognormal gives 0 for no positive lengths)", d.Mean, MaxTokens)
		}
		if !(d.Sigma >= 0 && d.Sigma <= MaxSigma) {
			bad(".sigma %g; want the standard deviation of the log length, 0..%d", d.Sigma, MaxSigma)
		}
		if len(d.Values) > 0 {
			bad(".values has %d lengths; values are for kind empirical", len(d.Values))
		}
	case KindFixed:
		if !(d.Mean >= 1 && d.Mean <= MaxTokens && d.Mean == math.Trunc(d.Mean)) {
			bad(".mean %g; want the length, a whole number of tokens 1..%d", d.Mean, MaxTokens)
		}
		if d.Sigma != 0 || len(d.Values) > 0 {
			bad(".sigma %g: a fixed length has no spread; set sigma to 0 with kind fixed (the section's default sigma is the lognormal's)", d.Sigma)
		}
	case KindEmpirical:
		if len(d.Values) == 0 {
			bad(".values is empty; want the lengths to draw from (Empirical(trace.PromptLengths()))")
		}
		for i, v := range d.Values {
			if v < 1 || v > MaxTokens {
				bad(".values[%d] = %d; want 1..%d tokens", i, v, MaxTokens)
				break
			}
		}
		if d.Sigma != 0 {
			bad(".sigma %g is not used by kind empirical; remove it", d.Sigma)
		}
	default:
		bad(".kind %s; want %s, %s or %s", quote(d.Kind), KindLognormal, KindEmpirical, KindFixed)
	}
	return errs
}

// draw returns one length; fixed draws nothing from r. A lognormal draw
// is rounded and clamped to 1..MaxTokens.
func (d LengthDist) draw(r Rand) int {
	switch d.Kind {
	case KindFixed:
		return int(d.Mean)
	case KindEmpirical:
		return d.Values[min(int(r.Float64()*float64(len(d.Values))), len(d.Values)-1)]
	}
	mu := math.Log(d.Mean) - d.Sigma*d.Sigma/2
	x := math.Round(math.Exp(mu + d.Sigma*r.NormFloat64()))
	return int(min(max(x, 1), MaxTokens))
}

func (d LengthDist) String() string {
	switch d.Kind {
	case KindLognormal:
		return fmt.Sprintf("lognormal(mean %.4g, sigma %.3g)", d.Mean, d.Sigma)
	case KindEmpirical:
		return fmt.Sprintf("empirical(%d values, mean %.4g)", len(d.Values), d.Mean)
	}
	return fmt.Sprintf("fixed(%g)", d.Mean)
}

// SyntheticConfig describes a synthetic workload.
type SyntheticConfig struct {
	Requests int     // 1..MaxSyntheticRequests
	Rate     float64 // mean arrivals per second, up to MaxRate
	// Arrival is "poisson" (exponential gaps; "" means poisson) or "gamma"
	// (gamma gaps with coefficient of variation CV: above 1 burstier than
	// Poisson, below 1 more regular).
	Arrival string
	// CV is gamma's coefficient of variation of the gaps, (0, MaxCV]; 0
	// (or 1) for poisson.
	CV             float64
	Prompt, Output LengthDist
}

// Validate returns every problem of c, joined, each naming the field and
// the values that would be right; nil when c can be synthesised. Besides
// each field's range it bounds Requests/Rate, the expected span, by half
// of engine.Horizon, leaving the other half for the arrivals' random
// spread and for serving the requests.
func (c SyntheticConfig) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("llm: synthetic: "+format, a...)) }
	if c.Requests < 1 || c.Requests > MaxSyntheticRequests {
		bad("requests %d; want 1..%d", c.Requests, MaxSyntheticRequests)
	}
	rateOK := c.Rate > 0 && c.Rate <= MaxRate
	if !rateOK {
		bad("rate %g/s; want a mean arrival rate > 0 and at most %g/s (one request a nanosecond)", c.Rate, MaxRate)
	}
	if rateOK && c.Requests >= 1 {
		if span := float64(c.Requests) / c.Rate; span > engine.HorizonSeconds/2 {
			bad("%d %s at %g/s span %.3g s, more than half the simulator's horizon (%s, engine.Horizon); raise the rate to at least %.3g/s or lower the requests",
				c.Requests, plural(c.Requests, "request", "requests"), c.Rate, span, engine.HorizonText, ceil3(float64(c.Requests)/(engine.HorizonSeconds/2)))
		}
	}
	switch c.Arrival {
	case "", ArrivalPoisson:
		if c.CV != 0 && c.CV != 1 {
			bad("cv %g with poisson arrivals, whose cv is 1; set arrival to gamma or remove cv", c.CV)
		}
	case ArrivalGamma:
		if !(c.CV > 0 && c.CV <= MaxCV) {
			bad("cv %g; want gamma's coefficient of variation of the gaps, > 0 and at most %d (1 is Poisson)", c.CV, MaxCV)
		}
	default:
		bad("arrival %s; want %s or %s", quote(c.Arrival), ArrivalPoisson, ArrivalGamma)
	}
	errs = c.Prompt.validate("prompt", errs)
	errs = c.Output.validate("output", errs)
	return errors.Join(errs...)
}

// Synthesize returns the workload c describes, drawing from r: the first
// request arrives at 0, each later one a gap after the one before. Per
// request it draws, in this order, the gap (from the second request on),
// the prompt length and the output length, so a given source state
// always gives the same trace. It refuses an invalid c (Validate) and, for
// an unlucky draw, an arrival past engine.Horizon.
func Synthesize(c SyntheticConfig, r Rand) (Trace, error) {
	if err := c.Validate(); err != nil {
		return Trace{}, err
	}
	if r == nil {
		return Trace{}, errors.New("llm: synthetic: no random source; pass an *engine.Stream (engine.NewStream(seed, name)) or a *rand.Rand")
	}
	meanGap := 1 / c.Rate // seconds
	shape := 1.0
	if c.Arrival == ArrivalGamma {
		shape = 1 / (c.CV * c.CV)
	}
	rs := make([]Request, c.Requests)
	var at engine.Time
	for i := range rs {
		if i > 0 {
			var g float64
			if c.Arrival == ArrivalGamma {
				g = gammaDraw(r, shape) * meanGap / shape
			} else {
				g = -math.Log(1-r.Float64()) * meanGap
			}
			gap := engine.Seconds(g)
			if gap > engine.Horizon-at {
				return Trace{}, fmt.Errorf("llm: synthetic: request %d would arrive past the simulator's horizon (%s, engine.Horizon); raise the rate or lower the requests", i, engine.HorizonText)
			}
			at += gap
		}
		rs[i] = Request{ID: i, Arrival: at, PromptTokens: c.Prompt.draw(r), OutputTokens: c.Output.draw(r)}
	}
	arrival := "poisson"
	if c.Arrival == ArrivalGamma {
		arrival = fmt.Sprintf("gamma (cv %g)", c.CV)
	}
	return Trace{Name: FormatSynthetic, Format: FormatSynthetic, Requests: rs,
		Notes: []string{fmt.Sprintf("synthetic: %d requests, %s arrivals at %g/s, prompt %s, output %s", c.Requests, arrival, c.Rate, c.Prompt, c.Output)}}, nil
}

// gammaDraw returns a gamma draw of the given shape and scale 1
// (Marsaglia and Tsang, 2000; a shape below 1 is boosted by a uniform
// power). The rejection loop accepts more than 95% of tries at every
// shape >= 1.
func gammaDraw(r Rand, shape float64) float64 {
	if shape < 1 {
		u := r.Float64()
		return gammaDraw(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

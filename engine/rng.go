package engine

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Stream is a named source of random numbers. Each stream's state is derived
// from (run seed, stream name) alone, so adding a model, or a draw to one
// model, never shifts the numbers another model sees. It is not safe for
// concurrent use.
type Stream struct {
	name string
	r    *rand.Rand
}

// NewStream returns the stream called name of the run with the given seed.
// The same (seed, name) always yields the same sequence, on every platform:
// the generator is PCG (math/rand/v2) keyed by a 128-bit FNV-1a hash of the
// seed and the name.
func NewStream(seed uint64, name string) *Stream {
	h := fnv.New128a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(name))
	sum := h.Sum(nil)
	hi := binary.LittleEndian.Uint64(sum[:8])
	lo := binary.LittleEndian.Uint64(sum[8:])
	return &Stream{name: name, r: rand.New(rand.NewPCG(hi, lo))}
}

// Name returns the stream's name.
func (s *Stream) Name() string { return s.name }

// Float64 returns a uniform draw in [0, 1).
func (s *Stream) Float64() float64 { return s.r.Float64() }

// IntN returns a uniform draw in [0, n); n must be > 0.
func (s *Stream) IntN(n int) int { return s.r.IntN(n) }

// Uint64 returns a uniform 64-bit draw.
func (s *Stream) Uint64() uint64 { return s.r.Uint64() }

// Exp returns an exponential draw with the given mean.
func (s *Stream) Exp(mean float64) float64 { return s.r.ExpFloat64() * mean }

// Uniform returns a uniform draw in [lo, hi).
func (s *Stream) Uniform(lo, hi float64) float64 { return lo + (hi-lo)*s.r.Float64() }

// Normal returns a normal draw with mean mu and standard deviation sigma.
func (s *Stream) Normal(mu, sigma float64) float64 { return mu + sigma*s.r.NormFloat64() }

// LogNormal returns exp(N(mu, sigma^2)): mu and sigma are the mean and
// standard deviation of the underlying normal, not of the draw.
func (s *Stream) LogNormal(mu, sigma float64) float64 {
	return math.Exp(mu + sigma*s.r.NormFloat64())
}

// Dist is a distribution of non-negative values (delays, sizes). Sample
// draws from the given stream, so the distribution itself holds no random
// state and may be shared between models.
type Dist interface {
	Sample(s *Stream) float64
	Mean() float64
	String() string
}

// Deterministic always returns V.
type Deterministic struct{ V float64 }

func (d Deterministic) Sample(*Stream) float64 { return d.V }
func (d Deterministic) Mean() float64          { return d.V }
func (d Deterministic) String() string         { return fmt.Sprintf("deterministic(%g)", d.V) }

// Exponential has the given mean (rate 1/Mean).
type Exponential struct{ MeanV float64 }

func (d Exponential) Sample(s *Stream) float64 { return s.Exp(d.MeanV) }
func (d Exponential) Mean() float64            { return d.MeanV }
func (d Exponential) String() string           { return fmt.Sprintf("exponential(mean=%g)", d.MeanV) }

// Uniform is uniform on [Lo, Hi).
type Uniform struct{ Lo, Hi float64 }

func (d Uniform) Sample(s *Stream) float64 { return s.Uniform(d.Lo, d.Hi) }
func (d Uniform) Mean() float64            { return (d.Lo + d.Hi) / 2 }
func (d Uniform) String() string           { return fmt.Sprintf("uniform(%g,%g)", d.Lo, d.Hi) }

// LogNormal is exp(N(Mu, Sigma^2)).
type LogNormal struct{ Mu, Sigma float64 }

// LogNormalFromMeanCV returns the log-normal with the given mean and
// coefficient of variation (stddev/mean), the form in which measured
// latencies are usually reported.
func LogNormalFromMeanCV(mean, cv float64) LogNormal {
	s2 := math.Log1p(cv * cv)
	return LogNormal{Mu: math.Log(mean) - s2/2, Sigma: math.Sqrt(s2)}
}

func (d LogNormal) Sample(s *Stream) float64 { return s.LogNormal(d.Mu, d.Sigma) }
func (d LogNormal) Mean() float64            { return math.Exp(d.Mu + d.Sigma*d.Sigma/2) }
func (d LogNormal) String() string           { return fmt.Sprintf("lognormal(mu=%g,sigma=%g)", d.Mu, d.Sigma) }

// Empirical draws uniformly from a set of observed samples (the empirical
// distribution function, without interpolation).
type Empirical struct {
	samples []float64
	mean    float64
}

// NewEmpirical returns the empirical distribution of samples. It copies and
// sorts them so that the result does not depend on the caller's order. It
// returns an error for an empty set or a NaN or infinite sample.
func NewEmpirical(samples []float64) (*Empirical, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("engine: empirical distribution needs at least one sample")
	}
	c := slices.Clone(samples)
	sum := 0.0
	for i, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("engine: empirical sample %d is %v: samples must be finite numbers", i, v)
		}
		sum += v
	}
	slices.Sort(c)
	return &Empirical{samples: c, mean: sum / float64(len(c))}, nil
}

func (d *Empirical) Sample(s *Stream) float64 { return d.samples[s.IntN(len(d.samples))] }
func (d *Empirical) Mean() float64            { return d.mean }
func (d *Empirical) String() string           { return fmt.Sprintf("empirical(n=%d)", len(d.samples)) }

var (
	_ Dist = Deterministic{}
	_ Dist = Exponential{}
	_ Dist = Uniform{}
	_ Dist = LogNormal{}
	_ Dist = (*Empirical)(nil)
)

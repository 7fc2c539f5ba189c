package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Tally records observations (one per event: a waiting time, a latency) and
// summarises them. By default it keeps every sample, so quantiles are exact
// rather than estimated from a sketch; at 8 bytes a sample, a million
// requests cost 8 MB. KeepSamples(false) turns that off for very long runs:
// count, mean, variance, min and max are then kept as running moments
// (Welford's update) in constant memory, and quantiles are NaN.
// The zero Tally is empty, keeps samples and is ready to use. It is not safe
// for concurrent use.
type Tally struct {
	samples  []float64
	sorted   []float64 // sorted copy of samples, valid when !dirty
	dirty    bool
	noKeep   bool
	n        int
	mean, m2 float64 // running moments, used when samples are not kept
	min, max float64
	nan      bool // a NaN was added: every summary is NaN
}

// KeepSamples chooses whether Add stores each sample (the default) or only
// running moments. Turning it off drops the samples already stored but keeps
// their moments; turning it back on keeps later samples only, so use it
// before the first Add, or right after a Reset.
func (t *Tally) KeepSamples(keep bool) {
	if keep == !t.noKeep {
		return
	}
	if !keep {
		t.n, t.mean, t.m2 = 0, 0, 0
		for _, x := range t.samples {
			t.moments(x)
		}
		t.samples, t.sorted, t.dirty = nil, nil, false
	}
	t.noKeep = !keep
}

// Grow makes room for n more samples, so that a caller who knows how many
// it will add (a run of a given number of requests) pays for one
// allocation instead of a chain of growing copies. It does nothing when
// samples are not kept or n <= 0.
func (t *Tally) Grow(n int) {
	if !t.noKeep && n > 0 {
		t.samples = slices.Grow(t.samples, n)
	}
}

// moments folds x into the running mean and sum of squared deviations.
func (t *Tally) moments(x float64) {
	t.n++
	d := x - t.mean
	t.mean += d / float64(t.n)
	t.m2 += d * (x - t.mean)
}

// Add records x. A NaN is kept, and makes every summary (Mean, Quantile,
// Min, ...) NaN from then on: a NaN latency is a model bug that should show,
// not vanish.
func (t *Tally) Add(x float64) {
	if t.Count() == 0 {
		t.min, t.max = x, x
	} else {
		t.min = min(t.min, x)
		t.max = max(t.max, x)
	}
	if math.IsNaN(x) {
		t.nan = true
	}
	if t.noKeep {
		t.moments(x)
		return
	}
	t.samples = append(t.samples, x)
	t.dirty = true
}

// Reset discards every sample (for instance at the end of a warm-up),
// keeping the storage for reuse.
func (t *Tally) Reset() {
	t.samples = t.samples[:0]
	t.sorted = t.sorted[:0]
	t.dirty = false
	t.nan = false
	t.min, t.max = 0, 0
	t.n, t.mean, t.m2 = 0, 0, 0
}

// Count returns the number of samples.
func (t *Tally) Count() int {
	if t.noKeep {
		return t.n
	}
	return len(t.samples)
}

// Samples returns the samples in the order they were added (nil when
// samples are not kept). The slice is a read-only view into the tally's
// storage: do not modify it, and do not keep it across a later Add or
// Reset.
func (t *Tally) Samples() []float64 { return t.samples[:len(t.samples):len(t.samples)] }

// Sum returns the sum of the samples (0 for an empty tally).
func (t *Tally) Sum() float64 {
	if t.noKeep {
		return t.mean * float64(t.n)
	}
	s := 0.0
	for _, x := range t.samples {
		s += x
	}
	return s
}

// Mean returns the sample mean, or NaN for an empty tally.
func (t *Tally) Mean() float64 {
	switch {
	case t.Count() == 0:
		return math.NaN()
	case t.noKeep:
		return t.mean
	}
	return stat.Mean(t.samples, nil)
}

// Variance returns the unbiased sample variance (divisor n-1), or NaN with
// fewer than two samples.
func (t *Tally) Variance() float64 {
	switch {
	case t.Count() < 2:
		return math.NaN()
	case t.noKeep:
		return t.m2 / float64(t.n-1)
	}
	_, v := stat.MeanVariance(t.samples, nil)
	return v
}

// StdDev returns the square root of Variance (NaN with fewer than two
// samples).
func (t *Tally) StdDev() float64 { return math.Sqrt(t.Variance()) }

// Min returns the smallest sample, or NaN for an empty tally.
func (t *Tally) Min() float64 {
	if t.Count() == 0 || t.nan {
		return math.NaN()
	}
	return t.min
}

// Max returns the largest sample, or NaN for an empty tally.
func (t *Tally) Max() float64 {
	if t.Count() == 0 || t.nan {
		return math.NaN()
	}
	return t.max
}

// Quantile returns the empirical p-quantile: the smallest sample x such
// that at least a fraction p of the samples are <= x, that is the
// ceil(p*n)-th smallest (the first for p = 0). This is gonum's
// stat.Quantile(p, stat.Empirical, sorted, nil), computed by index instead
// of by a scan; for samples 1..5 the median is 3 and the 0.9-quantile 5.
// No interpolation, so every answer is an observed value. It returns NaN for
// an empty tally, for p outside [0, 1] or NaN, when a sample is NaN, and
// when samples are not kept.
//
// The first call after an Add sorts a copy of the samples (O(n log n));
// later calls cost O(1) until the next Add.
func (t *Tally) Quantile(p float64) float64 {
	n := len(t.samples)
	if n == 0 || t.nan || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	s := t.sortedSamples()
	i := int(math.Ceil(p * float64(n)))
	if i < 1 {
		i = 1
	}
	if i > n { // cannot happen for p <= 1, kept as a guard against rounding
		i = n
	}
	return s[i-1]
}

// Sorted returns the samples in ascending order (nil when samples are not
// kept), as a read-only view valid until the next Add or Reset.
func (t *Tally) Sorted() []float64 {
	s := t.sortedSamples()
	return s[:len(s):len(s)]
}

func (t *Tally) sortedSamples() []float64 {
	if t.dirty || len(t.sorted) != len(t.samples) {
		t.sorted = append(t.sorted[:0], t.samples...)
		if t.nan {
			slices.Sort(t.sorted) // the radix sort has no place for a NaN
		} else {
			sortFloats(t.sorted)
		}
		t.dirty = false
	}
	return t.sorted
}

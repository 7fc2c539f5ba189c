package stats

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI returns the mean of samples and the half-width of its two-sided
// confidence interval at the given level (0.95 for 95%), using Student's t
// with n-1 degrees of freedom: halfWidth = t_{(1+level)/2, n-1} * s/sqrt(n).
// The samples must be independent and roughly normal: means of independent
// replications, or batch means from one long run (see BatchMeans), not raw
// per-customer waits, which are strongly correlated.
//
// It returns NaN, NaN for no samples, (mean, NaN) for one sample or a level
// outside (0, 1). The t quantile is computed, not drawn, so no random source
// is involved.
func MeanCI(samples []float64, level float64) (mean, halfWidth float64) {
	n := len(samples)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	mean, variance := stat.MeanVariance(samples, nil)
	if n < 2 || !(level > 0 && level < 1) {
		return mean, math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile((1 + level) / 2)
	return mean, t * math.Sqrt(variance/float64(n))
}

// BatchMeans splits samples (in time order) into the given number of
// consecutive batches of equal size and returns the mean of each. Batches
// long compared with the correlation time of the output are approximately
// independent, so MeanCI of the result gives a confidence interval from a
// single long run.
//
// When len(samples) is not a multiple of batches, the first
// len(samples) % batches samples are dropped: they are the ones nearest the
// (biased) start of the run. It returns nil for batches < 1 or fewer samples
// than batches.
func BatchMeans(samples []float64, batches int) []float64 {
	if batches < 1 || len(samples) < batches {
		return nil
	}
	size := len(samples) / batches
	samples = samples[len(samples)-size*batches:]
	out := make([]float64, batches)
	for b := range out {
		out[b] = stat.Mean(samples[b*size:(b+1)*size], nil)
	}
	return out
}

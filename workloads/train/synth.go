package train

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
)

// Mix is what synthetic jobs are drawn from: GPU counts and models with
// weights, iterations log-uniform between two bounds, Poisson arrivals.
type Mix struct {
	GPUs          []int
	GPUWeights    []float64 // one per GPUs entry; nil: equal
	Models        []string
	ModelWeights  []float64 // one per Models entry; nil: equal
	MinIterations int
	MaxIterations int
	MeanGapS      float64 // mean time between arrivals, seconds
}

// Synthesize draws n jobs from mix with the stream.
func Synthesize(n int, mix Mix, stream *engine.Stream) ([]Job, error) {
	if n < 1 || len(mix.GPUs) == 0 || len(mix.Models) == 0 || mix.MinIterations < 1 || mix.MaxIterations < mix.MinIterations || !(mix.MeanGapS >= 0) {
		return nil, fmt.Errorf("train: cannot synthesise %d jobs from %+v", n, mix)
	}
	w := mix.GPUWeights
	if w == nil {
		w = make([]float64, len(mix.GPUs))
		for i := range w {
			w[i] = 1
		}
	}
	var total float64
	for _, x := range w {
		total += x
	}
	for _, m := range mix.Models {
		if _, err := Lookup(m); err != nil {
			return nil, err
		}
	}
	lo, hi := math.Log(float64(mix.MinIterations)), math.Log(float64(mix.MaxIterations))
	jobs := make([]Job, n)
	var t float64
	for i := range jobs {
		if i > 0 && mix.MeanGapS > 0 {
			t += stream.Exp(mix.MeanGapS)
		}
		u := stream.Float64() * total
		k := 0
		for k < len(w)-1 && u >= w[k] {
			u -= w[k]
			k++
		}
		m, _ := Lookup(mix.Models[pickModel(mix.ModelWeights, len(mix.Models), stream)])
		it := int(math.Round(math.Exp(lo + (hi-lo)*stream.Float64())))
		jobs[i] = Job{ID: fmt.Sprintf("syn-%d", i+1), Arrival: engine.Seconds(t), GPUs: mix.GPUs[k], Iterations: max(1, it), Model: m.Name}
	}
	return jobs, nil
}

// pickModel draws a model's index: equally likely without weights (one
// draw of IntN, as before weights existed, so that unweighted mixes
// draw the same jobs), else by weight.
func pickModel(w []float64, n int, stream *engine.Stream) int {
	if w == nil {
		return stream.IntN(n)
	}
	var total float64
	for _, x := range w {
		total += x
	}
	u := stream.Float64() * total
	k := 0
	for k < len(w)-1 && u >= w[k] {
		u -= w[k]
		k++
	}
	return k
}

package trace

import (
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// Synthesize returns n jobs with the statistics of src: each job copies the
// parameters (GPUs, share, GPU types, run time, tenant, model, host demands)
// of a source job drawn uniformly at random, so their joint distribution is
// the trace's empirical one, and arrivals form a Poisson process at the
// source's rate (Rate(src)), the first at 0. IDs are "syn-000001", ... .
func Synthesize(src []workloads.Job, n int, stream *engine.Stream) ([]workloads.Job, error) {
	rate := Rate(src)
	if rate <= 0 {
		return nil, fmt.Errorf("trace: cannot estimate an arrival rate from %d source jobs with no spread in arrival; use SynthesizeAtRate", len(src))
	}
	return SynthesizeAtRate(src, n, rate, stream)
}

// SynthesizeAtRate is Synthesize with Poisson arrivals at ratePerHour.
func SynthesizeAtRate(src []workloads.Job, n int, ratePerHour float64, stream *engine.Stream) ([]workloads.Job, error) {
	if n < 0 {
		return nil, fmt.Errorf("trace: cannot synthesise %d jobs; want n >= 0", n)
	}
	g, err := NewSynthesizer(src, ratePerHour, stream)
	if err != nil {
		return nil, err
	}
	out := make([]workloads.Job, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out, nil
}

// Synthesizer draws the jobs of SynthesizeAtRate one at a time, so that a
// replay of millions of jobs need not hold them: the same source, rate
// and stream give the same jobs in the same order.
type Synthesizer struct {
	src     []workloads.Job
	meanGap float64 // seconds
	stream  *engine.Stream
	at      float64
	made    int
}

// NewSynthesizer returns a generator of jobs resampled from src with
// Poisson arrivals at ratePerHour, the first at 0.
func NewSynthesizer(src []workloads.Job, ratePerHour float64, stream *engine.Stream) (*Synthesizer, error) {
	switch {
	case len(src) == 0:
		return nil, fmt.Errorf("trace: no source jobs to resample")
	case !(ratePerHour > 0) || math.IsInf(ratePerHour, 0):
		return nil, fmt.Errorf("trace: arrival rate %g jobs/hour; want a finite rate > 0", ratePerHour)
	case stream == nil:
		return nil, fmt.Errorf("trace: Synthesize needs a random stream")
	}
	return &Synthesizer{src: src, meanGap: 3600 / ratePerHour, stream: stream}, nil
}

// Next returns the next job: a copy of a source job drawn uniformly, with
// the next arrival and the ID "syn-NNNNNN".
func (g *Synthesizer) Next() workloads.Job {
	if g.made > 0 {
		g.at += g.stream.Exp(g.meanGap)
	}
	j := g.src[g.stream.IntN(len(g.src))]
	g.made++
	j.ID = fmt.Sprintf("syn-%06d", g.made)
	j.Arrival = engine.Seconds(g.at)
	j.GPUTypes = slices.Clone(j.GPUTypes)
	j.Row = 0
	return j
}

// CompressTime returns the jobs with every arrival divided by factor (> 1
// packs the same jobs into a shorter time: factor times the load) and run
// times unchanged. The input is not modified.
func CompressTime(jobs []workloads.Job, factor float64) ([]workloads.Job, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("trace: time compression factor %g; want a finite factor > 0", factor)
	}
	out := cloneJobs(jobs)
	for i := range out {
		out[i].Arrival = engine.Time(math.Round(float64(out[i].Arrival) / factor))
	}
	return out, nil
}

// ResampleArrivals returns the jobs, in arrival order and with their
// parameters unchanged, at new Poisson arrivals with factor times the
// source's rate, the first at 0. Unlike CompressTime it also replaces the
// trace's burstiness by Poisson arrivals.
func ResampleArrivals(jobs []workloads.Job, factor float64, stream *engine.Stream) ([]workloads.Job, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("trace: load factor %g; want a finite factor > 0", factor)
	}
	rate := Rate(jobs) * factor
	if rate <= 0 {
		return nil, fmt.Errorf("trace: cannot estimate an arrival rate from %d jobs with no spread in arrival", len(jobs))
	}
	if stream == nil {
		return nil, fmt.Errorf("trace: ResampleArrivals needs a random stream")
	}
	out := cloneJobs(jobs)
	slices.SortStableFunc(out, func(a, b workloads.Job) int {
		if a.Arrival < b.Arrival {
			return -1
		}
		if a.Arrival > b.Arrival {
			return 1
		}
		return 0
	})
	meanGap := 3600 / rate
	var at float64
	for i := range out {
		if i > 0 {
			at += stream.Exp(meanGap)
		}
		out[i].Arrival = engine.Seconds(at)
	}
	return out, nil
}

func cloneJobs(jobs []workloads.Job) []workloads.Job {
	out := slices.Clone(jobs)
	for i := range out {
		out[i].GPUTypes = slices.Clone(out[i].GPUTypes)
	}
	return out
}

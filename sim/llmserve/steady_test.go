package llmserve

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// Azure's 2023 conversation trace fitted lognormal (FitLognormal over its
// 19,366 rows): prompts of mean 1,154.7 tokens and log sd 0.985, outputs
// of mean 211.1 and log sd 0.859.
var (
	azureConvPrompt = wllm.LengthDist{Kind: wllm.KindLognormal, Mean: 1154.7, Sigma: 0.985}
	azureConvOutput = wllm.LengthDist{Kind: wllm.KindLognormal, Mean: 211.1, Sigma: 0.859}
)

// synthetic is n Poisson arrivals at rate per second with azure-conv's
// length mix.
func synthetic(t testing.TB, n int, rate float64, seed uint64) wllm.Trace {
	t.Helper()
	tr, err := wllm.Synthesize(wllm.SyntheticConfig{Requests: n, Rate: rate, Prompt: azureConvPrompt, Output: azureConvOutput},
		engine.NewStream(seed, "llmserve-test"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Little's law on a steady run: the time-mean of the requests in the
// system, read from the samples (every 100 ms, running + waiting), equals
// throughput x mean E2E over a window [T1, T2) of length T, within
//
//	2 Δ J / T                       sampling: each of the J arrivals and
//	                                finishes in the window moves the Riemann
//	                                sum of the samples (taken at the first
//	                                step at or after each tick, Δ apart, or
//	                                0 when the replica is idle) by at most Δ
//	                                from the integral, once for the grid and
//	                                once for the step's delay after the tick;
//	+ (B1 + B2) / T                 the window's edges: B1 the time in the
//	                                window of requests already there at T1,
//	                                B2 the time after T2 of those arriving
//	                                in the window (λW counts their whole
//	                                E2E, the integral does not).
func TestLittlesLaw(t *testing.T) {
	p := testPlan(t)
	p.SampleEvery = 100 * engine.Millisecond
	tr := synthetic(t, 3000, 8, 3)
	res, _ := simulate(t, p, tr)
	conserved(t, res)
	span := tr.Requests[len(tr.Requests)-1].Arrival
	t1, t2 := span/10, span*9/10
	T := (t2 - t1).Seconds()
	var arrived, jumps int
	var e2e, b1, b2 float64
	for _, r := range res.Requests {
		if r.Arrival >= t1 && r.Arrival < t2 {
			arrived++
			jumps++
			e2e += r.E2E().Seconds()
			if r.Finish > t2 {
				b2 += (r.Finish - t2).Seconds()
			}
		}
		if r.Finish >= t1 && r.Finish < t2 {
			jumps++
		}
		if r.Arrival < t1 && r.Finish > t1 {
			b1 += (min(r.Finish, t2) - t1).Seconds()
		}
	}
	lambdaW := float64(arrived) / T * (e2e / float64(arrived))
	// Samples on the grid of ticks in [t1, t2); a tick without one was idle.
	var sum float64
	dt := p.SampleEvery
	for _, s := range res.Samples {
		// The sample stands for the last tick at or before it.
		tick := s.T - s.T%dt
		if tick >= t1 && tick < t2 {
			sum += float64(s.Running + s.Waiting)
		}
	}
	L := sum * dt.Seconds() / T
	tol := 2*dt.Seconds()*float64(jumps)/T + (b1+b2)/T
	if math.Abs(L-lambdaW) > tol {
		t.Errorf("mean in system %.3f, throughput x mean E2E %.3f: differ by %.3f > %.3f", L, lambdaW, math.Abs(L-lambdaW), tol)
	}
	t.Logf("L %.3f, λW %.3f, tolerance %.3f (steps %d, batch %.1f, KV mean %.2f peak %.2f)", L, lambdaW, tol, res.Steps, res.Summary.MeanBatch, res.Summary.MeanKVUsed, res.Summary.PeakKVUsed)
}

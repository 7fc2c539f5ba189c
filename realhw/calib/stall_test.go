package calib

import (
	"math"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw/host"
)

// stallRun is syntheticRun with, besides the stressor's wake-up misses, a
// stall that comes without it (other processes, kernel work): with
// probability stallP per request, uniform in [0.2, 2] ms. The 16-core
// machine's shares past the threshold (0.59/0.74/0.89% at measured loads
// 14/33/51%) extrapolate to about 0.47% at no load: such stalls are there.
func stallRun(u, miss, slice, stallP float64, perSize int, seed uint64) *host.PathRun {
	sizes := []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10}
	rng := engine.NewStream(seed, "stall")
	jit := func(x float64) float64 { return x * (1 + 0.04*(rng.Float64()-0.5)) }
	d := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	run := &host.PathRun{Config: host.PathConfig{Sizes: sizes, Requests: perSize, Load: u, ReplyBytes: synReply, ComputeBytes: 4096}}
	run.Load.Measured = u
	for i := 0; i < perSize*len(sizes); i++ {
		n := sizes[i%len(sizes)]
		net, cp, comp, rep := jit(synNet(n)), jit(float64(n)/synCopyBW), jit(synCompute), jit(synNet(synReply))
		for range wakeupsPerRequest {
			if rng.Float64() < u*miss {
				net += rng.Float64() * slice
			}
		}
		if rng.Float64() < stallP {
			net += 200e-6 + rng.Float64()*1.8e-3
		}
		run.Requests = append(run.Requests, host.Request{Bytes: n, RequestTimes: host.RequestTimes{
			Network: d(net), Copy: d(cp), Compute: d(comp), Reply: d(rep), EndToEnd: d(net + cp + comp + rep)}})
	}
	return run
}

// Stalls that the unloaded run has too are drawn by the spread tables at
// every load, so FitHost must not also count them as the stressor's
// wake-up misses (a review of issue 37 found them counted twice: a 0.4%
// stall made the fitted miss 0.0073 for a true 0.005, and the model's
// share past the tail threshold 1.05% against a real 0.76% at 40% load,
// which put its p99 into the slice waits, +166%). With and without such
// stalls the fitted miss is within 20% of the truth and the model's tail
// share within a third of a point of the real one at 20, 40 and 60%.
func TestFitHostSeparatesLoadIndependentStalls(t *testing.T) {
	const miss, slice = 0.005, 4.9e-3
	for _, stallP := range []float64{0, 0.004} {
		f, err := FitHost(stallRun(0, miss, slice, stallP, 5000, 1), []*host.PathRun{stallRun(0.8, miss, slice, stallP, 5000, 2)})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.WakeupMiss-miss)/miss > 0.2 {
			t.Errorf("stalls %.1f%%: fitted wake-up miss %.4f, want %.4f within 20%%", 100*stallP, f.WakeupMiss, miss)
		}
		for _, u := range []float64{0.2, 0.4, 0.6} {
			real := stallRun(u, miss, slice, stallP, 5000, 7)
			counts := map[int64]int{}
			var rv []float64
			for _, q := range real.Requests {
				counts[q.Bytes]++
				rv = append(rv, q.EndToEnd.Seconds()*1e6)
			}
			const seeds = 5
			model := 0.0
			for s := range uint64(seeds) {
				m, err := f.Simulate(counts, u, 11+s)
				if err != nil {
					t.Fatal(err)
				}
				model += tailShare(m.EndToEnd, f.TailUS) / seeds
			}
			if r := tailShare(rv, f.TailUS); math.Abs(model-r) > 0.0033 {
				t.Errorf("stalls %.1f%%, load %.0f%%: model's share past %.0f us %.2f%%, real %.2f%%; want within 0.33 points", 100*stallP, 100*u, f.TailUS, 100*model, 100*r)
			}
		}
	}
}

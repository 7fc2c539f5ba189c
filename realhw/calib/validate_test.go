package calib

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw/host"
)

// The synthetic testbed of the FitHost tests: a loopback message takes
// 20 us + 0.2 ns/B, the copy runs at 8 GB/s, the compute takes 5 us and
// the reply is a 2000 B message; every stage carries +-2% deterministic
// jitter. Under load u each of the two wake-ups of a request waits, with
// probability u*miss, a time uniform in [0, slice).
const (
	synNetFixed = 20e-6
	synNetByte  = 0.2e-9
	synCopyBW   = 8e9
	synCompute  = 5e-6
	synReply    = 2000
)

func synNet(n int64) float64 { return synNetFixed + synNetByte*float64(n) }

func syntheticRun(u, miss, slice float64, perSize int, seed uint64) *host.PathRun {
	return syntheticRunFloor(u, 0, miss, slice, perSize, seed)
}

// syntheticRunFloor is syntheticRun whose wake-ups, under any load u > 0,
// wait with probability floor + u*miss.
func syntheticRunFloor(u, floor, miss, slice float64, perSize int, seed uint64) *host.PathRun {
	sizes := []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10}
	rng := engine.NewStream(seed, "synthetic")
	jit := func(x float64) float64 { return x * (1 + 0.04*(rng.Float64()-0.5)) }
	d := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	run := &host.PathRun{Config: host.PathConfig{Sizes: sizes, Requests: perSize, Load: u, ReplyBytes: synReply, ComputeBytes: 4096}}
	for i := 0; i < perSize*len(sizes); i++ {
		n := sizes[i%len(sizes)]
		net, cp, comp, rep := jit(synNet(n)), jit(float64(n)/synCopyBW), jit(synCompute), jit(synNet(synReply))
		for range wakeupsPerRequest {
			// Drawn at every load, so the unloaded run's jitter stays
			// the stream it was before the floor.
			if r := rng.Float64(); u > 0 && r < floor+u*miss {
				net += rng.Float64() * slice
			}
		}
		run.Requests = append(run.Requests, host.Request{Bytes: n, RequestTimes: host.RequestTimes{
			Network: d(net), Copy: d(cp), Compute: d(comp), Reply: d(rep), EndToEnd: d(net + cp + comp + rep)}})
	}
	return run
}

// FitHost recovers the generating parameters: the stage costs from the
// unloaded run, and the wake-up model from the run at 80% load. The
// tolerances are those of the estimators on 20,000 requests: the miss
// fraction from about 1,500 waits (binomial, 2.6% standard error, 10%
// allowed), the slice from their mean (uniform, under 1% standard error, 5%
// allowed).
func TestFitHostRecovers(t *testing.T) {
	const miss, slice = 0.05, 2e-3
	f, err := FitHost(syntheticRun(0, 0, 0, 5000, 1), []*host.PathRun{syntheticRun(0.8, miss, slice, 5000, 2)})
	if err != nil {
		t.Fatal(err)
	}
	// The fixed costs are the fastest request's (the line lowered by the
	// shift); the line itself is fixed - shift.
	shift := map[string]float64{}
	for _, sp := range f.Spreads {
		shift[sp.Stage] = sp.ShiftUS
	}
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"network fixed (us)", f.NetworkFixedUS - shift["network"], synNetFixed * 1e6, 0.03},
		{"network per byte (ns)", f.NetworkPerByteNS, synNetByte * 1e9, 0.03},
		{"memcpy (GB/s)", f.MemcpyGBps, synCopyBW / 1e9, 0.03},
		{"compute (us)", f.ComputeUS - shift["compute"], synCompute * 1e6, 0.01},
		{"wakeup miss", f.WakeupMiss, miss, 0.10},
		{"slice (us)", f.SliceUS, slice * 1e6, 0.05},
	} {
		if math.Abs(c.got-c.want) > c.tol*c.want {
			t.Errorf("%s: %v, want %v within %.0f%%", c.name, c.got, c.want, 100*c.tol)
		}
	}
	// The jitter is symmetric and load-independent: no interference.
	if f.Interference > 0.02 {
		t.Errorf("interference %v, want about 0", f.Interference)
	}
	if f.ThresholdUS != minWaitThreshold*1e6 || f.WaitsSeen == 0 || !slices.Equal(f.FitLoads, []float64{0.8}) {
		t.Errorf("threshold %v us, %d waits seen, fit loads %v", f.ThresholdUS, f.WaitsSeen, f.FitLoads)
	}
	// The tail threshold: the largest unloaded median (256 KiB: the closed
	// form below) plus the 100 us floor.
	big := (synNet(256<<10) + float64(256<<10)/synCopyBW + synCompute + synNet(synReply)) * 1e6
	if math.Abs(f.TailUS-(big+100)) > 0.02*big {
		t.Errorf("tail threshold %v us, want about %v", f.TailUS, big+100)
	}
	// Interference is read off the compute stage: stretched by 8% at 80%
	// load, alpha = 0.08 / 0.8 = 0.1; a slower end to end alone (drift,
	// wake-ups) leaves it at 0.
	stretched := syntheticRun(0.8, miss, slice, 5000, 2)
	for i := range stretched.Requests {
		stretched.Requests[i].Compute = time.Duration(float64(stretched.Requests[i].Compute) * 1.08)
	}
	if g, err := FitHost(syntheticRun(0, 0, 0, 5000, 1), []*host.PathRun{stretched}); err != nil || math.Abs(g.Interference-0.1) > 0.01 {
		t.Errorf("compute stretched 8%% at 80%%: interference %v (%v), want 0.1", g.Interference, err)
	}
	slow := syntheticRun(0.8, miss, slice, 5000, 2)
	for i := range slow.Requests {
		slow.Requests[i].EndToEnd += 30 * time.Microsecond
	}
	if g, _ := FitHost(syntheticRun(0, 0, 0, 5000, 1), []*host.PathRun{slow}); g.Interference > 0.02 {
		t.Errorf("end to end 30 us slower, compute unchanged: interference %v, want about 0", g.Interference)
	}
	// Bad input: no loaded run, a loaded run given as the unloaded one.
	if _, err := FitHost(syntheticRun(0, 0, 0, 100, 1), nil); err == nil {
		t.Error("a fit without a loaded run was accepted")
	}
	if _, err := FitHost(syntheticRun(0.5, 0, 0, 100, 1), nil); err == nil {
		t.Error("a loaded run was accepted as the unloaded one")
	}
}

// The model side of the validation is sim/datapath's loopback path, and
// its closed forms hold: unloaded, every request takes exactly
// network(n) + n/memcpy + compute + network(reply) (each stage rounded up
// to the nanosecond); at load u a request waits for a slice with
// probability 1 - (1 - u m)^2, checked within five binomial standard
// deviations. The same seed gives the same latencies.
func TestSimulateClosedForm(t *testing.T) {
	f := HostFit{NetworkFixedUS: 20, NetworkPerByteNS: 0.2, MemcpyGBps: 8, ComputeUS: 5, WakeupMiss: 0.05, SliceUS: 2000, ReplyBytes: synReply, Cores: 1}
	counts := map[int64]int{1 << 10: 2000, 256 << 10: 2000}
	m, err := f.Simulate(counts, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.EndToEnd) != 4000 || len(m.Stages["network"]) != 4000 || len(m.Stages["reply"]) != 4000 {
		t.Fatalf("%d latencies, stages %d/%d; want 4000", len(m.EndToEnd), len(m.Stages["network"]), len(m.Stages["reply"]))
	}
	closed := func(n int64) float64 { return (synNet(n) + float64(n)/synCopyBW + synCompute + synNet(synReply)) * 1e6 }
	for i, e := range m.EndToEnd {
		n := int64(1 << 10)
		if i >= 2000 {
			n = 256 << 10
		}
		if math.Abs(e-closed(n)) > 0.004 {
			t.Fatalf("request %d (%d B): %v us, want %v us", i, n, e, closed(n))
		}
	}
	const u = 0.6
	m, err = f.Simulate(counts, u, 1)
	if err != nil {
		t.Fatal(err)
	}
	waited := 0
	for i, e := range m.EndToEnd {
		n := int64(1 << 10)
		if i >= 2000 {
			n = 256 << 10
		}
		if e > closed(n)+0.004 {
			waited++
		}
	}
	p := 1 - math.Pow(1-u*f.WakeupMiss, 2)
	if sd := math.Sqrt(4000 * p * (1 - p)); math.Abs(float64(waited)-4000*p) > 5*sd {
		t.Errorf("%d of 4000 requests waited, want %.0f +- %.0f", waited, 4000*p, 5*sd)
	}
	again, _ := f.Simulate(counts, u, 1)
	if !slices.Equal(m.EndToEnd, again.EndToEnd) {
		t.Error("same seed, different latencies")
	}
}

// The spreads of the synthetic testbed, derived by hand: every stage is
// its cost times 1 + 0.04 (U - 0.5), U uniform.
//   - compute: 5 us +-0.1 us, so the fixed part is the fastest, 4.9 us,
//     and the excess uniform on [0, 0.2] us: p50 0.1, p99 0.198;
//   - network and reply share one fixed cost, lowered by the lower of
//     their fastest residuals: the 256 KiB message's -2% of 72.43 us,
//     -1.449 us; the reply (20.4 us +-0.408) then has an excess of
//     1.449 + [-0.408, 0.408]: 1.041 to 1.857 us, median 1.449;
//   - the copy has no fixed part to lower: its symmetric jitter leaves
//     half the requests below bytes / rate, clamped to no excess; its
//     weighted line (through the origin) comes out with a tiny negative
//     intercept, so it is fitted in the host copy's two regimes, which
//     the fit's notes say.
//
// The tolerances are the sampling error of 20,000 uniforms (min and max
// within 1e-4 of the range; quantiles within 1%) plus the 1 ns rounding of
// time.Duration; for network and reply also the line's own error, fitted
// on per-size medians of jittered samples (0.014 us at 256 KiB here), so
// 0.03 us.
func TestFitHostSpreads(t *testing.T) {
	f, err := FitHost(syntheticRun(0, 0, 0, 5000, 1), []*host.PathRun{syntheticRun(0.8, 0.05, 2e-3, 5000, 2)})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]StageSpread{}
	for _, sp := range f.Spreads {
		by[sp.Stage] = sp
		if len(sp.P) != NumQuantiles || len(sp.ExcessUS) != NumQuantiles {
			t.Errorf("%s: %d probabilities, %d quantiles, want %d", sp.Stage, len(sp.P), len(sp.ExcessUS), NumQuantiles)
		}
		if err := sp.Spread().Validate(sp.Stage); err != nil {
			t.Errorf("%s: the fitted spread is not one sim/datapath accepts: %v", sp.Stage, err)
		}
	}
	big := synNet(256<<10) * 1e6
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64 // absolute, us
	}{
		{"compute fixed", f.ComputeUS, 4.9, 0.003},
		{"compute excess p50", by["compute"].P50US, 0.1, 0.005},
		{"compute excess p99", by["compute"].P99US, 0.198, 0.005},
		{"network shift", by["network"].ShiftUS, -0.02 * big, 0.03},
		{"reply shift", by["reply"].ShiftUS, -0.02 * big, 0.03},
		{"reply excess min", by["reply"].ExcessUS[0], 0.02*big - 0.02*synNet(synReply)*1e6, 0.03},
		{"reply excess p50", by["reply"].P50US, 0.02 * big, 0.02},
		{"reply excess max", by["reply"].ExcessUS[NumQuantiles-1], 0.02*big + 0.02*synNet(synReply)*1e6, 0.03},
		{"network excess min", by["network"].ExcessUS[0], 0, 0.001},
		{"copy shift", by["copy"].ShiftUS, 0, 0},
		{"copy excess p25", by["copy"].ExcessUS[25], 0, 0},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s: %v us, want %v +- %v", c.name, c.got, c.want, c.tol)
		}
	}
	if cl := by["copy"].Clamped; cl < 9000 || cl > 11000 {
		t.Errorf("copy: %d of 20000 requests clamped, want about half", cl)
	}
	if len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "tcp-copy: two-regime fit of a 1024 B to 262144 B sweep") {
		t.Errorf("notes %q: want the two-regime copy fit said", f.Notes)
	}
	// The model with spreads reproduces the unloaded compute stage's
	// spread (4.9 .. 5.1 us); without, it is the constant 4.9 us.
	counts := map[int64]int{1 << 10: 2000}
	m, err := f.Simulate(counts, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	comp := m.Stages["compute"]
	if lo, hi := slices.Min(comp), slices.Max(comp); lo < 4.899 || hi > 5.101 || hi-lo < 0.19 {
		t.Errorf("model compute spans %v..%v us, want 4.9..5.1", lo, hi)
	}
	f.noSpread = true
	if m, _ := f.Simulate(counts, 0, 1); slices.Min(m.Stages["compute"]) != slices.Max(m.Stages["compute"]) {
		t.Error("without spreads the compute stage is not constant")
	}
}

// skewedRun is an unloaded synthetic testbed whose stages have a tail, as
// a real host's do with no load at all (the 16-core machine's stage p99s
// were 1.4x (compute) to 7x (copy) their medians): each stage is its cost
// plus an exponential excess (network mean 4 us, copy 1 us, compute
// 0.5 us, reply 3 us) and, in 2% of requests (network) or 1% (copy,
// reply), a stall of 40, 10 or 15 us. The costs are the 16-core machine's
// fit (message 10.48 us + 0.1321 ns/B, copy 54.72 GB/s, compute 6.155 us):
// its 256 KiB request takes 67 us at the median, the model's p99 there.
func skewedRun(perSize int, seed uint64) *host.PathRun {
	sizes := []int64{1 << 10, 16 << 10, 64 << 10, 256 << 10}
	rng := engine.NewStream(seed, "skewed")
	d := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	run := &host.PathRun{Config: host.PathConfig{Sizes: sizes, Requests: perSize, ReplyBytes: synReply, ComputeBytes: 4096}}
	for i := 0; i < perSize*len(sizes); i++ {
		n := sizes[i%len(sizes)]
		stall := func(p, s float64) float64 {
			if rng.Float64() < p {
				return s
			}
			return 0
		}
		msg := func(n int64) float64 { return 10.48e-6 + 0.1321e-9*float64(n) }
		net := msg(n) + rng.Exp(4e-6) + stall(0.02, 40e-6)
		cp := float64(n)/54.72e9 + rng.Exp(1e-6) + stall(0.01, 10e-6)
		comp := 6.155e-6 + rng.Exp(0.5e-6)
		rep := msg(synReply) + rng.Exp(3e-6) + stall(0.01, 15e-6)
		run.Requests = append(run.Requests, host.Request{Bytes: n, RequestTimes: host.RequestTimes{
			Network: d(net), Copy: d(cp), Compute: d(comp), Reply: d(rep), EndToEnd: d(net + cp + comp + rep)}})
	}
	return run
}

// The spreads carry an unloaded host's tail into the model: fitted on one
// skewed run and compared with another (another seed, as a held-out
// level), the model's p50, p99 and p99.9 are within 3%, 5% and 10% of the
// real ones (sampling error of 20,000 requests: the p99.9 rests on 20),
// where the model with constant stages (at the line's and the median's
// costs, as before spreads) misses the p99 by over 15% and the p99.9 by
// over 30% (-20% and -40% on this run): its tail is about its largest
// size's median, as on the 16-core machine (p99 -32 to -38%).
func TestSpreadsReproduceTail(t *testing.T) {
	fit, err := FitHost(skewedRun(5000, 1), []*host.PathRun{syntheticRun(0.8, 0.05, 2e-3, 5000, 2)})
	if err != nil {
		t.Fatal(err)
	}
	held := skewedRun(5000, 3)
	counts := map[int64]int{}
	var real []float64
	for _, q := range held.Requests {
		counts[q.Bytes]++
		real = append(real, q.EndToEnd.Seconds()*1e6)
	}
	m, err := fit.Simulate(counts, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := levelError(0, real, m.EndToEnd, 0)
	if math.Abs(l.P50Error) > 0.03 || math.Abs(l.P99Error) > 0.05 || math.Abs(l.P999Error) > 0.10 {
		t.Errorf("with spreads: p50 %+.1f%%, p99 %+.1f%%, p99.9 %+.1f%%; want within 3, 5, 10%% (real p99 %.1f us, model %.1f)",
			100*l.P50Error, 100*l.P99Error, 100*l.P999Error, l.RealP99US, l.ModelP99US)
	}
	fit.noSpread = true
	m0, err := fit.Simulate(counts, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	l0 := levelError(0, real, m0.EndToEnd, 0)
	t.Logf("with spreads p50 %+.2f%% p99 %+.2f%% p99.9 %+.2f%%; constant p50 %+.2f%% p99 %+.2f%% p99.9 %+.2f%%", 100*l.P50Error, 100*l.P99Error, 100*l.P999Error, 100*l0.P50Error, 100*l0.P99Error, 100*l0.P999Error)
	if l0.P99Error > -0.15 || l0.P999Error > -0.30 {
		t.Errorf("constant stages: p99 error %+.1f%%, p99.9 %+.1f%%; want below -15%% and -30%% (the tail this test is about)", 100*l0.P99Error, 100*l0.P999Error)
	}
}

// With two loaded fit runs FitHost recovers a wake-up miss with a floor,
// q(u) = floor + m u (hand-derived: q = 1.4% at 10% load, 4.2% at 80%).
// The tolerances are those of the estimators on 20,000 requests a run:
// q at 10% from about 560 waiting requests (a 4% standard error), the
// floor q(0.1) - 0.1 m from both runs (about 7%, 25% allowed), the slope
// (q(0.8) - q(0.1)) / 0.7 (about 4%, 12% allowed). One loaded run fits
// through the origin (floor 0), as the slice model did before the floor.
func TestFitHostMissFloor(t *testing.T) {
	const floor, miss, slice = 0.01, 0.04, 2e-3
	unloaded := syntheticRunFloor(0, floor, miss, slice, 5000, 1)
	f, err := FitHost(unloaded, []*host.PathRun{
		syntheticRunFloor(0.1, floor, miss, slice, 5000, 2),
		syntheticRunFloor(0.8, floor, miss, slice, 5000, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.WakeupMissFloor-floor) > 0.25*floor || math.Abs(f.WakeupMiss-miss) > 0.12*miss {
		t.Errorf("floor %v, miss %v; want %v and %v", f.WakeupMissFloor, f.WakeupMiss, floor, miss)
	}
	if len(f.FitTailShares) != 2 || f.UnloadedTailShare != 0 || !(f.FitTailShares[0] < f.FitTailShares[1]) {
		t.Errorf("tail shares: unloaded %v, fit %v; want 0 and two rising", f.UnloadedTailShare, f.FitTailShares)
	}
	one, err := FitHost(unloaded, []*host.PathRun{syntheticRunFloor(0.8, floor, miss, slice, 5000, 3)})
	if err != nil || one.WakeupMissFloor != 0 {
		t.Errorf("one loaded run: floor %v (%v), want 0", one.WakeupMissFloor, err)
	}
}

// fitMiss's line and its clamps, on hand-computed points (equal weights).
func TestFitMiss(t *testing.T) {
	for _, c := range []struct {
		name     string
		u, q     []float64
		floor, m float64
	}{
		// Slope (0.011 - 0.004) / 0.7 = 0.01, floor 0.004 - 0.001.
		{"line", []float64{0.1, 0.8}, []float64{0.004, 0.011}, 0.003, 0.01},
		// One load: through the origin, 0.008 / 0.8.
		{"one load", []float64{0.8}, []float64{0.008}, 0, 0.01},
		// Slope 0.02 gives floor -0.003: refitted through the origin,
		// (0.2 x 0.001 + 0.8 x 0.013) / (0.04 + 0.64).
		{"negative floor", []float64{0.2, 0.8}, []float64{0.001, 0.013}, 0, 0.0106 / 0.68},
		// A falling line: a constant share, their mean.
		{"negative slope", []float64{0.2, 0.8}, []float64{0.01, 0.005}, 0.0075, 0},
		// Loads closer than 5 points: through the origin, as one load.
		{"close loads", []float64{0.78, 0.8}, []float64{0.0078, 0.008}, 0, 0.01},
	} {
		w := make([]float64, len(c.u))
		for i := range w {
			w[i] = 1
		}
		floor, m := fitMiss(c.u, c.q, w)
		if math.Abs(floor-c.floor) > 1e-9 || math.Abs(m-c.m) > 1e-9 {
			t.Errorf("%s: floor %v, m %v; want %v and %v", c.name, floor, m, c.floor, c.m)
		}
	}
}

// Validate's runs go in ascending load, calibration and validation runs
// interleaved, the calibration run first at a shared load.
func TestRunPlan(t *testing.T) {
	got := runPlan([]float64{0, 0.1, 0.8}, []float64{0, 0.6, 0.2, 0.4})
	want := []planned{{0, true, 0}, {0, false, 0}, {0.1, true, 0}, {0.2, false, 2}, {0.4, false, 3}, {0.6, false, 1}, {0.8, true, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
}

// The model runs at the stressor's duty on the pinned CPU where measured,
// else over the cores, else the configured target.
func TestModelLoad(t *testing.T) {
	for _, c := range []struct {
		cfg, mean, onCPU, want float64
	}{
		{0.6, 0.588, 0.429, 0.429},
		{0.6, 0.588, 0, 0.588},
		{0.6, 0, 0, 0.6},
		{0.6, 0.588, 1, 0.588}, // a duty of 1 is not a measurement the model can run at
	} {
		run := &host.PathRun{Config: host.PathConfig{Load: c.cfg}}
		run.Load.Measured, run.Load.OnFirstCPU = c.mean, c.onCPU
		if got := modelLoad(run); got != c.want {
			t.Errorf("configured %v, mean %v, on CPU %v: model load %v, want %v", c.cfg, c.mean, c.onCPU, got, c.want)
		}
	}
}

// withIdleWake adds d to both wake-up stages (network, reply) of every
// request of run: the synthetic testbed's unloaded core leaving idle.
func withIdleWake(run *host.PathRun, d time.Duration) *host.PathRun {
	for i := range run.Requests {
		q := &run.Requests[i]
		q.Network += d
		q.Reply += d
		q.EndToEnd += 2 * d
	}
	return run
}

// FitHost reports the drop of the wake-up stages from the unloaded run to
// the least-loaded fit run (5 us added to each of the unloaded run's two
// wake-ups: 5 us, within the medians' 0.2 us error on jittered stages),
// signed, and applies nothing: the fixed network cost is the one without
// the drop's knowledge, and the model's p50 at 20% load is its unloaded
// one (within 1 us; no wake-up waits at miss 0).
func TestFitHostWakeDrop(t *testing.T) {
	const idle = 5 * time.Microsecond
	unloaded := withIdleWake(syntheticRun(0, 0, 0, 5000, 1), idle)
	f, err := FitHost(unloaded, []*host.PathRun{syntheticRun(0.8, 0, 2e-3, 5000, 3), syntheticRun(0.1, 0, 2e-3, 5000, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.WakeDropUS-5) > 0.2 || f.WakeDropLoad != 0.1 {
		t.Errorf("wake-up drop %v us at load %v, want 5 us at 0.1", f.WakeDropUS, f.WakeDropLoad)
	}
	// The other way round (loaded wake-ups slower): a negative drop.
	slow, _ := FitHost(syntheticRun(0, 0, 0, 5000, 1), []*host.PathRun{withIdleWake(syntheticRun(0.1, 0, 2e-3, 5000, 2), idle)})
	if math.Abs(slow.WakeDropUS+5) > 0.2 {
		t.Errorf("loaded wake-ups 5 us slower: drop %v us, want -5", slow.WakeDropUS)
	}
	counts := map[int64]int{1 << 10: 4000}
	m0, err := f.Simulate(counts, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m20, err := f.Simulate(counts, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p0, p20 := quantile(m0.EndToEnd, 0.5), quantile(m20.EndToEnd, 0.5); math.Abs(p0-p20) > 1 {
		t.Errorf("model p50 %v us unloaded, %v us at 20%%: the drop was applied", p0, p20)
	}
}

// The 16-core H200 host's validation (realhw/data/h200-2026-11-27/
// host-validate-16core, five repetitions of bench/host-validate.sh run
// with the code frozen at 9c36d50) reads back as this package writes it:
// four levels at 0/20/40/60%, a fit from the unloaded run and runs at 10%
// and 30% (on the pinned CPU too), no level near a fit load, and every
// level's model at the load on the pinned CPU where one was measured
// (modelLoad).
func TestH200HostValidationFixture(t *testing.T) {
	for i := 1; i <= 5; i++ {
		path := fmt.Sprintf("../data/h200-2026-11-27/host-validate-16core/rep%d/validation.json", i)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v Validation
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		f := v.Fit
		if len(f.FitLoads) != 2 || math.Abs(f.FitLoads[0]-0.1) > 0.01 || math.Abs(f.FitLoads[1]-0.3) > 0.01 || f.WakeupMissFloor < 0 || len(f.FitTailShares) != 2 {
			t.Errorf("%s: fit loads %v, floor %v, fit shares %v", path, f.FitLoads, f.WakeupMissFloor, f.FitTailShares)
		}
		var loads []float64
		for _, l := range v.Levels {
			loads = append(loads, l.BackgroundLoad)
			want := l.MeasuredLoad
			if l.MeasuredLoadOnCPU > 0 {
				want = l.MeasuredLoadOnCPU
			}
			if l.BackgroundLoad > 0 && math.Abs(l.ModelLoad-want) > 1e-4 {
				t.Errorf("%s: level %v ran the model at %v, want %v", path, l.BackgroundLoad, l.ModelLoad, want)
			}
			if l.NearFitLoad != 0 {
				t.Errorf("%s: level %v is near the fit load %v", path, l.BackgroundLoad, l.NearFitLoad)
			}
		}
		if !slices.Equal(loads, []float64{0, 0.2, 0.4, 0.6}) {
			t.Errorf("%s: levels %v", path, loads)
		}
	}
	if p, err := LoadProfile("../data/h200-2026-11-27/host-validate-16core/rep1/profile.yaml"); err != nil || len(p.Spread) != 4 {
		t.Errorf("the H200 host's profile: %v (%v)", p, err)
	}
}

// A validation level whose load on the model's core lies within 5 points
// of a fit run's is marked near it (the closest); a target that is a
// calibration load, or 0, is not (used_for_fit says that).
func TestNearFitLoad(t *testing.T) {
	cal, fit := []float64{0, 0.1, 0.8}, []float64{0.1, 0.43}
	for _, c := range []struct{ u, mu, want float64 }{
		{0.6, 0.421, 0.43}, // the 16-core host: 60% held 42% on the pinned core
		{0.4, 0.388, 0.43}, // 4.2 points from the fit
		{0.2, 0.2, 0},      // between the fit loads
		{0.8, 0.43, 0},     // a calibration load itself
		{0, 0, 0},          // the unloaded level
		{0.12, 0.12, 0.1},  // closest of two
	} {
		if got := nearFitLoad(c.u, c.mu, cal, fit); got != c.want {
			t.Errorf("target %v at %v: near %v, want %v", c.u, c.mu, got, c.want)
		}
	}
}

// Fit runs whose loads on the model's core lie within 5 points fit the
// miss through the origin, and say so in a note.
func TestFitHostCloseFitLoadsNoted(t *testing.T) {
	f, err := FitHost(syntheticRun(0, 0, 0, 2000, 1), []*host.PathRun{syntheticRun(0.78, 0.05, 2e-3, 2000, 2), syntheticRun(0.8, 0.05, 2e-3, 2000, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if f.WakeupMissFloor != 0 || !strings.Contains(strings.Join(f.Notes, "\n"), "lie within 5 points of each other") {
		t.Errorf("floor %v, notes %q", f.WakeupMissFloor, f.Notes)
	}
}

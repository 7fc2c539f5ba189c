package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"gonum.org/v1/gonum/stat"
)

func near(a, b, tol float64) bool {
	if math.IsNaN(b) {
		return math.IsNaN(a)
	}
	return math.Abs(a-b) <= tol
}

func TestTallySummaries(t *testing.T) {
	// Samples 1..5 added out of order. By hand: mean 15/5 = 3; squared
	// deviations 4+1+0+1+4 = 10, sample variance 10/4 = 2.5; min 1, max 5.
	var tl Tally
	for _, x := range []float64{4, 1, 5, 2, 3} {
		tl.Add(x)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"count", float64(tl.Count()), 5},
		{"sum", tl.Sum(), 15},
		{"mean", tl.Mean(), 3},
		{"variance", tl.Variance(), 2.5},
		{"stddev", tl.StdDev(), math.Sqrt(2.5)},
		{"min", tl.Min(), 1},
		{"max", tl.Max(), 5},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := tl.Samples(); !slices.Equal(got, []float64{4, 1, 5, 2, 3}) {
		t.Errorf("Samples() = %v, want insertion order [4 1 5 2 3]", got)
	}
}

func TestTallyQuantile(t *testing.T) {
	var tl Tally
	for _, x := range []float64{4, 1, 5, 2, 3} {
		tl.Add(x)
	}
	// The ceil(p*n)-th smallest of 1..5 (the first for p = 0).
	cases := []struct{ p, want float64 }{
		{0, 1},
		{0.2, 1},    // ceil(1.0) = 1
		{0.21, 2},   // ceil(1.05) = 2
		{0.5, 3},    // ceil(2.5) = 3
		{0.9, 5},    // ceil(4.5) = 5
		{0.8, 4},    // ceil(4.0) = 4
		{1, 5},      // the maximum
		{-0.1, nan}, // out of range
		{1.1, nan},
		{nan, nan},
	}
	for _, c := range cases {
		if got := tl.Quantile(c.p); !near(got, c.want, 0) {
			t.Errorf("Quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	// A later Add must invalidate the sorted copy: with 0 added, the
	// median of 0..5 is the ceil(3)=3rd smallest, 2.
	tl.Add(0)
	if got := tl.Quantile(0.5); got != 2 {
		t.Errorf("after Add(0), Quantile(0.5) = %v, want 2", got)
	}
	if got := tl.Min(); got != 0 {
		t.Errorf("after Add(0), Min = %v, want 0", got)
	}
}

var nan = math.NaN()

// The index formula must agree with gonum's scan (a second implementation)
// at every p, including the boundaries where ceil matters.
func TestTallyQuantileMatchesGonum(t *testing.T) {
	s := engine.NewStream(1, "tally")
	for _, n := range []int{1, 2, 3, 7, 10, 100, 1001} {
		var tl Tally
		for range n {
			tl.Add(math.Round(s.Exp(10))) // rounding creates ties
		}
		sorted := slices.Clone(tl.Samples())
		slices.Sort(sorted)
		for k := 0; k <= 200; k++ {
			p := float64(k) / 200
			want := stat.Quantile(p, stat.Empirical, sorted, nil)
			if got := tl.Quantile(p); got != want {
				t.Fatalf("n=%d p=%v: Quantile = %v, gonum = %v", n, p, got, want)
			}
		}
	}
}

func TestTallyEmptyAndDegenerate(t *testing.T) {
	var empty Tally
	for name, got := range map[string]float64{
		"mean": empty.Mean(), "variance": empty.Variance(), "stddev": empty.StdDev(),
		"min": empty.Min(), "max": empty.Max(), "p50": empty.Quantile(0.5),
	} {
		if !math.IsNaN(got) {
			t.Errorf("empty tally: %s = %v, want NaN", name, got)
		}
	}
	if empty.Count() != 0 || empty.Sum() != 0 || len(empty.Samples()) != 0 {
		t.Errorf("empty tally: count %d sum %v samples %v", empty.Count(), empty.Sum(), empty.Samples())
	}

	var one Tally
	one.Add(7)
	if one.Mean() != 7 || !math.IsNaN(one.Variance()) || one.Quantile(0.99) != 7 {
		t.Errorf("one sample 7: mean %v variance %v p99 %v, want 7 NaN 7", one.Mean(), one.Variance(), one.Quantile(0.99))
	}

	var withNaN Tally
	withNaN.Add(1)
	withNaN.Add(math.NaN())
	withNaN.Add(2)
	if !math.IsNaN(withNaN.Mean()) || !math.IsNaN(withNaN.Quantile(0.5)) || !math.IsNaN(withNaN.Max()) {
		t.Errorf("a NaN sample must show: mean %v p50 %v max %v", withNaN.Mean(), withNaN.Quantile(0.5), withNaN.Max())
	}
	withNaN.Reset()
	withNaN.Add(3)
	if withNaN.Count() != 1 || withNaN.Mean() != 3 || withNaN.Quantile(0) != 3 {
		t.Errorf("after Reset and Add(3): count %d mean %v p0 %v", withNaN.Count(), withNaN.Mean(), withNaN.Quantile(0))
	}
}

func TestTimeWeighted(t *testing.T) {
	s := engine.Second
	// v = 0 on [0,1s), 2 on [1s,3s), 1 on [3s,4s]:
	// integral 0 + 4 + 1 = 5 value-seconds, mean 5/4 = 1.25, max 2.
	var w TimeWeighted
	if !math.IsNaN(w.Mean(0)) {
		t.Errorf("Mean over an empty window = %v, want NaN", w.Mean(0))
	}
	w.Set(1*s, 2)
	w.Set(3*s, 1)
	if got := w.Integral(4 * s); !near(got, 5, 1e-12) {
		t.Errorf("Integral(4s) = %v, want 5", got)
	}
	if got := w.Mean(4 * s); !near(got, 1.25, 1e-12) {
		t.Errorf("Mean(4s) = %v, want 1.25", got)
	}
	if w.Max() != 2 || w.Min() != 0 || w.Value() != 1 {
		t.Errorf("max %v min %v value %v, want 2 0 1", w.Max(), w.Min(), w.Value())
	}

	// Same history, warm-up reset at 2s: 2 on [2s,3s), 1 on [3s,4s]:
	// mean (2+1)/2 = 1.5; max restarts from the value held at 2s (2),
	// min is then 1.
	var r TimeWeighted
	r.Set(1*s, 2)
	r.Reset(2 * s)
	if !math.IsNaN(r.Mean(2 * s)) {
		t.Errorf("Mean at the reset instant = %v, want NaN", r.Mean(2*s))
	}
	r.Add(3*s, -1)
	if got := r.Mean(4 * s); !near(got, 1.5, 1e-12) {
		t.Errorf("after Reset(2s): Mean(4s) = %v, want 1.5", got)
	}
	if r.Max() != 2 || r.Min() != 1 || r.Start() != 2*s {
		t.Errorf("after Reset(2s): max %v min %v start %v, want 2 1 2s", r.Max(), r.Min(), r.Start())
	}

	// NewTimeWeighted starts at a given time and value: 3 on [5s,7s] -> 3.
	n := NewTimeWeighted(5*s, 3)
	if got := n.Mean(7 * s); got != 3 {
		t.Errorf("NewTimeWeighted(5s,3).Mean(7s) = %v, want 3", got)
	}
}

func TestTimeWeightedBackwardsPanics(t *testing.T) {
	var w TimeWeighted
	w.Set(2*engine.Second, 1)
	defer func() {
		if recover() == nil {
			t.Errorf("Set at 1s after Set at 2s did not panic")
		}
	}()
	w.Set(engine.Second, 0)
}

func TestMeanCI(t *testing.T) {
	// Samples 1..5: mean 3, s^2 = 2.5, standard error sqrt(2.5/5) = 0.70711.
	// t_{0.975,4} = 2.776 and t_{0.95,4} = 2.132 (printed t tables), so the
	// half-widths are 1.9630 and 1.5076.
	// Samples {0, 2}: mean 1, s^2 = 2, standard error 1, t_{0.975,1} = 12.706.
	cases := []struct {
		name     string
		samples  []float64
		level    float64
		mean, hw float64
		tol      float64 // tables give t to 3 decimals
	}{
		{"1..5 at 95%", []float64{1, 2, 3, 4, 5}, 0.95, 3, 2.776 * math.Sqrt(0.5), 1e-3},
		{"1..5 at 90%", []float64{1, 2, 3, 4, 5}, 0.90, 3, 2.132 * math.Sqrt(0.5), 1e-3},
		{"two samples", []float64{0, 2}, 0.95, 1, 12.706, 1e-3},
		{"one sample", []float64{4}, 0.95, 4, nan, 0},
		{"empty", nil, 0.95, nan, nan, 0},
		{"level 1", []float64{1, 2}, 1, 1.5, nan, 0},
		{"level 0", []float64{1, 2}, 0, 1.5, nan, 0},
		{"constant", []float64{2, 2, 2}, 0.95, 2, 0, 0},
	}
	for _, c := range cases {
		m, hw := MeanCI(c.samples, c.level)
		if !near(m, c.mean, 1e-12) || !near(hw, c.hw, c.tol) {
			t.Errorf("%s: MeanCI = %v ± %v, want %v ± %v", c.name, m, hw, c.mean, c.hw)
		}
	}
}

func TestBatchMeans(t *testing.T) {
	seq := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i + 1)
		}
		return s
	}
	cases := []struct {
		name    string
		samples []float64
		batches int
		want    []float64
	}{
		// 1..10 in 3 batches of 3; the first sample is dropped:
		// [2 3 4] [5 6 7] [8 9 10].
		{"drop head", seq(10), 3, []float64{3, 6, 9}},
		{"exact", seq(6), 2, []float64{2, 5}},
		{"one batch", seq(4), 1, []float64{2.5}},
		{"batch size one", seq(3), 3, []float64{1, 2, 3}},
		{"too few samples", seq(2), 3, nil},
		{"zero batches", seq(5), 0, nil},
		{"empty", nil, 1, nil},
	}
	for _, c := range cases {
		if got := BatchMeans(c.samples, c.batches); !slices.Equal(got, c.want) {
			t.Errorf("%s: BatchMeans = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTallyWithoutSamples(t *testing.T) {
	// Samples 1..5 as running moments only: the same mean 3 and variance
	// 2.5 as TestTallySummaries (Welford's update is exact on these small
	// integers), no quantiles.
	var tl Tally
	tl.KeepSamples(false)
	for _, x := range []float64{4, 1, 5, 2, 3} {
		tl.Add(x)
	}
	if tl.Count() != 5 || tl.Mean() != 3 || tl.Variance() != 2.5 || tl.Sum() != 15 || tl.Min() != 1 || tl.Max() != 5 {
		t.Errorf("moments only: count %d mean %v variance %v sum %v min %v max %v, want 5 3 2.5 15 1 5",
			tl.Count(), tl.Mean(), tl.Variance(), tl.Sum(), tl.Min(), tl.Max())
	}
	if !math.IsNaN(tl.Quantile(0.5)) || tl.Samples() != nil || len(tl.Sorted()) != 0 {
		t.Errorf("moments only: Quantile %v, Samples %v: want NaN and nil", tl.Quantile(0.5), tl.Samples())
	}
	tl.Reset()
	if tl.Count() != 0 || !math.IsNaN(tl.Mean()) {
		t.Errorf("after Reset: count %d mean %v", tl.Count(), tl.Mean())
	}

	// Switching off after samples were added keeps their moments; the
	// running moments must agree with gonum's two-pass formula (a second
	// implementation) on skewed data.
	s := engine.NewStream(3, "welford")
	var kept, moments Tally
	for i := range 10000 {
		x := s.Exp(1e-3) + 5
		kept.Add(x)
		moments.Add(x)
		if i == 100 {
			moments.KeepSamples(false)
		}
	}
	if kept.Count() != moments.Count() ||
		math.Abs(kept.Mean()-moments.Mean()) > 1e-12*kept.Mean() ||
		math.Abs(kept.Variance()-moments.Variance()) > 1e-9*kept.Variance() {
		t.Errorf("running moments: n %d mean %v var %v; stored samples: n %d mean %v var %v",
			moments.Count(), moments.Mean(), moments.Variance(), kept.Count(), kept.Mean(), kept.Variance())
	}
}

// Grow reserves room: the samples added after it fit without another
// allocation, and the summaries are those of the samples, not of the room.
// A tally keeping moments only ignores it.
func TestTallyGrow(t *testing.T) {
	var tl Tally
	tl.Add(7)
	tl.Grow(2000)
	// AllocsPerRun calls the function twice (a warm-up, then the run).
	if allocs := testing.AllocsPerRun(1, func() {
		for i := range 1000 {
			tl.Add(float64(i))
		}
	}); allocs != 0 {
		t.Errorf("2000 Adds after Grow(2000) allocated %v times, want 0", allocs)
	}
	// 2001 samples: 7, then 0..999 twice; mean (7 + 2*499500) / 2001.
	if tl.Count() != 2001 || tl.Mean() != (7+2*499500)/2001.0 || tl.Quantile(1) != 999 {
		t.Errorf("after Grow: count %d, mean %v, max quantile %v", tl.Count(), tl.Mean(), tl.Quantile(1))
	}
	var m Tally
	m.KeepSamples(false)
	m.Grow(1 << 20)
	if cap(m.samples) != 0 {
		t.Errorf("Grow on a moments-only tally reserved %d samples, want none", cap(m.samples))
	}
}

// sortFloats (a radix sort) must order every kind of input as slices.Sort
// does: positive and negative numbers over 600 decades, zeros of both
// signs, infinities, subnormals, many duplicates, all equal, already
// sorted and reversed, just below and above the length where it hands
// over to slices.Sort.
func TestSortFloatsMatchesSlicesSort(t *testing.T) {
	rng := engine.NewStream(1, "sort")
	gens := map[string]func(i int) float64{
		"latencies":  func(int) float64 { return 50 + rng.Exp(400) },
		"mixed sign": func(int) float64 { return (rng.Float64() - 0.5) * math.Pow(10, 600*rng.Float64()-300) },
		"specials": func(int) float64 {
			return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 5e-324, -5e-324, math.MaxFloat64, 1}[rng.IntN(8)]
		},
		"few values": func(int) float64 { return float64(rng.IntN(5)) },
		"all equal":  func(int) float64 { return 42 },
		"ascending":  func(i int) float64 { return float64(i) * 0.5 },
		"descending": func(i int) float64 { return -float64(i) * 3 },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, radixMin - 1, radixMin, 5000, 100000} {
			got := make([]float64, n)
			for i := range got {
				got[i] = gen(i)
			}
			want := slices.Clone(got)
			slices.Sort(want)
			sortFloats(got)
			for i := range got {
				if got[i] != want[i] { // == : -0 and +0 may trade places
					t.Fatalf("%s, n=%d: at %d got %v, slices.Sort %v", name, n, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkSortLatencies: the radix sort against slices.Sort on a million
// latency-like samples (the p99 of a long data-path run sorts 3 million).
func BenchmarkSortLatencies(b *testing.B) {
	rng := engine.NewStream(1, "sort-bench")
	src := make([]float64, 1_000_000)
	for i := range src {
		src[i] = 50 + rng.Exp(400)
	}
	buf := make([]float64, len(src))
	for _, impl := range []struct {
		name string
		sort func([]float64)
	}{{"slices.Sort", slices.Sort[[]float64]}, {"radix", sortFloats}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, src)
				impl.sort(buf)
			}
		})
	}
}

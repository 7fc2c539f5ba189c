package trace

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// TestInspect checks the statistics against values derived by hand.
func TestInspect(t *testing.T) {
	h := engine.Hour
	res := Result{Format: FormatGeneric, Source: "hand", Read: 6, Used: 5,
		RejectCounts: map[string]int{"cpu-only": 1},
		Rejected:     []Rejection{{Row: 4, Kind: "cpu-only", Reason: "CPU-only job (no GPU requested)"}},
		Jobs: []workloads.Job{
			{ID: "a", Arrival: 0, Duration: 1 * h, NumGPU: 1, GPUMilli: 500, Tenant: "x"},
			{ID: "b", Arrival: 1 * h, Duration: 2 * h, NumGPU: 1, GPUMilli: 1000, Tenant: "y", GPUTypes: []string{"T4"}},
			{ID: "c", Arrival: 2 * h, Duration: 3 * h, NumGPU: 2, GPUMilli: 1000, Tenant: "x"},
			{ID: "d", Arrival: 3 * h, Duration: 4 * h, NumGPU: 8, GPUMilli: 1000, Censored: true},
			{ID: "e", Arrival: 4 * h, Duration: 0, NumGPU: 1, GPUMilli: 50},
		}}
	s := Inspect(res)
	// 5 jobs over 4 h -> (5-1)/4 = 1 job/hour. Known durations 1,2,3,4 h:
	// nearest rank p50 = ceil(0.5*4)=2nd = 2 h, p90 = ceil(3.6)=4th = 4 h,
	// mean 2.5 h. GPU-hours 0.5*1 + 1*2 + 2*3 + 8*4 + 0 = 40.5.
	if s.Span != 4*h || s.ArrivalRatePerHour != 1 {
		t.Errorf("span %v rate %v, want 4h and 1/h", s.Span, s.ArrivalRatePerHour)
	}
	if s.KnownDurations != 4 || s.P50 != 2*h || s.P90 != 4*h || s.P99 != 4*h || s.MaxDur != 4*h || s.MeanDuration != 2*h+30*engine.Minute {
		t.Errorf("durations n=%d p50 %v p90 %v p99 %v max %v mean %v", s.KnownDurations, s.P50, s.P90, s.P99, s.MaxDur, s.MeanDuration)
	}
	if math.Abs(s.GPUHours-40.5) > 1e-9 || s.Censored != 1 || s.Tenants != 2 || s.ConstrainedGPUTypes != 1 {
		t.Errorf("GPU-hours %v censored %d tenants %d constrained %d; want 40.5, 1, 2, 1", s.GPUHours, s.Censored, s.Tenants, s.ConstrainedGPUTypes)
	}
	if want := []Count{{1, 3}, {2, 1}, {8, 1}}; !slices.Equal(s.ByNumGPU, want) {
		t.Errorf("by num_gpu %v, want %v", s.ByNumGPU, want)
	}
	// Shares 500, 1000, 1000, 1000, 50 -> buckets 1-100:1, 251-500:1, 1000:3.
	var got []int
	for _, b := range s.ByGPUMilli {
		got = append(got, b.Jobs)
	}
	if want := []int{1, 0, 1, 0, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("gpu_milli buckets %v, want %v", got, want)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read 6, used 5, rejected 1", "1  cpu-only", "row 4: CPU-only", "1.00 jobs/hour", "p50 7200s", "40.5 GPU-hours"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func sourceJobs() []workloads.Job {
	// 4 jobs over 3 hours: rate (4-1)/3 = 1 job/hour. One in four has 8 GPUs.
	return []workloads.Job{
		{ID: "a", Arrival: 0, Duration: engine.Hour, NumGPU: 1, GPUMilli: 300, GPUTypes: []string{"T4"}},
		{ID: "b", Arrival: engine.Hour, Duration: 2 * engine.Hour, NumGPU: 1, GPUMilli: 1000},
		{ID: "c", Arrival: 2 * engine.Hour, Duration: 3 * engine.Hour, NumGPU: 2, GPUMilli: 1000},
		{ID: "d", Arrival: 3 * engine.Hour, Duration: 4 * engine.Hour, NumGPU: 8, GPUMilli: 1000},
	}
}

// TestSynthesize checks determinism for a seed and the statistics of the
// result against theory: Poisson gaps with mean 1/rate, the sample mean of
// n-1 exponential gaps has standard error mean/sqrt(n-1); the share of
// 8-GPU jobs is binomial(n, 1/4) with standard error sqrt(p(1-p)/n).
func TestSynthesize(t *testing.T) {
	src := sourceJobs()
	const n = 20000
	a, err := Synthesize(src, n, engine.NewStream(7, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthesize(src, n, engine.NewStream(7, "synth"))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different jobs")
	}
	c, _ := Synthesize(src, n, engine.NewStream(8, "synth"))
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same jobs")
	}
	if a[0].Arrival != 0 || a[0].ID != "syn-000001" {
		t.Errorf("first job %+v; want arrival 0 and id syn-000001", a[0])
	}
	meanGapH := a[n-1].Arrival.Seconds() / 3600 / (n - 1)
	se := 1 / math.Sqrt(n-1) // mean gap 1 h
	if math.Abs(meanGapH-1) > 4*se {
		t.Errorf("mean gap %.4f h, want 1 +- %.4f", meanGapH, 4*se)
	}
	eight := 0
	for i, j := range a {
		if err := j.Validate(); err != nil {
			t.Fatal(err)
		}
		if i > 0 && j.Arrival < a[i-1].Arrival {
			t.Fatal("arrivals not in order")
		}
		if j.NumGPU == 8 {
			eight++
			if j.Duration != 4*engine.Hour {
				t.Fatalf("8-GPU job with duration %v: parameters must be copied jointly", j.Duration)
			}
		}
	}
	p := float64(eight) / n
	if se := math.Sqrt(0.25 * 0.75 / n); math.Abs(p-0.25) > 4*se {
		t.Errorf("8-GPU share %.4f, want 0.25 +- %.4f", p, 4*se)
	}
	// The copies do not share GPUTypes with the source.
	for i := range a {
		if len(a[i].GPUTypes) > 0 {
			a[i].GPUTypes[0] = "X"
			break
		}
	}
	if src[0].GPUTypes[0] != "T4" {
		t.Error("synthesised job aliases the source's GPUTypes")
	}
	for _, bad := range []struct {
		src  []workloads.Job
		n    int
		rate float64
	}{{nil, 1, 1}, {src, -1, 1}, {src, 1, 0}, {src, 1, math.NaN()}, {src, 1, math.Inf(1)}} {
		if _, err := SynthesizeAtRate(bad.src, bad.n, bad.rate, engine.NewStream(1, "x")); err == nil {
			t.Errorf("SynthesizeAtRate(%d jobs, %d, %v) gave no error", len(bad.src), bad.n, bad.rate)
		}
	}
	if _, err := Synthesize(src[:1], 5, engine.NewStream(1, "x")); err == nil {
		t.Error("Synthesize from one job (no rate) gave no error")
	}
}

func TestCompressTime(t *testing.T) {
	src := sourceJobs()
	out, err := CompressTime(src, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Arrivals 0,1,2,3 h / 4 = 0, 15, 30, 45 min; durations unchanged; rate x4.
	for i, j := range out {
		if j.Arrival != engine.Time(i)*15*engine.Minute || j.Duration != src[i].Duration || j.NumGPU != src[i].NumGPU {
			t.Errorf("job %d = %+v", i, j)
		}
	}
	if Rate(out) != 4*Rate(src) {
		t.Errorf("rate %v, want 4 x %v", Rate(out), Rate(src))
	}
	if src[1].Arrival != engine.Hour {
		t.Error("CompressTime modified its input")
	}
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := CompressTime(src, f); err == nil {
			t.Errorf("factor %v gave no error", f)
		}
	}
}

// TestResampleArrivals checks that parameters and order are kept and the
// rate is factor times the source's, within 4 standard errors.
func TestResampleArrivals(t *testing.T) {
	stream := engine.NewStream(3, "src")
	src, err := SynthesizeAtRate(sourceJobs(), 10000, 2, stream) // 2 jobs/hour
	if err != nil {
		t.Fatal(err)
	}
	out, err := ResampleArrivals(src, 3, engine.NewStream(3, "resample"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i].ID != src[i].ID || out[i].Duration != src[i].Duration || out[i].NumGPU != src[i].NumGPU {
			t.Fatalf("job %d changed: %+v vs %+v", i, out[i], src[i])
		}
	}
	// Target rate 3 x Rate(src); the estimate's relative error is about 1/sqrt(n).
	want := 3 * Rate(src)
	if got := Rate(out); math.Abs(got/want-1) > 4/math.Sqrt(float64(len(out))) {
		t.Errorf("rate %v, want %v", got, want)
	}
	if _, err := ResampleArrivals(src, 0, engine.NewStream(1, "x")); err == nil {
		t.Error("factor 0 gave no error")
	}
}

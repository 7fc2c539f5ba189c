package host

import (
	"errors"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// The backend moves real bytes: every stage takes a positive time, DMA is
// unsupported, and use after Close is an error.
func TestBackendSmoke(t *testing.T) {
	b, err := NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		name string
		f    func() (engine.Time, error)
	}{
		{"network", func() (engine.Time, error) { return b.Network(64 << 10) }},
		{"reply", func() (engine.Time, error) { return b.Reply(2000) }},
		{"copy", func() (engine.Time, error) { return b.HostCopy(1 << 20) }},
		{"cpu", func() (engine.Time, error) { return b.CPUWork(engine.Microseconds(200)) }},
		{"compute", func() (engine.Time, error) { return b.Compute(4096) }},
	} {
		d, err := st.f()
		if err != nil || d <= 0 || d > engine.Seconds(5) {
			t.Errorf("%s: %v, %v; want a positive time under 5 s", st.name, d, err)
		}
	}
	// CPUWork(200us) on an idle machine takes about 200 us; another
	// process taking the core shrinks the loop calibration and so the
	// measured time, so this is checked only on a quiet machine.
	if timingChecks(t) {
		if d, _ := b.CPUWork(engine.Microseconds(200)); d < engine.Microseconds(100) {
			t.Errorf("CPUWork(200us) took %v: the loop calibration is off", d)
		}
	}
	if _, err := b.DMA(10); !errors.Is(err, realhw.ErrUnsupported) {
		t.Errorf("DMA: %v, want ErrUnsupported", err)
	}
	if _, err := b.Network(-1); err == nil {
		t.Error("negative size accepted")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Network(10); err == nil {
		t.Error("Network after Close succeeded")
	}
}

// A short real TCP path run: every request recorded, stages ordered, and
// the network stage grows with size (256 KiB takes longer than 1 KiB at the
// median: at least the extra copy of 255 KiB, ~10 us at 25 GB/s).
func TestRunTCPPathSmoke(t *testing.T) {
	run, err := RunTCPPath(PathConfig{Sizes: []int64{1 << 10, 256 << 10}, Requests: 100, Warmup: 10, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Requests) != 200 {
		t.Fatalf("%d requests recorded, want 200", len(run.Requests))
	}
	med := map[int64][]float64{}
	valid := 0
	for _, q := range run.Requests {
		if q.Network <= 0 || q.EndToEnd < q.Network || q.EndToEnd < q.Reply || q.Copy < 0 {
			t.Fatalf("inconsistent stage times %+v", q)
		}
		med[q.Bytes] = append(med[q.Bytes], q.Network.Seconds())
		if q.CPUValid {
			valid++
		}
	}
	if runtime.GOOS == "linux" && valid < 190 {
		t.Errorf("%d requests with CPU times, want nearly all 200", valid)
	}
	if m1, m256 := median(med[1<<10]), median(med[256<<10]); timingChecks(t) && !(m256 > m1) {
		t.Errorf("median network time 1KiB %v >= 256KiB %v", m1, m256)
	}
	ss := run.Samples()
	for _, s := range ss {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := RunTCPPath(PathConfig{Sizes: []int64{-1}, Requests: 1}); err == nil {
		t.Error("negative size accepted")
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// One worker at duty 50% for 400 ms: getrusage says it used about half of
// its wall time. Tolerance 0.5 +- 0.2: the accounting lags a running
// thread by up to a tick. On a busy machine the worker gets less than its
// duty (0.30 was seen beside other test processes), so the figure is
// checked only with CONSPIRATOR_TIMING_TESTS=1.
func TestLoadDutyCycle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs RUSAGE_THREAD")
	}
	l, err := StartLoad(LoadConfig{Fraction: 0.5, Workers: 1, MaxDuration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	rep := l.Stop()
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if rep.Measured < 0 || rep.Measured > 1 || len(rep.Workers) != 1 {
		t.Errorf("report %+v: want one worker and a duty in [0, 1]", rep)
	}
	if timingChecks(t) && math.Abs(rep.Measured-0.5) > 0.2 {
		t.Errorf("measured duty %.3f, want 0.5 +- 0.2 (workers %+v)", rep.Measured, rep.Workers)
	}
	if again := l.Stop(); again.Measured != rep.Measured {
		t.Error("second Stop gave a different report")
	}
	for _, bad := range []LoadConfig{{Fraction: 0.96}, {Fraction: -0.1}, {Fraction: 0.5, Period: time.Microsecond}} {
		if _, err := StartLoad(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Compute is FNV-1a: the empty input hashes to the offset basis, and "a"
// to 0xaf63dc4c8601ec8c (the published FNV-1a 64-bit test vector).
func TestComputeIsFNV1a(t *testing.T) {
	if got := Compute([]byte("a"), 1); got != 0xaf63dc4c8601ec8c {
		t.Errorf("FNV-1a(a) = %#x", got)
	}
	if got := Compute(nil, 10); got != 14695981039346656037 {
		t.Errorf("empty = %d", got)
	}
	// Cycling: 2 bytes of "ab" then wrap = hash of "aba".
	if Compute([]byte("ab"), 3) != Compute([]byte("aba"), 3) {
		t.Error("cycling over the buffer differs from the longer input")
	}
}

func TestDialRefusesNonLoopback(t *testing.T) {
	if _, err := Dial("10.0.0.1:80", time.Now()); err == nil {
		t.Error("non-loopback address accepted")
	}
}

// The generator runs in a child process with one worker per allowed CPU,
// each pinned to its own CPU, and the run puts this process's CPU mask
// back when it ends: a pinned test process would slow every later test.
func TestLoadPinnedAndMaskRestored(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("affinity is Linux-only")
	}
	before := allowedCPUs()
	run, err := RunTCPPath(PathConfig{Sizes: []int64{1 << 10}, Requests: 50, Warmup: 5, Load: 0.3, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := allowedCPUs(); !slices.Equal(got, before) {
		t.Errorf("CPU mask after the run %v, before %v", got, before)
	}
	ws := run.Load.Workers
	if len(ws) != len(before) {
		t.Fatalf("%d workers, want one per allowed CPU (%v)", len(ws), before)
	}
	for i, w := range ws {
		if w.CPU != before[i] || w.Wall <= 0 {
			t.Errorf("worker %d: %+v, want pinned to CPU %d with a positive wall time", i, w, before[i])
		}
	}
	if run.Load.Err != nil {
		t.Error(run.Load.Err)
	}
}

// A generator started with a malformed or out-of-range spec exits with
// code 2 and says why; it never runs workers.
func TestLoadChildRefusesBadSpec(t *testing.T) {
	for _, spec := range []string{"{", `{"Fraction": 2}`} {
		var out, msg strings.Builder
		if code := runLoadChild(spec, strings.NewReader(""), &out, &msg); code != 2 || out.Len() != 0 || !strings.Contains(msg.String(), "load generator") {
			t.Errorf("spec %q: exit %d, output %q, message %q; want 2, no output and a message", spec, code, out.String(), msg.String())
		}
	}
	// A good spec whose stdin is already closed stops at once and reports.
	var out strings.Builder
	if code := runLoadChild(`{"Fraction": 0.1, "Workers": 1, "cpus": [0]}`, strings.NewReader(""), &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if s := out.String(); !strings.HasPrefix(s, "R{") || !strings.Contains(s, `"workers":[{"cpu":0`) {
		t.Errorf("output %q: want the ready byte, then the JSON report with the pinned worker", s)
	}
}

// timingChecks says whether assertions on measured times run: only with
// CONSPIRATOR_TIMING_TESTS=1, which .ci/run sets when it runs these tests
// alone after the others. Beside other processes, real times say more
// about the neighbours than about the code, and a test that fails then is
// a flake, not a finding.
func timingChecks(t *testing.T) bool {
	t.Helper()
	if os.Getenv("CONSPIRATOR_TIMING_TESTS") == "1" {
		return true
	}
	t.Log("timing figures not asserted: set CONSPIRATOR_TIMING_TESTS=1 on a quiet machine (.ci/run does)")
	return false
}

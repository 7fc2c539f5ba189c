//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Bad arguments are refused before any CUDA call, with the value.
func TestMeasureArguments(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		reps  int
		want  string
	}{
		{[]int64{4096}, 0, "reps 0"},
		{[]int64{4096}, 10001, "reps 10001"},
		{[]int64{2}, 1, "size 2"},
		{[]int64{2 << 30}, 1, "size 2147483648"},
		{nil, 1, "no sizes"},
	} {
		if _, err := Measure(c.sizes, c.reps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Measure(%v, %d): %v, want an error naming %q", c.sizes, c.reps, err, c.want)
		}
	}
}

// Against the no-device stand-in libraries of testdata/stub (CI sets
// CONSPIRATOR_CUDA_STUB=1) the first CUDA call fails and Measure says there
// is no usable GPU. On a real GPU machine Measure must succeed: every stage
// is measured at every size, all times are positive, and the largest
// pinned copy is slower than the smallest.
func TestMeasure(t *testing.T) {
	sizes := []int64{4 << 10, 1 << 20, 64 << 20}
	out, err := Measure(sizes, 5)
	if os.Getenv("CONSPIRATOR_CUDA_STUB") == "1" {
		if err == nil || !strings.Contains(err.Error(), "no usable GPU") || !strings.Contains(err.Error(), "100 (no CUDA-capable device)") {
			t.Fatalf("with the no-device stub: %v, want the no-usable-GPU error with code 100", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	first, last := map[string]float64{}, map[string]float64{}
	for _, s := range out {
		if s.Latency <= 0 {
			t.Errorf("%s of %d bytes: latency %v", s.Stage, s.Bytes, s.Latency)
		}
		count[s.Stage]++
		if s.Bytes == sizes[0] {
			first[s.Stage] = s.Latency.Seconds()
		}
		if s.Bytes == sizes[len(sizes)-1] {
			last[s.Stage] = s.Latency.Seconds()
		}
		t.Logf("%s %d B: %v", s.Stage, s.Bytes, s.Latency)
	}
	for _, st := range []string{StageH2DPinned, StageH2DPageable, StageD2HPinned, StageD2HPageable} {
		if count[st] != len(sizes) {
			t.Errorf("%s: %d samples, want %d", st, count[st], len(sizes))
		}
		if last[st] <= first[st] {
			t.Errorf("%s: 64 MiB took %v s, 4 KiB %v s", st, last[st], first[st])
		}
	}
	for _, st := range []string{StageLaunch, StageLaunchAsync, StageKernel} {
		if count[st] == 0 {
			t.Errorf("no %s samples", st)
		}
	}
}

// The stage names this backend writes are the ones calib spells out (it
// cannot import this package without the tag), each with its kind.
func TestCudaStageNamesKnown(t *testing.T) {
	for name, want := range map[string]datapath.StageKind{
		StageH2DPinned: datapath.KindDMA, StageH2DPageable: datapath.KindHostCopy,
		StageD2HPinned: datapath.KindDMA, StageD2HPageable: datapath.KindHostCopy,
		StageLaunch: datapath.KindLaunch, StageLaunchAsync: datapath.KindLaunch, StageKernel: datapath.KindCompute,
	} {
		if k, ok := calib.MeasuredKind(name); !ok || k != want {
			t.Errorf("%s: calib kind %q (known %v), want %q", name, k, ok, want)
		}
	}
}

// On a GPU machine, CONSPIRATOR_CUDA_CSV=PATH measures every stage over
// sizes from 4 KiB to 256 MiB (20 copies each) and writes them in the
// CSV that `conspirator calibrate --import` reads, so that the copies'
// fixed cost and bandwidth are fitted as a testbed's would be. The file
// is read back with calib.ParseCSV: what is written is what is imported.
func TestWriteMeasurementsCSV(t *testing.T) {
	path := os.Getenv("CONSPIRATOR_CUDA_CSV")
	if path == "" || os.Getenv("CONSPIRATOR_CUDA_STUB") == "1" {
		t.Skip("set CONSPIRATOR_CUDA_CSV=PATH on a GPU machine to write its measurements for calibrate --import")
	}
	var sizes []int64
	for n := int64(4 << 10); n <= 256<<20; n *= 4 {
		sizes = append(sizes, n)
	}
	out, err := Measure(sizes, 20)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# realhw/cuda.Measure on device 0: mean of 20 copies per size (CUDA events); launches and the scale kernel host-timed\nstage,bytes,latency_us\n")
	for _, s := range out {
		if s.Latency <= 0 {
			t.Errorf("%s of %d bytes: latency %v", s.Stage, s.Bytes, s.Latency)
		}
		fmt.Fprintf(&b, "%s,%d,%.3f\n", s.Stage, s.Bytes, s.Latency.Seconds()*1e6)
	}
	back, err := calib.ParseCSV(strings.NewReader(b.String()), path)
	if err != nil || len(back) != len(out) {
		t.Fatalf("the CSV reads back as %d samples (%v), want %d", len(back), err, len(out))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples written to %s", len(out), path)
}

// The backend, the device query and the per-copy measurement: against the
// no-device stand-in each says there is no usable GPU; on a GPU, the
// stand-in kernel of 2 ms takes at least 2 ms (it spins on the GPU's
// nanosecond timer) and less than 50, every copy takes time, a 16 MiB
// pinned copy is faster than a pageable one, and each copy timed one by
// one gives as many samples as asked.
func TestBackend(t *testing.T) {
	b, err := NewBackend()
	_, ierr := DeviceInfo()
	_, merr := MeasureEach([]int64{4096}, 3)
	if os.Getenv("CONSPIRATOR_CUDA_STUB") == "1" {
		for _, e := range []error{err, ierr, merr} {
			if e == nil || !strings.Contains(e.Error(), "no usable GPU") {
				t.Errorf("with the no-device stub: %v, want the no-usable-GPU error", e)
			}
		}
		return
	}
	if err != nil || ierr != nil || merr != nil {
		t.Fatal(err, ierr, merr)
	}
	defer b.Close()
	kw := b.(interface {
		KernelWork(engine.Time) (engine.Time, error)
	})
	d, err := kw.KernelWork(2 * engine.Millisecond)
	if err != nil || d < 2*engine.Millisecond || d > 50*engine.Millisecond {
		t.Errorf("KernelWork(2ms) = %v, %v", d, err)
	}
	pin, err1 := b.DMA(16 << 20)
	pag, err2 := b.HostCopy(16 << 20)
	if err1 != nil || err2 != nil || !(pin > 0) || !(pag > pin) {
		t.Errorf("16 MiB: pinned %v (%v), pageable %v (%v)", pin, err1, pag, err2)
	}
	// The result's copy back goes into pageable memory, as the model
	// prices it: slower than a pinned copy of the same bytes (an H200:
	// pageable D2H 10 GB/s, pinned 55 GB/s).
	rc, err := b.(interface {
		ResultCopy(int64) (engine.Time, error)
	}).ResultCopy(16 << 20)
	if err != nil || !(rc > pin) {
		t.Errorf("ResultCopy(16 MiB) = %v (%v), want slower than the pinned copy's %v", rc, err, pin)
	}
	ss, err := MeasureEach([]int64{4096, 1 << 20}, 7)
	if err != nil || len(ss) != 2*4*7+7 {
		t.Errorf("MeasureEach: %d samples, %v; want %d", len(ss), err, 2*4*7+7)
	}
}

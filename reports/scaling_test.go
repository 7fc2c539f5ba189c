package reports

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Hand-made benchmark output: on the jobs axis the time grows 10x per 10x
// jobs (slope 1) and memory 10^0.5x (slope 0.5); on
// the GPU axis time stays (slope 0) and memory doubles per 10x (slope
// log10 2 = 0.30103). Lines that are not BenchmarkScale's are passed over.
const scaleBench = `goos: linux
BenchmarkScale/jobs=10000/gpus=1024         	       1	 100000000 ns/op	    100000 jobs/s	        10 peak-heap-MB	1 B/op	1 allocs/op
BenchmarkScale/jobs=100000/gpus=1024        	       1	1000000000 ns/op	    100000 jobs/s	        31.6227766 peak-heap-MB
BenchmarkScale/jobs=1000000/gpus=1024-2     	       1	10000000000 ns/op	    100000 jobs/s	       100 peak-heap-MB
BenchmarkScale/jobs=1000000/gpus=10240      	       1	10000000000 ns/op	    100000 jobs/s	       200 peak-heap-MB
BenchmarkScale/jobs=1000000/gpus=102400     	       1	10000000000 ns/op	    100000 jobs/s	       400 peak-heap-MB
PASS
`

func TestScaleSlopes(t *testing.T) {
	pts, err := ParseScaleBench(strings.NewReader(scaleBench))
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 5 || pts[2].Jobs != 1000000 || pts[2].GPUs != 1024 || pts[2].Seconds != 10 || pts[4].PeakMB != 400 {
		t.Fatalf("parsed %+v", pts)
	}
	axes := ScaleAxes(pts)
	want := []struct {
		axis        string
		n           int
		time, memor float64
	}{{"jobs", 3, 1, 0.5}, {"GPUs", 3, 0, math.Log10(2)}}
	for k, w := range want {
		a := axes[k]
		if a.Axis != w.axis || len(a.Points) != w.n || math.Abs(a.TimeSlope-w.time) > 1e-9 || math.Abs(a.MemorySlope-w.memor) > 1e-9 {
			t.Errorf("axis %d: %s, %d points, slopes %v and %v; want %s, %d, %v and %v", k, a.Axis, len(a.Points), a.TimeSlope, a.MemorySlope, w.axis, w.n, w.time, w.memor)
		}
	}
	dir := t.TempDir()
	sum, err := WriteScaling(atomicfs.OS, dir, pts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum, "wall time against jobs (1024 GPUs): slope 1.00") || !strings.Contains(sum, "peak heap against GPUs (1000000 jobs): slope 0.30") {
		t.Errorf("summary:\n%s", sum)
	}
	for _, f := range []string{"scale.csv", "scale.png", "scale.svg", "scale.pdf"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Bad input: output without BenchmarkScale lines, and a line without its
// memory metric, are errors that say what was expected.
func TestScaleBenchBadInput(t *testing.T) {
	if _, err := ParseScaleBench(strings.NewReader("PASS\n")); err == nil || !strings.Contains(err.Error(), "no BenchmarkScale lines") {
		t.Errorf("empty: %v", err)
	}
	line := "BenchmarkScale/jobs=10/gpus=1024 1 100 ns/op 5 jobs/s\n"
	if _, err := ParseScaleBench(strings.NewReader("x\n" + line)); err == nil || !strings.Contains(err.Error(), "line 2: no peak-heap-MB") {
		t.Errorf("no memory metric: %v", err)
	}
}

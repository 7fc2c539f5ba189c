package reports

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tail points of 1..n (shuffled) are exact: at value v the fraction
// above-or-at is (n-v+1)/n, they fall from 1 at the minimum to 1/n at the
// maximum, and with few points allowed they still reach the maximum.
func TestCCDFPoints(t *testing.T) {
	const n = 1000
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = float64((i*7919)%n + 1) // a permutation of 1..n
	}
	for _, maxPts := range []int{2, 50, 500, 5000} {
		pts := ccdfPoints(vs, maxPts)
		if len(pts) < 2 || len(pts) > max(maxPts, 2) {
			t.Fatalf("maxPts %d: %d points", maxPts, len(pts))
		}
		if pts[0].X != 1 || pts[0].Y != 1 {
			t.Errorf("maxPts %d: first point %v, want (1, 1)", maxPts, pts[0])
		}
		if last := pts[len(pts)-1]; last.X != n || last.Y != 1.0/n {
			t.Errorf("maxPts %d: last point %v, want (%d, %v)", maxPts, last, n, 1.0/n)
		}
		for i, p := range pts {
			if want := (n - p.X + 1) / n; math.Abs(p.Y-want) > 1e-12 {
				t.Errorf("maxPts %d: point %d %v, want y %v", maxPts, i, p, want)
			}
			if i > 0 && !(p.X > pts[i-1].X && p.Y < pts[i-1].Y) {
				t.Errorf("maxPts %d: points %d, %d not strictly falling: %v %v", maxPts, i-1, i, pts[i-1], p)
			}
		}
	}
	if ccdfPoints(nil, 10) != nil {
		t.Error("no values should give no points")
	}
}

// CDFPlot writes both files, and refuses no series or a repeated label.
func TestCDFPlotFiles(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "plots", "lat")
	err := CDFPlot(base, "t", "latency (µs)", []CDFSeries{{Label: "real", Values: []float64{1, 2, 3, 100}}, {Label: "model", Values: []float64{1, 2, 4, 90}, Dashed: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(base + ext); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", ext, err)
		}
	}
	if err := CDFPlot(base, "t", "x", nil); err == nil {
		t.Error("no series accepted")
	}
	if err := CDFPlot(base, "t", "x", []CDFSeries{{Label: "a", Values: []float64{1}}, {Label: "a", Values: []float64{2}}}); err == nil {
		t.Error("repeated label accepted")
	}
}

// Values <= 0 (a model's draw below zero, seen once from the calibration
// model on a machine under heavy load, where gonum's log axis panicked)
// stay in the CDF, are left off the log-log tail, and the legend says how
// many; a series with no positive value at all draws no tail line.
func TestCDFPlotNonPositiveValues(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "lat")
	err := CDFPlot(base, "t", "latency (µs)", []CDFSeries{
		{Label: "real", Values: []float64{15, 16, 17, 300}},
		{Label: "model", Values: []float64{-2, 0, 16, 250}, Dashed: true},
		{Label: "broken", Values: []float64{0, -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 ≤ 0 not in the tail", "broken (n=2, 2 ≤ 0 not in the tail)"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("legend lacks %q:\n%s", want, legendText(string(svg)))
		}
	}
}

func legendText(svg string) string {
	var out []string
	for _, part := range strings.Split(svg, "<text")[1:] {
		if i := strings.Index(part, ">"); i >= 0 {
			if j := strings.Index(part[i:], "<"); j > 0 {
				out = append(out, part[i+1:i+j])
			}
		}
	}
	return strings.Join(out, " | ")
}

package reports

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// busiestWindow by hand: a step function at 1 GPU, 5 GPUs from t=40 to
// t=50 and 2 GPUs after: of the windows of width 10 in [0, 100], the one
// over [40, 50] holds 50 GPU-seconds, more than any other.
func TestBusiestWindowByHand(t *testing.T) {
	s := Series{Name: "p", X: []float64{0, 40, 50}, Y: []float64{1, 5, 2}}
	lo, hi := busiestWindow(s, 100, 10)
	if math.Abs(lo-40) > 1e-9 || math.Abs(hi-50) > 1e-9 {
		t.Errorf("busiest window [%v, %v], want [40, 50]", lo, hi)
	}
	if lo, hi := busiestWindow(s, 100, 200); lo != 0 || hi != 100 {
		t.Errorf("a window wider than the span: [%v, %v], want the span", lo, hi)
	}
}

// stepLine keeps the value in force at lo, the steps inside (lo, hi) and
// ends at hi, shifted to start at 0 when rel.
func TestStepLineClips(t *testing.T) {
	s := Series{X: []float64{0, 40, 50, 90}, Y: []float64{1, 5, 2, 7}}
	l, err := stepLine(s, 45, 60, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	want := plotter.XYs{{X: 0, Y: 5}, {X: 5, Y: 2}, {X: 15, Y: 2}}
	if len(l.XYs) != len(want) {
		t.Fatalf("points %v, want %v", l.XYs, want)
	}
	for i := range want {
		if l.XYs[i] != want[i] {
			t.Errorf("points %v, want %v", l.XYs, want)
			break
		}
	}
}

// The GPUs-in-use figure has a panel and a zoom per policy, clipped to
// the span (the last arrival), not to the last completion; the JCT
// figure has a panel per kind, censored and unfinished jobs left out.
func TestClusterFigureLayout(t *testing.T) {
	series := []Series{
		{Name: "naive-share", X: []float64{0, 100, 5000}, Y: []float64{1, 3, 0}},
		{Name: "conspirator", X: []float64{0, 100, 4000}, Y: []float64{1, 2, 0}},
	}
	f, err := activeGPUs(series, "naive-share", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.panels) != 4 || f.cols != 2 {
		t.Fatalf("%d panels in %d columns, want 4 in 2", len(f.panels), f.cols)
	}
	if f.panels[0].X.Max != 1000 {
		t.Errorf("full-span panel ends at %v s, want the span 1000", f.panels[0].X.Max)
	}
	jobs := []JobRow{
		{Policy: "a", Kind: "batch", JCT: 10}, {Policy: "a", Kind: "service", JCT: 100}, {Policy: "a", Kind: "service", JCT: -1},
		{Policy: "b", Kind: "batch", JCT: 20}, {Policy: "b", Kind: "service", JCT: 200},
	}
	j, err := jctByKind(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.panels) != 2 || j.panels[0].Title.Text != "batch jobs (n=1 per policy)" || j.panels[1].Title.Text != "service jobs (n=1 per policy)" {
		t.Errorf("JCT panels: %d, titles %q %q", len(j.panels), j.panels[0].Title.Text, j.panels[len(j.panels)-1].Title.Text)
	}
	g, err := gpuHoursBars([]PolicyResult{{Name: "a", GPUHours: 10}, {Name: "b", GPUHours: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if g.panels[0].X.Label.Text != "GPU-hours (GPU h)" {
		t.Errorf("GPU-hours bars are not horizontal: x label %q", g.panels[0].X.Label.Text)
	}
}

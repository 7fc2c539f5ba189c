package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// Axes of mixed units read as one quantity: 100us and 1ms are 1e-4 and
// 1e-3 s, 16KiB and 4MiB 16,384 and 4,194,304 B; plain numbers keep their
// unit as written; words are no axis.
func TestNumericAxisMixedUnits(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []float64
		unit string
		ok   bool
	}{
		{[]string{"100us", "1ms", "2.5ms"}, []float64{1e-4, 1e-3, 2.5e-3}, "s", true},
		{[]string{"16KiB", "4MiB"}, []float64{16384, 4194304}, "B", true},
		{[]string{"0%", "80%"}, []float64{0, 80}, "%", true},
		{[]string{"tcp", "rdma"}, nil, "", false},
	} {
		xs, unit, ok := numericAxis(c.in)
		if ok != c.ok || unit != c.unit || len(xs) != len(c.want) {
			t.Errorf("%v: %v %q %v, want %v %q %v", c.in, xs, unit, ok, c.want, c.unit, c.ok)
			continue
		}
		for i := range xs {
			if math.Abs(xs[i]-c.want[i]) > 1e-12*math.Max(1, c.want[i]) {
				t.Errorf("%v: %v, want %v", c.in, xs, c.want)
			}
		}
	}
}

// fractionalIndex by hand: 3 lies halfway (in log) between 1 and 9 of
// [1, 9, 81], so at index 0.5; 9 at 1; 100 outside.
func TestFractionalIndex(t *testing.T) {
	xs := []float64{1, 9, 81}
	for v, want := range map[float64]float64{3: 0.5, 9: 1, 27: 1.5} {
		if got := fractionalIndex(xs, v); math.Abs(got-want) > 1e-12 {
			t.Errorf("%v: %v, want %v", v, got, want)
		}
	}
	if !math.IsNaN(fractionalIndex(xs, 100)) {
		t.Error("100 is outside [1, 81]")
	}
}

// A sweep over two numeric parameters draws a map per value of the third
// for each derived gap; one over a word-valued parameter draws none and
// says why.
func TestSweepHeatmaps(t *testing.T) {
	agg := SweepAggregate{
		Params:  []sweep.Param{{Key: "a", Values: []string{"1ms", "2ms"}}, {Key: "b", Values: []string{"1KiB", "2KiB", "4KiB"}}, {Key: "c", Values: []string{"0%", "80%"}}},
		Derived: []string{"conspirator vs host-rdma"},
	}
	for _, a := range []string{"1ms", "2ms"} {
		for _, b := range []string{"1KiB", "2KiB", "4KiB"} {
			for _, c := range []string{"0%", "80%"} {
				agg.Groups = append(agg.Groups, sweep.Group{
					Params:  []sweep.KV{{Key: "a", Value: a}, {Key: "b", Value: b}, {Key: "c", Value: c}},
					Metrics: map[string]sweep.Estimate{"derived/conspirator vs host-rdma/gap_pct": {Mean: float64(len(a) + len(b)), HalfWidth: math.NaN(), N: 1}},
				})
			}
		}
	}
	figs, note, err := sweepHeatmaps(t.TempDir(), agg)
	if err != nil || note != "" || len(figs) != 2 {
		t.Fatalf("%d maps, note %q, %v; want 2 (one per value of c)", len(figs), note, err)
	}
	if !strings.Contains(figs[0].caption, "at c 0%") || figs[0].name != "map_derived_conspirator_vs_host-rdma_gap_pct__c_0pct" || figs[0].panels[0].Title.Text != "conspirator vs host-rdma, c 0%" {
		t.Errorf("caption %q, name %q, title %q: want the fixed c=0%% in each", figs[0].caption, figs[0].name, figs[0].panels[0].Title.Text)
	}
	agg.Params[1].Values = []string{"x", "y", "z"}
	if figs, note, _ := sweepHeatmaps(t.TempDir(), agg); len(figs) != 0 || !strings.Contains(note, "`b` is not a numeric axis") {
		t.Errorf("a word axis: %d maps, note %q", len(figs), note)
	}
}

// The colour scale by hand. Values -15.29..45.29 around 0: steps of 1, 2
// and 5 need 61, 32 and 13 bins (more than 12), 10 needs 8: -25 to 55,
// the middle bin -5 to 5. A ratio 0.9..1.35 around 1: steps 0.01, 0.02
// need 46 and 23, 0.05 needs 10 from 0.875. A lone 3 around 0: a step
// of 3/12 rounded down, 0.1, one bin.
func TestMapScale(t *testing.T) {
	for _, c := range []struct {
		lo, hi, centre float64
		from, step     float64
		bins           int
	}{
		{-15.29, 45.29, 0, -25, 10, 8},
		{0.9, 1.35, 1, 0.875, 0.05, 10},
		{3, 3, 0, 2.95, 0.1, 1},
	} {
		s := newMapScale([][]float64{{c.lo, math.NaN()}, {c.hi, c.lo}}, c.centre, 0)
		if math.Abs(s.lo-c.from) > 1e-9 || math.Abs(s.step-c.step) > 1e-12 || s.bins != c.bins || !s.nan || len(s.cols) != s.bins {
			t.Errorf("%v..%v around %v: from %v step %v, %d bins (%d colours, nan %v); want from %v step %v, %d bins", c.lo, c.hi, c.centre, s.lo, s.step, s.bins, len(s.cols), s.nan, c.from, c.step, c.bins)
		}
	}
	s := newMapScale([][]float64{{-15.29, 45.29}}, 0, 0)
	// The middle bin (-5 to 5, index 2) is the diverging map's neutral
	// colour; 5 falls in the bin above it; edges read as round numbers.
	if s.colourOf(0) != s.cols[2] || s.colourOf(4.99) != s.cols[2] || s.colourOf(5) != s.cols[3] || s.colourOf(math.NaN()) != mapNaN {
		t.Error("binning of 0, 4.99, 5, NaN")
	}
	r, g, b, _ := s.cols[2].RGBA()
	if max(r, g, b)-min(r, g, b) > 0x200 {
		t.Errorf("middle bin %v is not neutral grey", s.cols[2])
	}
	if r0, _, b0, _ := s.cols[0].RGBA(); b0 <= r0 {
		t.Errorf("lowest bin %v is not blue", s.cols[0])
	}
	if got := trimFloat(newMapScale([][]float64{{0.9, 1.35}}, 1, 0).edge(3)); got != "1.025" {
		t.Errorf("edge 3 of the ratio scale: %s, want 1.025", got)
	}
}

// Marching squares by hand: a 3x3 grid of 0 with 10 in the middle, at
// level 5, is one closed loop through the four edges' midpoints (a piece
// ringing one cell, left out as noise); z = i over 4x3 at 1.5 is one open
// line x = 1.5 from y = 0 to 2 (kept).
func TestContourPaths(t *testing.T) {
	peak := [][]float64{{0, 0, 0}, {0, 10, 0}, {0, 0, 0}}
	ps := contourPaths(peak, 5)
	if len(ps) != 1 || len(ps[0]) != 5 || ps[0][0] != ps[0][4] || !smallPiece(ps[0]) {
		t.Fatalf("peak: %v, want one closed loop of 4 segments, small", ps)
	}
	for _, p := range ps[0] {
		if d := math.Abs(float64(p.X-1)) + math.Abs(float64(p.Y-1)); math.Abs(d-0.5) > 1e-12 {
			t.Errorf("peak: point %v is not half a cell from the middle", p)
		}
	}
	ramp := [][]float64{{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}}
	ps = contourPaths(ramp, 1.5)
	if len(ps) != 1 || len(ps[0]) != 3 || smallPiece(ps[0]) {
		t.Fatalf("ramp: %v, want one open line of 3 points, not small", ps)
	}
	for _, p := range ps[0] {
		if p.X != 1.5 {
			t.Errorf("ramp: point %v off x = 1.5", p)
		}
	}
	// A NaN node ends the line: the squares beside it are skipped.
	ramp[1][1], ramp[2][1] = math.NaN(), math.NaN()
	if ps := contourPaths(ramp, 1.5); len(ps) != 0 {
		t.Errorf("ramp with its middle row gone: %v, want nothing", ps)
	}
}

// Round ticks: a long log-spaced byte axis is labelled at 1, 10, 100 KiB
// and 1 MiB, a time axis at 100 µs, 1 ms, 10 ms, each at its place among
// the swept values; a short axis, log-spaced or not, at its own values
// (a round 1000 between cells 100 and 2000 would read as a cell's value).
func TestRoundTicks(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   []string
	}{
		{[]string{"512B", "1KiB", "2KiB", "4KiB", "16KiB", "32KiB", "64KiB", "256KiB", "2MiB", "8MiB"}, []string{"1KiB", "10KiB", "100KiB", "1MiB"}},
		{[]string{"50us", "80us", "200us", "500us", "800us", "2ms", "5ms", "8ms", "20ms"}, []string{"100µs", "1ms", "10ms"}},
		{[]string{"0%", "40%", "80%"}, []string{"0%", "40%", "80%"}},
		{[]string{"1", "10", "100", "2000"}, []string{"1", "10", "100", "2000"}},
	} {
		xs, unit, _ := numericAxis(c.values)
		var got []string
		for _, tk := range roundTicks(mapAxis{c.values, xs, unit, ""}).Ticks(-0.5, float64(len(xs))-0.5) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%v: %v, want %v", c.values, got, c.want)
		}
	}
	xs, _, _ := numericAxis([]string{"100us", "200us", "300us", "500us", "1ms", "2ms", "3ms", "5ms", "10ms"})
	if tk := roundTicks(mapAxis{nil, xs, "s", ""}).Ticks(0, 8); len(tk) != 3 || tk[1].Label != "1ms" || tk[1].Value != 4 {
		t.Errorf("ticks %v, want 1 ms at index 4 between 100µs and 10ms", tk)
	}
}

// Fixed parameters name a file by what they fix (a bare word with the
// element before it); two that read the same are numbered.
func TestFixedFileNames(t *testing.T) {
	got := fixedFileNames([]string{"datapath.host.background_load=80%", "a.x_z=1, b.y_z=2", "c.x_z=1, d.y_z=2", "datapath.gpus[0].count=12", ""})
	want := map[string]string{"datapath.host.background_load=80%": "background_load_80pct", "a.x_z=1, b.y_z=2": "x_z_1_y_z_2", "c.x_z=1, d.y_z=2": "x_z_1_y_z_2_2", "datapath.gpus[0].count=12": "gpus_count_12", "": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %q, want %q", k, got[k], v)
		}
	}
}

// A cluster sweep over two numeric parameters maps the conspirator
// policy's saving on a scale diverging at 0 with the paper's -33% as its
// line, where the values cross it.
func TestSweepHeatmapsPolicySaving(t *testing.T) {
	agg := SweepAggregate{
		Params:   []sweep.Param{{Key: "cluster.node_fraction", Values: []string{"0.01", "0.02", "0.04"}}, {Key: "cluster.timeshare_slowdown", Values: []string{"1", "1.5", "2"}}},
		Policies: []string{"naive-share", "conspirator"},
	}
	for i, a := range agg.Params[0].Values {
		for j, b := range agg.Params[1].Values {
			agg.Groups = append(agg.Groups, sweep.Group{
				Params:  []sweep.KV{{Key: "cluster.node_fraction", Value: a}, {Key: "cluster.timeshare_slowdown", Value: b}},
				Metrics: map[string]sweep.Estimate{"policies/conspirator/vs_baseline.pct": {Mean: -10 - 15*float64(i+j), HalfWidth: math.NaN(), N: 1}},
			})
		}
	}
	figs, note, err := sweepHeatmaps(t.TempDir(), agg)
	if err != nil || note != "" || len(figs) != 1 {
		t.Fatalf("%d maps, note %q, %v; want 1", len(figs), note, err)
	}
	f := figs[0]
	if f.name != "map_policies_conspirator_vs_baseline.pct" || !strings.Contains(f.caption, "The line: the paper's -33%.") || !strings.Contains(f.caption, "diverging at 0") {
		t.Errorf("name %q, caption %q", f.name, f.caption)
	}
	if got := f.legend.names[0]; got != "GPU-hours vs the baseline (%)" {
		t.Errorf("key title %q", got)
	}
}

// The scenario's own cross goes only on the maps of its own other
// parameters: a value matches as written or as the same number.
func TestSameValue(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"80%", "80%", true},
		{"0%", "80%", false},
		{"0.5", "0.50", true},
		{"", "0.25", false},
		{"1ms", "1000us", true},
		{"conspirator", "conspirator", true},
	} {
		if got := sameValue(c.a, c.b); got != c.want {
			t.Errorf("sameValue(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// The map's step is no finer than the CI half-width it is given: a
// sweep whose cells differ by less than their noise gets one or two
// coarse bins, not twelve fine ones.
func TestMapScaleNoFinerThanTheNoise(t *testing.T) {
	zs := [][]float64{{0.999, 1.001, 1.003}, {1.0, 1.002, 1.004}}
	fine := newMapScale(zs, 1, 0)
	coarse := newMapScale(zs, 1, 0.01)
	if !(fine.step < 0.01) {
		t.Fatalf("without a CI the step is %v; the test wants a fine one", fine.step)
	}
	if coarse.step < 0.01 || coarse.bins > 2 {
		t.Errorf("with a CI of 0.01 the step is %v over %d bins; want >= 0.01, at most 2 bins", coarse.step, coarse.bins)
	}
}

// Where no line of the mark is drawn the caption says which side the
// cells are on, not that the mark is "reached nowhere".
func TestNoContourSaysWhichSide(t *testing.T) {
	for _, c := range []struct {
		z    [][]float64
		want string
	}{
		{[][]float64{{0.9, 0.95}, {math.NaN(), 0.97}}, "Every cell is below"},
		{[][]float64{{1.1, 1.0}}, "Every cell is at or above"},
		{[][]float64{{0.9, 1.1}}, "both sides"},
	} {
		if got := noContour(c.z, 1, "the level of no aggregation"); !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.z, got, c.want)
		}
	}
}

// A cell's label rounds its mean to its CI's first significant digit.
func TestMeanCI(t *testing.T) {
	for _, c := range []struct {
		v, hw float64
		want  string
	}{
		{1.01712, 0.007573, "1.017 ± 0.008"},
		{1.00003, 6.886e-4, "1.0000 ± 0.0007"},
		{248.2, 30.8, "248 ± 31"},
		{1.5, math.NaN(), "1.5"},
	} {
		if got := meanCI(c.v, c.hw); got != c.want {
			t.Errorf("meanCI(%v, %v) = %q, want %q", c.v, c.hw, got, c.want)
		}
	}
}

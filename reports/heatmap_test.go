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
	if !strings.Contains(figs[0].caption, "Fixed: c=0%") {
		t.Errorf("caption %q", figs[0].caption)
	}
	agg.Params[1].Values = []string{"x", "y", "z"}
	if figs, note, _ := sweepHeatmaps(t.TempDir(), agg); len(figs) != 0 || !strings.Contains(note, "`b` is not a numeric axis") {
		t.Errorf("a word axis: %d maps, note %q", len(figs), note)
	}
}

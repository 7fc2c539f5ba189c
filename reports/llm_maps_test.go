package reports

import (
	"math"
	"testing"
)

// A winner map's cell: the lowest mean wins, labelled with its lead over
// the runner-up (1 - 90/100 = 10%); values within 0.5% of the best are a
// tie, labelled with the ones behind and the worst's gap (120/100 - 1 =
// 20%); NaN values (not run) take no part.
func TestWinnerCell(t *testing.T) {
	names := []string{"tcp", "gpudirect", "host-rdma"}
	for _, tc := range []struct {
		means []float64
		best  int
		label string
		tie   bool
	}{
		{[]float64{100, 90, 95}, 1, "gpudirect\nby 5.3%", false},
		{[]float64{100, 90, math.NaN()}, 1, "gpudirect\nby 10.0%", false},
		{[]float64{120, 100, 100.4}, 1, "all but tcp\ntcp +20.0%", true},
		{[]float64{100, 100.2, 100.1}, 0, "all the same", true},
		{[]float64{math.NaN(), math.NaN(), math.NaN()}, -1, "", false},
	} {
		b, label, tie := winnerCell(tc.means, names)
		if b != tc.best || label != tc.label || tie != tc.tie {
			t.Errorf("%v: %d %q %v; want %d %q %v", tc.means, b, label, tie, tc.best, tc.label, tc.tie)
		}
	}
}

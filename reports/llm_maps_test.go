package reports

import (
	"math"
	"testing"
)

// A winner map's cell: the lowest mean wins, labelled with its lead over
// the runner-up (1 - 90/95 = 5.3%) and, where the gap has a CI, the CI
// relative to the runner-up; another value whose gap to the best is
// within that CI, or within 0.5% of the best, is a tie, labelled with the
// ones behind and the worst's gap (120/100 - 1 = 20%); NaN values (not
// run) take no part. Unpaired, the CI is the two runs' half-widths
// combined: hypot(2, 1.5)/95 = 2.6%. Paired, seed by seed: gpudirect
// 90, 91, 89 against host-rdma 95, 97, 93 differ by 5, 6, 4 (sd 1), so
// the CI is t(0.975, 2) x 1/sqrt(3) = 4.303/1.732 = 2.484, 2.6% of 95.
func TestWinnerCell(t *testing.T) {
	names := []string{"tcp", "gpudirect", "host-rdma"}
	nan := math.NaN()
	none := make([][]float64, 3)
	for _, tc := range []struct {
		means []float64
		gap   func(b, k int) float64
		best  int
		label string
		tie   bool
	}{
		{[]float64{100, 90, 95}, nil, 1, "gpudirect\nby 5.3%", false},
		{[]float64{100, 90, nan}, nil, 1, "gpudirect\nby 10.0%", false},
		{[]float64{120, 100, 100.4}, nil, 1, "all but tcp\ntcp +20.0%", true},
		{[]float64{100, 100.2, 100.1}, nil, 0, "all the same", true},
		{[]float64{nan, nan, nan}, nil, -1, "", false},
		{[]float64{100, 90, 95}, gapCI([]float64{1, 2, 1.5}, none), 1, "gpudirect\nby 5.3% ±2.6", false},
		// host-rdma's gap (5) is within hypot(4, 3.5) = 5.3: a tie; tcp's
		// gap, 30, has a CI of hypot(4, 1) = 4.1, 4.6% of the best's 90.
		{[]float64{120, 90, 95}, gapCI([]float64{1, 4, 3.5}, none), 1, "all but tcp\ntcp +33.3% ±4.6", true},
		{[]float64{100, 90, 95}, gapCI([]float64{nan, nan, nan}, none), 1, "gpudirect\nby 5.3%", false},
		// Paired: the same 4 and 3.5 half-widths, but the seeds move
		// together: the gap's CI is 2.484, and host-rdma is behind.
		{[]float64{100, 90, 95}, gapCI([]float64{1, 4, 3.5}, [][]float64{{100, 100, 100}, {90, 91, 89}, {95, 97, 93}}), 1, "gpudirect\nby 5.3% ±2.6", false},
	} {
		b, label, tie := winnerCell(tc.means, tc.gap, names)
		if b != tc.best || label != tc.label || tie != tc.tie {
			t.Errorf("%v: %d %q %v; want %d %q %v", tc.means, b, label, tie, tc.best, tc.label, tc.tie)
		}
	}
}

// Anchors sit on the swept axis by the log of the value between two
// cells: 100 Gb/s on 25, 50, 200, 400 is at 1 + log(2)/log(4) = 1.5; 25
// and 400 on their own cells; a key with no anchors, or an axis that does
// not reach them, places none.
func TestAnchorPositions(t *testing.T) {
	pos, labels := anchorPositions("llm.disagg.line_rate", []string{"25Gbps", "50Gbps", "200Gbps", "400Gbps"})
	want := []float64{0, 1.5, 3}
	if len(pos) != 3 || len(labels) != 3 {
		t.Fatalf("positions %v %v, want 3", pos, labels)
	}
	for i := range want {
		if math.Abs(pos[i]-want[i]) > 1e-12 {
			t.Errorf("anchor %s at %g, want %g", labels[i], pos[i], want[i])
		}
	}
	if pos, _ := anchorPositions("llm.host_load", []string{"0%", "50%"}); len(pos) != 0 {
		t.Errorf("host load axis: %v, want no anchors", pos)
	}
	if pos, _ := anchorPositions("llm.disagg.line_rate", []string{"1Gbps", "10Gbps"}); len(pos) != 0 {
		t.Errorf("an axis below every anchor: %v, want none", pos)
	}
}

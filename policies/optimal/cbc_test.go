//go:build cbc

package optimal

import (
	"math"
	"testing"
	"time"
)

// TestBackendsAgreeOnWindows: on paper-sized windows (up to 20 jobs on 8
// A100s) both backends prove optimality and find the same optimal cost (the
// decisions may differ among equal-cost optima). The tiny-instance check
// against brute force is in TestAgainstBruteForce.
func TestBackendsAgreeOnWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of solving; run without -short")
	}
	for _, size := range [][2]int{{10, 2}, {10, 4}, {20, 4}, {20, 8}} {
		for seed := range uint64(3) {
			s := windowSnapshot(seed, size[0], size[1])
			costs := map[string]float64{}
			for _, backend := range []string{"gophersat", "cbc"} {
				r := solve(t, s, Config{E1: 1, E2: 0.1, Backend: backend, TimeLimit: 30 * time.Second})
				if !r.Optimal {
					t.Errorf("%v seed %d %s: not proven optimal (gap %v)", size, seed, backend, r.Gap)
				}
				costs[backend] = r.Decision.Cost
				t.Logf("%v seed %d %s: %v", size, seed, backend, r.Elapsed)
			}
			if math.Abs(costs["gophersat"]-costs["cbc"]) > 1e-9 {
				t.Errorf("%v seed %d: gophersat %v, cbc %v", size, seed, costs["gophersat"], costs["cbc"])
			}
		}
	}
}

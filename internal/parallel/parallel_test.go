package parallel

import (
	"sync/atomic"
	"testing"
)

// Every index is run once, whatever the number of workers (more than
// the indices, none asked, one), and no more than workers run at once.
func TestEach(t *testing.T) {
	for _, tc := range []struct{ n, workers, most int }{
		{0, 4, 0}, {1, 0, 1}, {7, 1, 1}, {50, 3, 3}, {5, 100, 5},
	} {
		seen := make([]int32, tc.n)
		var running, peak atomic.Int32
		Each(tc.n, tc.workers, func(i int) {
			r := running.Add(1)
			for {
				p := peak.Load()
				if r <= p || peak.CompareAndSwap(p, r) {
					break
				}
			}
			atomic.AddInt32(&seen[i], 1)
			running.Add(-1)
		})
		for i, s := range seen {
			if s != 1 {
				t.Errorf("n=%d workers=%d: index %d ran %d times", tc.n, tc.workers, i, s)
			}
		}
		if int(peak.Load()) > tc.most {
			t.Errorf("n=%d workers=%d: %d ran at once, want at most %d", tc.n, tc.workers, peak.Load(), tc.most)
		}
	}
}

package conspirator_test

import (
	"fmt"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/sim/cluster"
)

// decisionSizes are the (jobs, GPUs) of BenchmarkDecision: the paper's
// exact-solver range, up to 20 jobs at a time on 8 GPUs, and one beyond.
// openb's shares are mostly whole GPUs (56% ask for 1000 milli), so the
// first four are overloaded (jobs left pending); 10 on 8 and 20 on 16
// roughly fit.
var decisionSizes = [][2]int{{5, 2}, {10, 4}, {20, 8}, {30, 8}, {10, 8}, {20, 16}}

// snapshotsPerSize snapshots (seeds 1..n) are cycled through per size, so
// that both policies see exactly the same problems in the same order.
const snapshotsPerSize = 8

// BenchmarkDecision times one decision of the heuristic and of the exact
// optimum (gophersat, 3 s limit) side by side on the same deterministic
// openb-like snapshots (cluster.SyntheticSnapshot: single-GPU jobs with
// openb's share mix on A100-40GB, about half of them running). Besides
// ns/op it reports the GPUs the decision uses and the jobs it leaves
// pending (means over iterations) and,
// for optimal, the share of solves proven optimal within the limit.
//
//	go test -run XXX -bench Decision -benchmem -benchtime 3x ./policies/conspirator/
func BenchmarkDecision(b *testing.B) {
	for _, size := range decisionSizes {
		snaps := make([]*snapshot.Snapshot, snapshotsPerSize)
		for k := range snaps {
			s, err := cluster.SyntheticSnapshot(uint64(k+1), size[0], size[1])
			if err != nil {
				b.Fatal(err)
			}
			snaps[k] = s
		}
		for _, pc := range []struct {
			name string
			args map[string]string
		}{{"conspirator", nil}, {"optimal", map[string]string{"time_limit": "3s"}}} {
			b.Run(fmt.Sprintf("jobs=%d/gpus=%d/policy=%s", size[0], size[1], pc.name), func(b *testing.B) {
				p, err := snapshot.New(pc.name, pc.args)
				if err != nil {
					b.Fatal(err)
				}
				gpus, pending, proven, n := 0, 0, 0, 0
				for b.Loop() {
					s := snaps[n%len(snaps)]
					d, err := p.Schedule(s)
					if err != nil {
						b.Fatal(err)
					}
					gpus += d.GPUsUsed()
					pending += len(d.Unscheduled)
					if d.Bound > 0 && d.Bound >= d.Cost {
						proven++
					}
					n++
				}
				b.ReportMetric(float64(gpus)/float64(n), "gpus-used")
				b.ReportMetric(float64(pending)/float64(n), "pending")
				if pc.name == "optimal" {
					b.ReportMetric(float64(proven)/float64(n), "proven")
				}
			})
		}
	}
}

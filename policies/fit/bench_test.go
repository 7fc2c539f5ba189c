package fit

import (
	"fmt"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// BenchmarkPlacePending times one best-fit decision on a loaded cluster
// (60 GPUs, half A100 with MIG and half V100, already full; 300 pending
// jobs of 5 shapes, as a burst of the openb trace leaves them) two ways
// side by side: impl=place-pending skips the jobs whose shape found no
// room (pack.View.PlacePending, what the policies do), impl=every-job
// offers every pending job to every GPU (the loop before it). The
// decisions are equal (TestPlacePendingChangesNoDecision).
//
//	go test -run XXX -bench PlacePending -benchmem ./policies/fit/
func BenchmarkPlacePending(b *testing.B) {
	s := &snapshot.Snapshot{GPUs: mixedGPUs(60)}
	rng := engine.NewStream(1, "bench")
	// Every GPU runs a whole-GPU job: nothing pending fits.
	for g := range 60 {
		pl := snapshot.Placement{JobID: g, GPU: g, Option: 0}
		opts := []snapshot.Option{{Fraction: 1}}
		if g%2 == 0 {
			pl.Profile = "7g.40gb"
			opts = []snapshot.Option{{Profile: "7g.40gb"}}
			s.GPUs[g].Instances = []snapshot.Instance{{Profile: "7g.40gb", Start: 0}}
		} else {
			pl.Fraction = 1
		}
		s.Jobs = append(s.Jobs, snapshot.Job{ID: g, Options: opts, Current: &pl})
	}
	for k := range 300 {
		s.Jobs = append(s.Jobs, snapshot.Job{ID: 60 + k, Options: pendingShapes[rng.IntN(len(pendingShapes))]})
	}
	impls := []struct {
		name string
		run  func() snapshot.Decision
	}{
		{"place-pending", func() snapshot.Decision {
			d, _ := Policy{Best: true, MIG: true}.Schedule(s)
			return d
		}},
		{"every-job", func() snapshot.Decision {
			d, _ := everyJob(s, true)
			return d
		}},
	}
	want := fmt.Sprint(impls[1].run())
	for _, im := range impls {
		if got := fmt.Sprint(im.run()); got != want {
			b.Fatalf("%s decides otherwise", im.name)
		}
		b.Run("impl="+im.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				im.run()
			}
		})
	}
}

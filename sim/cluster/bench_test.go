package cluster

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// benchOpenB replays the whole openb default trace (6,203 GPU pods of the
// 8,152 rows over 149 days) on its 6,212-GPU node list with one policy,
// synthetic jobs instead when synthetic > 0, and arrivals divided by
// compress when it is above 1.
func benchOpenB(b *testing.B, policy string, synthetic int, compress float64) {
	c := openb(b)
	c.Policies = []string{policy}
	c.Synthetic.Jobs = synthetic
	c.Window.Compress = max(1, compress)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(c, 1, testEnv)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.Policies[0].GPUHours, "GPU-hours")
		b.ReportMetric(float64(r.Policies[0].Decisions), "decisions")
	}
}

func BenchmarkOpenBConspirator(b *testing.B) { benchOpenB(b, "conspirator", 0, 1) }
func BenchmarkOpenBFGD(b *testing.B)         { benchOpenB(b, "fgd", 0, 1) }
func BenchmarkOpenBNaiveShare(b *testing.B)  { benchOpenB(b, "naive-share", 0, 1) }

// BenchmarkOpenBQueues is the naive-share replay on each pending-event set
// (engine.QueueKinds), side by side: what engine.QueueDefault is chosen by.
func BenchmarkOpenBQueues(b *testing.B) {
	defer func(k engine.QueueKind) { engine.QueueDefault = k }(engine.QueueDefault)
	for _, k := range engine.QueueKinds {
		b.Run("queue="+string(k), func(b *testing.B) {
			engine.QueueDefault = k
			benchOpenB(b, "naive-share", 0, 1)
		})
	}
}

// BenchmarkSynthetic100k: 100,000 jobs drawn from openb's empirical job
// mix at its arrival rate, on the openb cluster, conspirator.
func BenchmarkSynthetic100k(b *testing.B) { benchOpenB(b, "conspirator", 100000, 1) }

// BenchmarkOpenBLoaded replays the whole openb trace with arrivals
// compressed 60x on its node list (capacity binds at the bursts), one
// policy per sub-benchmark: the six of paper/gpu-hours side by side.
func BenchmarkOpenBLoaded(b *testing.B) {
	for _, p := range []string{"exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator"} {
		b.Run("policy="+p, func(b *testing.B) { benchOpenB(b, p, 0, 60) })
	}
}

package training

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// switchMLMix is the mix of the public 5,335-job list of SwitchML-omnetpp
// (alibaba.csv, derived from Alibaba's 2020 PAI trace), summarised by hand
// from the file (which is not in this repository): jobs per GPU count,
// 98.1% BERT-large, 1.3% Inception-v3, 0.4% AlexNet, 0.1% ResNet-50;
// iterations from 30 to 1,022,506, median 6,698, 77.8 M in all; arrivals
// over 61 days.
var switchMLMix = struct {
	gpus   []int
	counts []int
}{
	gpus:   []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 25, 30, 32, 40, 50, 64, 75, 100, 125},
	counts: []int{1191, 162, 140, 80, 2857, 50, 10, 306, 14, 175, 8, 7, 5, 187, 1, 13, 1, 2, 52, 9, 22, 4, 31, 2, 1, 4, 1},
}

// fiveK is a synthetic job list of the size and mix of the public one:
// GPU counts and models by their shares, iterations log-normal with the
// list's median (6,698) and mean (14,590: sigma 1.25), capped at its
// largest, Poisson arrivals over its 61 days.
func fiveK(seed uint64) []train.Job {
	s := engine.NewStream(seed, "bench/5335")
	const n = 5335
	total := 0
	for _, c := range switchMLMix.counts {
		total += c
	}
	jobs := make([]train.Job, n)
	t := 0.0
	for i := range jobs {
		u := s.IntN(total)
		k := 0
		for u >= switchMLMix.counts[k] {
			u -= switchMLMix.counts[k]
			k++
		}
		model := "bert-large"
		switch v := s.Float64(); {
		case v < 0.013:
			model = "inception-v3"
		case v < 0.017:
			model = "alexnet"
		case v < 0.018:
			model = "resnet50"
		}
		it := 6698 * math.Exp(1.25*normal(s))
		it = math.Min(math.Max(it, 30), 1022506)
		jobs[i] = train.Job{ID: fmt.Sprintf("b%d", i), Arrival: engine.Seconds(t), GPUs: switchMLMix.gpus[k], Iterations: int(it), Model: model}
		t += s.Exp(61 * 86400.0 / n)
	}
	return jobs
}

// BenchmarkReplay5335 replays a 5,335-job list under each policy on a
// rack of 32 servers of 8 GPUs, ATP's switch and pool, and atp and esa
// with every spanning job aggregating (ina.use always): one op is one
// whole replay. It reports the engine events per iteration and the share
// of iterations fast-forwarded. CONSPIRATOR_JOB_LIST=path replays that
// list instead (the public alibaba.csv of SwitchML-omnetpp). The mean
// JCT is reported, to compare builds.
func BenchmarkReplay5335(b *testing.B) {
	jobs := fiveK(1)
	if p := os.Getenv("CONSPIRATOR_JOB_LIST"); p != "" {
		var err error
		if jobs, err = train.ReadJobList(p); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"none", "static", "atp", "esa", "esa-oracle", "atp/always", "esa/always"} {
		pol, use, _ := strings.Cut(name, "/")
		b.Run(name, func(b *testing.B) {
			c, env := listed(jobs...)
			c.Cluster.Servers, c.Cluster.GPUsPerServer = 32, 8
			c.INA.Device = "tofino-atp"
			if use != "" {
				c.INA.Use = use // every spanning job through the pool
			}
			c.Policies, c.Baseline, c.RecordJobs = []string{pol}, "", false
			var r *Result
			for b.Loop() {
				var err error
				if r, err = Run(c, 1, env); err != nil {
					b.Fatal(err)
				}
			}
			p := r.Policies[0]
			iters := float64(p.SteppedIterations + p.FastForwarded)
			b.ReportMetric(float64(p.Events)/iters, "events/iter")
			if p.SteppedIterations > 0 {
				b.ReportMetric(float64(p.Events)/float64(p.SteppedIterations), "events/stepped-iter")
			}
			b.ReportMetric(100*float64(p.FastForwarded)/iters, "%ff")
			b.ReportMetric(1e3*p.JCT.Mean, "jct-ms")
			b.ReportMetric(p.HostRingJobs, "host-ring-jobs")
		})
	}
}

// normal draws a standard normal deviate (Box-Muller).
func normal(s *engine.Stream) float64 {
	u := 1 - s.Float64() // (0, 1]
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*s.Float64())
}

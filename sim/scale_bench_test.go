package sim_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// BenchmarkScale runs the built-in scale/1m-jobs scenario (openb's job
// mix, Poisson arrivals, the conspirator policy, finished jobs dropped) at
// 10^4, 10^5 and 10^6 jobs on its 1,024 GPUs, and with 10^6 jobs on 1,024,
// 10,240 and 102,400 GPUs (the arrival rate scaled with the GPUs, so that
// the offered load stays 73%). Besides ns/op it reports jobs-per-s and
// peak-heap-MB, the most heap memory in use (live objects and garbage not
// yet swept) at any 10 ms sample of the run. bench/scale.sh runs it on one
// core and draws the log-log plot with the fitted slopes:
//
//	go test -cpu 1 -run '^$' -bench Scale -benchtime 1x ./sim/
func BenchmarkScale(b *testing.B) {
	root, err := shareddata.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	b.Chdir(root)
	shareddata.Path(b, "traces", "alibaba-gpu-v2023") // skips, naming it, where absent
	for _, pt := range []struct{ jobs, scale int }{
		{10_000, 1}, {100_000, 1}, {1_000_000, 1}, {1_000_000, 10}, {1_000_000, 100},
	} {
		b.Run(fmt.Sprintf("jobs=%d/gpus=%d", pt.jobs, 1024*pt.scale), func(b *testing.B) {
			var sc scenarios.Scenario
			set := []string{
				fmt.Sprintf("cluster.synthetic.jobs=%d", pt.jobs),
				fmt.Sprintf("cluster.gpus[0].count=%d", 768*pt.scale),
				fmt.Sprintf("cluster.gpus[1].count=%d", 256*pt.scale),
				fmt.Sprintf("cluster.synthetic.rate=%g/s", 0.025*float64(pt.scale)),
			}
			if err := scenarios.Load("scale/1m-jobs", set, nil, &sc); err != nil {
				b.Fatal(err)
			}
			peak := 0.0
			for b.Loop() {
				runtime.GC()
				stop := sampleHeap()
				if _, err := sim.Run(&sc); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, stop())
			}
			b.ReportMetric(float64(pt.jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(peak/(1<<20), "peak-heap-MB")
		})
	}
}

// sampleHeap samples the heap in use every 10 ms until the returned
// function is called, which returns the most seen, in bytes.
func sampleHeap() func() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	read := func() float64 {
		metrics.Read(s)
		return float64(s[0].Value.Uint64() + s[1].Value.Uint64())
	}
	var mu sync.Mutex
	peak := read()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	return func() float64 {
		close(done)
		wg.Wait()
		v := read()
		mu.Lock()
		defer mu.Unlock()
		return max(peak, v)
	}
}

package resource

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// Each benchmark op is one job (or flow, or grant) through the resource
// under an M/M/1-like load at rho = 0.8: its arrival event, its service and
// its completion. Service times are drawn up front so that the random
// generator is not measured, and statistics keep running moments only
// (KeepSamples(false)), as a long run would; with samples kept, add about
// 8 bytes a sample, amortised.

const benchRho = 0.8

func draws(n int, mean float64, name string) []float64 {
	r := engine.NewStream(1, name)
	d := make([]float64, n)
	for i := range d {
		d[i] = r.Exp(mean)
	}
	return d
}

// feed runs b.N Poisson arrivals (mean gap 1ms) through submit.
func feed(b *testing.B, sim *engine.Simulator, submit func(i int)) {
	gaps := draws(4096, 1e-3, "gaps")
	i := 0
	var arrive func()
	arrive = func() {
		submit(i)
		i++
		if i < b.N {
			sim.MustAfter(engine.Seconds(gaps[i%len(gaps)]), arrive)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	sim.MustAt(0, arrive)
	sim.Run()
}

func BenchmarkQueue(b *testing.B) {
	for _, c := range []int{1, 8} {
		b.Run(map[int]string{1: "servers=1", 8: "servers=8"}[c], func(b *testing.B) {
			sim := engine.New(nil)
			q, _ := NewQueue(sim, c)
			q.KeepSamples(false)
			svc := draws(4096, benchRho*1e-3*float64(c), "service")
			feed(b, sim, func(i int) { q.Submit(engine.Seconds(svc[i%len(svc)]), nil) })
		})
	}
}

func BenchmarkPS(b *testing.B) {
	sim := engine.New(nil)
	p, _ := NewPS(sim, 1, 0)
	p.KeepSamples(false)
	work := draws(4096, benchRho*1e-3, "work")
	feed(b, sim, func(i int) { p.Submit(work[i%len(work)], nil) })
}

func BenchmarkBandwidth(b *testing.B) {
	sim := engine.New(nil)
	bw, _ := NewBandwidth(sim, 1e9)
	bw.KeepSamples(false)
	size := draws(4096, benchRho*1e6, "bytes") // 0.8 MB at 1 GB/s: 0.8ms
	feed(b, sim, func(i int) {
		cp := 0.0
		if i%4 == 0 {
			cp = 2e8 // a quarter of flows capped at 200 MB/s
		}
		bw.Start(size[i%len(size)], cp, nil)
	})
}

func BenchmarkPool(b *testing.B) {
	sim := engine.New(nil)
	p, _ := NewPool(sim, 1<<20)
	p.KeepSamples(false)
	hold := draws(4096, 4e-3, "hold") // mean 4 holders of 256 KiB in 1 MiB
	feed(b, sim, func(i int) {
		h := engine.Seconds(hold[i%len(hold)])
		_ = p.Acquire(256<<10, func() { sim.MustAfter(h, func() { p.Release(256 << 10) }) })
	})
}

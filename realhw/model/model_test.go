package model

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Each stage against its closed form, derived by hand from the paper/e2e
// defaults (200 Gb/s at 95% goodput, 1.3 us one way, 5 ns per message;
// pinned 25 GB/s, pageable factor 0.4; SoC DMA 22 GB/s + 95 ns; per-core
// background model with alpha 0.1).
func TestStagesMatchClosedForms(t *testing.T) {
	cfg := datapath.Defaults()
	const input = 2408448 // ResNet-50 batch 8, 224x224x3 FP16
	cases := []struct {
		name string
		load float64
		run  func(b *Backend) (engine.Time, error)
		want float64 // ns
	}{
		// 2408448 B / (25e9 B/s x 0.95) = 101,408.3 ns, + 1300 + 5.
		{"network", 0, func(b *Backend) (engine.Time, error) { return b.Network(input) }, 101408.3 + 1300 + 5},
		// Reply of 16 kB: 16000 / 23.75e9 = 673.7 ns, + 1305.
		{"reply", 0, func(b *Backend) (engine.Time, error) { return b.Reply(16000) }, 673.7 + 1305},
		// 1e6 B at 25e9 x 0.4 = 1e10 B/s: 100 us.
		{"host copy idle", 0, func(b *Backend) (engine.Time, error) { return b.HostCopy(1e6) }, 100000},
		// At u = 50%: a foreground thread gets 1 - u/2 = 0.75 of a core and
		// work is stretched by 1 + 0.1 x 0.5 = 1.05: factor 1.4.
		{"host copy 50%", 0.5, func(b *Backend) (engine.Time, error) { return b.HostCopy(1e6) }, 140000},
		{"cpu 50%", 0.5, func(b *Backend) (engine.Time, error) { return b.CPUWork(10 * engine.Microsecond) }, 14000},
		// 95 ns + 2408448 / 22e9 s = 95 + 109,474.9 ns.
		{"dma", 0, func(b *Backend) (engine.Time, error) { return b.DMA(input) }, 95 + 109474.9},
	}
	for _, c := range cases {
		cc := cfg
		cc.Host.BackgroundLoad = units.Fraction(c.load)
		b, err := New(cc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.run(b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(float64(got)-c.want) > 2 {
			t.Errorf("%s: %v, want %.1f ns", c.name, got, c.want)
		}
	}
}

// Compute takes compute_time when set, else the compute table over the
// stack speedup; it is positive and grows with the batch.
func TestCompute(t *testing.T) {
	cfg := datapath.Defaults()
	cfg.Request.ComputeTime = units.Duration(500 * engine.Microsecond)
	b, _ := New(cfg)
	if got, _ := b.Compute(0); got != 500*engine.Microsecond {
		t.Errorf("compute_time 500us gave %v", got)
	}
	cfg = datapath.Defaults()
	b8, _ := New(cfg)
	cfg.Request.Batch = 32
	b32, _ := New(cfg)
	t8, err8 := b8.Compute(0)
	t32, err32 := b32.Compute(0)
	if err8 != nil || err32 != nil || t8 <= 0 || t32 <= t8 {
		t.Errorf("table compute: batch 8 %v (%v), batch 32 %v (%v); want 0 < t8 < t32", t8, err8, t32, err32)
	}
}

func TestBadUse(t *testing.T) {
	b, err := New(datapath.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Network(-1); err == nil {
		t.Error("negative size accepted")
	}
	if _, err := b.CPUWork(-engine.Microsecond); err == nil {
		t.Error("negative work accepted")
	}
	b.Close()
	if _, err := b.DMA(10); err == nil {
		t.Error("DMA after Close accepted")
	}
	bad := datapath.Defaults()
	bad.Network.LineRate = 0
	if _, err := New(bad); err == nil {
		t.Error("invalid config accepted")
	}
}

package hw

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// One message alone: per-message + bytes/rate + latency. Two equal
// messages together share the link: each serializes at half the rate.
//
//	1e6 B at 1e9 B/s = 1 ms; + 5 ns + 1.3 us -> 1,001,305 ns alone, 2,001,305 ns each when two.
func TestLinkSharing(t *testing.T) {
	cfg := LinkConfig{BytesPerSec: 1e9, Latency: 1300, PerMessage: 5}
	if got := cfg.TransferTime(1e6); got != 1001305 {
		t.Errorf("TransferTime = %d ns, want 1,001,305", got)
	}
	for _, n := range []int{1, 2} {
		sim := engine.New(nil)
		l, err := NewLink(sim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var ends []engine.Time
		for i := 0; i < n; i++ {
			l.Send(1e6, 0, func() { ends = append(ends, sim.Now()) })
		}
		sim.Run()
		want := engine.Time(1001305)
		if n == 2 {
			want = 2001305
		}
		for _, e := range ends {
			if d := e - want; d < -2 || d > 2 {
				t.Errorf("%d messages: one ends at %d ns, want %d", n, e, want)
			}
		}
	}
	// A capped flow: 1e6 B at most 0.25e9 B/s -> 4 ms + 1,305 ns.
	sim := engine.New(nil)
	l, _ := NewLink(sim, cfg)
	var end engine.Time
	l.Send(1e6, 0.25e9, func() { end = sim.Now() })
	sim.Run()
	if d := end - 4001305; d < -2 || d > 2 {
		t.Errorf("capped flow ends at %d, want 4,001,305", end)
	}
	for _, bad := range []LinkConfig{{BytesPerSec: 0}, {BytesPerSec: 1, Latency: -1}, {BytesPerSec: math.Inf(1)}} {
		if _, err := NewLink(engine.New(nil), bad); err == nil {
			t.Errorf("NewLink(%+v) accepted", bad)
		}
	}
}

// TCP: 1 MB at 0.6 cycles/B on 3 GHz = 200 us, + 5 us per message. With
// per-packet costs: ceil(1e6/1448) = 691 packets x 3,000 cycles = 691 us.
// cudaMemcpy of 1 MB at 25 GB/s: pinned = 10 us CPU + 40 us DMA; pageable
// = 10 + 1e6/10e9 = 110 us CPU.
func TestStackCosts(t *testing.T) {
	tcp := TCPStack{ClockHz: 3e9, RxCyclesPerByte: 0.6, RxPerMessage: 5 * engine.Microsecond, MSS: 1448}
	if got := tcp.RxWork(1e6); got != 205*engine.Microsecond {
		t.Errorf("RxWork(1MB) = %v, want 205us", got)
	}
	tcp.RxCyclesPerByte, tcp.RxPerMessage, tcp.RxCyclesPerPacket = 0, 0, 3000
	if got := tcp.RxWork(1e6); got != 691*engine.Microsecond {
		t.Errorf("per-packet RxWork(1MB) = %v, want 691us", got)
	}
	c := HostCosts{MemcpyIssue: 10 * engine.Microsecond, PageableFactor: 0.4}
	if cpu, dma := c.CopyWork(1e6, 25e9, false); cpu != 10*engine.Microsecond || dma != 40*engine.Microsecond {
		t.Errorf("pinned copy: cpu %v dma %v, want 10us 40us", cpu, dma)
	}
	if cpu, dma := c.CopyWork(1e6, 25e9, true); cpu != 110*engine.Microsecond || dma != 0 {
		t.Errorf("pageable copy: cpu %v dma %v, want 110us 0", cpu, dma)
	}
	// Back from the GPU, a pageable copy runs at its own factor: 10 +
	// 1e6/(25e9 x 0.2) = 210 us; a pinned one as toward the GPU.
	c.PageableD2HFactor = 0.2
	if cpu, dma := c.CopyBackWork(1e6, 25e9, true); cpu != 210*engine.Microsecond || dma != 0 {
		t.Errorf("pageable copy back: cpu %v dma %v, want 210us 0", cpu, dma)
	}
	if cpu, dma := c.CopyBackWork(1e6, 25e9, false); cpu != 10*engine.Microsecond || dma != 40*engine.Microsecond {
		t.Errorf("pinned copy back: cpu %v dma %v, want 10us 40us", cpu, dma)
	}
	if cpu, _ := c.CopyWork(1e6, 25e9, true); cpu != 110*engine.Microsecond {
		t.Errorf("pageable copy toward the GPU moved with the D2H factor: %v", cpu)
	}
	link, _ := LookupPCIe("gen4-x16")
	if got := P2PBytesPerSec(link, false, 0.5); got != 12.5e9 {
		t.Errorf("cross-root-complex P2P = %v, want 12.5e9", got)
	}
}

// SmartNIC: work on an Arm core takes hostWork/ArmSpeed; the buffer either
// queues or drops; the DMA pays its per-op cost after the bytes.
func TestSmartNIC(t *testing.T) {
	spec, _ := LookupSmartNIC("bluefield3")
	for _, policy := range []BufferPolicy{BufferWait, BufferDrop} {
		sim := engine.New(nil)
		n, err := NewSmartNIC(sim, SmartNICConfig{Spec: spec, BufferBytes: 100, Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		// 3,100 ns / 0.62 = 5,000 ns.
		if got := n.ArmTime(3100); got != 5000 {
			t.Errorf("ArmTime(3100ns) = %d, want 5000", got)
		}
		var granted []engine.Time
		ok1, _ := n.Reserve(60, func() { granted = append(granted, sim.Now()) })
		ok2, _ := n.Reserve(60, func() { granted = append(granted, sim.Now()) })
		sim.MustAfter(engine.Microsecond, func() { n.Release(60) })
		sim.Run()
		if !ok1 {
			t.Errorf("%s: first reservation refused", policy)
		}
		switch policy {
		case BufferWait:
			if !ok2 || len(granted) != 2 || granted[1] != engine.Microsecond || n.Dropped() != 0 {
				t.Errorf("wait: ok %v, grants %v, dropped %d; want the second granted at 1us", ok2, granted, n.Dropped())
			}
		case BufferDrop:
			if ok2 || len(granted) != 1 || n.Dropped() != 1 {
				t.Errorf("drop: ok %v, grants %v, dropped %d; want the second dropped", ok2, granted, n.Dropped())
			}
		}
		if _, err := n.Reserve(101, nil); err == nil {
			t.Errorf("%s: a request larger than the buffer was accepted", policy)
		}
	}
	// DMA: 22e6 B at 22 GB/s = 1 ms, + 95 ns.
	sim := engine.New(nil)
	d, _ := NewDMAEngine(sim, 22e9, 95)
	var end engine.Time
	d.Copy(22e6, 0, func() { end = sim.Now() })
	sim.Run()
	if want := engine.Millisecond + 95; end < want-2 || end > want+2 || d.CopyTime(22e6, 0) != want {
		t.Errorf("DMA ends at %v (closed form %v), want %v", end, d.CopyTime(22e6, 0), want)
	}
	if _, err := NewSmartNIC(engine.New(nil), SmartNICConfig{Spec: spec, BufferBytes: 0, Policy: BufferWait}); err == nil {
		t.Error("a zero-byte buffer was accepted")
	}
}

// The catalog: every name resolves, unknown names list the known ones,
// and Provenance records each value the catalog holds (param).
func TestCatalog(t *testing.T) {
	for _, n := range SmartNICNames() {
		if s, err := LookupSmartNIC(n); err != nil || s.Name != n {
			t.Errorf("LookupSmartNIC(%q) = %v, %v", n, s.Name, err)
		}
	}
	if _, err := LookupNIC("connectx9"); err == nil || !strings.Contains(err.Error(), "connectx6, connectx7") {
		t.Errorf("unknown NIC: %v", err)
	}
	bf3, _ := LookupSmartNIC("bluefield3")
	cx6, _ := LookupNIC("connectx6")
	cpu, _ := LookupHostCPU("xeon-8380-2s")
	g4, _ := LookupPCIe("gen4-x16")
	want := map[string]float64{
		"smartnic.bluefield3.arm_cores":     float64(bf3.ArmCores),
		"smartnic.bluefield3.arm_speed":     bf3.ArmSpeed,
		"smartnic.bluefield3.dma_bandwidth": bf3.DMABytesPerSec,
		"smartnic.bluefield3.max_power":     bf3.MaxPowerW,
		"smartnic.bluefield3.price":         bf3.PriceUSD,
		"nic.connectx6.line_rate":           cx6.LineRateBitsPerSec,
		"nic.connectx6.one_way_latency":     cx6.OneWayLatency.Seconds(),
		"host_cpu.xeon-8380-2s.cores":       float64(cpu.Cores),
		"host_cpu.xeon-8380-2s.power":       cpu.PowerW,
		"pcie.gen4-x16.pinned_h2d":          g4.PinnedH2DBytesPerSec,
		"host.memcpy_issue":                 DefaultHostCosts.MemcpyIssue.Seconds(),
		"host.pageable_factor":              DefaultHostCosts.PageableFactor,
		"host.kernel_launch":                DefaultHostCosts.KernelLaunch.Seconds(),
		"host.interference":                 DefaultHostCosts.Interference,
	}
	prov := Provenance()
	if !sort.SliceIsSorted(prov, func(i, j int) bool { return prov[i].Key < prov[j].Key }) {
		t.Error("Provenance is not sorted")
	}
	seen := map[string]bool{}
	for _, p := range prov {
		if seen[p.Key] {
			t.Errorf("duplicate provenance key %s", p.Key)
		}
		seen[p.Key] = true
		if p.Source == "" || p.Grade == "" {
			t.Errorf("%s has no source or grade", p.Key)
		}
		if w, ok := want[p.Key]; ok && math.Abs(p.Value-w) > 1e-12*math.Abs(w) {
			t.Errorf("%s: provenance says %v, catalog has %v", p.Key, p.Value, w)
		}
		// A stated plausible range holds the value and is said in words.
		if lo, hi, ok := p.Plausible(); ok {
			if !(lo <= p.Value && p.Value <= hi) {
				t.Errorf("%s: value %v outside its plausible range %v..%v", p.Key, p.Value, lo, hi)
			}
			if !strings.Contains(p.Source, "plausible") {
				t.Errorf("%s: a range without a reason in its source", p.Key)
			}
		} else if p.Low != 0 || p.High != 0 {
			t.Errorf("%s: range %v..%v is empty", p.Key, p.Low, p.High)
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("%s missing from Provenance", k)
		}
	}
}

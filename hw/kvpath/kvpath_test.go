package kvpath

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/hw"
)

// kv256 is one 2,048-token Llama-3.1-8B KV cache in BF16: 2,048 x 128 KiB.
const kv256 = 256 << 20 // 268,435,456 B

// server is Default with the given PCIe generation and background load.
func server(t *testing.T, pcie string, load float64) Hardware {
	t.Helper()
	h := Default()
	var err error
	if h.PCIe, err = hw.LookupPCIe(pcie); err != nil {
		t.Fatal(err)
	}
	h.Host.Background = load
	return h
}

func plan(t *testing.T, h Hardware, path string, tr Transfer) Plan {
	t.Helper()
	p, err := h.Plan(path, tr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// One 256 MiB transfer alone, on Default (200 Gb/s x 0.95 = 23.75 GB/s;
// pinned PCIe 25 GB/s Gen4, 50 GB/s Gen5; 1.3 us one way; 80 cores at
// 3 GHz; BF3: DMA 22 GB/s, 95 ns per descriptor, Arm 0.62; post 0.8 us per
// op; memcpy issue 10 us; 64 KiB slices: 4,096 ops; 4 MiB chunks: 64).
// All in ns; the stretch at 80% (per-core, alpha 0.1) is 1.08/0.6 = 1.8.
//
//	wire: 268,435,456 / 23.75e9 = 11,302,545.5 -> 11,302,546
//	fill or drain of one 4 MiB chunk: Gen4 4,194,304 / 25e9 = 167,772.2 -> 167,773;
//	                                  Gen5 / 50e9 = 83,886.1 -> 83,887
//
//	gpudirect: min(P2P 25, PCIe 25, NIC 23.75) = NIC -> 11,302,546; posting
//	           4,096 x 800 = 3,276,800 (x 1.8 = 5,898,240 at 80%) overlaps it;
//	           + 1,300 -> 11,303,846 at either load and on Gen5 (still NIC-bound)
//	host-rdma: DRAM 153.6/2 = 76.8 GB/s, so the NIC binds again: 11,302,546;
//	           source thread 64 x 10,000 + 3,276,800 = 3,916,800 (x 1.8 = 7,050,240)
//	           overlaps; + 1,300 + 2 x 167,773 = 336,846 -> 11,639,392 (Gen4);
//	           + 1,300 + 2 x 83,887 = 169,074 -> 11,471,620 (Gen5)
//	tcp:       one core: 3e9 / 0.6 = 5 GB/s, the flow 53,687,091.2; the receiving
//	           thread does more: 64 recvs of 4 MiB, each 5,000 + 838,860.8 -> 843,861,
//	           = 54,007,104, + 64 cudaMemcpy x 10,000 = 54,647,104 (the sender's
//	           64 x (3,000 + 419,431) + 640,000 = 27,675,584 is shorter);
//	           + 336,846 -> 54,983,950 (Gen4), + 169,074 -> 54,816,178 (Gen5);
//	           at 80% the thread is 54,647,104 x 1.8 = 98,364,787.2 -> 98,364,787
//	           (the flow, 268,435,456 / (5e9 / 1.8) = 96,636,764, is shorter)
//	           -> 98,701,633 (Gen4), 98,533,861 (Gen5)
//	conspirator: min(NIC 23.75, BF3 DRAM 83.2 x 0.75 / 2 = 31.2, DMA 22, PCIe 25) =
//	           DMA: 268,435,456 / 22e9 = 12,201,611.6 -> 12,201,612; Arm
//	           2 x 4,096 x 800 / 0.62 = 10,570,322.6 -> 10,570,323 overlaps;
//	           latency 2 x 1,300 (READ request, then data) + the last 64 KiB's DMA
//	           (2,978.9 -> 2,979, + 95) + notify 1,000 = 6,674 -> 12,208,286, any
//	           load (no host work), either PCIe (the DMA binds)
//	nvlink:    268,435,456 / 300e9 = 894,784.9 -> 894,785, + 2,000 -> 896,785
func TestAlone256MiB(t *testing.T) {
	cases := []struct {
		path string
		pcie string
		load float64
		want engine.Time
	}{
		{GPUDirect, "gen4-x16", 0, 11303846},
		{GPUDirect, "gen4-x16", 0.8, 11303846},
		{GPUDirect, "gen5-x16", 0, 11303846},
		{HostRDMA, "gen4-x16", 0, 11639392},
		{HostRDMA, "gen4-x16", 0.8, 11639392},
		{HostRDMA, "gen5-x16", 0, 11471620},
		{TCP, "gen4-x16", 0, 54983950},
		{TCP, "gen5-x16", 0, 54816178},
		{TCP, "gen4-x16", 0.8, 98701633},
		{TCP, "gen5-x16", 0.8, 98533861},
		{Conspirator, "gen4-x16", 0, 12208286},
		{Conspirator, "gen4-x16", 0.8, 12208286},
		{Conspirator, "gen5-x16", 0.8, 12208286},
		{NVLink, "gen4-x16", 0, 896785},
		{NVLink, "gen4-x16", 0.8, 896785},
	}
	for _, c := range cases {
		p := plan(t, server(t, c.pcie, c.load), c.path, Transfer{Bytes: kv256})
		if got := p.Alone(kv256); got != c.want {
			t.Errorf("%s %s at %.0f%% load: Alone = %d ns, hand-derived %d ns (plan %+v)", c.path, c.pcie, 100*c.load, got, c.want, p)
		}
	}
}

// Background load stretches host work by 1.8 at 80% (per-core model,
// alpha 0.1: 1.08 / 0.6). tcp moves its bytes on host cores, so its cap
// and its threads slow by the whole stretch; gpudirect and host-rdma only
// post and issue copies on the host, so their host time stretches and
// their data does not (the NIC still binds, see TestAlone256MiB);
// conspirator has no host work at all.
func TestBackgroundLoad(t *testing.T) {
	const stretch = 1.08 / 0.6
	cases := []struct {
		path        string
		hostScales  bool    // HostCPU and Control stretch by 1.8
		rateFactor  float64 // Rate at 80% over Rate at 0%
		aloneScales bool    // Alone minus Latency stretches by 1.8; else unchanged
	}{
		{TCP, true, 1 / stretch, true},
		{GPUDirect, true, 1, false},
		{HostRDMA, true, 1, false},
		{Conspirator, false, 1, false},
		{NVLink, false, 1, false},
	}
	for _, c := range cases {
		idle := plan(t, server(t, "gen4-x16", 0), c.path, Transfer{Bytes: kv256})
		busy := plan(t, server(t, "gen4-x16", 0.8), c.path, Transfer{Bytes: kv256})
		wantHost, wantControl := idle.HostCPU, idle.Control
		if c.hostScales {
			wantHost, wantControl = engine.Scale(idle.HostCPU, stretch), engine.Scale(idle.Control, stretch)
		}
		// Each side's work is rounded once after stretching: allow 1 ns.
		if d := busy.HostCPU - wantHost; d < -1 || d > 1 {
			t.Errorf("%s: HostCPU at 80%% = %v, want %v", c.path, busy.HostCPU, wantHost)
		}
		if d := busy.Control - wantControl; d < -1 || d > 1 {
			t.Errorf("%s: Control at 80%% = %v, want %v", c.path, busy.Control, wantControl)
		}
		if busy.ArmCPU != idle.ArmCPU {
			t.Errorf("%s: Arm work moved with host load: %v -> %v", c.path, idle.ArmCPU, busy.ArmCPU)
		}
		if got := busy.Rate() / idle.Rate(); math.Abs(got-c.rateFactor) > 1e-12 {
			t.Errorf("%s: rate at 80%% / at 0%% = %v, want %v", c.path, got, c.rateFactor)
		}
		a0, a8 := idle.Alone(kv256)-idle.Latency, busy.Alone(kv256)-busy.Latency
		want := a0
		if c.aloneScales {
			want = engine.Scale(a0, stretch)
		}
		if d := a8 - want; d < -1 || d > 1 {
			t.Errorf("%s: Alone minus latency at 80%% = %v, want %v (at 0%%: %v)", c.path, a8, want, a0)
		}
	}
}

// A paged KV cache of 16-token blocks is scattered: 32 layers x 128
// blocks x 2 (K and V) = 8,192 operations of 32 KiB for the same 256 MiB,
// twice the slices. Posting them, not moving the bytes, then sets the
// time where it runs on a loaded host or on the slower Arm:
//
//	gpudirect at 0%:  8,192 x 800 = 6,553,600 < wire 11,302,546 -> 11,303,846 (unchanged)
//	gpudirect at 80%: 6,553,600 x 1.8 = 11,796,480 > wire -> + 1,300 = 11,797,780
//	host-rdma at 80%: (64 x 10,000 + 6,553,600) x 1.8 = 12,948,480 > wire
//	                  -> + 336,846 = 13,285,326
//	conspirator:      2 x 8,192 x 800 / 0.62 = 21,140,645.2 -> 21,140,645 > DMA 12,201,612;
//	                  latency 2,600 + a 32 KiB op's DMA (1,489.5 -> 1,490, + 95) + 1,000
//	                  = 5,185 -> 21,145,830, at any load
func TestOpsHeavyControlDominates(t *testing.T) {
	const ops = 32 * 128 * 2
	cases := []struct {
		path        string
		load        float64
		want        engine.Time
		controlRule bool // Control, not the bytes, sets the time
	}{
		{GPUDirect, 0, 11303846, false},
		{GPUDirect, 0.8, 11797780, true},
		{HostRDMA, 0.8, 13285326, true},
		{Conspirator, 0, 21145830, true},
		{Conspirator, 0.8, 21145830, true},
	}
	for _, c := range cases {
		p := plan(t, server(t, "gen4-x16", c.load), c.path, Transfer{Bytes: kv256, Ops: ops})
		if p.Ops != ops {
			t.Errorf("%s: plan counts %d ops, want %d", c.path, p.Ops, ops)
		}
		if got := p.Alone(kv256); got != c.want {
			t.Errorf("%s at %.0f%%: Alone = %d ns, hand-derived %d ns", c.path, 100*c.load, got, c.want)
		}
		if rules := p.Control > hw.SerializationTime(kv256, p.Rate(), 0); rules != c.controlRule {
			t.Errorf("%s at %.0f%%: control dominates = %v, want %v", c.path, 100*c.load, rules, c.controlRule)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		path  string
		edit  func(*Hardware)
		wants []string // substrings of the error; none: valid
	}{
		{"default tcp", TCP, func(*Hardware) {}, nil},
		{"default gpudirect", GPUDirect, func(*Hardware) {}, nil},
		{"default host-rdma", HostRDMA, func(*Hardware) {}, nil},
		{"default conspirator", Conspirator, func(*Hardware) {}, nil},
		{"default nvlink", NVLink, func(*Hardware) {}, nil},
		{"conspirator stages the sender without GPUDirect", Conspirator, func(h *Hardware) { h.GPUDirect = false }, nil},
		{"nvlink needs no NIC", NVLink, func(h *Hardware) { h.NICBytesPerSec = 0 }, nil},
		{"gpudirect without GPUDirect", GPUDirect, func(h *Hardware) { h.GPUDirect = false },
			[]string{`path "gpudirect": needs GPUDirect RDMA`, "set Hardware.GPUDirect", `use "host-rdma"`}},
		{"conspirator without a SmartNIC", Conspirator, func(h *Hardware) { h.SmartNIC = nil },
			[]string{"needs a SmartNIC on the receiving server", "Hardware.SmartNIC", `use "gpudirect"`}},
		{"zero NIC bandwidth", HostRDMA, func(h *Hardware) { h.NICBytesPerSec = 0 },
			[]string{"NICBytesPerSec is 0", "line rate x efficiency"}},
		{"unknown path", "gpudirct", func(*Hardware) {},
			[]string{`unknown path "gpudirct"`, `did you mean "gpudirect"`, "tcp, gpudirect, host-rdma, conspirator, nvlink"}},
		{"no NVLink", NVLink, func(h *Hardware) { h.NVLinkBytesPerSec = 0 },
			[]string{"NVLinkBytesPerSec is 0", "no NVLink"}},
		{"no PCIe figure", GPUDirect, func(h *Hardware) { h.PCIe = hw.PCIeSpec{} },
			[]string{"PCIe.PinnedH2DBytesPerSec is 0", "hw.LookupPCIe"}},
		{"staging without DRAM or chunk", TCP, func(h *Hardware) { h.HostDRAMBytesPerSec, h.StageChunkBytes = 0, 0 },
			[]string{"HostDRAMBytesPerSec is 0", "StageChunkBytes is 0"}},
		{"tcp without a stack", TCP, func(h *Hardware) { h.TCP = hw.TCPStack{} },
			[]string{"TCP.ClockHz is 0", "cycles per byte"}},
		{"host with no cores", GPUDirect, func(h *Hardware) { h.Host.Cores = 0 },
			[]string{"Host.Cores is 0"}},
		{"full background load", TCP, func(h *Hardware) { h.Host.Background = 1 },
			[]string{"Host.Background is 1"}},
		{"cross root complex with no factor", GPUDirect, func(h *Hardware) { h.SameRootComplex, h.CrossFactor = false, 0 },
			[]string{"CrossFactor is 0"}},
		{"no slice", Conspirator, func(h *Hardware) { h.SliceBytes = 0 },
			[]string{"SliceBytes is 0", "65536"}},
		{"SmartNIC without DRAM figure", Conspirator, func(h *Hardware) { h.SmartNICDRAMBytesPerSec = 0 },
			[]string{"SmartNICDRAMBytesPerSec is 0"}},
	}
	for _, c := range cases {
		h := Default()
		c.edit(&h)
		err := h.Validate(c.path)
		if len(c.wants) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want one naming %q", c.name, c.wants)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
		if _, perr := h.Plan(c.path, Transfer{Bytes: kv256}); perr == nil || perr.Error() != err.Error() {
			t.Errorf("%s: Plan's error %v is not Validate's %v", c.name, perr, err)
		}
	}
}

func TestPlanRefusesBadTransfers(t *testing.T) {
	h := Default()
	for _, tr := range []Transfer{{Bytes: -1}, {Bytes: math.NaN()}, {Bytes: math.Inf(1)}, {Bytes: kv256, Ops: -1}} {
		if _, err := h.Plan(GPUDirect, tr); err == nil {
			t.Errorf("Plan(%+v) took it", tr)
		}
	}
	// An empty transfer costs only its fixed latency.
	if got := plan(t, h, GPUDirect, Transfer{}).Alone(0); got != h.NICLatency {
		t.Errorf("empty transfer: Alone = %v, want the wire latency %v", got, h.NICLatency)
	}
}

// Every plan names each resource once (resource.Network refuses a flow
// crossing a link twice), per-GPU resources are exactly the GPU's links,
// and the same Hardware gives the same plan.
func TestPlanShape(t *testing.T) {
	perGPU := map[Resource]bool{PCIeD2H: true, PCIeH2D: true, NVLinkTx: true, NVLinkRx: true,
		NICTx: false, NICRx: false, HostDRAM: false, TCPCPUTx: false, TCPCPURx: false, SmartNICDMA: false, SmartNICDRAM: false, SmartNICArm: false}
	for r, want := range perGPU {
		if r.PerGPU() != want {
			t.Errorf("%s.PerGPU() = %v, want %v", r, r.PerGPU(), want)
		}
	}
	h := Default()
	for _, path := range Paths() {
		p := plan(t, h, path, Transfer{Bytes: kv256})
		type key struct {
			s Side
			r Resource
		}
		seen := map[key]bool{}
		for _, hop := range p.Hops {
			k := key{hop.Side, hop.Resource}
			if seen[k] {
				t.Errorf("%s crosses %s %s twice", path, hop.Side, hop.Resource)
			}
			seen[k] = true
			if _, ok := perGPU[hop.Resource]; !ok {
				t.Errorf("%s names undocumented resource %q", path, hop.Resource)
			}
			if !(hop.BytesPerSec > 0) {
				t.Errorf("%s: %s %s has capacity %v", path, hop.Side, hop.Resource, hop.BytesPerSec)
			}
		}
		if again := plan(t, h, path, Transfer{Bytes: kv256}); !reflect.DeepEqual(p, again) {
			t.Errorf("%s: two plans differ:\n%+v\n%+v", path, p, again)
		}
	}
	ps := Paths()
	ps[0] = "changed"
	if Paths()[0] != TCP {
		t.Error("Paths returns a shared slice")
	}
}

// run starts one flow per transfer at time 0 in a resource.Network with
// one link per (endpoint, resource) and returns each transfer's end,
// max(flow end, Control) + Latency, as a caller of Plan does.
func run(t *testing.T, transfers []struct {
	src, dst string
	p        Plan
	bytes    float64
}) []engine.Time {
	t.Helper()
	sim := engine.New(nil)
	net, err := resource.NewNetwork(sim)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		endpoint string
		r        Resource
	}
	links := map[key]resource.LinkID{}
	ends := make([]engine.Time, len(transfers))
	for i, tr := range transfers {
		var path []resource.LinkID
		for _, hop := range tr.p.Hops {
			k := key{tr.src, hop.Resource}
			if hop.Side == Dst {
				k.endpoint = tr.dst
			}
			l, ok := links[k]
			if !ok {
				if l, err = net.AddLink(hop.BytesPerSec); err != nil {
					t.Fatal(err)
				}
				links[k] = l
			} else if c := net.Capacity(l); c != hop.BytesPerSec {
				t.Fatalf("%s %s: capacity %v in one plan, %v in another", k.endpoint, k.r, c, hop.BytesPerSec)
			}
			path = append(path, l)
		}
		p := tr.p
		net.Start(tr.bytes, path, p.CapBytesPerSec, func() {
			ends[i] = max(sim.Now(), p.Control) + p.Latency
		})
	}
	sim.Run()
	return ends
}

// Two identical 256 MiB transfers at once, from two prefill servers A and
// B into one decode server C (nvlink: from GPUs A and B into GPU C of one
// server): the links at C are shared, so each gets half of C's narrowest.
//
//	gpudirect:   C's NIC 23.75 / 2 = 11.875 GB/s (C's PCIe gives 12.5 each):
//	             268,435,456 / 11.875e9 = 22,605,091.03 -> 22,605,092; + 1,300 = 22,606,392
//	host-rdma:   the same NIC share (C's DRAM link 76.8 / 2 = 38.4 each is wider):
//	             22,605,092 + 336,846 = 22,941,938
//	conspirator: C's DMA engine 22 / 2 = 11 GB/s: 24,403,223.3 -> 24,403,224; + 6,674 = 24,409,898
//	tcp:         each connection's core caps it at 5 GB/s, under its share of C's NIC
//	             (11.875) and C's cores (80 x 5 = 400 GB/s): as alone, the receiving
//	             thread's 54,647,104 + 336,846 = 54,983,950
//	nvlink:      C's NVLink in 300 / 2 = 150 GB/s: 1,789,569.7 -> 1,789,570; + 2,000 = 1,791,570
func TestConcurrentTransfersShareDestination(t *testing.T) {
	cases := []struct {
		path string
		want engine.Time
	}{
		{GPUDirect, 22606392},
		{HostRDMA, 22941938},
		{Conspirator, 24409898},
		{TCP, 54983950},
		{NVLink, 1791570},
	}
	h := Default()
	for _, c := range cases {
		p := plan(t, h, c.path, Transfer{Bytes: kv256})
		ends := run(t, []struct {
			src, dst string
			p        Plan
			bytes    float64
		}{{"A", "C", p, kv256}, {"B", "C", p, kv256}})
		for i, got := range ends {
			if d := got - c.want; d < -1 || d > 1 {
				t.Errorf("%s transfer %d: ends at %d ns, hand-derived %d ns", c.path, i, got, c.want)
			}
		}
	}
}

// One transfer alone in a Network ends when Alone says, on every path and
// load: the closed form and the flow model agree.
func TestAloneMatchesNetwork(t *testing.T) {
	for _, load := range []float64{0, 0.8} {
		for _, pcie := range []string{"gen4-x16", "gen5-x16"} {
			h := server(t, pcie, load)
			for _, path := range Paths() {
				for _, tr := range []Transfer{{Bytes: kv256}, {Bytes: kv256, Ops: 8192}, {Bytes: 3 << 20}} {
					p := plan(t, h, path, tr)
					got := run(t, []struct {
						src, dst string
						p        Plan
						bytes    float64
					}{{"A", "B", p, tr.Bytes}})[0]
					if want := p.Alone(tr.Bytes); got != want {
						t.Errorf("%s %s %.0f%% %+v: network %d ns, Alone %d ns", path, pcie, 100*load, tr, got, want)
					}
				}
			}
		}
	}
}

func TestFigures(t *testing.T) {
	fs := Figures()
	if len(fs) == 0 {
		t.Fatal("no figures")
	}
	for _, f := range fs {
		if !strings.HasPrefix(f.Key, "kvpath.") || f.Source == "" || f.Grade == "" || f.Unit == "" {
			t.Errorf("figure %+v lacks a key in kvpath., a source, a grade or a unit", f)
		}
		if lo, hi, ok := f.Plausible(); ok && !(lo <= f.Value && f.Value <= hi) {
			t.Errorf("figure %s = %v outside its plausible range [%v, %v]", f.Key, f.Value, lo, hi)
		}
	}
	if !slices.IsSortedFunc(fs, func(a, b hw.Param) int { return strings.Compare(a.Key, b.Key) }) {
		t.Error("Figures is not sorted by key")
	}
	// Default's derived numbers, by hand: 307.2 x 0.5; 83.2 x 0.75; 0.3 + 0.5 us.
	h := Default()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"HostDRAMBytesPerSec", h.HostDRAMBytesPerSec, 153.6e9},
		{"SmartNICDRAMBytesPerSec", h.SmartNICDRAMBytesPerSec, 62.4e9},
		{"PostPerOp", float64(h.PostPerOp), 800},
		{"NICBytesPerSec", h.NICBytesPerSec, 23.75e9},
	} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("Default().%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// host-copy, between MIG instances of one server: out of the source GPU
// over PCIe into host DRAM, in over the destination's PCIe. 256 MiB on
// the Default server (Gen4 pinned 25 GB/s; DRAM 153.6 GB/s for staging,
// half of it as each byte is written and read: 76.8 GB/s) runs at the
// pinned rate: 268,435,456 / 25e9 = 10.737 ms of flow; the host issues
// two copies per 4 MiB chunk, 2 x 64 x 10 us = 1.28 ms, under it; the
// fill and drain add two chunks at the pinned rate, 2 x 4,194,304 /
// 25e9 = 0.336 ms: 11.074 ms alone. No NIC is crossed.
func TestHostCopyPath(t *testing.T) {
	h := Default()
	const bytes = 256 << 20
	p, err := h.Plan(HostCopy, Transfer{Bytes: bytes})
	if err != nil {
		t.Fatal(err)
	}
	for _, hop := range p.Hops {
		if hop.Resource == NICTx || hop.Resource == NICRx {
			t.Errorf("host-copy crosses %s", hop.Resource)
		}
	}
	if len(p.Hops) != 3 || p.Rate() != 25e9 || p.Control != 1280*engine.Microsecond {
		t.Errorf("hops %v, rate %v, control %v; want 3 hops at 25e9 B/s, 1.28 ms of copies", p.Hops, p.Rate(), p.Control)
	}
	want := engine.Time(10737418) + engine.Time(335545)
	if got := p.Alone(bytes); got < want-2 || got > want+2 {
		t.Errorf("alone %v; want %v", got, want)
	}
}

// The conspirator path's Arm cores: one transfer posts on one core (its
// Control, ArmCPU), and the cores together are a shared hop of
// cores x bytes / ArmCPU, 16 times one core's rate on a BlueField-3. Alone
// the hop never binds (one core's posting, in Control, is 16 times
// longer than the hop's share), so the transfer alone is unchanged by it;
// 32 transfers posting at once would share it at half a core each.
func TestConspiratorArmCores(t *testing.T) {
	h := Default()
	p := plan(t, h, Conspirator, Transfer{Bytes: kv256, Ops: 4096})
	var arm *Hop
	for i := range p.Hops {
		if p.Hops[i].Resource == SmartNICArm {
			arm = &p.Hops[i]
		}
	}
	if arm == nil || arm.Side != Dst {
		t.Fatalf("conspirator plan %v: no destination Arm hop", p.Hops)
	}
	oneCore := kv256 / p.ArmCPU.Seconds()
	if want := float64(h.SmartNIC.ArmCores) * oneCore; math.Abs(arm.BytesPerSec-want) > 1e-6*want {
		t.Errorf("Arm hop %g B/s, want %d cores x %g", arm.BytesPerSec, h.SmartNIC.ArmCores, oneCore)
	}
	if p.Control < p.ArmCPU {
		t.Errorf("Control %s below the Arm's posting %s", p.Control, p.ArmCPU)
	}
	without := p
	without.Hops = nil
	for _, hop := range p.Hops {
		if hop.Resource != SmartNICArm {
			without.Hops = append(without.Hops, hop)
		}
	}
	if p.Alone(kv256) != without.Alone(kv256) {
		t.Errorf("alone with the Arm hop %s, without %s: the hop should not bind one transfer", p.Alone(kv256), without.Alone(kv256))
	}
	for _, path := range []string{GPUDirect, HostRDMA, TCP} {
		for _, hop := range plan(t, h, path, Transfer{Bytes: kv256}).Hops {
			if hop.Resource == SmartNICArm {
				t.Errorf("%s crosses the SmartNIC's Arm cores", path)
			}
		}
	}
}

// Pageable staging: every copy between GPU and host memory goes through a
// bounce buffer a host core fills, at PageableFactor of the pinned rate,
// stretched by load, and two more passes over host DRAM per byte. On
// host-rdma (Gen4: pinned 25 GB/s, factor 0.4) the cap falls from the
// pinned rate to 0.4 of it, 0.4/1.8 of it at 80% load, and each side's
// DRAM hop from half the staging bandwidth to a quarter; GPUDirect, which
// stages nothing, is unchanged; a factor outside (0, 1] is refused.
func TestPageableStaging(t *testing.T) {
	h := Default()
	pinned := plan(t, h, HostRDMA, Transfer{Bytes: kv256})
	h.Pageable = true
	pg := plan(t, h, HostRDMA, Transfer{Bytes: kv256})
	rate := h.PCIe.PinnedH2DBytesPerSec
	if pinned.CapBytesPerSec != rate || math.Abs(pg.CapBytesPerSec-rate*h.PageableFactor) > 1e-6 {
		t.Errorf("cap pinned %g, pageable %g; want %g and %g x %g", pinned.CapBytesPerSec, pg.CapBytesPerSec, rate, rate, h.PageableFactor)
	}
	for i, hop := range pg.Hops {
		want := pinned.Hops[i].BytesPerSec
		if hop.Resource == HostDRAM {
			want = h.HostDRAMBytesPerSec / 4
		}
		if math.Abs(hop.BytesPerSec-want) > 1e-6*want {
			t.Errorf("pageable %s %s at %g, want %g", hop.Side, hop.Resource, hop.BytesPerSec, want)
		}
	}
	// Each side's core fills its bounce buffer for the whole transfer
	// at the pageable rate: host CPU beside the posting and copies.
	if want := pinned.HostCPU + 2*hw.SerializationTime(kv256, rate*h.PageableFactor, 0); pg.HostCPU != want || pg.Control != pinned.Control {
		t.Errorf("pageable host CPU %s (control %s), want %s (control unchanged, %s)", pg.HostCPU, pg.Control, want, pinned.Control)
	}
	if pg.Alone(kv256) <= pinned.Alone(kv256) {
		t.Errorf("pageable alone %s, pinned %s: pageable should be slower", pg.Alone(kv256), pinned.Alone(kv256))
	}
	h.Host.Background = 0.8
	loaded := plan(t, h, HostRDMA, Transfer{Bytes: kv256})
	if want := rate * h.PageableFactor / 1.8; math.Abs(loaded.CapBytesPerSec-want) > 1e-6*want {
		t.Errorf("pageable at 80%% load: cap %g, want %g (stretched 1.8x)", loaded.CapBytesPerSec, want)
	}
	h.Host.Background = 0
	if a, b := plan(t, h, GPUDirect, Transfer{Bytes: kv256}), plan(t, Default(), GPUDirect, Transfer{Bytes: kv256}); !reflect.DeepEqual(a, b) {
		t.Errorf("gpudirect moved with pageable staging: %+v against %+v", a, b)
	}
	h.PageableFactor = 0
	if _, err := h.Plan(HostRDMA, Transfer{Bytes: kv256}); err == nil || !strings.Contains(err.Error(), "PageableFactor") {
		t.Errorf("pageable with factor 0: %v, want an error naming PageableFactor", err)
	}
}

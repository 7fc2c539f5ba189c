package training

import (
	"fmt"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// Placement server, a lone job on k servers of g GPUs each, by hand.
// Each server's BlueField-3 takes the g gradients of S bytes over its DMA
// engine (D = 22 GB/s, smartnic.bluefield3.dma_bandwidth) through its
// summation (30 GB/s, or sum_rate), so the reduce takes g S / min(D, sum)
// and the broadcast back g S / D. Across the servers, the switch (a pool
// larger than the window) moves the one sum per server in S/B plus the
// chunk round trip. none sums at no SmartNIC, whatever the placement:
// the hierarchical host ring of the k servers moves 2(k-1)/k S in 2(k-1)
// alphas after NVLink's reduce, the flat ring 2(n-1)/n S over all n GPUs
// in 2(n-1) alphas, and a parameter server on the first server takes k-1
// sums in and sends them out, (k-1) S / B each way at once (pipelined).
// Placement rack sums inside the server over NVLink instead: 2(g-1)
// alpha_nv + T(2(g-1)/g S at NVLink). On the NICs the switch's chunks
// carry w = 332/256 bytes on the wire per byte of values, the host's
// RoCEv2 packets h = 4178/4096 (the DMA and NVLink carry values alone).
func TestServerPlacementClosedForm(t *testing.T) {
	m, _ := train.Lookup("bert-large")
	comp, _ := m.ComputeSeconds("a100-80gb")
	C := max(1, engine.Seconds(comp))
	S := m.GradientBytes(4)
	B := 100e9 / 8
	const D = 22e9
	dev, _ := hw.LookupAggregator("tofino-switchml")
	nv, _ := hw.LookupIntraServerLink("nvlink3")
	for _, tc := range []struct {
		k, g      int
		sum       float64 // 0: the device's 30 GB/s
		allReduce string
	}{
		{2, 2, 0, AllReduceHierarchical},
		{4, 2, 0, AllReduceRing},
		{2, 4, 0, AllReduceHierarchical},
		{4, 4, 10e9, AllReduceHierarchical},
		{3, 8, 60e9, AllReducePS},
	} {
		t.Run(fmt.Sprintf("k%d_g%d_sum%g_%s", tc.k, tc.g, tc.sum, tc.allReduce), func(t *testing.T) {
			const iters = 10
			job := train.Job{ID: "a", GPUs: tc.k * tc.g, Iterations: iters, Model: "bert-large"}
			c, env := listed(job)
			c.Cluster.Servers, c.Cluster.GPUsPerServer = tc.k, tc.g
			c.Sync.AllReduce = tc.allReduce
			c.Jobs.Synthetic.Models = []string{"bert-large"}
			c.INA.Placement = PlacementServer
			c.INA.SumRate = units.Bandwidth(tc.sum)
			c.INA.Use = UseAlways // the in-network forms, also where the ring is faster
			c.Policies, c.Baseline = []string{"static", "none"}, ""
			r := mustRun(t, c, env)
			sum := 30e9
			if tc.sum > 0 {
				sum = tc.sum
			}
			gS := float64(tc.g) * S
			nic := resource.TransferTime(gS, min(D, sum)) + resource.TransferTime(gS, D)
			k := float64(tc.k)
			alpha := c.Cluster.NetLatency.Time()
			const w, h = 332.0 / 256, 4178.0 / 4096
			inNet := C + resource.TransferTime(S*w, B) + dev.ChunkRTT + nic
			// none sums at no SmartNIC: the host all-reduce as under
			// placement rack, NVLink inside the servers.
			g := tc.g
			nvl := engine.Time(2*(g-1))*nv.Latency + resource.TransferTime(2*float64(g-1)/float64(g)*S, nv.BytesPerSec)
			ring := C + engine.Time(2*(tc.k-1))*alpha + resource.TransferTime(2*(k-1)/k*S*h, B) + nvl
			switch tc.allReduce {
			case AllReducePS:
				// The servers' sums pushed to, and pulled from, a PS on the
				// first server, pipelined: k-1 flows of S share its NIC
				// each way, both ways at once.
				ring = C + resource.TransferTime(S*h, B/(k-1)) + 2*alpha + nvl
			case AllReduceRing:
				// Flat, over all n GPUs; its NVLink steps run in step
				// with the NIC's.
				n := float64(tc.k * tc.g)
				ring = C + engine.Time(2*(tc.k*tc.g-1))*alpha + resource.TransferTime(2*(n-1)/n*S*h, B)
			}
			if got, want := policy(t, r, "static").JCT.Mean, (iters * inNet).Seconds(); got != want {
				t.Errorf("NIC then switch: JCT %.9f s, want %.9f", got, want)
			}
			if got, want := policy(t, r, "none").JCT.Mean, (iters * ring).Seconds(); got != want {
				t.Errorf("none under placement server: JCT %.9f s, want the host ring's %.9f", got, want)
			}
			if r.Placement != PlacementServer || r.ServerNIC != "bluefield3" {
				t.Errorf("result says placement %q, server NIC %q", r.Placement, r.ServerNIC)
			}
			// The same job, placement rack: NVLink inside the server,
			// whatever the host all-reduce (under a flat ring too: the
			// device still takes one sum per server).
			c.INA.Placement, c.INA.SumRate = PlacementRack, 0
			c.Policies = []string{"static"}
			rr := mustRun(t, c, env)
			if got, want := policy(t, rr, "static").JCT.Mean, (iters * (C + resource.TransferTime(S*w, B) + dev.ChunkRTT + nvl)).Seconds(); got != want {
				t.Errorf("rack: JCT %.9f s, want %.9f", got, want)
			}
		})
	}
}

// With one GPU a server there is nothing to sum inside it: placement
// server runs as rack, to the nanosecond.
func TestServerPlacementOneGPUAServer(t *testing.T) {
	job := train.Job{ID: "a", GPUs: 4, Iterations: 10, Model: "vgg16"}
	c, env := listed(job)
	c.Cluster.Servers = 4
	c.Policies, c.Baseline = []string{"esa", "none"}, ""
	rack := mustRun(t, c, env)
	c.INA.Placement = PlacementServer
	server := mustRun(t, c, env)
	for _, p := range []string{"esa", "none"} {
		if a, b := policy(t, rack, p).JCT.Mean, policy(t, server, p).JCT.Mean; a != b {
			t.Errorf("%s: rack %.9f s, server %.9f s; want equal with one GPU a server", p, a, b)
		}
	}
}

// An unknown placement, or a switch as a server's SmartNIC, is reported
// at its key.
func TestPlacementBadInput(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.INA.Placement = "nic" }, "ina.placement"},
		{func(c *Config) { c.INA.Placement, c.INA.ServerNIC = PlacementServer, "tofino-atp" }, "ina.server_nic"},
		{func(c *Config) { c.INA.Placement, c.INA.ServerNIC = PlacementServer, "connectx9" }, "ina.server_nic"},
		{func(c *Config) { c.INA.ServerNIC = "tofino-switchml" }, "ina.server_nic"}, // under rack too
	} {
		c := Defaults()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error at %s", err, tc.want)
		}
	}
}

package datapath

import (
	"github.com/conspirator-sim/conspirator/engine"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// Open-loop arrivals above capacity must be flagged, not reported as a
// latency. Capacity here is the two GPUs: 2 / 362.319 us = 5,520 requests/s.
// 4 clients x 2,000/s = 8,000/s is rho = 1.45 (unstable on every path);
// 4 x 250/s = 1,000/s is rho = 0.18 (stable).
func TestOpenLoopStability(t *testing.T) {
	for _, tc := range []struct {
		rate     float64
		unstable bool
	}{{2000, true}, {250, false}} {
		cfg := Defaults()
		cfg.Clients.Mode = ModeOpen
		cfg.Clients.Rate = units.Rate(tc.rate)
		cfg.Clients.Requests = 2000
		res, err := Run(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Paths {
			if p.Unstable != tc.unstable {
				t.Errorf("rate %v/s per client, %s: unstable = %v (%s), want %v", tc.rate, p.Name, p.Unstable, p.UnstableReason, tc.unstable)
			}
		}
	}
}

// A run whose in-flight count passes max_in_flight stops early and says why.
func TestMaxInFlightStopsRun(t *testing.T) {
	cfg := Defaults()
	cfg.Paths = []string{PathConspirator}
	cfg.Clients.Mode = ModeOpen
	cfg.Clients.Rate = 5000 // 4 x 5000 x 1.2 MB = 24 GB/s: below the port, far above two GPUs' 3,200/s
	cfg.MaxInFlight = 50
	res, err := Run(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Paths[0]
	if !p.Unstable || !strings.Contains(p.UnstableReason, "max_in_flight") {
		t.Errorf("unstable = %v, reason %q; want flagged for max_in_flight", p.Unstable, p.UnstableReason)
	}
	if p.Completed >= cfg.Clients.Count*cfg.Clients.Requests {
		t.Errorf("completed all %d requests: the run was not stopped", p.Completed)
	}
}

// A SmartNIC buffer that holds one request, and 8 clients with no think
// time: under "drop" requests that find it full are counted and skipped;
// under "wait" nothing is dropped and the wait shows in the buffer stage.
func TestSmartNICBufferPolicies(t *testing.T) {
	for _, policy := range []string{"drop", "wait"} {
		cfg := Defaults()
		cfg.Paths = []string{PathConspirator}
		cfg.Clients.Count = 8
		cfg.Clients.ThinkTime = 0
		cfg.Clients.Requests = 200
		cfg.SmartNIC.BufferBytes = units.Bytes(int64(cfg.Request.InputBytesPerItem) * int64(cfg.Request.Batch))
		// A short compute, so that the buffer, not the GPUs, binds: with
		// the default 626 us the replies come back spaced wider than a
		// request holds the buffer.
		cfg.Request.ComputeTime = units.Duration(10 * engine.Microsecond)
		cfg.SmartNIC.BufferPolicy = policy
		res, err := Run(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Paths[0]
		switch policy {
		case "drop":
			if p.Dropped == 0 {
				t.Error("drop: no request dropped with a one-request buffer and 8 clients")
			}
			if p.Completed+p.Dropped > 8*200 {
				t.Errorf("drop: %d completed + %d dropped > %d sent", p.Completed, p.Dropped, 8*200)
			}
		case "wait":
			if p.Dropped != 0 {
				t.Errorf("wait: %d dropped", p.Dropped)
			}
			// Each request holds the buffer for its write and DMA (about
			// 52.0 + 4.5 + 54.8 = 111 us), so the 7 others queue behind it.
			if p.Stages["buffer"] < 100 {
				t.Errorf("wait: mean buffer wait %.1f us, want a queue (> 100 us)", p.Stages["buffer"])
			}
		}
	}
}

// Sensitivity reproduces the default gap at factor 1 and moves it the
// expected way: a faster SoC DMA helps conspirator (gap up), a faster
// pageable copy or a faster PCIe link helps host-rdma (gap down).
func TestSensitivityDirections(t *testing.T) {
	cfg := Defaults()
	cfg.Clients.Requests = 300
	base, err := Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	g0, _ := Gap(base)
	for _, tc := range []struct {
		param string
		up    bool // does a larger value raise the gap?
	}{
		{"smartnic.dma_bandwidth", true},
		{"host.pageable_factor", false},
		{"host.pinned_h2d", false},
	} {
		pts, err := Sensitivity(cfg, tc.param, []float64{0.5, 1, 2}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := pts[1].GapPct - g0; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s x1: gap %.3f%%, the plain run gives %.3f%%", tc.param, pts[1].GapPct, g0)
		}
		if (pts[2].GapPct > pts[0].GapPct) != tc.up {
			t.Errorf("%s: gap %.1f%% at x0.5, %.1f%% at x2; expected it to go %s", tc.param, pts[0].GapPct, pts[2].GapPct, map[bool]string{true: "up", false: "down"}[tc.up])
		}
	}
	if _, err := Sensitivity(cfg, "host.warp_drive", []float64{2}, 1); err == nil || !strings.Contains(err.Error(), "smartnic.dma_bandwidth") {
		t.Errorf("unknown parameter: error %v should list the known ones", err)
	}
}

// One client, three requests per path: 12 rows, the union of stage
// columns, blanks where a path has no such stage.
func TestWriteCSV(t *testing.T) {
	cfg := Defaults()
	cfg.Clients.Count = 1
	cfg.Clients.Requests = 3
	cfg.WarmupRequests = 0
	res, err := Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 13 {
		t.Fatalf("%d lines, want header + 12", len(lines))
	}
	header := strings.Split(lines[0], ",")
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, h := range []string{"path", "latency_us", "network_us", "copy-h2d_us", "soc-decide_us", "reply_us"} {
		if _, ok := col[h]; !ok {
			t.Errorf("column %q missing from %v", h, header)
		}
	}
	first := strings.Split(lines[1], ",")
	if first[0] != PathTCP || first[col["soc-decide_us"]] != "" || first[col["network_us"]] == "" {
		t.Errorf("tcp row %v: want tcp with network and no soc-decide", first)
	}
	// The tcp row's latency is the closed form (closedform_test.go): 1,038.495 us.
	if first[col["latency_us"]] != "1038.495" && first[col["latency_us"]] != "1038.496" {
		t.Errorf("tcp latency %s us, want 1038.495", first[col["latency_us"]])
	}
}

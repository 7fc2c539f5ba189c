package datapath

import (
	"math"
	"strings"
	"testing"
)

// The paper's cost table from its own inputs (conspirator.md): host CPU
// $1,000 / 800 W / 1,000; SmartNIC $231 / 150 W / 270.
//
//	cost-effectiveness: (270/231) / (1000/1000) = 1.1688 -> +16.9% (paper: 1.17, +17%)
//	power efficiency:   1000/800 = 1.25; 270/150 = 1.8  -> 1.8/1.25 = 1.44, +44%
func TestPaperCostTable(t *testing.T) {
	lines, err := CostTable(PaperCostRows())
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"host cost-effectiveness", lines[0].CostEffectiveness, 1.0},
		{"host power efficiency", lines[0].PowerEfficiency, 1.25},
		{"SmartNIC cost-effectiveness", lines[1].CostEffectiveness, 270.0 / 231},
		{"SmartNIC power efficiency", lines[1].PowerEfficiency, 1.8},
		{"cost gain %", lines[1].CostGainPct, 16.883},
		{"power gain %", lines[1].PowerGainPct, 44.0},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-3 {
			t.Errorf("%s = %.4f, want %.4f", c.name, c.got, c.want)
		}
	}
	if math.Round(lines[1].CostGainPct) != 17 || math.Round(lines[1].PowerGainPct) != 44 {
		t.Errorf("rounded gains %+.0f%% / %+.0f%%, the paper prints +17%% / +44%%", lines[1].CostGainPct, lines[1].PowerGainPct)
	}
}

func TestCostTableRefusesBadRows(t *testing.T) {
	for _, rows := range [][]CostRow{
		nil,
		{{Name: "free", PriceUSD: 0, PowerW: 1, Throughput: 1}},
		{{Name: "x", PriceUSD: 1, PowerW: math.NaN(), Throughput: 1}},
		{{Name: "x", PriceUSD: 1, PowerW: 1, Throughput: -5}},
	} {
		if _, err := CostTable(rows); err == nil {
			t.Errorf("CostTable(%v) accepted", rows)
		}
	}
	_, err := CostTable([]CostRow{{Name: "ok", PriceUSD: 1, PowerW: 1, Throughput: 1}, {Name: "nic", PriceUSD: 1, PowerW: 0, Throughput: 1}})
	if err == nil || !strings.Contains(err.Error(), "row 1 (nic): power") {
		t.Errorf("error %v should name row 1 and its power", err)
	}
}

// The simulated control planes: the SmartNIC's capacity follows from its
// Arm time per request. Alone in the system the SoC spends
// (500+2,000+300)/0.62 + (500+300)/0.62 = 4,516.1 + 1,290.3 = 5,806.5 ns of
// Arm core-time per request (rounded up per stage: 4,517 + 1,291 = 5,808),
// so 16 cores sustain 16 / 5.808 us = 2.755 M requests/s. The host on
// host-rdma spends 274,895 ns per request (closedform_test.go), so 80 cores
// sustain 80 / 274.895 us = 291,020 requests/s.
func TestSimulatedControlPlanes(t *testing.T) {
	cfg := Defaults()
	cfg.Clients.Count = 1
	cfg.Clients.Requests = 20
	cfg.WarmupRequests = 0
	res, err := Run(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	soc := res.Path(PathConspirator).ControlPlane
	host := res.Path(PathHostRDMA).ControlPlane
	if soc.Processor != "smartnic" || host.Processor != "host-cpu" {
		t.Fatalf("processors %q, %q", soc.Processor, host.Processor)
	}
	if math.Abs(soc.BusyUsPerRequest-5.808) > 0.002 || math.Abs(soc.CapacityRPS-16/5.808e-6) > 1000 {
		t.Errorf("SmartNIC: %.4f us/request, %.0f rps; want 5.808 us, %.0f", soc.BusyUsPerRequest, soc.CapacityRPS, 16/5.808e-6)
	}
	if math.Abs(host.BusyUsPerRequest-154.474) > 0.01 || math.Abs(host.CapacityRPS-80/154.474e-6) > 10 {
		t.Errorf("host: %.3f us/request, %.0f rps; want 154.474 us, %.0f", host.BusyUsPerRequest, host.CapacityRPS, 80/154.474e-6)
	}
	rows, err := SimulatedCostRows(res)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := CostTable(rows)
	if err != nil {
		t.Fatal(err)
	}
	// (2.755e6/231) / (517,890/1000) = 23.03: the SmartNIC's control plane
	// does far less work per request than the host's, which copies.
	if want := (16 / 5.808e-6 / 231) / (80 / 154.474e-6 / 1000); math.Abs(lines[1].CostEffectiveness-want) > 0.01*want {
		t.Errorf("simulated cost-effectiveness %.2f, want %.2f", lines[1].CostEffectiveness, want)
	}
}

// Same control work on both processors: 1000 x 16 x 0.62 / cores.
//
//	80 cores (default, dual socket): 124.0 -> cost (124/231)/1 = 0.537, power 124/150 = 0.827
//	40 cores (one Xeon 8380):        248.0 -> cost 1.074 (+7.4%), power 1.653 (+32%)
func TestSameWorkCostRows(t *testing.T) {
	for _, tc := range []struct {
		cores            int
		throughput, cost float64
	}{{80, 124, 124.0 / 231}, {40, 248, 248.0 / 231}} {
		cfg := Defaults()
		cfg.Host.Cores = tc.cores
		rows := SameWorkCostRows(cfg)
		lines, err := CostTable(rows)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rows[1].Throughput-tc.throughput) > 1e-9 || math.Abs(lines[1].CostEffectiveness-tc.cost) > 1e-9 {
			t.Errorf("%d cores: SmartNIC throughput %.2f, cost-effectiveness %.3f; want %.2f, %.3f", tc.cores, rows[1].Throughput, lines[1].CostEffectiveness, tc.throughput, tc.cost)
		}
	}
}

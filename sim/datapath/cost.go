package datapath

import (
	"fmt"
	"math"
)

// ControlPlane is the processor that runs a path's control plane (receive
// handling, the scheduling decision, moving the data towards the GPU): the
// host CPU on the tcp, gpudirect and host-rdma paths, the SmartNIC on the
// conspirator path.
type ControlPlane struct {
	Processor string `json:"processor"` // "host-cpu" or "smartnic"
	Cores     int    `json:"cores"`
	// BusyUsPerRequest is that processor's core-time per request, in its
	// own cores' microseconds (Arm core-time on the SmartNIC).
	BusyUsPerRequest float64 `json:"busy_us_per_request"`
	// CapacityRPS is the request rate at which the processor would be
	// saturated: available cores / BusyUsPerRequest (the host's cores net
	// of the background load).
	CapacityRPS  float64 `json:"capacity_rps"`
	PriceUSD     float64 `json:"price_usd"`
	PowerW       float64 `json:"power_w"`
	RPSPerDollar float64 `json:"rps_per_dollar"`
	RPSPerWatt   float64 `json:"rps_per_watt"`
}

func (s *system) controlPlane() ControlPlane {
	rc := &s.rec
	served := float64(rc.completed - rc.dropped)
	var cp ControlPlane
	if s.snic != nil {
		cp = ControlPlane{Processor: "smartnic", Cores: s.cfg.SmartNIC.ArmCores,
			PriceUSD: float64(s.cfg.SmartNIC.Price), PowerW: float64(s.cfg.SmartNIC.Power)}
		if served > 0 {
			cp.BusyUsPerRequest = s.snic.ArmSeconds() / served * 1e6
		}
		if cp.BusyUsPerRequest > 0 {
			cp.CapacityRPS = float64(cp.Cores) / (cp.BusyUsPerRequest / 1e6)
		}
	} else {
		cp = ControlPlane{Processor: "host-cpu", Cores: s.cfg.Host.Cores,
			PriceUSD: float64(s.cfg.Host.Price), PowerW: float64(s.cfg.Host.Power)}
		if served > 0 {
			cp.BusyUsPerRequest = s.host.CPUSeconds() / served * 1e6
		}
		if cp.BusyUsPerRequest > 0 {
			avail := float64(cp.Cores) * (1 - float64(s.cfg.Host.BackgroundLoad))
			cp.CapacityRPS = avail / (cp.BusyUsPerRequest / 1e6)
		}
	}
	if cp.PriceUSD > 0 {
		cp.RPSPerDollar = cp.CapacityRPS / cp.PriceUSD
	}
	if cp.PowerW > 0 {
		cp.RPSPerWatt = cp.CapacityRPS / cp.PowerW
	}
	return cp
}

// CostRow is one processor in a cost comparison: what it costs, what it
// draws, and the throughput it sustains (any consistent unit: the paper
// normalizes the host CPU to 1,000).
type CostRow struct {
	Name       string  `json:"name"`
	PriceUSD   float64 `json:"price_usd"`
	PowerW     float64 `json:"power_w"`
	Throughput float64 `json:"throughput"`
}

// CostLine is a CostRow with its efficiencies. CostEffectiveness is
// throughput per dollar normalized to the first row (the paper's 1.0 and
// 1.17); PowerEfficiency is throughput per watt, not normalized (the
// paper's 1.25 and 1.8); the gains are relative to the first row, in
// percent (+17%, +44%).
type CostLine struct {
	CostRow
	CostEffectiveness float64 `json:"cost_effectiveness"`
	PowerEfficiency   float64 `json:"power_efficiency"`
	CostGainPct       float64 `json:"cost_gain_pct"`
	PowerGainPct      float64 `json:"power_gain_pct"`
}

// PaperCostRows are the inputs of the Conspirator paper's cost table (talk
// slides): host CPU $1,000, 800 W, throughput 1,000; SmartNIC $231, 150 W,
// throughput 270.
func PaperCostRows() []CostRow {
	return []CostRow{
		{Name: "host CPU", PriceUSD: 1000, PowerW: 800, Throughput: 1000},
		{Name: "SmartNIC", PriceUSD: 231, PowerW: 150, Throughput: 270},
	}
}

// CostTable computes the paper's cost table from its inputs, the first row
// being the baseline. It refuses rows whose price, power or throughput is
// not a positive finite number.
func CostTable(rows []CostRow) ([]CostLine, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("cost table: no rows")
	}
	for i, r := range rows {
		for _, v := range []struct {
			key string
			x   float64
		}{{"price", r.PriceUSD}, {"power", r.PowerW}, {"throughput", r.Throughput}} {
			if !(v.x > 0) || math.IsInf(v.x, 0) {
				return nil, fmt.Errorf("cost table: row %d (%s): %s %v must be a positive finite number", i, r.Name, v.key, v.x)
			}
		}
	}
	basePerDollar := rows[0].Throughput / rows[0].PriceUSD
	basePerWatt := rows[0].Throughput / rows[0].PowerW
	out := make([]CostLine, len(rows))
	for i, r := range rows {
		perDollar := r.Throughput / r.PriceUSD
		perWatt := r.Throughput / r.PowerW
		out[i] = CostLine{
			CostRow:           r,
			CostEffectiveness: perDollar / basePerDollar,
			PowerEfficiency:   perWatt,
			CostGainPct:       (perDollar/basePerDollar - 1) * 100,
			PowerGainPct:      (perWatt/basePerWatt - 1) * 100,
		}
	}
	return out, nil
}

// SimulatedCostRows turns a Result into cost rows for CostTable: the
// host-rdma path's host CPU (the baseline) against the conspirator path's
// SmartNIC, each with the control-plane capacity the run measured. Both
// paths must be in the result.
func SimulatedCostRows(res *Result) ([]CostRow, error) {
	base, cons := res.Path(PathHostRDMA), res.Path(PathConspirator)
	if base == nil || cons == nil {
		return nil, fmt.Errorf("cost rows: the result needs both the %s and the %s paths", PathHostRDMA, PathConspirator)
	}
	row := func(name string, cp ControlPlane) CostRow {
		return CostRow{Name: name, PriceUSD: cp.PriceUSD, PowerW: cp.PowerW, Throughput: cp.CapacityRPS}
	}
	return []CostRow{row("host CPU ("+PathHostRDMA+")", base.ControlPlane), row("SmartNIC ("+PathConspirator+")", cons.ControlPlane)}, nil
}

// SameWorkCostRows compares the two processors on the same control-plane
// work, the way the paper's table does (one throughput per processor,
// host normalized to 1,000): the throughput of each is its cores times
// their speed relative to a host core, since each request's control work
// (poll, decide, post) takes 1/speed as long on a slower core. With the
// defaults (80 host cores; 16 Arm cores at 0.62) the SmartNIC gets
// 1000 x 16 x 0.62 / 80 = 124; the paper's 270 corresponds to a host of
// 16 x 0.62 x 1000 / 270 = 36.7 host cores (one 40-core Xeon 8380 gives
// 248).
func SameWorkCostRows(cfg Config) []CostRow {
	host := float64(cfg.Host.Cores)
	soc := float64(cfg.SmartNIC.ArmCores) * float64(cfg.SmartNIC.ArmSpeed)
	return []CostRow{
		{Name: "host CPU", PriceUSD: float64(cfg.Host.Price), PowerW: float64(cfg.Host.Power), Throughput: 1000},
		{Name: "SmartNIC", PriceUSD: float64(cfg.SmartNIC.Price), PowerW: float64(cfg.SmartNIC.Power), Throughput: 1000 * soc / host},
	}
}

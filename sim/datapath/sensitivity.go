package datapath

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// Gap is the conspirator path's mean end-to-end latency reduction over the
// host-rdma path, in percent: the paper's "15%". NaN-free only when both
// paths completed requests.
func Gap(res *Result) (float64, error) {
	hr, co := res.Path(PathHostRDMA), res.Path(PathConspirator)
	if hr == nil || co == nil {
		return 0, fmt.Errorf("gap: the result needs both the %s and the %s paths", PathHostRDMA, PathConspirator)
	}
	if hr.Completed == 0 || co.Completed == 0 {
		return 0, fmt.Errorf("gap: no completed request on %s or %s", PathHostRDMA, PathConspirator)
	}
	return (1 - float64(co.Latency.Mean)/float64(hr.Latency.Mean)) * 100, nil
}

// GapRun runs cfg on the two paths the gap compares (host-rdma and
// conspirator, without per-request records) and returns the gap and the
// result.
func GapRun(cfg Config, seed uint64) (float64, *Result, error) {
	cfg.Paths = []string{PathHostRDMA, PathConspirator}
	cfg.RecordRequests = false
	res, err := Run(cfg, seed)
	if err != nil {
		return 0, nil, err
	}
	gap, err := Gap(res)
	return gap, res, err
}

// SensitivityPoint is the gap with one parameter scaled by Factor.
type SensitivityPoint struct {
	Param             string  `json:"param"`
	Factor            float64 `json:"factor"`
	Value             string  `json:"value"` // the scaled value, with its unit
	GapPct            float64 `json:"gap_pct"`
	HostRDMAMeanUs    float64 `json:"host_rdma_mean_us"`
	ConspiratorMeanUs float64 `json:"conspirator_mean_us"`
}

// knob is a parameter Sensitivity can move: scale multiplies it by a
// factor and returns the new value as text; catalog, where set, names the
// hw catalog entry its default comes from for the scenario's parts (so
// that a BlueField-2 run reads the BlueField-2 entry), whose stated
// plausible range Range reads.
type knob struct {
	scale   func(c *Config, f float64) string
	catalog func(c *Config) string
}

// scalable lists the parameters Sensitivity can scale: every numeric
// data-path key whose default is graded estimate or anecdotal
// (TestSensitivityCoversUnsourced holds the list to the schema's grades),
// and the derived ones a result is known to rest on.
var scalable = map[string]knob{
	"smartnic.dma_bandwidth": {func(c *Config, f float64) string {
		c.SmartNIC.DMABandwidth = units.Bandwidth(mul(float64(c.SmartNIC.DMABandwidth), f))
		return c.SmartNIC.DMABandwidth.String()
	}, func(c *Config) string { return "smartnic." + c.SmartNIC.Model + ".dma_bandwidth" }},
	"smartnic.dma_per_op": {func(c *Config, f float64) string {
		c.SmartNIC.DMAPerOp = scaleDuration(c.SmartNIC.DMAPerOp, f)
		return c.SmartNIC.DMAPerOp.String()
	}, func(c *Config) string { return "smartnic." + c.SmartNIC.Model + ".dma_per_op" }},
	"smartnic.arm_speed": {func(c *Config, f float64) string {
		c.SmartNIC.ArmSpeed = units.Ratio(mul(float64(c.SmartNIC.ArmSpeed), f))
		return c.SmartNIC.ArmSpeed.String()
	}, func(c *Config) string { return "smartnic." + c.SmartNIC.Model + ".arm_speed" }},
	"smartnic.notify_latency": {func(c *Config, f float64) string {
		c.SmartNIC.NotifyLatency = scaleDuration(c.SmartNIC.NotifyLatency, f)
		return c.SmartNIC.NotifyLatency.String()
	}, nil},
	"host.clock": {func(c *Config, f float64) string {
		c.Host.Clock = units.Frequency(mul(float64(c.Host.Clock), f))
		return c.Host.Clock.String()
	}, func(c *Config) string { return "host_cpu." + c.Host.CPU + ".clock" }},
	"host.memcpy_issue":       {durationKnob(func(c *Config) *units.Duration { return &c.Host.MemcpyIssue }), hostCost("memcpy_issue")},
	"host.decision_time":      {durationKnob(func(c *Config) *units.Duration { return &c.Host.DecisionTime }), nil},
	"host.poll_completion":    {durationKnob(func(c *Config) *units.Duration { return &c.Host.PollCompletion }), hostCost("poll_completion")},
	"host.post_send":          {durationKnob(func(c *Config) *units.Duration { return &c.Host.PostSend }), hostCost("post_send")},
	"host.tcp_rx_per_message": {durationKnob(func(c *Config) *units.Duration { return &c.Host.TCPRxPerMessage }), hostCost("tcp_rx_per_message")},
	"host.tcp_tx_per_message": {durationKnob(func(c *Config) *units.Duration { return &c.Host.TCPTxPerMessage }), hostCost("tcp_tx_per_message")},
	"host.tcp_rx_cycles_per_byte": {func(c *Config, f float64) string {
		c.Host.TCPRxCyclesPerByte = mul(c.Host.TCPRxCyclesPerByte, f)
		return fmt.Sprint(c.Host.TCPRxCyclesPerByte)
	}, hostCost("tcp_rx_cycles_per_byte")},
	"host.tcp_tx_cycles_per_byte": {func(c *Config, f float64) string {
		c.Host.TCPTxCyclesPerByte = mul(c.Host.TCPTxCyclesPerByte, f)
		return fmt.Sprint(c.Host.TCPTxCyclesPerByte)
	}, hostCost("tcp_tx_cycles_per_byte")},
	"host.interference": {func(c *Config, f float64) string {
		c.Host.Interference = units.Ratio(mul(float64(c.Host.Interference), f))
		return c.Host.Interference.String()
	}, hostCost("interference")},
	// The pageable rate both ways: the D2H factor moves with the H2D one
	// (equal to it unless a profile measured it).
	"host.pageable_factor": {func(c *Config, f float64) string {
		c.Host.PageableFactor = units.Ratio(min(1, mul(float64(c.Host.PageableFactor), f)))
		c.Host.PageableD2HFactor = units.Ratio(min(1, mul(float64(c.Host.PageableD2HFactor), f)))
		return c.Host.PageableFactor.String()
	}, hostCost("pageable_factor")},
	"host.pinned_h2d": {func(c *Config, f float64) string {
		c.Host.PinnedH2D = units.Bandwidth(mul(float64(c.Host.PinnedH2D), f))
		return c.Host.PinnedH2D.String()
	}, func(c *Config) string { return "pcie." + c.Host.GPULink + ".pinned_h2d" }},
	"network.efficiency": {func(c *Config, f float64) string {
		c.Network.Efficiency = units.Fraction(min(1, mul(float64(c.Network.Efficiency), f)))
		return c.Network.Efficiency.String()
	}, func(c *Config) string { return "nic." + c.Network.NIC + ".efficiency" }},
	"network.latency": {durationKnob(func(c *Config) *units.Duration { return &c.Network.Latency }),
		func(c *Config) string { return "nic." + c.Network.NIC + ".one_way_latency" }},
	"network.cross_root_complex_factor": {func(c *Config, f float64) string {
		c.Network.CrossRootComplexFactor = units.Fraction(min(1, mul(float64(c.Network.CrossRootComplexFactor), f)))
		return c.Network.CrossRootComplexFactor.String()
	}, nil},
	"request.batch": {func(c *Config, f float64) string {
		c.Request.Batch = max(1, int(float64(c.Request.Batch)*f+0.5))
		return fmt.Sprint(c.Request.Batch)
	}, nil},
}

// notScaled are the unsourced data-path keys Sensitivity leaves alone, and
// why (TestSensitivityCoversUnsourced reads it).
var notScaled = map[string]string{
	"host.cpu":                 "a part name, not a number: change it with --set",
	"host.background_model":    "a choice between load models, not a number",
	"host.memcpy_bandwidth":    "used by the loopback path only (calibrate --validate), by none of the paper's four",
	"network.max_qps":          "a limit on clients, not a cost: it changes no latency below it",
	"host.pageable_d2h_factor": "moves with host.pageable_factor, whose value it takes unless a profile measured it",
}

func durationKnob(field func(c *Config) *units.Duration) func(c *Config, f float64) string {
	return func(c *Config, f float64) string {
		d := field(c)
		*d = scaleDuration(*d, f)
		return d.String()
	}
}

// hostCost names a host software cost's catalog entry.
func hostCost(name string) func(c *Config) string {
	return func(*Config) string { return "host." + name }
}

// Range is the plausible range of param stated in the hw catalog for the
// parts cfg names, as factors of the catalog's value (to scale the
// scenario's own value, which may differ), with the catalog key; ok is
// false where the catalog states none.
func Range(cfg Config, param string) (lo, hi float64, key string, ok bool) {
	k, found := scalable[param]
	if !found || k.catalog == nil {
		return 0, 0, "", false
	}
	key = k.catalog(&cfg)
	p, found := catalogParam(key)
	if !found || p.Value == 0 {
		return 0, 0, key, false
	}
	l, h, ok := p.Plausible()
	if !ok {
		return 0, 0, key, false
	}
	return l / p.Value, h / p.Value, key, true
}

// mul scales v by f to 12 significant digits, so that a range given as
// factors of a catalog value lands on the range's own numbers (0.4, not
// 0.40000000000000001) when it is printed.
func mul(v, f float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v*f, 'g', 12, 64), 64)
	return r
}

func scaleDuration(d units.Duration, f float64) units.Duration {
	return units.Duration(float64(d)*f + 0.5)
}

// SensitivityParams lists the parameter keys Sensitivity accepts, sorted.
func SensitivityParams() []string {
	out := make([]string, 0, len(scalable))
	for k := range scalable {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Sensitivity runs cfg with param (a datapath key such as
// "smartnic.dma_bandwidth") multiplied by each factor and reports the
// conspirator-vs-host-rdma gap for each, with the same seed, so that only
// the parameter differs. Fractions are capped at 100%. cfg.Paths is
// replaced by the two paths the gap needs.
func Sensitivity(cfg Config, param string, factors []float64, seed uint64) ([]SensitivityPoint, error) {
	k, ok := scalable[param]
	if !ok {
		return nil, fmt.Errorf("sensitivity: unknown parameter %q; use one of %s", param, strings.Join(SensitivityParams(), ", "))
	}
	var out []SensitivityPoint
	for _, f := range factors {
		if !(f >= 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("sensitivity: factor %v for %s must be 0 or above", f, param)
		}
		c := cfg
		v := k.scale(&c, f)
		gap, res, err := GapRun(c, seed)
		if err != nil {
			return nil, fmt.Errorf("sensitivity: %s x%v: %w", param, f, err)
		}
		out = append(out, SensitivityPoint{
			Param: param, Factor: f, Value: v, GapPct: gap,
			HostRDMAMeanUs:    float64(res.Path(PathHostRDMA).Latency.Mean),
			ConspiratorMeanUs: float64(res.Path(PathConspirator).Latency.Mean),
		})
	}
	return out, nil
}

// NotScaled returns the unsourced keys Sensitivity leaves alone, with the
// reason for each.
func NotScaled() map[string]string { return maps.Clone(notScaled) }

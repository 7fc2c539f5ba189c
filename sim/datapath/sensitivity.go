package datapath

import (
	"fmt"
	"sort"
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

// SensitivityPoint is the gap with one parameter scaled by Factor.
type SensitivityPoint struct {
	Param             string  `json:"param"`
	Factor            float64 `json:"factor"`
	Value             string  `json:"value"` // the scaled value, with its unit
	GapPct            float64 `json:"gap_pct"`
	HostRDMAMeanUs    float64 `json:"host_rdma_mean_us"`
	ConspiratorMeanUs float64 `json:"conspirator_mean_us"`
}

// scalable lists the parameters Sensitivity can scale: the ones without a
// published source first (hw.Provenance grades them estimate), then others
// a reader may want to move.
var scalable = map[string]func(c *Config, f float64) string{
	// Estimates.
	"smartnic.dma_bandwidth": func(c *Config, f float64) string {
		c.SmartNIC.DMABandwidth = units.Bandwidth(float64(c.SmartNIC.DMABandwidth) * f)
		return c.SmartNIC.DMABandwidth.String()
	},
	"host.memcpy_issue": func(c *Config, f float64) string {
		c.Host.MemcpyIssue = scaleDuration(c.Host.MemcpyIssue, f)
		return c.Host.MemcpyIssue.String()
	},
	"host.decision_time": func(c *Config, f float64) string {
		c.Host.DecisionTime = scaleDuration(c.Host.DecisionTime, f)
		return c.Host.DecisionTime.String()
	},
	"host.poll_completion": func(c *Config, f float64) string {
		c.Host.PollCompletion = scaleDuration(c.Host.PollCompletion, f)
		return c.Host.PollCompletion.String()
	},
	"host.post_send": func(c *Config, f float64) string {
		c.Host.PostSend = scaleDuration(c.Host.PostSend, f)
		return c.Host.PostSend.String()
	},
	"host.interference": func(c *Config, f float64) string {
		c.Host.Interference = units.Ratio(float64(c.Host.Interference) * f)
		return c.Host.Interference.String()
	},
	"smartnic.notify_latency": func(c *Config, f float64) string {
		c.SmartNIC.NotifyLatency = scaleDuration(c.SmartNIC.NotifyLatency, f)
		return c.SmartNIC.NotifyLatency.String()
	},
	"network.efficiency": func(c *Config, f float64) string {
		c.Network.Efficiency = units.Fraction(min(1, float64(c.Network.Efficiency)*f))
		return c.Network.Efficiency.String()
	},
	"network.latency": func(c *Config, f float64) string {
		c.Network.Latency = scaleDuration(c.Network.Latency, f)
		return c.Network.Latency.String()
	},
	// Anecdotal or derived, but decisive.
	"host.pageable_factor": func(c *Config, f float64) string {
		c.Host.PageableFactor = units.Ratio(min(1, float64(c.Host.PageableFactor)*f))
		return c.Host.PageableFactor.String()
	},
	"smartnic.arm_speed": func(c *Config, f float64) string {
		c.SmartNIC.ArmSpeed = units.Ratio(float64(c.SmartNIC.ArmSpeed) * f)
		return c.SmartNIC.ArmSpeed.String()
	},
	"host.pinned_h2d": func(c *Config, f float64) string {
		c.Host.PinnedH2D = units.Bandwidth(float64(c.Host.PinnedH2D) * f)
		return c.Host.PinnedH2D.String()
	},
	"request.stack_speedup": func(c *Config, f float64) string {
		c.Request.StackSpeedup *= f
		return fmt.Sprint(c.Request.StackSpeedup)
	},
	"request.batch": func(c *Config, f float64) string {
		c.Request.Batch = max(1, int(float64(c.Request.Batch)*f+0.5))
		return fmt.Sprint(c.Request.Batch)
	},
	"host.tcp_rx_cycles_per_byte": func(c *Config, f float64) string {
		c.Host.TCPRxCyclesPerByte *= f
		return fmt.Sprint(c.Host.TCPRxCyclesPerByte)
	},
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
	scale, ok := scalable[param]
	if !ok {
		return nil, fmt.Errorf("sensitivity: unknown parameter %q; use one of %s", param, strings.Join(SensitivityParams(), ", "))
	}
	var out []SensitivityPoint
	for _, f := range factors {
		if !(f > 0) {
			return nil, fmt.Errorf("sensitivity: factor %v for %s must be above 0", f, param)
		}
		c := cfg
		c.Paths = []string{PathHostRDMA, PathConspirator}
		c.RecordRequests = false
		v := scale(&c, f)
		res, err := Run(c, seed)
		if err != nil {
			return nil, fmt.Errorf("sensitivity: %s x%v: %w", param, f, err)
		}
		gap, err := Gap(res)
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

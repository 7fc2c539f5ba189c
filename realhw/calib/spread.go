package calib

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/conspirator-sim/conspirator/realhw/host"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// StageSpread is one host stage's cost as a distribution, fitted from the
// unloaded run: a fixed part (the model's cost of the stage, lowered to
// the fastest request seen) plus an excess drawn from an empirical
// quantile table (datapath.Spread), the stage's time over that fixed part
// at the probabilities QuantileP.
//
// Why an empirical table and not a shifted lognormal: a host stage's
// excess is a mixture (cache misses of a few hundred ns, interrupts and
// timer ticks of microseconds, a rare preemption of tens) that no one
// shape follows; the table reproduces every measured quantile up to the
// slowest request, linear in between, and puts nothing beyond what was
// measured, where a lognormal fitted to the median and p99 would invent
// the p99.9. The price is that the table is only as good as the run is
// long: 4 x 5000 requests fix the p99.9 to within a few samples.
type StageSpread struct {
	// Stage is the loopback path's stage, Measured the real stage it is
	// read from, Key the scenario key it sets.
	Stage    string `yaml:"stage" json:"stage"`
	Measured string `yaml:"measured" json:"measured"`
	Key      string `yaml:"key" json:"key"`
	Samples  int    `yaml:"samples" json:"samples"`
	// ShiftUS is what the fixed part was lowered by so that the excess is
	// never negative: the fastest request's residual over the fitted cost
	// (network and reply share one fixed cost, so they share the lower
	// shift of the two). Clamped counts requests still below the fixed
	// part (a copy has no fixed cost to lower), taken as no excess.
	ShiftUS float64 `yaml:"shift_us" json:"shift_us"`
	Clamped int     `yaml:"clamped,omitempty" json:"clamped,omitempty"`
	// P50US, P99US and P999US summarize the excess.
	P50US  float64 `yaml:"p50_us" json:"p50_us"`
	P99US  float64 `yaml:"p99_us" json:"p99_us"`
	P999US float64 `yaml:"p999_us" json:"p999_us"`
	// Distribution, P and ExcessUS are the datapath.Spread.
	Distribution string    `yaml:"distribution" json:"distribution"`
	P            []float64 `yaml:"p,flow" json:"p"`
	ExcessUS     []float64 `yaml:"excess_us,flow" json:"excess_us"`
}

// Spread is the datapath.Spread of s.
func (s StageSpread) Spread() datapath.Spread {
	return datapath.Spread{Distribution: s.Distribution, P: slices.Clone(s.P), ExcessUS: slices.Clone(s.ExcessUS)}
}

// AboveMedian is the spread to carry onto a path whose fixed costs are
// typical (median) costs, as the catalog's are: the table of
// max(0, excess - its median), so that the stage keeps its median and
// gains the measured tail above it. Applying the full table there would
// add the excess's median (a microsecond or so) to every host job.
func (s StageSpread) AboveMedian() datapath.Spread {
	d := &spreadTable{p: s.P, q: s.ExcessUS}
	m := d.at(0.5)
	out := datapath.Spread{Distribution: datapath.SpreadEmpirical}
	for i, p := range s.P {
		out.P = append(out.P, p)
		out.ExcessUS = append(out.ExcessUS, round4(math.Max(0, s.ExcessUS[i]-m)))
	}
	return out
}

// FlowYAML writes a spread as one YAML flow mapping, the form a --set
// value or a profile's scenario override takes.
func FlowYAML(s datapath.Spread) string {
	num := func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = fmt.Sprint(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if !s.Active() {
		return "{distribution: " + s.Distribution + "}"
	}
	return fmt.Sprintf("{distribution: %s, p: %s, excess_us: %s}", s.Distribution, num(s.P), num(s.ExcessUS))
}

// spreadTable is a quantile table read with linear interpolation.
type spreadTable struct{ p, q []float64 }

func (t *spreadTable) at(u float64) float64 {
	i, _ := slices.BinarySearch(t.p, u)
	if i == 0 {
		return t.q[0]
	}
	if i >= len(t.p) {
		return t.q[len(t.q)-1]
	}
	return t.q[i-1] + (u-t.p[i-1])/(t.p[i]-t.p[i-1])*(t.q[i]-t.q[i-1])
}

// spreadStages are the loopback stages whose spread calibration fits, in
// HostSpreads order, with the real stage each is read from.
var spreadStages = []struct{ stage, measured, key string }{
	{"network", host.StageTCPNetwork, "network"},
	{"copy", host.StageTCPCopy, "copy"},
	{"compute", host.StageTCPCompute, "cpu_work"},
	{"reply", host.StageTCPReply, "reply"},
}

// hostCosts are the loopback model's fixed costs, seconds: a message
// (fixed + per byte), the copy (per byte) and the compute.
type hostCosts struct {
	netFixed, netPerByte, copyPerByte, compute float64
	replyBytes                                 int64
	// rho is the coupling of one request's stage excesses (copulaRho).
	rho float64
}

// residuals are every unloaded request's stage time over the model's
// cost for it, seconds, in spreadStages order.
func (c hostCosts) residuals(run *host.PathRun) [4][]float64 {
	var r [4][]float64
	for _, q := range run.Requests {
		n := float64(q.Bytes)
		r[0] = append(r[0], q.Network.Seconds()-(c.netFixed+c.netPerByte*n))
		r[1] = append(r[1], q.Copy.Seconds()-c.copyPerByte*n)
		r[2] = append(r[2], q.Compute.Seconds()-c.compute)
		r[3] = append(r[3], q.Reply.Seconds()-(c.netFixed+c.netPerByte*float64(c.replyBytes)))
	}
	return r
}

// fitSpreads fits the four stages' spreads from the unloaded run over the
// costs c, and returns them with the costs lowered by the shifts: the
// network fixed cost (shared by the reply) and the compute. The copy has
// no fixed cost in the model (bytes / rate), so its shift is 0 and the
// requests it ran faster than that are clamped to no excess.
func fitSpreads(run *host.PathRun, c hostCosts) ([]StageSpread, hostCosts) {
	r := c.residuals(run)
	c.rho = copulaRho(r[:])
	netShift := math.Min(slices.Min(r[0]), slices.Min(r[3]))
	// A fixed cost stays at least 0: what lies below is clamped.
	netShift = math.Max(netShift, -c.netFixed)
	compShift := math.Max(slices.Min(r[2]), -c.compute)
	shifts := [4]float64{netShift, 0, compShift, netShift}
	out := make([]StageSpread, len(spreadStages))
	for k, st := range spreadStages {
		xs := make([]float64, len(r[k]))
		clamped := 0
		for i, v := range r[k] {
			if xs[i] = (v - shifts[k]) * 1e6; xs[i] < 0 {
				xs[i], clamped = 0, clamped+1
			}
		}
		slices.Sort(xs)
		s := StageSpread{Stage: st.stage, Measured: st.measured, Key: "datapath.host.spread." + st.key, Samples: len(xs),
			ShiftUS: round4(shifts[k] * 1e6), Clamped: clamped, Distribution: datapath.SpreadEmpirical,
			P50US: round4(sortedQuantile(xs, 0.5)), P99US: round4(sortedQuantile(xs, 0.99)), P999US: round4(sortedQuantile(xs, 0.999))}
		for _, p := range QuantileP {
			s.P = append(s.P, p)
			s.ExcessUS = append(s.ExcessUS, round4(sortedQuantile(xs, p)))
		}
		out[k] = s
	}
	c.netFixed += netShift
	c.compute += compShift
	return out, c
}

// unloadedCosts fits the loopback model's fixed costs from the unloaded
// run: one message's fixed and per-byte cost (tcp-network's line), the
// copy's rate (tcp-copy's slope) and the compute's median. It returns the
// two line fits for their verdicts.
func unloadedCosts(unloaded *host.PathRun) (hostCosts, LinearFit, LinearFit) {
	_, by := groupByStage(unloaded.Samples())
	net := FitLinear(host.StageTCPNetwork, by[host.StageTCPNetwork])
	cp := FitLinear(host.StageTCPCopy, by[host.StageTCPCopy])
	var comp []float64
	for _, s := range by[host.StageTCPCompute] {
		comp = append(comp, s.Latency.Seconds())
	}
	return hostCosts{netFixed: net.Fixed, netPerByte: net.PerByte, copyPerByte: cp.PerByte, compute: median(comp), replyBytes: unloaded.Config.ReplyBytes}, net, cp
}

// checkSpreads validates a profile's spread section: each entry must be a
// spread sim/datapath accepts (a known distribution, an ascending p from 0
// to 1, a non-decreasing, non-negative table).
func checkSpreads(name string, ss []StageSpread) error {
	for i, s := range ss {
		if err := s.Spread().Validate(fmt.Sprintf("spread[%d] (%s)", i, s.Stage)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// copulaRho fits the one-factor Gaussian copula of the stages' excesses
// (datapath.HostSpreads.Correlation): each stage's residuals turned into
// normal scores (the standard normal quantile of their rank), and rho the
// mean over stage pairs of the scores' correlation, which is what the
// one-factor model makes every pair's. A request that meets a busy core
// is slow in every stage; drawn independently, the stages would spread
// that one stall over many requests. Negative means are taken as 0
// (independent): the copula cannot make stages faster together.
func copulaRho(r [][]float64) float64 {
	n := len(r[0])
	if n < 3 {
		return 0
	}
	scores := make([][]float64, len(r))
	for k, xs := range r {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(xs[i], xs[j]) })
		sc := make([]float64, n)
		for rank := 0; rank < n; {
			// Ties share their mean rank.
			end := rank + 1
			for end < n && xs[idx[end]] == xs[idx[rank]] {
				end++
			}
			z := distuv.UnitNormal.Quantile((float64(rank+end-1)/2 + 0.5) / float64(n))
			for _, i := range idx[rank:end] {
				sc[i] = z
			}
			rank = end
		}
		scores[k] = sc
	}
	var sum float64
	pairs := 0
	for a := range scores {
		for b := a + 1; b < len(scores); b++ {
			sum += stat.Correlation(scores[a], scores[b], nil)
			pairs++
		}
	}
	rho := sum / float64(pairs)
	if !(rho > 0) {
		return 0
	}
	return round(math.Min(rho, 1), 3)
}

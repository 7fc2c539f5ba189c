package datapath

import (
	"errors"
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// Spread is the distribution of a host stage's time beyond its fixed cost
// (the constant the rest of HostConfig gives). A real host's stages are
// not constants even with no background load at all: a loopback message, a
// memcpy and a fixed CPU loop measured unloaded on a quiet 16-core machine
// have a p99 2-4x their median (realhw/calib's validation, 2026-11-27),
// which a constant-cost model cannot have, so its p99 at light load is its
// median.
//
// The distribution is an empirical quantile table, drawn by inverse
// transform with linear interpolation between the stored quantiles: it
// reproduces the measured tail without assuming a shape (a shifted
// lognormal fitted to a few quantiles would extrapolate beyond them, and
// a host's tail is a mixture of cache misses, interrupts and timer ticks
// that no one shape follows). The excess is non-negative: the fixed cost
// is the fastest the stage ran, the spread what it sometimes costs more.
type Spread struct {
	Distribution string    `yaml:"distribution" doc:"constant (the stage costs its fixed part) or empirical (its fixed part plus an excess drawn from the table excess_us at probabilities p, linear in between; what calibrate --backend host writes)" default:"constant" source:"choice: the hardware catalog (hardware.md, hardware-defaults.yaml) states no spread for any host stage, so without a calibration profile every host stage is a constant"`
	P            []float64 `yaml:"p,flow" doc:"empirical: the probabilities of excess_us, ascending from 0 to 1" default:"[]" source:"choice: no table (constant)"`
	ExcessUS     []float64 `yaml:"excess_us,flow" doc:"empirical: quantiles of the stage's time over its fixed cost, in microseconds; non-decreasing and at least 0" default:"[]" source:"choice: no table (constant)"`
}

// Spread distributions.
const (
	SpreadConstant  = "constant"
	SpreadEmpirical = "empirical"
)

// SpreadDistributions lists the names Spread.Distribution accepts.
var SpreadDistributions = []string{SpreadConstant, SpreadEmpirical}

// HostSpreads are the spreads of the host's stage costs, by the kind of
// host work: the four stages that calibrate --backend host measures on
// its loopback testbed, applied to the same work on every path.
type HostSpreads struct {
	// Correlation couples the draws of one request's stages: the excesses
	// of a real request are not independent (a core busy with something
	// else slows every stage of the requests it meets), and drawn
	// independently they put a stall into many more requests than had one.
	// The draws are coupled by a one-factor Gaussian copula: stage k uses
	// u_k = Phi(sqrt(rho) z + sqrt(1 - rho) e_k), z shared by the request.
	Correlation units.Fraction `yaml:"correlation" doc:"rho of the one-factor Gaussian copula that couples one request's draws: 0% independent, 100% every stage at the same quantile (calibrate reads it off the unloaded run: the mean pairwise correlation of the stages' normal scores)" default:"0%" source:"choice: independent draws unless a calibration profile measured the coupling"`
	Network     Spread         `yaml:"network" doc:"host TCP work of a request message: the loopback path's network stage, the tcp path's receive on the host"`
	Copy        Spread         `yaml:"copy" doc:"host-issued copies: the loopback path's copy, the tcp and host-rdma paths' copy-h2d"`
	CPUWork     Spread         `yaml:"cpu_work" doc:"every other host CPU job: the loopback path's compute; decide, poll, launch, sync+d2h and posting the reply on the paper's paths (not the SmartNIC's SoC)"`
	Reply       Spread         `yaml:"reply" doc:"host TCP work of the reply: the loopback path's reply, the tcp path's reply-tx"`
}

// spreadKind indexes the host's spreads.
type spreadKind int

const (
	spreadNetwork spreadKind = iota
	spreadCopy
	spreadCPU
	spreadReply
	numSpreads
)

// each returns the spreads with their key under datapath.host.spread and
// their random stream's name, in spreadKind order.
func (h *HostSpreads) each() [numSpreads]struct {
	key string
	s   *Spread
} {
	return [numSpreads]struct {
		key string
		s   *Spread
	}{{"network", &h.Network}, {"copy", &h.Copy}, {"cpu_work", &h.CPUWork}, {"reply", &h.Reply}}
}

// maxSpreadUS bounds an excess quantile: 10 s of extra time on one host
// stage is a unit mistake (seconds written as microseconds), not a host.
const maxSpreadUS = 10e6

func (h HostSpreads) validate(p *problems) {
	if !(h.Correlation >= 0 && h.Correlation <= 1) {
		p.addf("host.spread.correlation", "%v is outside [0%%, 100%%]", float64(h.Correlation))
	}
	for _, e := range h.each() {
		e.s.validate(p, "host.spread."+e.key)
	}
}

func (s Spread) validate(p *problems, key string) {
	switch s.Distribution {
	case SpreadConstant:
		if len(s.P) > 0 || len(s.ExcessUS) > 0 {
			p.addf(key+".distribution", "constant takes no table, but p or excess_us is set; write distribution: empirical to use the table")
		}
		return
	case SpreadEmpirical:
	default:
		p.addf(key+".distribution", "unknown distribution %q; use one of %v", s.Distribution, SpreadDistributions)
		return
	}
	if len(s.P) < 2 || len(s.P) != len(s.ExcessUS) {
		p.addf(key+".p", "an empirical table needs at least 2 probabilities and as many excess_us values; got %d and %d", len(s.P), len(s.ExcessUS))
		return
	}
	if s.P[0] != 0 || s.P[len(s.P)-1] != 1 {
		p.addf(key+".p", "must run from 0 to 1 (the fastest and the slowest measured); got %v to %v", s.P[0], s.P[len(s.P)-1])
	}
	for i := 1; i < len(s.P); i++ {
		if !(s.P[i] > s.P[i-1]) {
			p.addf(fmt.Sprintf("%s.p[%d]", key, i), "%v is not above p[%d] = %v: probabilities must ascend", s.P[i], i-1, s.P[i-1])
			break
		}
	}
	for i, q := range s.ExcessUS {
		switch {
		case math.IsNaN(q) || q < 0:
			p.addf(fmt.Sprintf("%s.excess_us[%d]", key, i), "%v is a negative spread: the excess over the fixed cost is at least 0 (fold a lower time into the fixed cost)", q)
			return
		case q > maxSpreadUS:
			p.addf(fmt.Sprintf("%s.excess_us[%d]", key, i), "%v us is above %v us (10 s) on one host stage; give microseconds", q, maxSpreadUS)
			return
		case i > 0 && q < s.ExcessUS[i-1]:
			p.addf(fmt.Sprintf("%s.excess_us[%d]", key, i), "%v is below excess_us[%d] = %v: a quantile table must be non-decreasing", q, i-1, s.ExcessUS[i-1])
			return
		}
	}
}

// ConstantSpread is no spread: the stage costs its fixed part (the
// default; empty tables, as a scenario's default tag reads them).
func ConstantSpread() Spread {
	return Spread{Distribution: SpreadConstant, P: []float64{}, ExcessUS: []float64{}}
}

// Active says whether the spread draws anything.
func (s Spread) Active() bool { return s.Distribution == SpreadEmpirical }

// spreadDraw draws one stage kind's excess from its own random stream, so
// that a draw added to one kind leaves every other stream as it was.
type spreadDraw struct {
	p, q []float64 // probabilities; excess in seconds
	rand *engine.Stream
	// start[g] is the segment holding u = g / spreadGrid: a draw starts
	// its search there and steps at most a few segments on (a binary
	// search over the 111 points of a calibrated table cost about a third
	// of a draw).
	start [spreadGrid]int32
}

// spreadGrid is the resolution of spreadDraw.start.
const spreadGrid = 256

// newSpreadDraws returns the active spreads' samplers, nil for the
// constant ones (which draw nothing and consume no random numbers, so a
// run without spreads is the run it always was).
func newSpreadDraws(h HostSpreads, seed uint64) [numSpreads]*spreadDraw {
	var out [numSpreads]*spreadDraw
	for k, e := range h.each() {
		if !e.s.Active() {
			continue
		}
		q := make([]float64, len(e.s.ExcessUS))
		for i, v := range e.s.ExcessUS {
			q[i] = v * 1e-6
		}
		d := &spreadDraw{p: e.s.P, q: q, rand: engine.NewStream(seed, "host/spread/"+e.key)}
		d.index()
		out[k] = d
	}
	return out
}

// index fills start: the last segment i (p[i] <= u < p[i+1]) for each
// grid point u.
func (d *spreadDraw) index() {
	i := 0
	for g := range d.start {
		u := float64(g) / spreadGrid
		for i+2 < len(d.p) && d.p[i+1] <= u {
			i++
		}
		d.start[g] = int32(i)
	}
}

// at is the table's quantile at u in [0, 1], linear between stored
// quantiles.
func (d *spreadDraw) at(u float64) float64 {
	last := len(d.p) - 1
	if u >= 1 {
		return d.q[last]
	}
	i := int(d.start[int(u*spreadGrid)])
	for i+1 < last && d.p[i+1] <= u {
		i++
	}
	p0, p1 := d.p[i], d.p[i+1]
	return d.q[i] + (u-p0)/(p1-p0)*(d.q[i+1]-d.q[i])
}

// excess draws the time request r's host job of kind k costs over its
// fixed part; 0 without a spread. With a correlation, the uniform is the
// request's shared normal mixed with the kind's own.
func (s *system) excess(k spreadKind, r *request) engine.Time {
	d := s.spread[k]
	if d == nil {
		return 0
	}
	var u float64
	if s.spreadRho > 0 {
		z := s.spreadShared*r.spreadZ + s.spreadOwn*d.rand.NormFloat64()
		u = 0.5 * math.Erfc(-z/math.Sqrt2)
	} else {
		u = d.rand.Float64()
	}
	return engine.Seconds(d.at(u))
}

// Validate checks s as the scenario loader does, its problems naming key
// (e.g. "spread[0] (network)") rather than a datapath key: a calibration
// profile reads its spreads with it.
func (s Spread) Validate(key string) error {
	var p problems
	s.validate(&p, key)
	errs := make([]error, len(p))
	for i, e := range p {
		f := e.(*fieldProblem)
		errs[i] = fmt.Errorf("%s: %s", f.key, f.msg)
	}
	return errors.Join(errs...)
}

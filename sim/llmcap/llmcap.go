// Package llmcap searches an LLM serving scenario's capacity: the highest
// load it serves within its SLO (as DistServe's and Vidur's searches do),
// and the cheapest replica configuration (GPU type, tensor-parallel
// degree, replicas) per request rate. Each probe is one sim.RunLLM; the
// package prints nothing: a caller sees every probe through OnProbe and
// gets the outcome as values (`conspirator llm capacity` prints them,
// `conspirator reproduce` reads them).
//
// Both searches assume SLO attainment falls as the load per replica rises
// and bisect on that assumption; a probe that contradicts it is reported
// (Capacity.NotMonotone, ConfigRow.Note), never hidden.
package llmcap

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
)

// Bounds of the rate search: the load factor stays within
// [1/MaxLoadFactor, MaxLoadFactor] of the scenario's own, and a search
// that has not closed its bracket after MaxProbes runs stops with an
// error (a tolerance too fine for the load's granularity).
const (
	MaxLoadFactor = 1024
	MaxProbes     = 40
)

// Probe is one load a search ran.
type Probe struct {
	// Label names the probe for a progress line: the knob's value or
	// the configuration.
	Label string
	// Factor is the load relative to the scenario's (rate search) or
	// 1/replicas (configuration search): larger is more load per replica.
	Factor  float64
	Summary *sim.LLMSummary
	Meets   bool
}

// OnProbe sees each probe as it finishes (nil: none).
type OnProbe func(Probe)

// Meets says whether a run meets its SLO: at least the SLO's quantile of
// requests within both bounds, and none refused by the admission limit
// (a refused request would otherwise raise attainment by leaving).
func Meets(c llmserve.Config, s *sim.LLMSummary) bool {
	return s.Result.SLOAttainment.Mean >= c.SLO.Quantile && s.Result.Rejected.Mean == 0
}

func run(c llmserve.Config, seed uint64, label string, factor float64, on OnProbe) (Probe, error) {
	s, err := sim.RunLLM(c, seed)
	if err != nil {
		return Probe{}, err
	}
	p := Probe{Label: label, Factor: factor, Summary: s, Meets: Meets(c, s)}
	if on != nil {
		on(p)
	}
	return p, nil
}

// Knob is the scenario key the load is scaled with:
// llm.workload.rate_scale for a trace (the same requests, closer
// together), llm.workload.synthetic.rate for a synthetic workload, from
// the scenario's value Base.
type Knob struct {
	Trace bool
	Base  float64
	Name  string
}

// NewKnob is cfg's load knob.
func NewKnob(cfg llmserve.Config) Knob {
	if cfg.Workload.Source == llmserve.SourceTrace {
		return Knob{Trace: true, Base: cfg.Workload.RateScale, Name: "llm.workload.rate_scale"}
	}
	return Knob{Base: float64(cfg.Workload.Synthetic.Rate), Name: "llm.workload.synthetic.rate"}
}

// Short is the knob's last key, for probe labels.
func (k Knob) Short() string { return k.Name[strings.LastIndex(k.Name, ".")+1:] }

// At is cfg with the load at factor f of the scenario's.
func (k Knob) At(cfg llmserve.Config, f float64) llmserve.Config {
	if k.Trace {
		cfg.Workload.RateScale = k.Base * f
	} else {
		cfg.Workload.Synthetic.Rate = units.Rate(k.Base * f)
	}
	return cfg
}

// Outcomes of a rate search.
const (
	// Bracketed: Lo meets the SLO, Hi misses it, within the tolerance.
	Bracketed = "bracketed"
	// Above: the SLO is met at every load up to MaxLoadFactor (Lo).
	Above = "above"
	// None: even 1/MaxLoadFactor of the load misses (Hi): the unloaded
	// latency exceeds a bound.
	None = "none"
)

// Capacity is a rate search's result.
type Capacity struct {
	Knob    Knob
	Outcome string
	// Lo is the highest load meeting the SLO, Hi the lowest missing it
	// (nil where the outcome has none).
	Lo, Hi *Probe
	Probes []Probe
	// NotMonotone says where a lower load missed the SLO that a higher
	// one met ("" where the probes agree with the bisection's premise).
	NotMonotone string
}

// SearchRate finds the highest load at which cfg meets its SLO: from
// factor 1 it doubles (or, where 1 misses, tries 1/MaxLoadFactor and then
// halves) until the verdict changes, then bisects geometrically until
// Hi/Lo is within 1+tol. cfg must be valid; a probe that fails validation
// is an error naming the factor.
func SearchRate(cfg llmserve.Config, seed uint64, tol float64, on OnProbe) (Capacity, error) {
	if !(tol > 0 && tol <= 1) {
		return Capacity{}, fmt.Errorf("tolerance %v: want a relative width above 0 and at most 1 (0.05: the bracket within 5%%)", tol)
	}
	k := NewKnob(cfg)
	res := Capacity{Knob: k}
	probe := func(f float64) (Probe, error) {
		if len(res.Probes) >= MaxProbes {
			return Probe{}, fmt.Errorf("llm capacity: %d probes without closing the bracket; raise the tolerance", MaxProbes)
		}
		c := k.At(cfg, f)
		if err := c.Validate(); err != nil {
			return Probe{}, fmt.Errorf("load factor %.4g (%s %.4g): %w", f, k.Name, k.Base*f, err)
		}
		p, err := run(c, seed, fmt.Sprintf("%s %-8.4g", k.Short(), k.Base*f), f, on)
		if err != nil {
			return Probe{}, err
		}
		res.Probes = append(res.Probes, p)
		return p, nil
	}
	first, err := probe(1)
	if err != nil {
		return res, err
	}
	var lo, hi Probe // highest meeting, lowest missing
	if first.Meets {
		lo = first
		found := false
		for f := 2.0; f <= MaxLoadFactor; f *= 2 {
			p, err := probe(f)
			if err != nil {
				return res, err
			}
			if !p.Meets {
				hi, found = p, true
				break
			}
			lo = p
		}
		if !found {
			res.Outcome, res.Lo = Above, &lo
			res.NotMonotone = notMonotone(res.Probes)
			return res, nil
		}
	} else {
		hi = first
		// The lightest load first: where even it misses, no load meets
		// the SLO and the search ends in two probes.
		light, err := probe(1.0 / MaxLoadFactor)
		if err != nil {
			return res, err
		}
		if !light.Meets {
			res.Outcome, res.Hi = None, &light
			return res, nil
		}
		lo = light
		for f := 0.5; f > 1.0/MaxLoadFactor; f /= 2 {
			p, err := probe(f)
			if err != nil {
				return res, err
			}
			if p.Meets {
				lo = p
				break
			}
			hi = p
		}
	}
	for hi.Factor/lo.Factor > 1+tol {
		p, err := probe(math.Sqrt(lo.Factor * hi.Factor))
		if err != nil {
			return res, err
		}
		if p.Meets {
			lo = p
		} else {
			hi = p
		}
	}
	res.Outcome, res.Lo, res.Hi = Bracketed, &lo, &hi
	res.NotMonotone = notMonotone(res.Probes)
	return res, nil
}

// notMonotone says where a lower load missed the SLO that a higher one
// met: the bisection's premise does not hold there.
func notMonotone(ps []Probe) string {
	if a, b, ok := monotoneBreak(ps); ok {
		return fmt.Sprintf("attainment is not monotone in the load: factor %.4g missed the SLO and the higher %.4g met it; the capacity is one crossing, not necessarily the highest", a.Factor, b.Factor)
	}
	return ""
}

// monotoneBreak finds a probe that missed the SLO at a lower factor than
// one that met it.
func monotoneBreak(ps []Probe) (Probe, Probe, bool) {
	for _, a := range ps {
		for _, b := range ps {
			if a.Factor < b.Factor && !a.Meets && b.Meets {
				return a, b, true
			}
		}
	}
	return Probe{}, Probe{}, false
}

// Space is the configurations a configuration search tries: every GPU
// type with every TP degree, at each rate (requests per second), with at
// most MaxGPUs GPUs (replicas x TP).
type Space struct {
	GPUs    []gpu.Spec
	TPs     []int
	Rates   []float64
	MaxGPUs int
	// MIG are MIG profiles (e.g. 3g.40gb) to try as replicas, each at TP
	// 1, beside the whole GPUs; a GPU without the profile gets a row
	// saying so.
	MIG []string
}

// ConfigRow is one GPU type and TP degree at one rate: the fewest
// replicas meeting the SLO (0: none within MaxGPUs, or it does not fit;
// Note says which).
type ConfigRow struct {
	GPU string
	// MIG is the replicas' MIG profile ("" for whole GPUs), Share the
	// part of a GPU one takes (sliceShare: its larger share of the
	// compute and memory slices), what a replica keeps from others and
	// so what it is charged.
	MIG   string
	Share float64
	// PricePerHour is the GPU's on-demand price per GPU-hour (0:
	// unpriced).
	PricePerHour float64
	// PriceBasis is the price's kind where it is not on-demand (hw/gpu).
	PriceBasis string
	TP         int
	Replicas   int
	Summary    *sim.LLMSummary
	Note       string
}

// GPUs is the GPUs the configuration takes: replicas x TP x share.
func (r ConfigRow) GPUs() float64 { return float64(r.Replicas*r.TP) * r.share() }

func (r ConfigRow) share() float64 {
	if r.Share > 0 {
		return r.Share
	}
	return 1
}

// Cost is the configuration's price per hour: its GPUs x the GPU's
// price per GPU-hour.
func (r ConfigRow) Cost() float64 { return r.GPUs() * r.PricePerHour }

// Priced says whether the row is a configuration with a price.
func (r ConfigRow) Priced() bool { return r.Replicas > 0 && r.PricePerHour > 0 }

// rank orders rows: priced ones by cost (ties: fewer GPUs), then the
// unpriced by GPUs, then those with no configuration.
func (r ConfigRow) rank() (int, float64) {
	switch {
	case r.Replicas == 0:
		return 2, 0
	case r.PricePerHour == 0:
		return 1, r.GPUs()
	}
	return 0, r.Cost()
}

// RateTable is one rate's configurations, the cheapest first.
type RateTable struct {
	Rate float64
	// Factor is the rate over the scenario's own (the knob's factor).
	Factor float64
	Rows   []ConfigRow
}

// Cheapest is the table's cheapest priced configuration (ok false: none
// priced meets the SLO).
func (t RateTable) Cheapest() (ConfigRow, bool) {
	if len(t.Rows) > 0 && t.Rows[0].Priced() {
		return t.Rows[0], true
	}
	return ConfigRow{}, false
}

// SearchConfigs finds, per rate, the fewest replicas of each GPU type and
// TP degree meeting cfg's SLO (1, doubling, then bisecting on whole
// replicas), priced and sorted. ownRate is the scenario's own rate in
// requests per second (a trace's offered rate; LLMTraceRate gives it):
// a rate r runs the workload at factor r/ownRate. cfg must be valid and
// on whole GPUs (no MIG); a configuration that does not fit is a row.
func SearchConfigs(cfg llmserve.Config, seed uint64, sp Space, ownRate float64, on OnProbe) ([]RateTable, error) {
	if cfg.Disagg.Enabled {
		// The search varies llm.gpu, tp and replicas, which a
		// disaggregated run does not read: every row would be the same
		// pools under another name.
		return nil, units.Invalid("disagg.enabled", "true: the configuration search sizes colocated replicas (llm.gpu, llm.tp, replicas), which a disaggregated run does not use; search this layout's highest rate instead (conspirator llm capacity SCENARIO, with no --gpu-types, --tp or --rates and no llm.capacity section), or set llm.disagg.enabled=false")
	}
	if sp.MaxGPUs < 1 {
		return nil, fmt.Errorf("max GPUs %d: want 1 or more", sp.MaxGPUs)
	}
	if !(ownRate > 0) {
		return nil, fmt.Errorf("the scenario's own rate %v: want above 0", ownRate)
	}
	k := NewKnob(cfg)
	var out []RateTable
	for _, rate := range sp.Rates {
		if !(rate > 0) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("rate %v: want a rate above 0", rate)
		}
		f := rate / ownRate
		t := RateTable{Rate: rate, Factor: f}
		for _, g := range sp.GPUs {
			for _, tp := range sp.TPs {
				c := k.At(cfg, f)
				c.GPU, c.TP, c.GPUs, c.Replicas, c.MIG = g.Name, tp, 0, 1, ""
				row, err := fewestReplicas(c, seed, sp.MaxGPUs, 1, on)
				if err != nil {
					return nil, err
				}
				row.PricePerHour, row.PriceBasis = g.PricePerHour, g.PriceBasis
				t.Rows = append(t.Rows, row)
			}
			for _, prof := range sp.MIG {
				row := ConfigRow{GPU: g.Name, TP: 1, MIG: prof, PricePerHour: g.PricePerHour, PriceBasis: g.PriceBasis}
				pr, err := g.Profile(prof)
				if err != nil {
					row.Note = "no such slice: " + err.Error()
					t.Rows = append(t.Rows, row)
					continue
				}
				row.Share = sliceShare(g, pr)
				c := k.At(cfg, f)
				c.GPU, c.TP, c.GPUs, c.Replicas, c.MIG = g.Name, 1, 0, 1, prof
				found, err := fewestReplicas(c, seed, sp.MaxGPUs, row.Share, on)
				if err != nil {
					return nil, err
				}
				found.MIG, found.Share, found.PricePerHour, found.PriceBasis = prof, row.Share, g.PricePerHour, g.PriceBasis
				t.Rows = append(t.Rows, found)
			}
		}
		sortRows(t.Rows)
		out = append(out, t)
	}
	return out, nil
}

// sortRows orders rows by rank, the cheapest first (stable).
func sortRows(rows []ConfigRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		ci, vi := rows[i].rank()
		cj, vj := rows[j].rank()
		return ci < cj || ci == cj && vi < vj
	})
}

// fewestReplicas finds the fewest replicas of c (gpu and tp set) meeting
// the SLO: 1, then doubling up to maxGPUs/tp replicas, then bisecting.
func fewestReplicas(c llmserve.Config, seed uint64, maxGPUs int, share float64, on OnProbe) (ConfigRow, error) {
	row := ConfigRow{GPU: c.GPU, TP: c.TP}
	// Replicas of share of a GPU each: at most maxGPUs GPUs' worth.
	most := min(int(float64(maxGPUs)/(float64(c.TP)*share)+1e-9), llmserve.MaxReplicas)
	if most < 1 {
		row.Note = fmt.Sprintf("none: tp %d is above the %d GPUs allowed", c.TP, maxGPUs)
		return row, nil
	}
	if err := c.Validate(); err != nil {
		row.Note = "does not fit: " + strings.ReplaceAll(err.Error(), "\n", "; ")
		return row, nil
	}
	var probes []Probe // factor: the load per replica, 1/replicas
	sums := map[int]*sim.LLMSummary{}
	try := func(n int) (bool, error) {
		c.Replicas = n
		label := fmt.Sprintf("%-10s tp %d x %-4d", c.GPU, c.TP, n)
		if c.MIG != "" {
			label = fmt.Sprintf("%-10s %-8s x %-4d", c.GPU, c.MIG, n)
		}
		p, err := run(c, seed, label, 1/float64(n), on)
		if err != nil {
			return false, err
		}
		probes = append(probes, p)
		sums[n] = p.Summary
		return p.Meets, nil
	}
	lo, hi := 0, 0 // the most replicas missing, the fewest meeting
	for n := 1; ; n = min(2*n, most) {
		meets, err := try(n)
		var ie *cluster.InputError
		if n == 1 && errors.As(err, &ie) {
			// The workload does not fit this configuration (a request
			// longer than a slice's KV cache): a row, not the search's end.
			row.Note = "does not fit: " + strings.ReplaceAll(err.Error(), "\n", "; ")
			return row, nil
		}
		if err != nil {
			return row, err
		}
		if meets {
			hi = n
			break
		}
		lo = n
		if n == most {
			row.Note = fmt.Sprintf("none within %d GPUs (%d replicas of tp %d miss the SLO)", maxGPUs, most, c.TP)
			return row, nil
		}
	}
	for hi-lo > 1 {
		m := (lo + hi) / 2
		meets, err := try(m)
		if err != nil {
			return row, err
		}
		if meets {
			hi = m
		} else {
			lo = m
		}
	}
	row.Replicas, row.Summary = hi, sums[hi]
	if x, y, ok := monotoneBreak(probes); ok {
		row.Note = fmt.Sprintf("WARNING: not monotone: %d replicas missed the SLO and %d met it", int(math.Round(1/x.Factor)), int(math.Round(1/y.Factor)))
	}
	return row, nil
}

// sliceShare is the part of GPU g a MIG instance of profile p takes: the
// larger of its share of the compute slices and of the memory slices, what
// it keeps from other instances (an H100's 3g.40gb: max(3/7, 4/8) = 1/2;
// its 4g.40gb: 4/7, a 3g.40gb fitting beside it; its 1g.20gb: 2/8).
func sliceShare(g gpu.Spec, p *mig.Profile) float64 {
	return max(float64(p.Compute)/float64(g.MIG.ComputeSlices), float64(p.MemSlices)/float64(g.MIG.MemorySlices))
}

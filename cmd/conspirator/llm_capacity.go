package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	"github.com/spf13/cobra"
)

// Bounds of the capacity search: the load factor stays within
// [1/maxLoadFactor, maxLoadFactor] of the scenario's own.
const (
	maxLoadFactor = 1024
	maxProbes     = 40
)

// llmCapacityCmd is `conspirator llm capacity`: the highest load an llm
// scenario serves within its SLO, by bisection on the load factor.
func (a *app) llmCapacityCmd() *cobra.Command {
	var (
		f         scenarioFlags
		slo       string
		tolerance float64
	)
	c := &cobra.Command{
		Use:   "capacity SCENARIO|FILE",
		Short: "The highest request rate an llm scenario serves within its SLO (a search over the load)",
		Long: `Search for the highest load at which the share of requests meeting the SLO
(TTFT and TPOT each at or below its bound) is at least the SLO's quantile and
no request is refused by the admission limit. The load is the scenario's own
times a factor: llm.workload.rate_scale for a trace (the same requests, closer
together), llm.workload.synthetic.rate for a synthetic workload (attainment is
then the mean over llm.seeds). From factor 1 the search doubles or halves
until the verdict changes, then bisects (geometrically) until the bracket is
within --tolerance. It assumes attainment falls as the load rises; each probe
it ran is printed, so a non-monotone case shows.

--slo overrides the scenario's llm.slo: ttft=DURATION, tpot=DURATION and
quantile=SHARE, comma-separated; a metric it does not name keeps the
scenario's value.`,
		Example: `  conspirator llm capacity llm/azure-conv
  conspirator llm capacity llm/azure-conv --slo ttft=500ms,tpot=50ms
  conspirator llm capacity llm/azure-code --slo ttft=2s,quantile=0.99 --set llm.gpu=a100-80gb`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if !(tolerance > 0 && tolerance <= 1) {
				return usagef("--tolerance %v: want a relative width above 0 and at most 1 (0.05: the bracket within 5%%)", tolerance)
			}
			a.checkFilesOnLoad = true
			sc, err := a.load(args[0], f)
			if err != nil {
				return err
			}
			if sc.LLM == nil {
				return usagef("%s has no llm section: capacity searches an LLM serving scenario (start from llm/azure-conv)", args[0])
			}
			cfg := *sc.LLM
			if err := applySLOFlag(&cfg, slo); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return usagef("--slo %s: %v", slo, err)
			}
			return a.capacitySearch(cfg, sc.Seed, tolerance)
		},
	}
	f.add(c)
	c.Flags().StringVar(&slo, "slo", "", "SLO to meet: ttft=DURATION,tpot=DURATION,quantile=SHARE (each optional; default: the scenario's llm.slo)")
	c.Flags().Float64Var(&tolerance, "tolerance", 0.05, "stop when the highest load meeting the SLO and the lowest missing it are within this relative width")
	return c
}

// applySLOFlag sets the metrics --slo names; an unknown metric is a usage
// error naming the ones there are.
func applySLOFlag(cfg *llmserve.Config, s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || v == "" {
			return usagef("--slo %q: %q is not metric=value; write e.g. --slo ttft=1s,tpot=100ms,quantile=0.9", s, kv)
		}
		switch k {
		case "ttft", "tpot":
			d, err := units.ParseDuration(v)
			if err != nil {
				return usagef("--slo %s=%s: %v", k, v, err)
			}
			if k == "ttft" {
				cfg.SLO.TTFT = d
			} else {
				cfg.SLO.TPOT = d
			}
		case "quantile":
			q, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return usagef("--slo quantile=%s: not a number; want a share in (0, 1], e.g. 0.9", v)
			}
			cfg.SLO.Quantile = q
		default:
			return usagef("--slo %q: unknown metric %q; the SLO bounds ttft and tpot, met by a share quantile of the requests (e.g. --slo ttft=1s,tpot=100ms,quantile=0.9)", s, k)
		}
	}
	return nil
}

// probe is one load the search ran.
type probe struct {
	factor float64
	sum    *sim.LLMSummary
	meets  bool
}

func (a *app) capacitySearch(cfg llmserve.Config, seed uint64, tol float64) error {
	trace := cfg.Workload.Source == llmserve.SourceTrace
	base := cfg.Workload.RateScale
	knob := "llm.workload.rate_scale"
	if !trace {
		base = float64(cfg.Workload.Synthetic.Rate)
		knob = "llm.workload.synthetic.rate"
	}
	w := a.stdout
	fmt.Fprintf(w, "capacity of %s on %d x %s (tp %d): the highest load with >= %.4g%% of requests meeting TTFT <= %v and TPOT <= %v, no request refused; the load is %s x a factor\n",
		cfg.Model, cfg.ReplicaCount()*cfg.TP, cfg.GPU, cfg.TP, 100*cfg.SLO.Quantile, cfg.SLO.TTFT, cfg.SLO.TPOT, knob)
	var probes []probe
	run := func(f float64) (probe, error) {
		if len(probes) >= maxProbes {
			return probe{}, fmt.Errorf("llm capacity: %d probes without closing the bracket; raise --tolerance", maxProbes)
		}
		c := cfg
		if trace {
			c.Workload.RateScale = base * f
		} else {
			c.Workload.Synthetic.Rate = units.Rate(base * f)
		}
		if err := c.Validate(); err != nil {
			return probe{}, usagef("load factor %.4g (%s %.4g): %v", f, knob, base*f, err)
		}
		s, err := sim.RunLLM(c, seed)
		if err != nil {
			return probe{}, err
		}
		p := probe{factor: f, sum: s, meets: s.Result.SLOAttainment.Mean >= cfg.SLO.Quantile && s.Result.Rejected.Mean == 0}
		probes = append(probes, p)
		verdict := "meets"
		if !p.meets {
			verdict = "misses"
		}
		r := s.Result
		fmt.Fprintf(w, "  %s %-8.4g %8.3f requests/s offered: TTFT p90 %8.1f ms, TPOT p90 %6.1f ms, SLO attainment %5.1f%%, goodput %.3f/s, rejected %.0f: %s\n",
			knob[strings.LastIndex(knob, ".")+1:], base*f, s.OfferedPerSec, 1e3*r.TTFT.P90.Mean, 1e3*r.TPOT.P90.Mean, 100*r.SLOAttainment.Mean, r.Goodput.Mean, r.Rejected.Mean, verdict)
		return p, nil
	}
	first, err := run(1)
	if err != nil {
		return err
	}
	var lo, hi *probe // highest meeting, lowest missing
	if first.meets {
		lo = &first
		for f := 2.0; f <= maxLoadFactor; f *= 2 {
			p, err := run(f)
			if err != nil {
				return err
			}
			if !p.meets {
				hi = &p
				break
			}
			lo = &p
		}
		if hi == nil {
			fmt.Fprintf(w, "capacity: above %.4g requests/s offered (%s %.4g, %d x the scenario's load): the SLO is met at every load tried\n", lo.sum.OfferedPerSec, knob, base*lo.factor, maxLoadFactor)
			return nil
		}
	} else {
		hi = &first
		// The lightest load first: where even it misses, no load meets
		// the SLO and the search ends in two probes.
		light, err := run(1.0 / maxLoadFactor)
		if err != nil {
			return err
		}
		if !light.meets {
			fmt.Fprintf(w, "capacity: none: even at %s %.4g (1/%d of the scenario's load) the SLO is missed, so the unloaded latency exceeds a bound; loosen the SLO (--slo) or serve faster (llm.gpu, llm.tp)\n", knob, base*light.factor, maxLoadFactor)
			return nil
		}
		lo = &light
		for f := 0.5; f > 1.0/maxLoadFactor; f /= 2 {
			p, err := run(f)
			if err != nil {
				return err
			}
			if p.meets {
				lo = &p
				break
			}
			hi = &p
		}
	}
	for hi.factor/lo.factor > 1+tol {
		p, err := run(math.Sqrt(lo.factor * hi.factor))
		if err != nil {
			return err
		}
		if p.meets {
			lo = &p
		} else {
			hi = &p
		}
	}
	fmt.Fprintf(w, "capacity: %.4g requests/s offered (%s %.4g) meets the SLO, SLO attainment %.1f%%, goodput %.3f requests/s; %.4g requests/s (%s %.4g) misses it (%.1f%%)\n",
		lo.sum.OfferedPerSec, knob, base*lo.factor, 100*lo.sum.Result.SLOAttainment.Mean, lo.sum.Result.Goodput.Mean,
		hi.sum.OfferedPerSec, knob, base*hi.factor, 100*hi.sum.Result.SLOAttainment.Mean)
	if n := checkMonotone(probes); n != "" {
		fmt.Fprintln(w, "WARNING: "+n)
	}
	return nil
}

// checkMonotone says where a lower load missed the SLO that a higher one
// met: the bisection's assumption does not hold there.
func checkMonotone(ps []probe) string {
	for _, a := range ps {
		for _, b := range ps {
			if a.factor < b.factor && !a.meets && b.meets {
				return fmt.Sprintf("attainment is not monotone in the load: factor %.4g missed the SLO and the higher %.4g met it; the capacity above is one crossing, not necessarily the highest", a.factor, b.factor)
			}
		}
	}
	return ""
}

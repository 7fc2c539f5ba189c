package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	llmhw "github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/llmcap"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	"github.com/spf13/cobra"
)

// llmCapacityCmd is `conspirator llm capacity`: the highest load an llm
// scenario serves within its SLO, by bisection on the load factor.
func (a *app) llmCapacityCmd() *cobra.Command {
	var (
		f         scenarioFlags
		slo       string
		tolerance float64
		cs        configSearch
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
scenario's value.

With --gpu-types, --tp, --rates or --max-gpus it searches configurations
instead: for each rate (the scenario's workload at that rate: rate_scale
for a trace, synthetic.rate for a synthetic workload) and each GPU type and
TP degree, the fewest replicas meeting the SLO (1, doubling, then bisecting;
at most --max-gpus GPUs), priced at replicas x tp x the GPU's price per hour
(hw/gpu), one table per rate sorted by cost, the cheapest marked. A flag it
is not given takes the scenario's llm.capacity key, and where that is empty
the section's own value (llm.gpu, llm.tp, the workload's rate); a scenario
whose llm.capacity names GPU types, TP degrees or rates runs this search
without flags (llm/capacity). --mig (or llm.capacity.mig) adds MIG profiles as
replicas beside whole GPUs, one slice each at tp 1, charged its larger share
of the GPU's compute and memory slices (llm/mig-capacity).`,
		Example: `  conspirator llm capacity llm/azure-conv
  conspirator llm capacity llm/azure-conv --slo ttft=500ms,tpot=50ms
  conspirator llm capacity llm/azure-code --slo ttft=2s,quantile=0.99 --set llm.gpu=a100-80gb
  conspirator llm capacity llm/azure-conv --gpu-types h100-80gb,a100-80gb,h200-141gb --tp 1,2 --rates 5/s,10/s,20/s
  conspirator llm capacity llm/capacity`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			configs := false
			for _, n := range []string{"gpu-types", "tp", "rates", "max-gpus", "mig"} {
				configs = configs || cmd.Flags().Changed(n)
			}
			if configs && cmd.Flags().Changed("tolerance") {
				return usagef("--tolerance bounds the search for the highest rate; the configuration search (--gpu-types, --tp, --rates, --max-gpus) counts whole replicas and takes no tolerance")
			}
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
			// The scenario's llm.capacity section gives what a flag does
			// not; any of its lists asks for the configuration search.
			if !configs && cfg.Capacity.Searches() && !cmd.Flags().Changed("tolerance") {
				configs = true
			}
			if configs {
				cc := cfg.Capacity
				if !cmd.Flags().Changed("gpu-types") {
					cs.gpus = cc.GPUTypes
				}
				if !cmd.Flags().Changed("tp") {
					cs.tps = cc.TP
				}
				if !cmd.Flags().Changed("rates") {
					cs.rates = cs.rates[:0]
					for _, r := range cc.Rates {
						cs.rates = append(cs.rates, r.String())
					}
				}
				if !cmd.Flags().Changed("max-gpus") {
					cs.maxGPUs = cc.MaxGPUs
				}
				if !cmd.Flags().Changed("mig") {
					cs.mig = cc.MIG
				}
				return a.configSearch(cfg, sc.Seed, cs)
			}
			return a.capacitySearch(cfg, sc.Seed, tolerance)
		},
	}
	f.add(c)
	c.Flags().StringSliceVar(&cs.gpus, "gpu-types", nil, "configuration search: GPU types to price (hw/gpu names, comma-separated; default: the scenario's llm.gpu)")
	c.Flags().IntSliceVar(&cs.tps, "tp", nil, "configuration search: tensor-parallel degrees to try (comma-separated; default: the scenario's llm.tp)")
	c.Flags().StringSliceVar(&cs.rates, "rates", nil, "configuration search: request rates to serve, e.g. 5/s,10/s (default: the scenario's own)")
	c.Flags().StringSliceVar(&cs.mig, "mig", nil, "configuration search: MIG profiles to try as replicas beside whole GPUs, e.g. 3g.40gb,1g.20gb (each at tp 1, charged its larger share of the compute and memory slices; default: the scenario's llm.capacity.mig)")
	c.Flags().IntVar(&cs.maxGPUs, "max-gpus", 64, "configuration search: the most GPUs (replicas x tp) a configuration may take (where not given: the scenario's llm.capacity.max_gpus)")
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
		// "ttft_p90<=2s" is the form papers write; name the form this flag takes.
		if strings.ContainsAny(kv, "<>") {
			return usagef("--slo %q: %q is a comparison; write metric=bound with the quantile apart, e.g. --slo ttft=2s,quantile=0.9 for TTFT p90 <= 2 s", s, kv)
		}
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

// printProbe is one probe's line: label, then its latencies and verdict.
func printProbe(w io.Writer, p llmcap.Probe) {
	verdict := "meets"
	if !p.Meets {
		verdict = "misses"
	}
	s := p.Summary
	r := s.Result
	fmt.Fprintf(w, "  %s %8.3f requests/s offered: TTFT p90 %8.1f ms, TPOT p90 %6.1f ms, SLO attainment %5.1f%%, goodput %.3f/s, rejected %.0f: %s\n",
		p.Label, s.OfferedPerSec, 1e3*r.TTFT.P90.Mean, 1e3*r.TPOT.P90.Mean, 100*r.SLOAttainment.Mean, r.Goodput.Mean, r.Rejected.Mean, verdict)
}

func (a *app) capacitySearch(cfg llmserve.Config, seed uint64, tol float64) error {
	k := llmcap.NewKnob(cfg)
	w := a.stdout
	where := fmt.Sprintf("%d x %s (tp %d)", cfg.ReplicaCount()*cfg.TP, cfg.GPU, cfg.TP)
	if d := cfg.Disagg; d.Enabled {
		pool := func(p llmserve.PoolConfig) string {
			g, tp := p.GPU, p.TP
			if g == "" {
				g = cfg.GPU
			}
			if tp == 0 {
				tp = cfg.TP
			}
			if p.MIG != "" {
				return fmt.Sprintf("%d x %s %s", p.Replicas, g, p.MIG)
			}
			return fmt.Sprintf("%d x %s tp %d", p.Replicas, g, tp)
		}
		where = fmt.Sprintf("prefill %s, decode %s (disaggregated, KV over %s)", pool(d.Prefill), pool(d.Decode), d.Path)
	}
	fmt.Fprintf(w, "capacity of %s on %s: the highest load with >= %.4g%% of requests meeting TTFT <= %v and TPOT <= %v, no request refused; the load is %s x a factor\n",
		cfg.Model, where, 100*cfg.SLO.Quantile, cfg.SLO.TTFT, cfg.SLO.TPOT, k.Name)
	res, err := llmcap.SearchRate(cfg, seed, tol, func(p llmcap.Probe) { printProbe(w, p) })
	if err != nil {
		var fe *units.FieldError
		if errors.As(err, &fe) {
			return usagef("%v", err)
		}
		return err
	}
	knob, base := k.Name, k.Base
	switch res.Outcome {
	case llmcap.Above:
		lo := res.Lo
		fmt.Fprintf(w, "capacity: above %.4g requests/s offered (%s %.4g, %d x the scenario's load): the SLO is met at every load tried\n", lo.Summary.OfferedPerSec, knob, base*lo.Factor, llmcap.MaxLoadFactor)
		return nil
	case llmcap.None:
		fmt.Fprintf(w, "capacity: none: even at %s %.4g (1/%d of the scenario's load) the SLO is missed, so the unloaded latency exceeds a bound; loosen the SLO (--slo) or serve faster (llm.gpu, llm.tp)\n", knob, base*res.Hi.Factor, llmcap.MaxLoadFactor)
		return nil
	}
	lo, hi := res.Lo, res.Hi
	fmt.Fprintf(w, "capacity: %.4g requests/s offered (%s %.4g) meets the SLO, SLO attainment %.1f%%, goodput %.3f requests/s; %.4g requests/s (%s %.4g) misses it (%.1f%%)\n",
		lo.Summary.OfferedPerSec, knob, base*lo.Factor, 100*lo.Summary.Result.SLOAttainment.Mean, lo.Summary.Result.Goodput.Mean,
		hi.Summary.OfferedPerSec, knob, base*hi.Factor, 100*hi.Summary.Result.SLOAttainment.Mean)
	if res.NotMonotone != "" {
		fmt.Fprintln(w, "WARNING: "+res.NotMonotone)
	}
	return nil
}

// configSearch is the configuration search's flags.
type configSearch struct {
	gpus    []string
	tps     []int
	rates   []string
	maxGPUs int
	mig     []string
}

// configSearch checks the flags, then prints one table per rate.
func (a *app) configSearch(cfg llmserve.Config, seed uint64, cs configSearch) error {
	if cs.maxGPUs < 1 {
		return usagef("--max-gpus %d: want 1 or more GPUs", cs.maxGPUs)
	}
	if cfg.MIG != "" {
		return usagef("llm.mig %s: the configuration search prices whole GPUs; set llm.mig to empty (--set llm.mig=)", cfg.MIG)
	}
	if cfg.Disagg.Enabled {
		return usagef("llm.disagg.enabled: true: the configuration search sizes colocated replicas (llm.gpu, llm.tp, replicas), which a disaggregated run does not use; search this layout's highest rate instead (conspirator llm capacity SCENARIO, with no --gpu-types, --tp or --rates and no llm.capacity section), or --set llm.disagg.enabled=false")
	}
	plan, err := cfg.Plan(sim.LLMEnv.ReadModel)
	if err != nil {
		return usagef("llm.model: %v", err)
	}
	if len(cs.gpus) == 0 {
		cs.gpus = []string{cfg.GPU}
	}
	if len(cs.tps) == 0 {
		cs.tps = []int{cfg.TP}
	}
	specs := make([]gpu.Spec, len(cs.gpus))
	for i, n := range cs.gpus {
		g, err := gpu.Lookup(strings.TrimSpace(n))
		if err != nil {
			return usagef("--gpu-types %s: %v", n, err)
		}
		// The roofline's figures and the TP degree; a memory shortfall is
		// a row of the table, not an error.
		var fe *llmhw.FitError
		if err := llmhw.CheckFit(plan.Model, llmhw.Placement{GPU: g, TP: 1}, llmhw.Batch{Decode: []int{1}}); err != nil && !errors.As(err, &fe) {
			return usagef("--gpu-types %s: %v", n, err)
		}
		specs[i] = g
	}
	for _, tp := range cs.tps {
		var fe *llmhw.FitError
		if err := llmhw.CheckFit(plan.Model, llmhw.Placement{GPU: specs[0], TP: tp}, llmhw.Batch{Decode: []int{1}}); err != nil && !errors.As(err, &fe) {
			return usagef("--tp %d: %v", tp, err)
		}
	}
	k := llmcap.NewKnob(cfg)
	ownRate := k.Base // requests per second at factor 1
	if k.Trace {
		if ownRate, err = sim.LLMTraceRate(cfg); err != nil {
			return err
		}
		if ownRate <= 0 {
			return usagef("llm.workload.trace: fewer than two arrivals, so the trace has no rate to scale to --rates")
		}
	}
	rates := []float64{ownRate}
	if len(cs.rates) > 0 {
		rates = rates[:0]
		for _, r := range cs.rates {
			v, err := units.ParseRate(strings.TrimSpace(r))
			if err != nil {
				return usagef("--rates %s: %v", r, err)
			}
			if !(v > 0) || math.IsInf(float64(v), 0) {
				return usagef("--rates %s: want a rate above 0, e.g. 10/s", r)
			}
			rates = append(rates, float64(v))
		}
	}
	w := a.stdout
	for _, rate := range rates {
		f := rate / ownRate
		fmt.Fprintf(w, "configurations of %s at %s (%s %.4g): the fewest replicas with >= %.4g%% of requests meeting TTFT <= %v and TPOT <= %v, no request refused, at most %d GPUs\n",
			cfg.Model, perSec(rate), k.Name, k.Base*f, 100*cfg.SLO.Quantile, cfg.SLO.TTFT, cfg.SLO.TPOT, cs.maxGPUs)
		ts, err := llmcap.SearchConfigs(cfg, seed, llmcap.Space{GPUs: specs, TPs: cs.tps, Rates: []float64{rate}, MaxGPUs: cs.maxGPUs, MIG: cs.mig}, ownRate, func(p llmcap.Probe) { printProbe(w, p) })
		if err != nil {
			return err
		}
		a.printConfigs(ts[0])
	}
	return nil
}

// printConfigs is one rate's table, sorted, the cheapest marked.
func (a *app) printConfigs(t llmcap.RateTable) {
	w := a.stdout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tgpu\ttp\treplicas\tgpus\t$/hour\tSLO attainment\tTTFT p90 ms\tTPOT p90 ms\t\n")
	for i, r := range t.Rows {
		name := r.GPU
		if r.MIG != "" {
			name += " " + r.MIG
		}
		if r.Replicas == 0 {
			fmt.Fprintf(tw, "\t%s\t%d\t-\t-\t-\t-\t-\t-\t%s\n", name, r.TP, r.Note)
			continue
		}
		mark, price := "", "unpriced"
		if r.PricePerHour > 0 {
			price = fmt.Sprintf("%.2f", r.Cost())
			if r.PriceBasis != "" {
				price += " (" + r.PriceBasis + ")"
			}
			if i == 0 {
				mark = "*"
			}
		}
		res := r.Summary.Result
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%.1f%%\t%.1f\t%.1f\t%s\n", mark, name, r.TP, r.Replicas, strconv.FormatFloat(r.GPUs(), 'g', 4, 64), price,
			100*res.SLOAttainment.Mean, 1e3*res.TTFT.P90.Mean, 1e3*res.TPOT.P90.Mean, r.Note)
	}
	tw.Flush()
	if r, ok := t.Cheapest(); ok {
		basis := "on-demand"
		if r.PriceBasis != "" {
			basis = r.PriceBasis + " price, lower than on-demand"
		}
		what := fmt.Sprintf("%s at tp %d", r.GPU, r.TP)
		if r.MIG != "" {
			what = fmt.Sprintf("%s %s slices", r.GPU, r.MIG)
		}
		fmt.Fprintf(w, "cheapest at %s: %d x %s (GPUs: %s), $%.2f/hour (%s)\n", perSec(t.Rate), r.Replicas, what, strconv.FormatFloat(r.GPUs(), 'g', 4, 64), r.Cost(), basis)
	} else {
		fmt.Fprintf(w, "cheapest at %s: none priced meets the SLO within the GPUs allowed\n", perSec(t.Rate))
	}
}

// perSec writes a rate to four significant digits: 2.01/s.
func perSec(r float64) string { return strconv.FormatFloat(r, 'g', 4, 64) + "/s" }

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	llmhw "github.com/conspirator-sim/conspirator/hw/llm"
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
is not given takes the scenario's value; MIG slices are not searched.`,
		Example: `  conspirator llm capacity llm/azure-conv
  conspirator llm capacity llm/azure-conv --slo ttft=500ms,tpot=50ms
  conspirator llm capacity llm/azure-code --slo ttft=2s,quantile=0.99 --set llm.gpu=a100-80gb
  conspirator llm capacity llm/azure-conv --gpu-types h100-80gb,a100-80gb,h200-141gb --tp 1,2 --rates 5/s,10/s,20/s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			configs := false
			for _, n := range []string{"gpu-types", "tp", "rates", "max-gpus"} {
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
			if configs {
				return a.configSearch(cfg, sc.Seed, cs)
			}
			return a.capacitySearch(cfg, sc.Seed, tolerance)
		},
	}
	f.add(c)
	c.Flags().StringSliceVar(&cs.gpus, "gpu-types", nil, "configuration search: GPU types to price (hw/gpu names, comma-separated; default: the scenario's llm.gpu)")
	c.Flags().IntSliceVar(&cs.tps, "tp", nil, "configuration search: tensor-parallel degrees to try (comma-separated; default: the scenario's llm.tp)")
	c.Flags().StringSliceVar(&cs.rates, "rates", nil, "configuration search: request rates to serve, e.g. 5/s,10/s (default: the scenario's own)")
	c.Flags().IntVar(&cs.maxGPUs, "max-gpus", 64, "configuration search: the most GPUs (replicas x tp) a configuration may take")
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

// loadKnob is the scenario key a capacity search scales the load with:
// llm.workload.rate_scale for a trace, llm.workload.synthetic.rate for a
// synthetic workload, from the scenario's value base.
type loadKnob struct {
	trace bool
	base  float64
	name  string
}

func newLoadKnob(cfg llmserve.Config) loadKnob {
	if cfg.Workload.Source == llmserve.SourceTrace {
		return loadKnob{trace: true, base: cfg.Workload.RateScale, name: "llm.workload.rate_scale"}
	}
	return loadKnob{base: float64(cfg.Workload.Synthetic.Rate), name: "llm.workload.synthetic.rate"}
}

// short is the knob's last key, for the probe lines.
func (k loadKnob) short() string { return k.name[strings.LastIndex(k.name, ".")+1:] }

// at is cfg with the load at factor f of the scenario's.
func (k loadKnob) at(cfg llmserve.Config, f float64) llmserve.Config {
	if k.trace {
		cfg.Workload.RateScale = k.base * f
	} else {
		cfg.Workload.Synthetic.Rate = units.Rate(k.base * f)
	}
	return cfg
}

// runProbe serves c once and says whether it meets its SLO: the SLO's
// quantile of requests within both bounds and none refused.
func runProbe(c llmserve.Config, seed uint64) (*sim.LLMSummary, bool, error) {
	s, err := sim.RunLLM(c, seed)
	if err != nil {
		return nil, false, err
	}
	return s, s.Result.SLOAttainment.Mean >= c.SLO.Quantile && s.Result.Rejected.Mean == 0, nil
}

// printProbe is one probe's line: label, then its latencies and verdict.
func printProbe(w io.Writer, label string, s *sim.LLMSummary, meets bool) {
	verdict := "meets"
	if !meets {
		verdict = "misses"
	}
	r := s.Result
	fmt.Fprintf(w, "  %s %8.3f requests/s offered: TTFT p90 %8.1f ms, TPOT p90 %6.1f ms, SLO attainment %5.1f%%, goodput %.3f/s, rejected %.0f: %s\n",
		label, s.OfferedPerSec, 1e3*r.TTFT.P90.Mean, 1e3*r.TPOT.P90.Mean, 100*r.SLOAttainment.Mean, r.Goodput.Mean, r.Rejected.Mean, verdict)
}

func (a *app) capacitySearch(cfg llmserve.Config, seed uint64, tol float64) error {
	k := newLoadKnob(cfg)
	base, knob := k.base, k.name
	w := a.stdout
	fmt.Fprintf(w, "capacity of %s on %d x %s (tp %d): the highest load with >= %.4g%% of requests meeting TTFT <= %v and TPOT <= %v, no request refused; the load is %s x a factor\n",
		cfg.Model, cfg.ReplicaCount()*cfg.TP, cfg.GPU, cfg.TP, 100*cfg.SLO.Quantile, cfg.SLO.TTFT, cfg.SLO.TPOT, knob)
	var probes []probe
	run := func(f float64) (probe, error) {
		if len(probes) >= maxProbes {
			return probe{}, fmt.Errorf("llm capacity: %d probes without closing the bracket; raise --tolerance", maxProbes)
		}
		c := k.at(cfg, f)
		if err := c.Validate(); err != nil {
			return probe{}, usagef("load factor %.4g (%s %.4g): %v", f, knob, base*f, err)
		}
		s, meets, err := runProbe(c, seed)
		if err != nil {
			return probe{}, err
		}
		p := probe{factor: f, sum: s, meets: meets}
		probes = append(probes, p)
		printProbe(w, fmt.Sprintf("%s %-8.4g", k.short(), base*f), s, meets)
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
	if a, b, ok := monotoneBreak(ps); ok {
		return fmt.Sprintf("attainment is not monotone in the load: factor %.4g missed the SLO and the higher %.4g met it; the capacity above is one crossing, not necessarily the highest", a.factor, b.factor)
	}
	return ""
}

// monotoneBreak finds a probe that missed the SLO at a lower factor than
// one that met it.
func monotoneBreak(ps []probe) (probe, probe, bool) {
	for _, a := range ps {
		for _, b := range ps {
			if a.factor < b.factor && !a.meets && b.meets {
				return a, b, true
			}
		}
	}
	return probe{}, probe{}, false
}

// configSearch is the configuration search's flags.
type configSearch struct {
	gpus    []string
	tps     []int
	rates   []string
	maxGPUs int
}

// configRow is one GPU type and TP degree at one rate: the fewest replicas
// meeting the SLO (0: none within --max-gpus, or it does not fit; note
// says which).
type configRow struct {
	gpu      string
	price    float64 // per GPU-hour; 0: unpriced
	tp       int
	replicas int
	sum      *sim.LLMSummary
	note     string
}

func (r configRow) cost() float64 { return float64(r.replicas*r.tp) * r.price }

// rank orders rows: priced ones by cost (ties: fewer GPUs), then the
// unpriced by GPUs, then those with no configuration.
func (r configRow) rank() (int, float64) {
	switch {
	case r.replicas == 0:
		return 2, 0
	case r.price == 0:
		return 1, float64(r.replicas * r.tp)
	}
	return 0, r.cost()
}

// configSearch checks the flags, then prints one table per rate.
func (a *app) configSearch(cfg llmserve.Config, seed uint64, cs configSearch) error {
	if cs.maxGPUs < 1 {
		return usagef("--max-gpus %d: want 1 or more GPUs", cs.maxGPUs)
	}
	if cfg.MIG != "" {
		return usagef("llm.mig %s: the configuration search prices whole GPUs; set llm.mig to empty (--set llm.mig=)", cfg.MIG)
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
	k := newLoadKnob(cfg)
	ownRate := k.base // requests per second at factor 1
	if k.trace {
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
			cfg.Model, perSec(rate), k.name, k.base*f, 100*cfg.SLO.Quantile, cfg.SLO.TTFT, cfg.SLO.TPOT, cs.maxGPUs)
		var rows []configRow
		for _, g := range specs {
			for _, tp := range cs.tps {
				c := k.at(cfg, f)
				c.GPU, c.TP, c.GPUs, c.Replicas = g.Name, tp, 0, 1
				row, err := a.fewestReplicas(c, seed, cs.maxGPUs)
				if err != nil {
					return err
				}
				row.price = g.PricePerHour
				rows = append(rows, row)
			}
		}
		sort.SliceStable(rows, func(i, j int) bool {
			ci, vi := rows[i].rank()
			cj, vj := rows[j].rank()
			return ci < cj || ci == cj && vi < vj
		})
		a.printConfigs(rate, rows)
	}
	return nil
}

// fewestReplicas finds the fewest replicas of c (gpu and tp set) meeting
// the SLO: 1, then doubling up to maxGPUs/tp replicas, then bisecting.
func (a *app) fewestReplicas(c llmserve.Config, seed uint64, maxGPUs int) (configRow, error) {
	row := configRow{gpu: c.GPU, tp: c.TP}
	most := min(maxGPUs/c.TP, llmserve.MaxReplicas)
	if most < 1 {
		row.note = fmt.Sprintf("none: tp %d is above --max-gpus %d", c.TP, maxGPUs)
		return row, nil
	}
	if err := c.Validate(); err != nil {
		row.note = "does not fit: " + strings.ReplaceAll(err.Error(), "\n", "; ")
		return row, nil
	}
	var probes []probe // factor: the load per replica, 1/replicas
	sums := map[int]*sim.LLMSummary{}
	try := func(n int) (bool, error) {
		c.Replicas = n
		s, meets, err := runProbe(c, seed)
		if err != nil {
			return false, err
		}
		probes = append(probes, probe{factor: 1 / float64(n), sum: s, meets: meets})
		sums[n] = s
		printProbe(a.stdout, fmt.Sprintf("%-10s tp %d x %-4d", c.GPU, c.TP, n), s, meets)
		return meets, nil
	}
	lo, hi := 0, 0 // the most replicas missing, the fewest meeting
	for n := 1; ; n = min(2*n, most) {
		meets, err := try(n)
		if err != nil {
			return row, err
		}
		if meets {
			hi = n
			break
		}
		lo = n
		if n == most {
			row.note = fmt.Sprintf("none within --max-gpus %d (%d replicas of tp %d miss the SLO)", maxGPUs, most, c.TP)
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
	row.replicas, row.sum = hi, sums[hi]
	if x, y, ok := monotoneBreak(probes); ok {
		row.note = fmt.Sprintf("WARNING: not monotone: %d replicas missed the SLO and %d met it", int(math.Round(1/x.factor)), int(math.Round(1/y.factor)))
	}
	return row, nil
}

// printConfigs is one rate's table, sorted, the cheapest marked.
func (a *app) printConfigs(rate float64, rows []configRow) {
	w := a.stdout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tgpu\ttp\treplicas\tgpus\t$/hour\tSLO attainment\tTTFT p90 ms\tTPOT p90 ms\t\n")
	for i, r := range rows {
		if r.replicas == 0 {
			fmt.Fprintf(tw, "\t%s\t%d\t-\t-\t-\t-\t-\t-\t%s\n", r.gpu, r.tp, r.note)
			continue
		}
		mark, price := "", "unpriced"
		if r.price > 0 {
			price = fmt.Sprintf("%.2f", r.cost())
			if i == 0 {
				mark = "*"
			}
		}
		res := r.sum.Result
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%.1f%%\t%.1f\t%.1f\t%s\n", mark, r.gpu, r.tp, r.replicas, r.replicas*r.tp, price,
			100*res.SLOAttainment.Mean, 1e3*res.TTFT.P90.Mean, 1e3*res.TPOT.P90.Mean, r.note)
	}
	tw.Flush()
	if len(rows) > 0 && rows[0].replicas > 0 && rows[0].price > 0 {
		r := rows[0]
		fmt.Fprintf(w, "cheapest at %s: %d x %s at tp %d (GPUs: %d), $%.2f/hour\n", perSec(rate), r.replicas, r.gpu, r.tp, r.replicas*r.tp, r.cost())
	} else {
		fmt.Fprintf(w, "cheapest at %s: none priced meets the SLO within the GPUs allowed\n", perSec(rate))
	}
}

// perSec writes a rate to four significant digits: 2.01/s.
func perSec(r float64) string { return strconv.FormatFloat(r, 'g', 4, 64) + "/s" }

package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/conspirator-sim/conspirator/sim/training"
)

// DataPathSeeds is how many seeds the data-path rows average: each run
// takes a fraction of a second, so the rows run in full in a quick run.
const DataPathSeeds = 10

// quickClusterSeeds is the seeds of the cluster and allocation rows in a
// quick run (10 in full).
const quickClusterSeeds = 3

// AuthorsFGD are the FGD authors' published allocation ratios for
// openb_pod_list_default, the mean over their 10 seeds (42-51) at 100% and
// 130% of the GPU capacity arrived: hkust-adsl/kubernetes-scheduler-simulator
// @8f3d641, experiments/analysis/expected_results/analysis_allo_discrete.csv,
// columns "100" and "130", averaged by hand per sc_policy. Their order is
// strictly increasing at both points.
var AuthorsFGD = []struct {
	Policy       string
	At100, At130 float64
}{
	{"random", 86.30, 87.47},
	{"dot-product", 90.62, 90.85},
	{"gpu-clustering", 91.65, 91.88},
	{"gpu-packing", 91.78, 92.00},
	{"best-fit", 92.86, 93.08},
	{"fgd", 95.23, 95.39},
}

// Settings of the training anchors, as typed on a command line.
var (
	// esaSets: every spanning job aggregating, 700 slots, a job every
	// 30 s: where ESA gains most over ATP (the sweep's own maximum).
	esaSets = []string{"training.ina.use=always", "training.ina.slots=700", "training.jobs.synthetic.rate=0.033333/s"}
	// atpPSSets: ATP against a PS baseline as ATP deploys its PS (one
	// PS machine per job for both), a job every 1,000 s (no queueing),
	// ATP's whole switch.
	atpPSSets = []string{"training.ina.slots=device", "training.policies=[atp, none]", "training.baseline=none", "training.ina.use=always",
		"training.sync.all_reduce=ps-dedicated", "training.ina.fallback=ps-dedicated", "training.jobs.synthetic.rate=0.001/s"}
	// switchMLSets: one job of 8 workers alone on SwitchML's switch
	// against a ring all-reduce.
	switchMLSets = []string{"training.jobs.synthetic.jobs=1", "training.jobs.synthetic.gpus=[8]", "training.policies=[static, none]",
		"training.baseline=none", "training.seeds=1", "training.sync.all_reduce=ring", "training.ina.device=tofino-switchml"}
)

// command is the shell form of a run with settings, quoted as a user
// types it.
func command(verb, name string, sets []string) string {
	var b strings.Builder
	b.WriteString("conspirator " + verb + " " + name)
	for _, s := range sets {
		if strings.ContainsAny(s, "[]{} ") {
			b.WriteString(" --set '" + s + "'")
		} else {
			b.WriteString(" --set " + s)
		}
	}
	return b.String()
}

// commands is one `conspirator run paper/ina` per value, each with the
// shared settings and the value's own.
func commands(sets []string, format string, values ...any) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = command("run", "paper/ina", append(append([]string{}, sets...), fmt.Sprintf(format, v)))
	}
	return out
}

// Rows are the published results, in the order of the README's table.
var Rows = []Row{
	{
		Name:     "r1-path-order",
		Claim:    "path order: gpudirect < conspirator < host-rdma < tcp",
		Source:   "Conspirator (ATC'24), end-to-end completion time",
		Paper:    "gpudirect fastest, tcp slowest, conspirator ahead of host-rdma",
		Chapter:  "datapath.md",
		Commands: []string{"conspirator sweep paper/e2e --param datapath.host.background_load=0%,80% --seeds 10"},
		run:      runE2E,
		judge:    judgeOrder,
	},
	{
		Name:     "r2-gap",
		Claim:    "conspirator's end-to-end time 15% below host-rdma",
		Source:   "Conspirator (ATC'24), abstract",
		Paper:    "15%",
		Chapter:  "datapath.md",
		Commands: []string{"conspirator sweep paper/e2e --param datapath.host.background_load=0%,80% --seeds 10"},
		run:      runE2E,
		judge: func(fs map[string]Figure) (string, string, string) {
			g := fs["gap_0"]
			return "0% load: " + g.Text(), against(g, 15), "the mean end-to-end time over 10 seeds at 0% background load, the paper's headline condition (its talk shows 0% and 80%; at 80% the gap is r3's); smaller than half the published gap reads as not reproduced"
		},
	},
	{
		Name:     "r3-gap-grows",
		Claim:    "the gap grows with background CPU load",
		Source:   "Conspirator (ATC'24), talk: 0% and 80% load",
		Paper:    "larger at 80% than at 0%",
		Chapter:  "datapath.md",
		Commands: []string{"conspirator sweep paper/e2e --param datapath.host.background_load=0%,80% --seeds 10"},
		run:      runE2E,
		judge: func(fs map[string]Figure) (string, string, string) {
			g0, g80 := fs["gap_0"], fs["gap_80"]
			v := "not reproduced"
			if g80.Value-ciOf(g80) > g0.Value+ciOf(g0) {
				v = "holds"
			}
			return fmt.Sprintf("%s at 0%%, %s at 80%%", g0.Text(), g80.Text()), v, "the 95% CIs over 10 seeds do not overlap"
		},
	},
	{
		Name:     "r4-cost",
		Claim:    "SmartNIC +17% cost-effectiveness, +44% power efficiency over the host CPU",
		Source:   "Conspirator (ATC'24), talk: cost table",
		Paper:    "+17% / +44%",
		Chapter:  "datapath.md",
		Commands: []string{"conspirator run paper/cost", "conspirator run paper/e2e"},
		run:      runCost,
		judge: func(fs map[string]Figure) (string, string, string) {
			c, p := fs["cost_gain"], fs["power_gain"]
			sc, sp := fs["same_work_cost_gain"], fs["same_work_power_gain"]
			v := "not reproduced"
			if math.Abs(c.Value-17) < 0.5 && math.Abs(p.Value-44) < 0.5 {
				v = "inputs only"
				if sc.Value > 0 && sp.Value > 0 {
					v = "reproduced"
				}
			}
			return fmt.Sprintf("%s / %s from the paper's inputs; %s / %s simulated same work", signed(c), signed(p), signed(sc), signed(sp)),
				v, "the paper's table is arithmetic on its price, power and throughput, which we repeat; the simulated same-work comparison (paper/e2e: the host CPU and the SmartNIC doing the same control work) gives the opposite sign"
		},
	},
	{
		Name:     "r5-gpu-hours",
		Claim:    "MIG-aware scheduling saves 33% of GPU-hours over naive sharing",
		Source:   "Conspirator (ATC'24), abstract and talk",
		Paper:    "-33%",
		Chapter:  "cluster.md",
		Commands: []string{"conspirator run paper/gpu-hours"},
		Quick:    fmt.Sprintf("seeds 1-%d of 10", quickClusterSeeds),
		run:      runGPUHours,
		judge: func(fs map[string]Figure) (string, string, string) {
			s, b := fs["vs_naive_share"], fs["vs_best_baseline"]
			return fmt.Sprintf("%s vs naive-share; %s vs best-fit", s.Text(), b.Text()), against(s, -33),
				"openb on a sample of its servers, services holding their time and batch jobs their work, 10 seeds each its own bootstrap of the jobs; the mean reaches -33% in no regime mapped by paper/gpu-hours-regimes (cluster.md)"
		},
	},
	{
		Name:     "r6-optimal",
		Claim:    "the heuristic reaches the optimal scheduler's result",
		Source:   "Conspirator (ATC'24), talk",
		Paper:    "equal GPU-hours",
		Chapter:  "cluster.md",
		Commands: []string{"conspirator run paper/heuristic-vs-optimal"},
		run:      runOptimal,
		judge: func(fs map[string]Figure) (string, string, string) {
			g := fs["gap_to_optimal"]
			v := "differs"
			if math.Abs(g.Value) < 1 {
				v = "holds"
			}
			return fmt.Sprintf("%s GPU-hours against the per-snapshot optimum (%s against %s GPU-h)", signed(g), fs["heuristic_gpu_hours"].Text(), fs["optimal_gpu_hours"].Text()),
				v, "one window of openb on 8 A100s, every snapshot solved exactly (gophersat); within 1% counts as equal"
		},
	},
	{
		Name:     "r7-solve-time",
		Claim:    "the heuristic takes much less time than the optimum",
		Source:   "Conspirator (ATC'24), talk",
		Paper:    "much faster",
		Chapter:  "cluster.md",
		Commands: []string{"conspirator run paper/heuristic-vs-optimal"},
		run:      runOptimal,
		judge: func(fs map[string]Figure) (string, string, string) {
			r := fs["speedup"]
			v := "not reproduced"
			if r.Value >= 10 {
				v = "holds"
			}
			return fmt.Sprintf("%s per decision against %s (%sx faster)", fs["heuristic_us"].Text(), fs["optimal_us"].Text(), fmtNum(r.Value, 0)),
				v, "wall clock on the machine that ran it, not compared by the docs test; at least 10x counts"
		},
	},
	{
		Name:     "fgd-allocation",
		Claim:    "FGD's allocation table: six policies' GPU allocation on openb",
		Source:   "FGD (ATC'23), artifact's expected results",
		Paper:    "random 87.47% ... fgd 95.39% at 130% arrived",
		Chapter:  "cluster.md",
		Commands: []string{"conspirator run paper/fgd-allocation"},
		Quick:    fmt.Sprintf("seeds 1-%d of 10", quickClusterSeeds),
		run:      runFGD,
		judge: func(fs map[string]Figure) (string, string, string) {
			d := fs["max_abs_diff"]
			v := "not reproduced"
			if d.Value <= 1 && fs["same_order"].Value == 1 {
				v = "reproduced"
			}
			return fmt.Sprintf("same order: %s; every policy within %s of the authors'", yesNo(fs["same_order"].Value == 1), d.Text()), v,
				"within 1 point and in the authors' order at 100% and 130% arrived"
		},
	},
	{
		Name:     "esa-over-atp",
		Claim:    "ESA's preemptive aggregator scheduling: up to 1.35x better mean JCT than ATP",
		Source:   "ESA (arXiv 2201.06398), abstract",
		Paper:    "up to 1.35x",
		Chapter:  "training.md",
		Commands: []string{command("run", "paper/ina", esaSets)},
		run:      runESA,
		judge: func(fs map[string]Figure) (string, string, string) {
			e := fs["esa_over_atp"]
			return fmt.Sprintf("%s (700 slots, a job every 30 s); there atp %s and esa %s of no aggregation; static over atp %s", e.Text(), fs["atp_over_none"].Text(), fs["esa_over_none"].Text(), fs["static_over_atp"].Text()),
				against(e, 1.35),
				"the largest of the 15 cells of sweep paper/ina with every spanning job aggregating, picked on the same seeds; ATP's fallback on one PS machine per job; read at the slower part of a worker's stream it is 1.309x +- 0.087 (training.md)"
		},
	},
	{
		Name:     "atp-over-ps",
		Claim:    "ATP speeds training 38% to 66% over a parameter-server baseline",
		Source:   "ATP (NSDI'21), abstract",
		Paper:    "1.38x to 1.66x",
		Chapter:  "training.md",
		Commands: commands(atpPSSets, "training.jobs.synthetic.gpus=[%d]", 2, 4, 8),
		run:      runATP,
		judge: func(fs map[string]Figure) (string, string, string) {
			parts := make([]string, 0, 3)
			in := 0
			for _, k := range []string{"workers_2", "workers_4", "workers_8"} {
				f := fs[k]
				parts = append(parts, f.Text()+" ("+f.Label+")")
				if f.Value+ciOf(f) >= 1.38 && f.Value-ciOf(f) <= 1.66 {
					in++
				}
			}
			// In the published range at some job sizes and not at others:
			// the gain is a function of the workers, not one figure.
			v := "not reproduced"
			switch in {
			case 3:
				v = "reproduced"
			case 1, 2:
				v = "depends"
			}
			return strings.Join(parts, ", "), v, "both on one PS machine per job, no queueing: the gain is the PS's incast and grows with the workers (4.48x at 16), in the published range only at 4; against PS shards on the job's servers (BytePS's co-located mode) ATP gives 0.95x (training.md)"
		},
	},
	{
		Name:     "switchml-ring",
		Claim:    "SwitchML speeds training up to 2.27x over a ring all-reduce",
		Source:   "SwitchML (NSDI'21), against NCCL at 100 Gb/s",
		Paper:    "up to 2.27x",
		Chapter:  "training.md",
		Commands: commands(switchMLSets, "training.jobs.synthetic.models=[%s]", "resnet50", "vgg16", "bert-large"),
		run:      runSwitchML,
		judge: func(fs map[string]Figure) (string, string, string) {
			parts := []string{}
			for _, k := range []string{"resnet50", "vgg16", "bert-large"} {
				f := fs[k]
				parts = append(parts, f.Label+" "+f.Text())
			}
			// Not judged against 2.27x: the baselines differ (an ideal ring
			// here, NCCL as measured there).
			return strings.Join(parts, ", "), "not comparable",
				"one job of 8 workers, TF32; the model's ring is ideal (line rate, 98% payload), which caps the gain at 1.38x with SwitchML's 23% headers, while SwitchML's 2.27x is over NCCL as measured, which does not reach line rate"
		},
	},
	{
		Name:     "llm-azure-conv",
		Claim:    "Llama-3.1-8B on one H100 under Azure's conversation trace (an hour, 5.4 requests/s)",
		Source:   "this project; Azure 2023 LLM trace (Splitwise, ISCA'24)",
		Paper:    llmPaper,
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/azure-conv"},
		run:      llmRow("llm/azure-conv"),
		judge:    judgeLLM,
	},
	{
		Name:     "llm-azure-code",
		Claim:    "the same under Azure's coding trace (2,048-token prompts, 28-token outputs)",
		Source:   "this project; Azure 2023 LLM trace (Splitwise, ISCA'24)",
		Paper:    llmPaper,
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/azure-code"},
		run:      llmRow("llm/azure-code"),
		judge:    judgeLLM,
	},
	{
		Name:     "llm-mooncake",
		Claim:    "prefix caching on Mooncake's long-context trace, eight H100s",
		Source:   "this project; Mooncake (FAST'25) conversation trace",
		Paper:    llmPaper,
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/mooncake"},
		run:      llmRow("llm/mooncake"),
		judge:    judgeLLM,
	},
	{
		Name:     "llm-capacity",
		Claim:    "the cheapest GPU type, TP and replicas for Llama-3.1-8B chat at 5, 20 and 80 requests/s",
		Source:   "this project; the search of Vidur-Search and DistServe",
		Paper:    llmPaper,
		Chapter:  "llm.md",
		Commands: []string{"conspirator llm capacity llm/capacity"},
		run:      runLLMCapacity,
		judge:    judgeLLMCapacity,
	},
	{
		Name:     "splitwise-kv",
		Claim:    "Splitwise: KV sent layer by layer leaves ~5 ms (H100; ~8 ms A100) after the prompt, 0.8% of end-to-end time (3% serialized)",
		Source:   "Splitwise (ISCA'24), via secondary summaries",
		Paper:    "~5 ms (H100), ~8 ms (A100); 0.8% vs 3%",
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/splitwise", command("run", "llm/splitwise", splitwiseA100), "conspirator run llm/splitwise --set llm.disagg.transfer=after"},
		run:      runSplitwise,
		judge:    judgeSplitwise,
	},
	{
		Name:     "blink-interference",
		Claim:    "Blink: under host CPU interference, host-based serving keeps 28-54% of its throughput",
		Source:   "Blink (arXiv 2604.07609), via a secondary summary",
		Paper:    "28-54% kept",
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/blink", "conspirator run llm/blink --set llm.host_load=80%", "conspirator run llm/blink --set llm.host_load=95%", "conspirator run llm/blink --set llm.control_plane.placement=smartnic"},
		run:      runBlink,
		judge:    judgeBlink,
	},
	{
		Name:     "mooncake-transfer",
		Claim:    "Mooncake: the transfer engine moves 40 GB at 87 GB/s (4 x 200 Gb/s) and 190 GB/s (8 x 400 Gb/s), 2.4x / 4.6x TCP; mean TTFT under 2 s above ~100 Gb/s",
		Source:   "Mooncake (FAST'25), via its README and a secondary summary",
		Paper:    "87 / 190 GB/s, 2.4x / 4.6x TCP; knee near 100 Gb/s",
		Chapter:  "llm.md",
		Commands: mooncakeKneeCommands(),
		Quick:    "4 of the 6 link rates (10, 25, 100, 400 Gb/s)",
		run:      runMooncakeTransfer,
		judge:    judgeMooncakeTransfer,
	},
	{
		Name:     "distserve-kv",
		Claim:    "DistServe: KV transfer under 0.1% of latency (NVLink placement), 95% under 30 ms; OPT-13B at 1.56 requests/s per GPU",
		Source:   "DistServe (OSDI'24), via secondary summaries; the OPT-13B example from simdistserve/README.md",
		Paper:    "< 0.1%, > 95% under 30 ms; 1.56/s per GPU",
		Chapter:  "llm.md",
		Commands: []string{"conspirator run llm/distserve", command("run", "llm/distserve", distserveCrossNode)},
		Quick:    "3 bisection steps of the goodput search instead of 6",
		run:      runDistServe,
		judge:    judgeDistServe,
	},
}

// against is the verdict of a figure against a published value: within
// its CI (or half a unit of its stated precision) "reproduced"; else, by
// how much of the published effect it reaches (for a speedup, of the
// gain above 1x), "smaller" from half of it on, "larger" beyond it, and
// "not reproduced" below half or with the other sign.
func against(f Figure, paper float64) string {
	tol := ciOf(f)
	if tol == 0 {
		tol = f.Tolerance() / 2
	}
	if math.Abs(f.Value-paper) <= tol {
		return "reproduced"
	}
	ours, theirs := f.Value, paper
	if f.Unit == "x" {
		ours, theirs = f.Value-1, paper-1
	}
	share := ours / theirs
	switch {
	case share > 1:
		return "larger"
	case share >= 0.5:
		return "smaller"
	default:
		return "not reproduced"
	}
}

func ciOf(f Figure) float64 {
	if f.CI95 == nil {
		return 0
	}
	return *f.CI95
}

func signed(f Figure) string {
	s := f.Text()
	if f.Value > 0 && !strings.HasPrefix(s, "+") {
		s = "+" + s
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// memo keeps the figures of runs shared by several rows (r1 to r3 share
// paper/e2e's, r6 and r7 paper/heuristic-vs-optimal's) within one
// Runner.
type memo struct {
	figs []Figure
	err  error
	row  string // the row that ran them
}

// runE2E runs paper/e2e over DataPathSeeds seeds at 0% and 80%
// background load and returns each path's mean and median latency at 0%
// and the gap at both loads, each a mean over the seeds with its CI.
func runE2E(r *Runner, _ bool) ([]Figure, error) {
	if r.e2e != nil {
		r.shared = r.e2e.row
		return r.e2e.figs, r.e2e.err
	}
	figs, err := e2eFigs(r)
	r.e2e = &memo{figs, err, r.ran}
	return figs, err
}

func e2eFigs(r *Runner) ([]Figure, error) {
	var figs []Figure
	for _, load := range []int{0, 80} {
		var gaps []float64
		p50 := map[string][]float64{}
		mean := map[string][]float64{}
		for seed := 1; seed <= DataPathSeeds; seed++ {
			out, err := r.scenario("paper/e2e", fmt.Sprintf("datapath.host.background_load=%d%%", load), fmt.Sprintf("seed=%d", seed))
			if err != nil {
				return nil, err
			}
			if out.Summary.Gap == nil {
				return nil, fmt.Errorf("paper/e2e at %d%% load, seed %d: no gap (%s)", load, seed, out.Summary.GapUndefined)
			}
			gaps = append(gaps, *out.Summary.Gap)
			for _, p := range out.Summary.Paths {
				p50[p.Name] = append(p50[p.Name], float64(p.Latency.P50))
				mean[p.Name] = append(mean[p.Name], float64(p.Latency.Mean))
			}
		}
		m, h := stats.MeanCI(gaps, 0.95)
		figs = append(figs, Figure{Key: fmt.Sprintf("gap_%d", load), Label: fmt.Sprintf("gap at %d%% load", load), Value: m, CI95: ci(h), Unit: "%", Decimals: 1, Seeds: len(gaps)})
		if load != 0 {
			continue
		}
		for _, name := range datapath.AllPaths {
			m, h := stats.MeanCI(p50[name], 0.95)
			figs = append(figs, Figure{Key: "p50_" + name, Label: name + " p50", Value: m, CI95: ci(h), Unit: " us", Decimals: 0, Seeds: len(p50[name])})
			m, h = stats.MeanCI(mean[name], 0.95)
			figs = append(figs, Figure{Key: "mean_" + name, Label: name + " mean", Value: m, CI95: ci(h), Unit: " us", Decimals: 0, Seeds: len(mean[name])})
		}
	}
	return figs, nil
}

// paperOrder is the paper's order of the paths, fastest first.
var paperOrder = []string{datapath.PathGPUDirect, datapath.PathConspirator, datapath.PathHostRDMA, datapath.PathTCP}

// orderText is the paths by the figure of that prefix, fastest first:
// "gpudirect 734 < conspirator 764 < ...".
func orderText(fs map[string]Figure, prefix string) string {
	paths := append([]string{}, paperOrder...)
	sort.SliceStable(paths, func(i, j int) bool { return fs[prefix+paths[i]].Value < fs[prefix+paths[j]].Value })
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = p + " " + fmtNum(fs[prefix+p].Value, 0)
	}
	return strings.Join(parts, " < ") + " us"
}

func judgeOrder(fs map[string]Figure) (string, string, string) {
	ordered := func(prefix string) bool {
		for i := 1; i < len(paperOrder); i++ {
			if fs[prefix+paperOrder[i-1]].Value >= fs[prefix+paperOrder[i]].Value {
				return false
			}
		}
		return true
	}
	ours := "p50 " + orderText(fs, "p50_") + "; mean " + orderText(fs, "mean_")
	switch {
	case ordered("p50_") && ordered("mean_"):
		return ours, "holds", "on the median and the mean, 0% load, 10 seeds"
	case ordered("p50_"):
		return ours, "holds on p50", "on the mean gpudirect falls behind conspirator: its clients pick a GPU blind to load"
	default:
		return ours, "differs", "the medians are not in the paper's order"
	}
}

// runCost reads the cost table from the paper's inputs (paper/cost) and
// the simulated same-work comparison (paper/e2e, one seed).
func runCost(r *Runner, _ bool) ([]Figure, error) {
	var figs []Figure
	for _, c := range []struct{ name, prefix string }{{"paper/cost", ""}, {"paper/e2e", "same_work_"}} {
		out, err := r.scenario(c.name)
		if err != nil {
			return nil, err
		}
		if len(out.Summary.Cost) < 2 {
			return nil, fmt.Errorf("%s: no cost table (%d rows)", c.name, len(out.Summary.Cost))
		}
		nic := out.Summary.Cost[len(out.Summary.Cost)-1]
		figs = append(figs,
			Figure{Key: c.prefix + "cost_gain", Label: c.prefix + "cost-effectiveness gain", Value: nic.CostGainPct, Unit: "%", Decimals: 1, Seeds: 1},
			Figure{Key: c.prefix + "power_gain", Label: c.prefix + "power-efficiency gain", Value: nic.PowerGainPct, Unit: "%", Decimals: 1, Seeds: 1})
	}
	for i := range figs {
		figs[i].Label = strings.ReplaceAll(figs[i].Label, "same_work_", "same work: ")
	}
	return figs, nil
}

func clusterSeeds(quick bool) []string {
	if quick {
		return []string{fmt.Sprintf("cluster.seeds=%d", quickClusterSeeds)}
	}
	return nil
}

// runGPUHours is paper/gpu-hours: the conspirator policy's GPU-hours
// against naive-share and against the best established baseline.
func runGPUHours(r *Runner, quick bool) ([]Figure, error) {
	out, err := r.scenario("paper/gpu-hours", clusterSeeds(quick)...)
	if err != nil {
		return nil, err
	}
	p, err := policy(out, "conspirator")
	if err != nil {
		return nil, err
	}
	if p.VsBaseline == nil || p.VsBest == nil {
		return nil, fmt.Errorf("paper/gpu-hours: the conspirator policy has no saving against the baseline or the best baseline")
	}
	return []Figure{
		{Key: "vs_naive_share", Label: "vs " + p.VsBaseline.Baseline, Value: p.VsBaseline.Pct, CI95: p.VsBaseline.CI95, Unit: "%", Decimals: 1, Seeds: p.Seeds},
		{Key: "vs_best_baseline", Label: "vs " + p.VsBest.Baseline, Value: p.VsBest.Pct, CI95: p.VsBest.CI95, Unit: "%", Decimals: 1, Seeds: p.Seeds},
	}, nil
}

// runOptimal is paper/heuristic-vs-optimal: GPU-hours against the exact
// per-snapshot optimum, and the decision times (wall clock).
func runOptimal(r *Runner, _ bool) ([]Figure, error) {
	if r.optimal != nil {
		r.shared = r.optimal.row
		return r.optimal.figs, r.optimal.err
	}
	figs, err := optimalFigs(r)
	r.optimal = &memo{figs, err, r.ran}
	return figs, err
}

func optimalFigs(r *Runner) ([]Figure, error) {
	out, err := r.scenario("paper/heuristic-vs-optimal")
	if err != nil {
		return nil, err
	}
	h, err := policy(out, "conspirator")
	if err != nil {
		return nil, err
	}
	o, err := policy(out, "optimal")
	if err != nil {
		return nil, err
	}
	if h.OptimalityGap == nil {
		return nil, fmt.Errorf("paper/heuristic-vs-optimal: no gap to the optimum")
	}
	var hus, ous float64
	for _, t := range out.Timing.Policies {
		switch t.Name {
		case "conspirator":
			hus = t.DecisionUS.Mean
		case "optimal":
			ous = t.DecisionUS.Mean
		}
	}
	if hus <= 0 || ous <= 0 {
		return nil, fmt.Errorf("paper/heuristic-vs-optimal: no decision times recorded")
	}
	return []Figure{
		{Key: "gap_to_optimal", Label: "GPU-hours against the optimum", Value: 100 * *h.OptimalityGap, Unit: "%", Decimals: 2, Seeds: h.Seeds},
		{Key: "heuristic_gpu_hours", Label: "heuristic", Value: h.GPUHours, Unit: "", Decimals: 1, Seeds: h.Seeds},
		{Key: "optimal_gpu_hours", Label: "optimum", Value: o.GPUHours, Unit: "", Decimals: 1, Seeds: o.Seeds},
		{Key: "heuristic_us", Label: "heuristic decision", Value: hus, Unit: " us", Decimals: 1, Seeds: 1, WallClock: true},
		{Key: "optimal_us", Label: "optimal decision", Value: ous, Unit: " us", Decimals: 0, Seeds: 1, WallClock: true},
		{Key: "speedup", Label: "decision time ratio", Value: ous / hus, Unit: "x", Decimals: 0, Seeds: 1, WallClock: true},
	}, nil
}

// runFGD is paper/fgd-allocation against the authors' means.
func runFGD(r *Runner, quick bool) ([]Figure, error) {
	var sets []string
	if quick {
		sets = []string{fmt.Sprintf("allocation.seeds=%d", quickClusterSeeds)}
	}
	out, err := r.scenario("paper/fgd-allocation", sets...)
	if err != nil {
		return nil, err
	}
	var figs []Figure
	maxDiff, same := 0.0, 1.0
	prev := map[int]float64{}
	for _, a := range AuthorsFGD {
		found := false
		for _, p := range out.Summary.Allocation {
			if p.Name != a.Policy {
				continue
			}
			found = true
			for _, m := range p.At {
				want := a.At100
				if m.ArrivedPct == 130 {
					want = a.At130
				} else if m.ArrivedPct != 100 {
					continue
				}
				figs = append(figs, Figure{Key: fmt.Sprintf("%s_%d", a.Policy, m.ArrivedPct), Label: fmt.Sprintf("%s at %d%% arrived", a.Policy, m.ArrivedPct),
					Value: m.Mean, CI95: m.CI95, Unit: "%", Decimals: 2, Seeds: m.Seeds, Published: ci(want)})
				maxDiff = math.Max(maxDiff, math.Abs(m.Mean-want))
				if m.Mean <= prev[m.ArrivedPct] {
					same = 0
				}
				prev[m.ArrivedPct] = m.Mean
			}
		}
		if !found {
			return nil, fmt.Errorf("paper/fgd-allocation: no policy %s", a.Policy)
		}
	}
	// This project's heuristic, which the authors did not run.
	for _, p := range out.Summary.Allocation {
		if p.Name != "conspirator" {
			continue
		}
		for _, m := range p.At {
			if m.ArrivedPct == 100 || m.ArrivedPct == 130 {
				figs = append(figs, Figure{Key: fmt.Sprintf("conspirator_%d", m.ArrivedPct), Label: fmt.Sprintf("conspirator (this project's heuristic) at %d%% arrived", m.ArrivedPct),
					Value: m.Mean, CI95: m.CI95, Unit: "%", Decimals: 2, Seeds: m.Seeds})
			}
		}
	}
	figs = append(figs,
		Figure{Key: "max_abs_diff", Label: "largest difference from the authors", Value: maxDiff, Unit: " pts", Decimals: 2, Seeds: 1},
		Figure{Key: "same_order", Label: "same order as the authors (1 yes)", Value: same, Decimals: 0, Seeds: 1})
	return figs, nil
}

// speedup turns a training speedup into a figure.
func speedup(key, label string, s *training.Speedup, seeds int) (Figure, error) {
	if s == nil {
		return Figure{}, fmt.Errorf("no speedup for %s", label)
	}
	return Figure{Key: key, Label: label, Value: s.X, CI95: s.CI95, Unit: "x", Decimals: 3, Seeds: seeds}, nil
}

// trainingPolicy returns the training policy of that name.
func trainingPolicy(out *sim.Output, name string) (*training.PolicyResult, error) {
	if out.Summary.Training == nil {
		return nil, fmt.Errorf("the run has no training result")
	}
	for i := range out.Summary.Training.Policies {
		if out.Summary.Training.Policies[i].Name == name {
			return &out.Summary.Training.Policies[i], nil
		}
	}
	return nil, fmt.Errorf("the run has no training policy %q", name)
}

func runESA(r *Runner, _ bool) ([]Figure, error) {
	out, err := r.scenario("paper/ina", esaSets...)
	if err != nil {
		return nil, err
	}
	var figs []Figure
	for _, p := range []string{"esa", "static"} {
		pr, err := trainingPolicy(out, p)
		if err != nil {
			return nil, err
		}
		f, err := speedup(p+"_over_atp", p+" over atp", pr.Speedup, pr.Seeds)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	for _, p := range []string{"atp", "esa"} {
		pr, err := trainingPolicy(out, p)
		if err != nil {
			return nil, err
		}
		f, err := speedup(p+"_over_none", p+" over none (the host all-reduce)", pr.VsNone, pr.Seeds)
		if err != nil {
			return nil, err
		}
		f.Decimals = 2
		figs = append(figs, f)
	}
	return figs, nil
}

func runATP(r *Runner, _ bool) ([]Figure, error) {
	var figs []Figure
	for _, k := range []int{2, 4, 8} {
		out, err := r.scenario("paper/ina", append(append([]string{}, atpPSSets...), fmt.Sprintf("training.jobs.synthetic.gpus=[%d]", k))...)
		if err != nil {
			return nil, err
		}
		pr, err := trainingPolicy(out, "atp")
		if err != nil {
			return nil, err
		}
		f, err := speedup(fmt.Sprintf("workers_%d", k), fmt.Sprintf("%d workers", k), pr.Speedup, pr.Seeds)
		if err != nil {
			return nil, err
		}
		f.Decimals = 2
		figs = append(figs, f)
	}
	return figs, nil
}

func runSwitchML(r *Runner, _ bool) ([]Figure, error) {
	var figs []Figure
	for _, m := range []string{"resnet50", "vgg16", "bert-large"} {
		out, err := r.scenario("paper/ina", append(append([]string{}, switchMLSets...), "training.jobs.synthetic.models=["+m+"]")...)
		if err != nil {
			return nil, err
		}
		pr, err := trainingPolicy(out, "static")
		if err != nil {
			return nil, err
		}
		f, err := speedup(m, m, pr.Speedup, pr.Seeds)
		if err != nil {
			return nil, err
		}
		f.Decimals = 2
		figs = append(figs, f)
	}
	return figs, nil
}

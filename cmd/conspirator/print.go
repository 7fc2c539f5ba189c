package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
)

// printSummary writes the key metrics of a run as aligned tables.
func printSummary(w io.Writer, s *sim.Summary, timing *sim.Timing) {
	fmt.Fprintf(w, "scenario %s, %s, %s\n", s.Scenario, reports.SeedsText(s.Seed, seedCount(s)), reports.Build(s.Version, s.Commit))
	if len(s.Paths) > 0 {
		if dp, ok := s.Inputs["datapath"].(map[string]any); ok {
			if h, ok := dp["host"].(map[string]any); ok {
				fmt.Fprintf(w, "background CPU load %v\n", h["background_load"])
			}
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tmean us\tp50 us\tp99 us\t±95% us\treq/s\thost CPU us/req\tSoC util\tGPU util\tbusiest\tdropped\t")
		for _, p := range s.Paths {
			flag := ""
			if p.Unstable {
				flag = "  UNSTABLE: " + p.UnstableReason
			}
			busiest := map[string]float64{"gpu": p.GPUUtilization, "soc": p.SoCUtilization, "dma": p.DMAUtilization, "port": p.PortUtilization}[p.Bottleneck]
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f\t%.3f\t%.2f\t%s %.0f%%\t%d\t%s\n",
				p.Name, p.Latency.Mean, p.Latency.P50, p.Latency.P99, p.Latency.CI95Mean,
				p.ThroughputRPS, p.HostCPUUsPerRequest, p.SoCUtilization, p.GPUUtilization, p.Bottleneck, 100*busiest, p.Dropped, flag)
		}
		tw.Flush()
		if s.Gap != nil {
			fmt.Fprintf(w, "\nconspirator vs host-rdma: %.1f%% lower mean end-to-end time (paper: 15%%)\n", *s.Gap)
		} else if s.GapUndefined != "" {
			fmt.Fprintf(w, "\nconspirator vs host-rdma: not defined: %s\n", s.GapUndefined)
		}
		for _, o := range s.Overrides {
			fmt.Fprintf(w, "override: %s = %s (part %s has %s)\n", o.Key, o.Value, o.Part, o.PartValue)
		}
	}
	if len(s.Allocation) > 0 {
		fmt.Fprint(w, "\nGPU allocated, % of GPU capacity (mean ± 95% CI over seeds), at each share of the capacity arrived")
		if c := reports.FewSeedsCaveat(seedCount(s)); c != "" {
			fmt.Fprint(w, " "+c)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "policy\t")
		for _, a := range s.Allocation[0].At {
			fmt.Fprintf(tw, "%d%%\t", a.ArrivedPct)
		}
		fmt.Fprintln(tw, "no server (pods)\tseeds\t")
		for _, q := range s.Allocation {
			fmt.Fprintf(tw, "%s\t", q.Name)
			seeds := 0
			for _, a := range q.At {
				ci := ""
				if a.CI95 != nil {
					ci = fmt.Sprintf(" ± %.2f", *a.CI95)
				}
				fmt.Fprintf(tw, "%.2f%s\t", a.Mean, ci)
				seeds = a.Seeds
			}
			fmt.Fprintf(tw, "%.0f\t%d\t\n", q.FailedPods, seeds)
		}
		tw.Flush()
	}
	if len(s.Policies) > 0 {
		dec, large := map[string]float64{}, map[string]string{}
		if timing != nil {
			for _, t := range timing.Policies {
				dec[t.Name] = t.DecisionUS.Mean
				if t.LargeCalls > 0 {
					large[t.Name] = fmt.Sprintf("%.1f (%d)", t.LargeUS.Mean, t.LargeCalls)
				}
			}
		}
		baseline := ""
		for _, p := range s.Policies {
			if p.VsBaseline != nil {
				baseline = p.VsBaseline.Baseline
			}
		}
		fmt.Fprintln(w)
		if n := s.Policies[0].Seeds; n > 1 {
			fmt.Fprintf(w, "means over %d seeds (%d .. %d; each its own node order", n, s.Seed, s.Seed+uint64(n)-1)
			if len(s.Clusters) > 1 && sampled(s) {
				fmt.Fprint(w, " and servers")
			}
			if c, ok := s.Inputs["cluster"].(map[string]any); ok && fmt.Sprint(c["seed_varies"]) == cluster.SeedVariesWorkload {
				fmt.Fprint(w, ", and its own bootstrap of the jobs), ± the 95% bootstrap interval (t x the SD over seeds: the trace's sampling error); per seed: seeds.csv")
			} else {
				fmt.Fprint(w, "), ± the 95% CI; per seed: seeds.csv")
			}
			if c := reports.FewSeedsCaveat(n); c != "" {
				fmt.Fprint(w, " "+c)
			}
			fmt.Fprintln(w)
		}
		if len(s.Clusters) > 0 {
			fmt.Fprintf(w, "cluster: %s\n", clusterLine(s.Clusters))
		}
		vsHead := "vs baseline"
		if baseline != "" {
			vsHead = "vs " + baseline
		}
		// Two tables of at most about 100 columns, not one of 190: what
		// each policy achieved, then how it used the cluster and its time.
		outcome := [][]string{{"policy", "GPU-hours", vsHead, "JCT mean s", "JCT p99 s", "queue mean s", "queued", "gap to optimal"}}
		usage := [][]string{{"policy", "capacity used", "peak GPUs", "migrations", "unscheduled", "decision us*", "≥10 jobs us (calls)*"}}
		for _, p := range s.Policies {
			hours, vs, gap := fmt.Sprintf("%.1f", p.GPUHours), "", ""
			if p.GPUHoursCI95 != nil {
				hours += fmt.Sprintf(" ± %.1f", *p.GPUHoursCI95)
			}
			if v := p.VsBaseline; v != nil {
				vs = fmt.Sprintf("%+.1f%%", v.Pct)
				if v.CI95 != nil {
					vs += fmt.Sprintf(" ± %.1f", *v.CI95)
				}
			} else if p.Name == baseline {
				vs = "(baseline)"
			}
			if p.OptimalityGap != nil {
				gap = fmt.Sprintf("%+.2f%%", 100**p.OptimalityGap)
				if math.Abs(100**p.OptimalityGap) < 0.005 {
					gap = "0.00%" // not "-0.00%": a rounding's sign says nothing
				}
			}
			if p.Horizon != nil {
				// An offline bound has GPU-hours and nothing a replay measures.
				outcome = append(outcome, []string{p.Name, hours + " (bound)", vs, "-", "-", "-", "-", gap})
				usage = append(usage, []string{p.Name, "-", "-", "-", "-", fmt.Sprintf("%.1f", dec[p.Name]), "-"})
				continue
			}
			outcome = append(outcome, []string{p.Name, hours, vs, fmt.Sprintf("%.0f", p.JCT.Mean), fmt.Sprintf("%.0f", p.JCT.P99),
				fmt.Sprintf("%.1f", p.Queue.Mean), fmt.Sprintf("%.1f%%", p.QueuedPct), gap})
			usage = append(usage, []string{p.Name, fmt.Sprintf("%.1f%%", 100*p.CapacityUsed), fmt.Sprintf("%.1f", p.PeakActive),
				count(p.Migrations), count(p.Unscheduled), fmt.Sprintf("%.1f", dec[p.Name]), large[p.Name]})
		}
		printTable(w, outcome)
		printBest(w, s.Policies)
		fmt.Fprintln(w)
		printTable(w, usage)
		fmt.Fprintln(w, "* wall-clock mean per policy call on this machine (timing.json); not part of the deterministic summary")
		samples := make([]map[string]int, len(s.Clusters))
		for i, c := range s.Clusters {
			samples[i] = c.ByModel
		}
		for _, p := range s.Policies {
			ci := -1.0
			if p.GPUHoursCI95 != nil {
				ci = *p.GPUHoursCI95
			}
			use := map[string]reports.TypeUse{}
			for t, u := range p.ByType {
				use[t] = reports.TypeUse(u)
			}
			if note := reports.SteadyNote(p.Name, p.GPUHours, p.Seeds, ci, use, samples); note != "" {
				fmt.Fprintln(w, note)
			}
		}
		printKinds(w, s.Policies)
		printTail(w, s.Policies, vsHead)
		printSpanned(w, s.Policies)
		printPods(w, s.Policies)
		printHorizon(w, s.Policies)
		for _, p := range s.Policies {
			if st := p.Solves; st != nil {
				line := fmt.Sprintf("%s: %d %s, %d proven optimal", p.Name, st.Total, map[bool]string{true: "solve", false: "solves"}[st.Total == 1], st.Proven)
				if st.Unproven > 0 {
					line = fmt.Sprintf("WARNING: %s: %d of %d solves were cut by the time limit (worst gap %.2f%%): its GPU-hours are not proven optimal", p.Name, st.Unproven, st.Total, 100*st.WorstGap)
				}
				fmt.Fprintln(w, line)
			}
		}
		for _, l := range cluster.LLMServiceLines(&cluster.Result{LLMServices: s.LLMServices, Policies: s.Policies}) {
			fmt.Fprintln(w, l)
		}
		for _, r := range s.InputRows {
			fmt.Fprintln(w, r.Summary()) // rows left out are never silent; all reasons in summary.json
		}
	}
	printTraining(w, s)
	printLLM(w, s)
	if len(s.Cost) > 0 {
		fmt.Fprintln(w)
		switch s.CostSource {
		case "same-work":
			fmt.Fprintln(w, "cost and power of the control plane, same work on both processors (throughput = cores x speed per core, host = 1000);")
			fmt.Fprintln(w, "the paper's own inputs (SmartNIC throughput 270) give +17% and +44%: conspirator run paper/cost")
		case "scenario":
			fmt.Fprintln(w, "cost and power of the control plane, from the scenario's inputs:")
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "processor\tprice\tpower\tthroughput\tcost-effectiveness (per $, host = 1)\tpower efficiency (throughput per W)\t")
		for _, c := range s.Cost {
			fmt.Fprintf(tw, "%s\t$%.0f\t%.0f W\t%.0f\t%.2f (%+.0f%%)\t%.2f (%+.0f%%)\t\n",
				c.Name, c.PriceUSD, c.PowerW, c.Throughput, c.CostEffectiveness, c.CostGainPct, c.PowerEfficiency, c.PowerGainPct)
		}
		tw.Flush()
	}
}

// seedCount is how many seeds the summary's means are over: the most of
// its cluster, training and allocation sections (1 for a data-path run).
func seedCount(s *sim.Summary) int {
	n := 1
	if len(s.Policies) > 0 {
		n = max(n, s.Policies[0].Seeds)
	}
	if t := s.Training; t != nil && len(t.Policies) > 0 {
		n = max(n, t.Policies[0].Seeds)
	}
	if l := s.LLM; l != nil {
		n = max(n, l.Seeds)
	}
	for _, a := range s.Allocation {
		for _, at := range a.At {
			n = max(n, at.Seeds)
		}
	}
	return n
}

// ci is a CI half-width that may be absent (one seed): NaN then.
func ci(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// printTable prints rows right-aligned under their header row, leaving
// out columns that are empty in every row below the header (a gap to the
// optimum where no exact policy ran).
func printTable(w io.Writer, rows [][]string) {
	var keep []int
	for c := range rows[0] {
		for _, r := range rows[1:] {
			if r[c] != "" {
				keep = append(keep, c)
				break
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		for _, c := range keep {
			fmt.Fprint(tw, r[c], "\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// count prints a per-run count: an integer for one seed, a mean with one
// decimal over several.
func count(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// sampled reports whether the seeds ran on different clusters (node
// fraction below 1).
func sampled(s *sim.Summary) bool {
	for _, c := range s.Clusters[1:] {
		if !maps.Equal(c.ByModel, s.Clusters[0].ByModel) {
			return true
		}
	}
	return false
}

// clusterLine describes the clusters of the seeds: "64 GPUs (a100-40gb 40,
// t4 8, ...)" for one, the range of GPU counts over several.
func clusterLine(cs []cluster.SeedCluster) string {
	lo, hi := cs[0].GPUs, cs[0].GPUs
	for _, c := range cs {
		lo, hi = min(lo, c.GPUs), max(hi, c.GPUs)
	}
	models := slices.Sorted(maps.Keys(cs[0].ByModel))
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = fmt.Sprintf("%s %d", m, cs[0].ByModel[m])
	}
	n := fmt.Sprintf("%d GPUs", lo)
	if hi != lo {
		n = fmt.Sprintf("%d to %d GPUs (first seed: %s)", lo, hi, strings.Join(parts, ", "))
		return n
	}
	return n + " (" + strings.Join(parts, ", ") + ")"
}

// printPods says what the CPU-only pods (cluster.cpu_pods) did under each
// policy: how many waited for a server, and any that never found one.
func printPods(w io.Writer, ps []cluster.PolicyResult) {
	if len(ps) == 0 || ps[0].CPUPods == nil {
		return
	}
	var waited []string
	for _, p := range ps {
		if p.CPUPods == nil {
			continue
		}
		waited = append(waited, fmt.Sprintf("%s %.1f%%", p.Name, p.CPUPods.QueuedPct))
	}
	fmt.Fprintf(w, "cpu-only pods: %.0f per run, placed by the simulator (least allocated server); waited: %s\n", ps[0].CPUPods.Pods, strings.Join(waited, ", "))
	for _, p := range ps {
		if p.CPUPods != nil && p.CPUPods.Unplaced > 0 {
			fmt.Fprintf(w, "WARNING: %s: %.1f cpu-only pods never found a server\n", p.Name, p.CPUPods.Unplaced)
		}
	}
}

// printHorizon says what the offline bound is, what it holds for, and each
// policy's GPU-hours above it; a policy whose runs it does not cover is
// named with the reason, never given a gap as if covered.
func printHorizon(w io.Writer, ps []cluster.PolicyResult) {
	for _, h := range ps {
		if h.Horizon == nil {
			continue
		}
		holds := reports.HorizonHolds(h.Horizon.Starts)
		fmt.Fprintf(w, "%s: offline lower bound %.2f GPU-hours (starts=%s: holds for %s)\n", h.Name, h.GPUHours, h.Horizon.Starts, holds)
		if h.Horizon.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", h.Horizon.Note)
		}
		var above []string
		for _, p := range ps {
			g := p.VsHorizon
			if g == nil || g.Bound != h.Name {
				continue
			}
			if g.Covered {
				above = append(above, fmt.Sprintf("%s %+.2f%%", p.Name, g.Pct))
			} else {
				above = append(above, fmt.Sprintf("%s not covered (%s)", p.Name, g.Why))
			}
		}
		if len(above) > 0 {
			fmt.Fprintf(w, "  above it: %s\n", strings.Join(above, "; "))
		}
	}
}

// printKinds prints each policy's jobs by kind (services hold their time,
// batch jobs their work): counts, held GPU-hours and times.
func printKinds(w io.Writer, ps []cluster.PolicyResult) {
	rows := [][]string{{"policy", "kind", "jobs", "completed", "censored", "unscheduled", "held GPU-h", "JCT mean s", "queue mean s"}}
	kinds := map[string]bool{}
	for _, p := range ps {
		for _, k := range p.ByKind {
			kinds[k.Kind] = true
			rows = append(rows, []string{p.Name, k.Kind, count(k.Jobs), count(k.Completed), count(k.Censored), count(k.Unscheduled),
				fmt.Sprintf("%.1f", k.HeldGPUHours), fmt.Sprintf("%.0f", k.JCT.Mean), fmt.Sprintf("%.1f", k.Queue.Mean)})
		}
	}
	if len(rows) == 1 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "by kind (cluster.job_kind): a service holds its placement for its trace duration, a batch job holds its work; held GPU-h: the GPU time their shares held")
	printTable(w, rows)
	for _, p := range ps {
		for _, k := range p.ByKind {
			if k.Unscheduled > 0 && k.FirstUnscheduled != "" {
				fmt.Fprintf(w, "%s: %s %s job(s) never ran, e.g. %s: no GPU of the cluster has the room (a service may need more than a whole GPU of every type it may use)\n", p.Name, count(k.Unscheduled), k.Kind, k.FirstUnscheduled)
				break
			}
		}
	}
}

// printTail prints how heavy the tail is: the share of the held GPU time
// the ten largest jobs held, the jobs censored at the trace's end, and the
// saving without the longest jobs (cluster.leave_out_longest).
func printTail(w io.Writer, ps []cluster.PolicyResult, vsHead string) {
	head := []string{"policy", "top-10 jobs' share", "censored"}
	var entries []string
	for _, p := range ps {
		if len(p.LeftOut) > len(entries) {
			entries = nil
			for _, lo := range p.LeftOut {
				entries = append(entries, lo.Entry)
			}
		}
	}
	for k, e := range entries {
		h := fmt.Sprintf("%s w/o %s longest", vsHead, e)
		if n := ps[0].LeftOut[k].Jobs; strings.HasSuffix(e, "%") {
			h += fmt.Sprintf(" (%d jobs)", n)
		}
		head = append(head, h)
	}
	rows := [][]string{head}
	for _, p := range ps {
		if p.Horizon != nil {
			continue
		}
		r := []string{p.Name, fmt.Sprintf("%.1f%%", 100*p.Top10Share), count(p.Censored)}
		for k := range entries {
			cell := ""
			if k < len(p.LeftOut) {
				if v := p.LeftOut[k].VsBaseline; v != nil {
					cell = fmt.Sprintf("%+.1f%%", v.Pct)
					if v.CI95 != nil {
						cell += fmt.Sprintf(" ± %.1f", *v.CI95)
					}
				} else if p.LeftOut[k].VsBaseline == nil {
					cell = "(baseline)"
				}
			}
			r = append(r, cell)
		}
		rows = append(rows, r)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "the heavy tail: the share of the GPU time held that the ten largest jobs held; jobs still running at the trace's end (censored: each holds its recorded time, no JCT); the saving without the longest jobs (cluster.leave_out_longest)")
	printTable(w, rows)
}

// printTraining prints the training section: mean JCT per aggregator
// memory policy with its CI, the speedup over the baseline seed by seed,
// the iteration split and what the replay cost.
func printTraining(w io.Writer, s *sim.Summary) {
	t := s.Training
	if t == nil || len(t.Policies) == 0 {
		return
	}
	fmt.Fprintf(w, "\ntraining: %d jobs; aggregating device %s, a pool of %d slots, a window of %d per job, %d held in flight while synchronising; fallback %s; hash %s; which spanning jobs aggregate: %s (ina.use)\n", t.Jobs, t.Device, t.Slots, t.Window, t.InFlight, t.Fallback, t.Hash, t.Use)
	if t.Placement != "" {
		fmt.Fprintf(w, "  placement %s: each server's %s sums its own GPUs' gradients first, then the servers' sums cross the device under the policy; none runs the plain host ring (no SmartNIC summation)\n", t.Placement, t.ServerNIC)
	}
	for _, m := range t.Models {
		kind := "measured (vendor)"
		if m.Derived {
			kind = "DERIVED (FLOP ratio or assumed share of peak, not measured)"
		}
		fmt.Fprintf(w, "  model %s: %.1f ms compute per iteration (%s), %.0f MB gradient: %s\n", m.Name, 1e3*m.ComputeS, m.Precision, m.GradientBytes/1e6, kind)
	}
	if n := t.Policies[0].Seeds; n > 1 {
		fmt.Fprintf(w, "means over %d seeds (%d .. %d; each its own jobs and hashing), ± the 95%% CI; speedup: the baseline's mean JCT over the policy's, seed by seed", n, s.Seed, s.Seed+uint64(n)-1)
		if c := reports.FewSeedsCaveat(n); c != "" {
			fmt.Fprint(w, " "+c)
		}
		fmt.Fprintln(w)
	}
	vsHead := "speedup"
	if t.Baseline != "" {
		vsHead = "vs " + t.Baseline
	}
	rows := [][]string{{"policy", "JCT mean s", "JCT p99 s", vsHead, "vs none", "compute ms/iter", "comm ms/iter", "wait ms/iter", "slots held", "unscheduled", "events", "fast-forwarded"}}
	for _, p := range t.Policies {
		jct := fmt.Sprintf("%.1f", p.JCT.Mean)
		if p.JCTCI != nil {
			jct += fmt.Sprintf(" ± %.1f", *p.JCTCI)
		}
		vs := ""
		switch {
		case p.Speedup != nil:
			vs = fmt.Sprintf("%.3fx", p.Speedup.X)
			if p.Speedup.CI95 != nil {
				vs += fmt.Sprintf(" ± %.3f", *p.Speedup.CI95)
			}
		case p.Name == t.Baseline:
			vs = "(baseline)"
		}
		vsNone := ""
		if p.VsNone != nil {
			vsNone = fmt.Sprintf("%.3fx", p.VsNone.X)
			if p.VsNone.CI95 != nil {
				vsNone += fmt.Sprintf(" ± %.3f", *p.VsNone.CI95)
			}
		}
		ff := "-"
		if all := p.SteppedIterations + p.FastForwarded; all > 0 {
			ff = fmt.Sprintf("%.0f%%", 100*float64(p.FastForwarded)/float64(all))
		}
		rows = append(rows, []string{p.Name, jct, fmt.Sprintf("%.1f", p.JCT.P99), vs, vsNone,
			fmt.Sprintf("%.1f", 1e3*p.Iteration.ComputeS), fmt.Sprintf("%.1f", 1e3*p.Iteration.CommS), fmt.Sprintf("%.1f", 1e3*p.Iteration.WaitS),
			fmt.Sprintf("%.0f", p.MeanSlots), count(p.Unscheduled), strconv.FormatInt(p.Events, 10), ff})
	}
	printTable(w, rows)
	var sp []reports.Speedup
	for _, p := range t.Policies {
		if p.Speedup != nil {
			sp = append(sp, reports.Speedup{Name: p.Name, X: p.Speedup.X, CI: ci(p.Speedup.CI95)})
		}
	}
	if h := reports.TrainingHeadline(t.Baseline, sp); h != "" {
		if c := reports.FewSeedsCaveat(t.Policies[0].Seeds); c != "" {
			h += " " + c
		}
		fmt.Fprintln(w, h)
	}
	var names []string
	for _, p := range t.Policies {
		names = append(names, p.Name)
	}
	if n := ina.CRCUnusedSlots(t.Hash, t.Slots, names); n > 0 {
		fmt.Fprintf(w, "WARNING: hash crc on a pool of %d slots: ATP's hash is 16 bits and names only %d of them, so %d are never used by atp and esa; hash uniform uses them all\n", t.Slots, t.Slots-n, n)
	}
	for _, p := range t.Policies {
		if p.HostRingJobs > 0 {
			fmt.Fprintf(w, "%s: %s spanning jobs ran their host all-reduce, in-network aggregation being slower for them alone (ina.use when-faster; always aggregates every one)\n", p.Name, count(p.HostRingJobs))
		}
		if p.NoAggregatorJobs > 0 && !reports.NoJobAggregated(p.Name, reports.Num(p.MeanSlots)) {
			fmt.Fprintf(w, "%s: %s spanning jobs held no aggregator in any phase (%s)\n", p.Name, count(p.NoAggregatorJobs), reports.NoAggregatorWhy(p.Name))
		}
		if reports.NoJobAggregated(p.Name, reports.Num(p.MeanSlots)) {
			fmt.Fprintf(w, "WARNING: %s aggregated no job in the network (no aggregator slot held): every spanning job ran its host all-reduce (by ina.use when-faster, or for want of a partition or a slot), so its row is the host ring's and its comparison with another pool policy says nothing of the pool\n", p.Name)
		}
		if p.GrantsUnsettled > 0 {
			fmt.Fprintf(w, "WARNING: %s: %d grant calls ended before the jobs' holdings reached their fixed point (alternating by a slot after %d passes); those grants are the last pass's\n", p.Name, p.GrantsUnsettled, ina.SettlePasses)
		}
		if p.Unscheduled > 0 {
			fmt.Fprintf(w, "WARNING: %s: %s jobs asked for more GPUs than the rack has and never ran (training_jobs.csv: start_s -1)\n", p.Name, count(p.Unscheduled))
		}
	}
}

// printSpanned prints the batch gangs that ran across servers and how much
// their communication slowed them (cluster.gang_comm).
func printSpanned(w io.Writer, ps []cluster.PolicyResult) {
	for _, p := range ps {
		if sp := p.Spanned; sp != nil {
			fmt.Fprintf(w, "%s: %s batch gangs ran across servers, at %.3f of their speed on one server (mean; cluster.gang_comm)\n", p.Name, count(sp.Jobs), sp.MeanSpeed)
		}
	}
}

// printBest prints the conspirator policies' GPU-hours against the best
// established baseline (vs_best_baseline), when there is one.
func printBest(w io.Writer, ps []cluster.PolicyResult) {
	var parts []string
	best := ""
	for _, p := range ps {
		if v := p.VsBest; v != nil {
			best = v.Baseline
			part := fmt.Sprintf("%s %+.1f%%", p.Name, v.Pct)
			if v.CI95 != nil {
				part += fmt.Sprintf(" ± %.1f", *v.CI95)
			}
			parts = append(parts, part)
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "against the best established baseline (%s, the fewest GPU-hours of the others): %s\n", best, strings.Join(parts, ", "))
	}
}

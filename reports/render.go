package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Output names inside a rendered directory.
const (
	PlotsDir      = "plots"
	ReportFile    = "report.md"
	AggregateJSON = "aggregate.json"
	AggregateCSV  = "aggregate.csv"
)

// Render re-draws every figure and the report page of dir from the result
// files stored in it: a sweep directory (it holds sweep.json) or a single
// run directory (it holds summary.json). It writes only derived files
// (plots/, report.md, aggregates), each atomically, so rendering twice gives
// the same bytes and an interrupted render loses nothing.
func Render(dir string) error { return RenderFS(atomicfs.OS, dir) }

// RenderFS is Render writing through fsys (tests inject faults there).
// Before writing it removes the temporaries that a render killed midway
// left beside its outputs, so a re-render leaves the same tree as a clean
// one.
func RenderFS(fsys atomicfs.FS, dir string) error { return RenderFSBy(fsys, dir, "conspirator report") }

// RenderFSBy is RenderFS for the command by ("conspirator run"), which the
// page's closing line names: the page says which command wrote it.
func RenderFSBy(fsys atomicfs.FS, dir, by string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("report: %s is a file; give the run or sweep directory that holds it", dir)
	}
	isSweep, isRun := exists(filepath.Join(dir, "sweep.json")), exists(filepath.Join(dir, ResultFile))
	if isSweep || isRun {
		if err := atomicfs.CleanTemps(fsys, dir, AggregateJSON, AggregateCSV, ReportFile, HTMLFile); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := atomicfs.CleanTemps(fsys, filepath.Join(dir, PlotsDir)); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if isSweep {
		return renderSweep(fsys, dir, by)
	}
	if isRun {
		return renderRun(fsys, dir, by)
	}
	return fmt.Errorf("report: %s holds neither sweep.json (a sweep) nor %s (a run)", dir, ResultFile)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func mkPlotsDir(fsys atomicfs.FS, dir string) (string, error) {
	p := filepath.Join(dir, PlotsDir)
	if err := fsys.MkdirAll(p); err != nil {
		return "", fmt.Errorf("report: cannot create plot directory %s: %w", p, err)
	}
	return p, nil
}

// runFigures draws the figures of one run; optional inputs that are absent
// simply leave their figure out. It returns the figures in report order.
func runFigures(dir string, r Result) ([]*figure, error) {
	var figs []*figure
	add := func(f *figure, err error) error {
		if err != nil {
			return err
		}
		if f != nil {
			// A figure's own note (what it found in the data) after the
			// standing caption.
			f.caption = strings.TrimSpace(figureCaptions[f.name] + " " + f.caption)
			figs = append(figs, f)
		}
		return nil
	}
	var stageCols []string
	if len(r.Paths) > 0 {
		if req, err := ReadRequests(filepath.Join(dir, RequestsFile)); err == nil {
			stageCols = req.Stages
			if len(req.Paths) > 0 {
				if err := add(latencyCDF(req)); err != nil {
					return nil, err
				}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := add(stageBreakdown(r.Paths, stageCols)); err != nil {
			return nil, err
		}
	}
	if len(r.Cost) > 0 {
		if err := add(costPower(r.Cost)); err != nil {
			return nil, err
		}
	}
	if len(r.Policies) > 0 {
		if err := add(gpuHoursBars(r.Policies)); err != nil {
			return nil, err
		}
	}
	// The span of the trace (its last arrival) clips the GPUs-in-use
	// figure; the completion times are drawn per kind.
	span := 0.0
	jobs, err := ReadJobRows(filepath.Join(dir, JobsFile))
	switch {
	case err == nil:
		for _, j := range jobs {
			span = math.Max(span, j.Arrival)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	baseline := ""
	for _, q := range r.Policies {
		if q.VsBaseline != nil {
			baseline = q.VsBaseline.Baseline
		}
	}
	optional := []struct {
		file string
		read func(string) ([]Series, error)
		draw func([]Series) (*figure, error)
	}{
		{ActiveGPUsFile, ReadActiveGPUs, func(s []Series) (*figure, error) { return activeGPUs(s, baseline, span) }},
		{DecisionsFile, ReadDecisions, decisionBoxes},
		{AllocationFile, ReadAllocation, allocationCurve},
	}
	for _, o := range optional {
		s, err := o.read(filepath.Join(dir, o.file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(s) == 0 {
			continue
		}
		if err := add(o.draw(s)); err != nil {
			return nil, err
		}
		if o.file == ActiveGPUsFile && len(jobs) > 0 {
			if err := add(jctByKind(jobs)); err != nil {
				return nil, err
			}
			jobs = nil
		}
	}
	if len(jobs) > 0 { // no active_gpus.csv to put it after
		if err := add(jctByKind(jobs)); err != nil {
			return nil, err
		}
	}
	if r.Training != nil {
		if err := trainingFigures(dir, r.Training, add); err != nil {
			return nil, err
		}
	}
	if r.LLM != nil {
		if err := llmFigures(dir, r.LLM, add); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

var figureCaptions = map[string]string{
	"latency_cdf":      "Latency CDF per data path: further left is faster; a long tail to the right is queueing.",
	"stage_breakdown":  "Mean time per pipeline stage, stacked: which stage dominates each path.",
	"cost_power":       "Cost-effectiveness (throughput per dollar) and power efficiency (throughput per watt) of the scheduler hardware, both normalised to the host CPU (host = 1; the table's power efficiency is throughput per watt, not normalised, as the paper gives it); dashed: the paper's SmartNIC figures (+17%, +44%).",
	"gpu_hours":        "GPU-hours per policy: lower is better for the same trace.",
	"active_gpus":      "GPUs in use over the trace's span, one panel per policy with the baseline behind it in grey; right: the busiest window (a fortieth of the span, where the baseline holds the most GPU time).",
	"jct_cdf":          "Job completion time CDF per policy, one panel per kind of job (a service holds its placement for its trace duration, a batch job its work), log axis; censored jobs have no completion time.",
	"decision_time":    "Wall-clock decision time per policy call (box: quartiles and median; whiskers 1.5 IQR; log axis): heuristic vs exact optimum. Measured on the machine that ran it, not part of the deterministic results.",
	"training_jct_cdf": "Completion time CDF of the training jobs per aggregator memory policy (first seed): further left is faster.",
	"iteration_split":  "A policy's mean iteration split into compute, communication and waiting for aggregators, over every iteration of every seed. Waiting is the share of a synchronisation's time that its grant added over the job's whole window (fewer slots: atp's collisions sent to the parameter server, esa's preemption), the phase timed alone under each; link contention slows both alike and counts as communication. A job without a static partition runs its host all-reduce, which is communication.",
	"occupancy":        "Aggregator slots held over time, stacked by job (a colour per job), a panel per policy that uses the pool (first seed), as time averages over 200 bins; a fast-forwarded job's slots are its average over its iterations.",
	"llm_latency_cdf":  "Time to first token (left) and time per output token after the first (right) per request, first seed, with the SLO's bound dashed: the share of requests left of the bound meets it.",
	"llm_series":       "KV-cache use, running requests (the batch) and waiting requests over time (first seed), sampled every llm.sample_every and averaged into 300 bins of time: a line per replica for one or two, else the mean over the replicas and the busiest replica's. A KV cache near 100% with requests waiting is memory-bound serving; preemptions follow.",
	"allocation":       "GPU allocation ratio against the GPU request arrived, per policy (mean over seeds): higher is better; the gap to the arrived line is GPU fragmentation and pods that found no server.",
}

func renderRun(fsys atomicfs.FS, dir, by string) error {
	r, err := ReadResult(filepath.Join(dir, ResultFile))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := addTiming(dir, &r); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	plots, err := mkPlotsDir(fsys, dir)
	if err != nil {
		return err
	}
	figs, err := runFigures(dir, r)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var md strings.Builder
	title := r.Scenario
	if title == "" {
		title = filepath.Base(filepath.Clean(dir))
	}
	fmt.Fprintf(&md, "# Report: %s\n\n", title)
	writeWhatRan(&md, r)
	writeTables(&md, r)
	writeCalibration(&md, r)
	if err := writeBackend(&md, dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeRestsOn(&md, dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	md.WriteString("\n## Figures\n")
	if err := saveFigures(fsys, plots, &md, figs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	writtenBy(&md, by)
	if err := writeReport(fsys, dir, md.String()); err != nil {
		return err
	}
	return writeHTML(fsys, dir, md.String(), r)
}

// writtenBy closes a page with the command that wrote it.
func writtenBy(md *strings.Builder, by string) {
	fmt.Fprintf(md, "\n---\nWritten by `%s` from the result files in this directory; `conspirator report DIR` draws it again from them.\n", by)
}

func writeReport(fsys atomicfs.FS, dir, md string) error {
	p := filepath.Join(dir, ReportFile)
	if err := atomicfs.WriteFile(fsys, p, []byte(md)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// writeCalibration lists what a calibration profile set: each value, the
// measurement behind it, and when and where that was measured.
func writeCalibration(md *strings.Builder, r Result) {
	c := r.Calibration
	if c == nil {
		return
	}
	md.WriteString("\n## Calibration\n\n")
	fmt.Fprintf(md, "Values from the calibration profile `%s`, measured %s on %s by %s.\n", c.Profile, orUnknown(c.Date), orUnknown(c.Machine), orUnknown(c.Tool))
	for _, s := range c.Sources {
		fmt.Fprintf(md, "- %s\n", s)
	}
	md.WriteString("\n| key | value | measured as | used |\n|---|---|---|---|\n")
	for _, v := range c.Values {
		used := "yes"
		if v.OverriddenBySet {
			used = "no: --set gave another value"
		}
		fmt.Fprintf(md, "| `%s` | %s | %s | %s |\n", v.Key, v.Value, v.From, used)
	}
}

// writeTables writes the key-metric tables of one result.
func writeTables(md *strings.Builder, r Result) {
	if len(r.Paths) > 0 {
		md.WriteString("\n## Data path\n\n")
		md.WriteString("| path | mean latency (µs) | ±95% CI | p50 (µs) | p99 (µs) | throughput (req/s) | host CPU (µs/req) | SoC util | GPU util | dropped | stable |\n")
		md.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, p := range r.Paths {
			stable := "yes"
			if p.Unstable {
				stable = "**no** (offered load above capacity)"
			}
			fmt.Fprintf(md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", p.Name,
				fmtSig(float64(p.LatencyUS.Mean)), fmtSig(float64(p.LatencyUS.CI95Mean)), fmtSig(float64(p.LatencyUS.P50)),
				fmtSig(float64(p.LatencyUS.P99)), fmtSig(float64(p.ThroughputRPS)), fmtSig(float64(p.HostCPUUSPerRequest)),
				fmtPct(float64(p.SoCUtilization)), fmtPct(float64(p.GPUUtilization)), p.Dropped, stable)
		}
	}
	if len(r.Cost) > 0 {
		md.WriteString("\n## Cost and power\n\n")
		md.WriteString("Cost-effectiveness is throughput per dollar normalised to the host CPU (host = 1); power efficiency is throughput per watt, not normalised, as the paper gives it (the figure normalises both to the host CPU).\n\n")
		md.WriteString("| hardware | price (USD) | power (W) | throughput | cost-effectiveness (per $, host CPU = 1) | power efficiency (throughput per W) |\n")
		md.WriteString("|---|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Cost {
			fmt.Fprintf(md, "| %s | %s | %s | %s | %s | %s |\n", c.Name, fmtSig(float64(c.PriceUSD)), fmtSig(float64(c.PowerW)),
				fmtSig(float64(c.Throughput)), fmtSig(float64(c.CostEffectiveness)), fmtSig(float64(c.PowerEfficiency)))
		}
	}
	if len(r.Allocation) > 0 {
		md.WriteString("\n## GPU allocation (FGD experiment)\n\n")
		md.WriteString("GPU allocation ratio (allocated GPU-milli over total), mean ± 95% CI over seeds, at each share of the GPU capacity arrived.")
		if c := FewSeedsCaveat(r.seedCount()); c != "" {
			md.WriteString(" " + strings.Trim(c, "()") + ".")
		}
		md.WriteString("\n\n")
		var heads []int
		for _, a := range r.Allocation[0].At {
			heads = append(heads, a.ArrivedPct)
		}
		md.WriteString("| policy |")
		for _, h := range heads {
			fmt.Fprintf(md, " %d%% arrived |", h)
		}
		md.WriteString(" pods without a server (mean) |\n|---|")
		md.WriteString(strings.Repeat("---:|", len(heads)+1) + "\n")
		for _, q := range r.Allocation {
			fmt.Fprintf(md, "| %s |", q.Name)
			for _, a := range q.At {
				ci := "-"
				if !math.IsNaN(float64(a.CI95)) {
					ci = fmt.Sprintf("%.2f", float64(a.CI95))
				}
				fmt.Fprintf(md, " %.2f%% ± %s |", float64(a.Mean), ci)
			}
			fmt.Fprintf(md, " %s |\n", fmtSig(float64(q.FailedPods)))
		}
	}
	if len(r.Policies) > 0 {
		md.WriteString("\n## Cluster scheduling\n\n")
		baseline := ""
		for _, q := range r.Policies {
			if q.VsBaseline != nil {
				baseline = q.VsBaseline.Baseline
			}
		}
		if n := r.Policies[0].Seeds; n > 1 {
			fmt.Fprintf(md, "Means over %d seeds ± the 95%% CI (every seed in seeds.csv); jobs.csv and the active-GPU figure are the first seed's.", n)
			if c := FewSeedsCaveat(n); c != "" {
				md.WriteString(" " + strings.Trim(c, "()") + ".")
			}
			md.WriteString("\n\n")
		}
		// The comparison column only where a baseline ran (older results
		// and runs without the baseline policy have none).
		vsHead, vsAlign := "", ""
		if baseline != "" {
			vsHead, vsAlign = " vs "+baseline+" |", "---:|"
		}
		fmt.Fprintf(md, "| policy | GPU-hours |%s GPU-hours (fractional) | mean JCT (s) | p99 JCT (s) | mean queue (s) | jobs queued | capacity used | utilization | migrations | unscheduled | mean decision (µs, wall clock, timing.json) | optimality gap |\n", vsHead)
		md.WriteString("|---|---:|" + vsAlign + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, q := range r.Policies {
			hours := fmtSig(float64(q.GPUHours))
			if ci := float64(q.GPUHoursCI95); ci > 0 {
				hours += " ± " + fmtSig(ci)
			}
			vs := ""
			if v := q.VsBaseline; v != nil {
				vs = fmt.Sprintf(" %+.1f%%", float64(v.Pct))
				if ci := float64(v.CI95); ci > 0 {
					vs += fmt.Sprintf(" ± %.1f", ci)
				}
				vs += " |"
			} else if q.Name == baseline {
				vs = " (baseline) |"
			} else if baseline != "" {
				vs = " - |"
			}
			queued, capacity := "-", "-" // results of older versions have neither
			if q.Seeds > 0 {
				queued, capacity = fmtPct(float64(q.QueuedPct)/100), fmtPct(float64(q.CapacityUsed))
			}
			fmt.Fprintf(md, "| %s | %s |%s %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", q.Name,
				hours, vs, fmtSig(float64(q.GPUHoursFractional)), fmtSig(float64(q.JCTS.Mean)), fmtSig(float64(q.JCTS.P99)),
				fmtSig(float64(q.QueueS.Mean)), queued, capacity, fmtPct(float64(q.Utilization)),
				fmtSig(float64(q.Migrations)), fmtSig(float64(q.Unscheduled)),
				fmtSig(float64(q.DecisionUS.Mean)), fmtPct(float64(q.OptimalityGap)))
		}
		samples := make([]map[string]int, len(r.Clusters))
		for i, c := range r.Clusters {
			samples[i] = c.ByModel
		}
		for _, q := range r.Policies {
			ci := float64(q.GPUHoursCI95)
			if math.IsNaN(ci) {
				ci = -1 // older results: unknown, nothing to explain
			}
			if note := SteadyNote(q.Name, float64(q.GPUHours), q.Seeds, ci, q.ByType, samples); note != "" {
				fmt.Fprintf(md, "\n%s\n", note)
			}
		}
		var waited []string
		pods := 0.0
		for _, q := range r.Policies {
			if p := q.CPUPods; p != nil {
				pods = float64(p.Pods)
				waited = append(waited, fmt.Sprintf("%s %.1f%% (mean %s s)", q.Name, float64(p.QueuedPct), fmtSig(float64(p.QueueS))))
				if p.Unplaced > 0 {
					fmt.Fprintf(md, "\n**%s: %s CPU-only pods never found a server.**\n", q.Name, fmtSig(float64(p.Unplaced)))
				}
			}
		}
		if len(waited) > 0 {
			fmt.Fprintf(md, "\nCPU-only pods: %s per run, placed by the simulator on the least allocated server that fits (`cluster.cpu_pods`); waited: %s.\n",
				fmtSig(pods), strings.Join(waited, ", "))
		}
		for _, h := range r.Policies {
			if h.Horizon == nil {
				continue
			}
			holds := HorizonHolds(h.Horizon.Starts)
			fmt.Fprintf(md, "\n**%s** is an offline lower bound, %s GPU-hours (starts=%s: it holds for %s).", h.Name, fmtSig(float64(h.GPUHours)), h.Horizon.Starts, holds)
			if h.Horizon.Note != "" {
				fmt.Fprintf(md, " Note: %s.", h.Horizon.Note)
			}
			var above []string
			for _, q := range r.Policies {
				if g := q.VsHorizon; g != nil && g.Bound == h.Name {
					if g.Covered {
						above = append(above, fmt.Sprintf("%s %+.2f%%", q.Name, float64(g.Pct)))
					} else {
						above = append(above, fmt.Sprintf("%s not covered (%s)", q.Name, g.Why))
					}
				}
			}
			if len(above) > 0 {
				fmt.Fprintf(md, " GPU-hours above it: %s.", strings.Join(above, "; "))
			}
			fmt.Fprintln(md)
		}
		for _, q := range r.Policies {
			if st := q.Solves; st != nil {
				if st.Unproven > 0 {
					fmt.Fprintf(md, "\n**%s is not proven optimal**: %d of %d solves were cut by the time limit (worst gap %s).\n", q.Name, st.Unproven, st.Total, fmtPct(float64(st.WorstGap)))
				} else {
					if st.Total == 1 {
						fmt.Fprintf(md, "\n%s: its one solve proven optimal.\n", q.Name)
					} else {
						fmt.Fprintf(md, "\n%s: all %d solves proven optimal.\n", q.Name, st.Total)
					}
				}
			}
		}
	}
	writeTrainingTable(md, r.Training)
	writeLLMTable(md, r.LLM)
}

func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// TimingFile holds a run's wall-clock measurements (policy decision
// times), kept out of summary.json so that it stays deterministic.
const TimingFile = "timing.json"

// addTiming fills the policies' decision times from timing.json where the
// run directory has one; summary.json carries zeros there.
func addTiming(dir string, r *Result) error {
	b, err := os.ReadFile(filepath.Join(dir, TimingFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	t, err := parseTiming(b)
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Join(dir, TimingFile), err)
	}
	for _, tp := range t.Policies {
		for i := range r.Policies {
			if r.Policies[i].Name == tp.Name {
				r.Policies[i].DecisionUS = tp.DecisionUS
			}
		}
	}
	return nil
}

// timingFile is timing.json as the reports read it.
type timingFile struct {
	Policies []struct {
		Name       string  `json:"name"`
		DecisionUS MeanP99 `json:"decision_us"`
		Decisions  int     `json:"decisions"`
	} `json:"policies"`
}

func parseTiming(b []byte) (timingFile, error) {
	var t timingFile
	err := json.Unmarshal(b, &t)
	return t, err
}

// HorizonHolds says which runs a horizon bound of the given relaxation
// (summary.json's horizon.starts) holds for: the one wording of the
// printed table and report.md.
func HorizonHolds(starts string) string {
	if starts == "any" {
		return "every run that finishes its jobs, waiting or not"
	}
	return "runs in which no job waits or is preempted"
}

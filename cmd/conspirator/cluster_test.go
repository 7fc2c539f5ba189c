package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/sim"
)

// sharedTraces returns ../shared/traces/alibaba-gpu-v2023, or skips the
// test where it is absent (download cluster-trace-gpu-v2023 from
// github.com/alibaba/clusterdata).
func sharedTraces(t *testing.T) string {
	t.Helper()
	return shareddata.Path(t, "traces", "alibaba-gpu-v2023")
}

// policySummary is summary.json as the run command writes it.
type policySummary = sim.Summary

func runCluster(t *testing.T, scenario string, sets ...string) (policySummary, map[string]float64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", scenario, "-o", dir, "--no-report"}, sets...)
	if code, _, stderr := cli(t, nil, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s policySummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var timing struct {
		Policies []struct {
			Name       string `json:"name"`
			DecisionUS struct {
				Mean float64 `json:"mean"`
			} `json:"decision_us"`
		} `json:"policies"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "timing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &timing); err != nil {
		t.Fatal(err)
	}
	dec := map[string]float64{}
	for _, p := range timing.Policies {
		dec[p.Name] = p.DecisionUS.Mean
	}
	return s, dec
}

// paper/gpu-hours, read back from the summary.json a user gets: every
// policy of the table is there with GPU-hours and schedules every job. The
// value of the saving is pinned once, by sim/cluster's TestPaperGPUHours
// (and the bytes by sim's golden files).
func TestPaperGPUHours(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the openb trace for eight policies (about 20 s)")
	}
	tr := sharedTraces(t)
	// Two of the scenario's ten seeds: enough for a CI through the whole
	// command; sim's golden files pin the ten.
	s, _ := runCluster(t, "paper/gpu-hours", "--set", "cluster.seeds=2",
		"--set", "cluster.trace="+filepath.Join(tr, "openb_pod_list_default.csv"),
		"--set", "cluster.nodes="+filepath.Join(tr, "openb_node_list_gpu_node.csv"))
	hours := map[string]float64{}
	for _, p := range s.Policies {
		hours[p.Name] = p.GPUHours
		if p.Unscheduled != 0 {
			t.Errorf("%s left %v jobs unscheduled", p.Name, p.Unscheduled)
		}
		if p.Seeds != 2 || p.GPUHoursCI95 == nil {
			t.Errorf("%s: %d seeds, CI %v; want 2 and a CI", p.Name, p.Seeds, p.GPUHoursCI95)
		}
		if v := p.VsBaseline; (v == nil) != (p.Name == "naive-share") || v != nil && (v.Baseline != "naive-share" || v.CI95 == nil) {
			t.Errorf("%s: vs_baseline %+v; want one against naive-share with a CI (none for naive-share)", p.Name, v)
		}
	}
	for _, want := range []string{"exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator/type-aware", "conspirator/mig", "conspirator"} {
		if _, ok := hours[want]; !ok {
			t.Errorf("policy %s missing from the table", want)
		}
	}
	if len(s.Clusters) != 2 || s.Clusters[0].GPUs < 40 || s.Clusters[0].GPUs > 80 {
		t.Errorf("clusters %+v; want two of 12 sampled servers (54 to 61 GPUs)", s.Clusters)
	}
	saving := 1 - hours["conspirator"]/hours["naive-share"]
	t.Logf("conspirator saves %.1f%% of naive-share's GPU-hours over 2 seeds (paper: 33%%)", 100*saving)
	if !(saving > 0 && saving < 1) {
		t.Errorf("conspirator saves %.2f%%: GPU-hours missing or not positive (%v)", 100*saving, hours)
	}
}

// paper/heuristic-vs-optimal: on windows small enough for the exact
// optimum, the heuristic's GPU-hours are within 2% of it.
func TestPaperHeuristicVsOptimal(t *testing.T) {
	tr := sharedTraces(t)
	s, dec := runCluster(t, "paper/heuristic-vs-optimal",
		"--set", "cluster.trace="+filepath.Join(tr, "openb_pod_list_default.csv"))
	var h, o float64
	for _, p := range s.Policies {
		switch p.Name {
		case "conspirator":
			h = p.GPUHours
			if p.OptimalityGap == nil {
				t.Errorf("heuristic has no optimality gap in summary.json")
			}
		case "optimal":
			o = p.GPUHours
		}
	}
	// The gap printed is the one the GPU-hours give (its value is pinned
	// by sim/cluster's TestHeuristicVsOptimal and sim's golden files).
	for _, p := range s.Policies {
		if p.Name == "conspirator" && p.OptimalityGap != nil && math.Abs(*p.OptimalityGap-(h/o-1)) > 1e-12 {
			t.Errorf("gap %v in summary.json, but the GPU-hours give %v", *p.OptimalityGap, h/o-1)
		}
	}
	if o <= 0 || h <= 0 {
		t.Errorf("heuristic %.3f GPU-hours vs optimal %.3f: want both positive", h, o)
	}
	t.Logf("GPU-hours heuristic %.3f, optimal %.3f; mean decision %.1f us vs %.1f us (wall clock, %.0fx)",
		h, o, dec["conspirator"], dec["optimal"], dec["optimal"]/dec["conspirator"])
}

// A cluster scenario's sensitivity watches the GPU-hours saving: by
// default every cluster key with a stated plausible range, each at both
// ends of it, with the headline's CI over seeds printed for judging the
// swings; the CSV has one row per key.
func TestSensitivityCluster(t *testing.T) {
	tr := sharedTraces(t)
	out := filepath.Join(t.TempDir(), "s")
	code, stdout, stderr := cli(t, nil, "sensitivity", "paper/gpu-hours",
		"--set", "cluster.trace="+filepath.Join(tr, "openb_pod_list_default.csv"),
		"--set", "cluster.nodes="+filepath.Join(tr, "openb_node_list_gpu_node.csv"),
		"--set", "cluster.policies=[naive-share, conspirator]", "--set", "cluster.policy_args={}",
		"--set", "cluster.seeds=2", "--set", "cluster.window.jobs=200", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"conspirator GPU-hours vs naive-share", "95% CI over seeds", "cluster.timeshare_slowdown", "0.463", "cluster.migration_time", "120s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "sensitivity.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "param,grade,range,low_value,gpu_hours_vs_baseline_pct_low") {
		t.Errorf("sensitivity.csv:\n%s", b)
	}
	// A cluster run computes it only when asked (--sensitivity); by
	// default its report says why not and how.
	for _, c := range []struct {
		flag, file, report string
	}{
		{"--sensitivity", "sensitivity.csv", "GPU-hours against the baseline"},
		{"--no-report=false", "sensitivity.txt", "run with --sensitivity"},
	} {
		dir := filepath.Join(t.TempDir(), "r")
		code, stdout, stderr := cli(t, nil, "run", "paper/gpu-hours", c.flag,
			"--set", "cluster.trace="+filepath.Join(tr, "openb_pod_list_default.csv"),
			"--set", "cluster.nodes="+filepath.Join(tr, "openb_node_list_gpu_node.csv"),
			"--set", "cluster.policies=[naive-share, conspirator]", "--set", "cluster.policy_args={}",
			"--set", "cluster.seeds=2", "--set", "cluster.window.jobs=200", "-o", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s\n%s", c.flag, code, stderr, stdout)
		}
		if _, err := os.Stat(filepath.Join(dir, c.file)); err != nil {
			t.Errorf("%s: %v", c.flag, err)
		}
		if md, _ := os.ReadFile(filepath.Join(dir, "report.md")); !strings.Contains(string(md), c.report) {
			t.Errorf("%s: report.md lacks %q", c.flag, c.report)
		}
	}
}

// The binary runs exact solves in worker processes of itself: with a 1 ms
// limit the built-in window's hard solves are cut (each worker killed at
// its limit) and the run says so and still finishes with a decision for
// every snapshot; with the scenario's own 5 s limit every solve is proven.
// The test binary plays the binary (SIM_TEST_AS_CLI), workers included.
func TestExactSolvesInWorkers(t *testing.T) {
	tr := sharedTraces(t)
	cli := func(limit string) string {
		cmd := exec.Command(os.Args[0], "run", "paper/heuristic-vs-optimal", "--no-report", "--no-sensitivity",
			"--set", "cluster.trace="+filepath.Join(tr, "openb_pod_list_default.csv"),
			"--set", "cluster.policy_args.optimal.time_limit="+limit, "-o", filepath.Join(t.TempDir(), "r"))
		cmd.Env = append(os.Environ(), "SIM_TEST_AS_CLI=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("time_limit %s: %v\n%s", limit, err, out)
		}
		return string(out)
	}
	if out := cli("1ms"); !strings.Contains(out, "WARNING: optimal:") || !strings.Contains(out, "solves were cut by the time limit") {
		t.Errorf("1 ms: no cut reported:\n%s", out)
	}
	if out := cli("1h"); !strings.Contains(out, "optimal: 43 solves, 43 proven optimal") {
		t.Errorf("1 h: not every solve proven:\n%s", out)
	}
}

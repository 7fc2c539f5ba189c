package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// Every command that reads a data file says, when the file is missing,
// what it looked for, where a relative path led and where the data comes
// from, the same way (issue 38): run, validate and trace inspect give one
// trace the same hint; the key named in the fix is the one that was
// given (not cluster.trace for every file); a calibration profile and a
// calibrate --import file say what produces them.
func TestMissingDataMessages(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	openb := "openb_pod_list_mine.csv"
	openbHint := "the Alibaba GPU traces are at https://github.com/alibaba/clusterdata (openb: folder cluster-trace-gpu-v2023/csv)"
	resolvedTo := func(rel string) string {
		return "(resolved to " + filepath.Join(work, rel) + " from the working directory " + work + ")"
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"trace inspect, openb", []string{"trace", "inspect", openb},
			[]string{"trace inspect: file " + openb + " not found " + resolvedTo(openb), openbHint, "give the path of your copy"}},
		{"run, the same trace", []string{"run", "paper/heuristic-vs-optimal", "--set", "cluster.trace=" + openb, "--no-report"},
			[]string{"cluster.trace: file " + openb + " not found " + resolvedTo(openb), openbHint, "point cluster.trace at your copy"}},
		{"validate, the same trace", []string{"validate", "paper/heuristic-vs-optimal", "--set", "cluster.trace=" + openb},
			[]string{"cluster.trace: file " + openb + " not found " + resolvedTo(openb), openbHint, "point cluster.trace at your copy"}},
		{"trace inspect, a PAI table without its task table", []string{"trace", "inspect", "pai/pai_job_table.csv"},
			[]string{"file " + filepath.Join("pai", "pai_task_table.csv") + " not found", "cluster-trace-gpu-v2020"}},
		{"trace inspect, Philly", []string{"trace", "inspect", "cluster_job_log"},
			[]string{"not found", "github.com/msr-fiddle/philly-traces"}},
		{"trace inspect, a file of no public trace", []string{"trace", "inspect", "jobs.csv"},
			[]string{"file jobs.csv not found " + resolvedTo("jobs.csv"), "generic format (workloads/trace/FORMATS.md)"}},
		{"allocation names its own key", []string{"run", "paper/fgd-allocation", "--set", "allocation.trace=" + openb, "--set", "allocation.nodes=openb_node_list_mine.csv", "--no-report"},
			[]string{"allocation.trace: file " + openb + " not found", "point allocation.trace at your copy", "point allocation.nodes at your copy", openbHint}},
		{"training trace names its own key", []string{"run", "paper/ina", "--set", "training.jobs.source=trace", "--set", "training.jobs.trace=" + openb, "--no-report"},
			[]string{"training.jobs.trace: file " + openb + " not found " + resolvedTo(openb), openbHint, "point training.jobs.trace at your copy"}},
		{"calibration profile", []string{"run", "paper/e2e", "--set", "calibration=cal/profile.yaml", "--no-report"},
			[]string{"calibration: file cal/profile.yaml not found " + resolvedTo("cal/profile.yaml"), "conspirator calibrate -o DIR"}},
		{"calibrate --import", []string{"calibrate", "--import", "ib_write_bw.txt", "-o", filepath.Join(work, "cal")},
			[]string{"--import: file ib_write_bw.txt not found " + resolvedTo("ib_write_bw.txt"), "perftest", "nvbandwidth"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, nil, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "cluster.trace / cluster.nodes") {
				t.Errorf("the fix names keys that were not given:\n%s", stderr)
			}
		})
	}
	// The hint of run and of trace inspect is one text, from one place.
	if got := trace.Source(openb, ""); got != openbHint {
		t.Errorf("trace.Source(%q) = %q, want %q", openb, got, openbHint)
	}
}

// scenarios list gives every built-in its summary (the first line of its
// file's comment) and marks, on an indented line below, the built-ins
// that read data files (hand-listed from scenarios/builtin: the four
// cluster and allocation scenarios, scale/1m-jobs, whose synthetic
// jobs copy the openb trace's mix, and the llm scenarios' traces), with
// the folder and keys, and says
// whether they are found from the working directory; the others have no
// such line.
func TestScenariosListMarksData(t *testing.T) {
	needs := map[string]string{
		"paper/fgd-allocation":       "(allocation.trace, allocation.nodes)",
		"paper/gpu-hours":            "(cluster.trace, cluster.nodes)",
		"paper/gpu-hours-regimes":    "(cluster.trace, cluster.nodes)",
		"paper/heuristic-vs-optimal": "(cluster.trace)",
		"paper/r6-windows":           "(cluster.trace)",
		"scale/1m-jobs":              "(cluster.trace)",
		"llm/azure-conv":             "../shared/traces/azure-llm-2023/ (llm.workload.trace)",
		"llm/azure-code":             "../shared/traces/azure-llm-2023/ (llm.workload.trace)",
		"llm/mooncake":               "../shared/traces/mooncake-fast25/ (llm.workload.trace)",
		"llm/mooncake-knee":          "../shared/traces/mooncake-fast25/ (llm.workload.trace)",
	}
	const dir = "../shared/traces/alibaba-gpu-v2023/"
	// full is a needs entry with its folder: the openb one unless named.
	full := func(keys string) string {
		if strings.HasPrefix(keys, "../") {
			return keys
		}
		return dir + " " + keys
	}
	list := func(t *testing.T) (map[string]string, string) {
		t.Helper()
		code, stdout, stderr := cli(t, nil, "scenarios", "list")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		out := map[string]string{}
		last := ""
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if strings.HasPrefix(line, " ") {
				out[last] = strings.TrimSpace(line)
				continue
			}
			name, summary, _ := strings.Cut(line, " ")
			if name == "paper/cost" && strings.TrimSpace(summary) != "Cost and power efficiency of the control plane: host CPU vs SmartNIC" {
				t.Errorf("paper/cost listed as %q, want its summary beside it", line)
			}
			if want := scenarios.Summary(name); strings.TrimSpace(summary) != want || want == "" {
				t.Errorf("%s listed with %q, want its summary %q", name, strings.TrimSpace(summary), want)
			}
			last, out[name] = name, ""
		}
		return out, stderr
	}

	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	got, stderr := list(t)
	for name, note := range got {
		keys, marked := needs[name]
		switch {
		case !marked && note != "":
			t.Errorf("%s reads no data file but is marked %q", name, note)
		case marked && note != "needs data: "+full(keys)+", not found from this directory":
			t.Errorf("%s: %q, want it to need %s %s, not found", name, note, dir, keys)
		}
	}
	for name := range needs {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not listed", name)
		}
	}
	if !strings.Contains(stderr, "run those scenarios from the repository root with ../shared beside it") {
		t.Errorf("no advice on stderr for the missing data: %q", stderr)
	}

	// With the files beside the repository (empty here: list only looks),
	// every one is found and nothing is said on stderr.
	shared := filepath.Join(root, "shared", "traces", "alibaba-gpu-v2023")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"openb_pod_list_default.csv", "openb_node_list_gpu_node.csv"} {
		writeFile(t, shared, f, "")
	}
	for d, fs := range map[string][]string{"azure-llm-2023": {"AzureLLMInferenceTrace_conv.csv", "AzureLLMInferenceTrace_code.csv"}, "mooncake-fast25": {"conversation_trace.jsonl"}} {
		llmDir := filepath.Join(root, "shared", "traces", d)
		if err := os.MkdirAll(llmDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			writeFile(t, llmDir, f, "")
		}
	}
	got, stderr = list(t)
	for name, keys := range needs {
		if want := "needs data: " + full(keys) + ", found"; got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if stderr != "" {
		t.Errorf("stderr with every file found: %q", stderr)
	}
	// One of two files there: the missing key is named.
	os.Remove(filepath.Join(shared, "openb_node_list_gpu_node.csv"))
	got, _ = list(t)
	if want := "needs data: " + dir + " (cluster.trace, cluster.nodes), not found from this directory (cluster.nodes)"; got["paper/gpu-hours"] != want {
		t.Errorf("paper/gpu-hours with its node list missing: %q, want %q", got["paper/gpu-hours"], want)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// pipelineSeeds are FuzzPipeline's seeds: a scenario (where $DATA stands
// for the data file's path) and the data file's text. The corpus under
// testdata/fuzz/FuzzPipeline holds the cases of issue 40 as well.
var pipelineSeeds = [][2]string{
	{"name: c\ncluster:\n  trace: $DATA\n  nodes: \"\"\n  gpus: [{model: a100-40gb, count: 2}]\n  policies: [naive-share, best-fit]\n",
		"id,arrival_s,num_gpu,duration_s,gpu_milli,qos\nj1,0,1,100,500,BE\nj2,5,1,50,500,LS\nj3,9,2,30,1000,BE\n"},
	{"name: c\ncluster:\n  trace: $DATA\n  nodes: \"\"\n  gpus: [{model: a100-40gb, count: 1}]\n  policies: [exclusive]\n  timeshare_slowdown: 0\n",
		"id,arrival_s,num_gpu,duration_s,gpu_milli,qos\nj1,0,1,2000000000,1000,BE\nj2,0,1,2000000000,1000,BE\n"},
	{"name: t\ntraining:\n  jobs:\n    source: list\n    list: $DATA\n  cluster: {servers: 4}\n  policies: [atp, none]\n",
		"num_gpu,submit_time,iterations,model\n2,0,50,resnet50\n4,10,20,vgg16\n"},
	{"name: t\ntraining:\n  jobs:\n    synthetic: {jobs: 4, max_iterations: 300}\n  cluster: {servers: 8}\n  policies: [static, esa]\n  baseline: static\n", ""},
	{"name: d\ndatapath:\n  clients: {count: 2, requests: 200}\n  warmup_requests: 10\n", ""},
	{"name: d\ndatapath:\n  clients: {count: 2, requests: 100, mode: open, rate: 50/s}\n  warmup_requests: 10\n", ""},
}

// FuzzPipeline drives the whole pipeline, a scenario and a data file (a
// trace or a job list) through validate and then run, looking for
// panics, hangs, exits other than 0 and 2, runs that validate passed but
// that fail, anything written by a refused run, and results past the
// engine's horizon (silent clips). The run is kept tight so that .ci/fuzz's
// 10,000 inputs fit: a scenario runs only if it is small (few requests,
// jobs, seeds, iterations; its data read from the fuzzed file only; no
// exact solver), each command has a per-input limit, and reports and
// sensitivity are off.
func FuzzPipeline(f *testing.F) {
	for _, s := range pipelineSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, scenario, data string) {
		if len(scenario) > 2048 || len(data) > 4096 {
			return
		}
		dir := t.TempDir()
		dataPath := filepath.Join(dir, "data.csv")
		scPath := filepath.Join(dir, "sc.yaml")
		if err := os.WriteFile(dataPath, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(scPath, []byte(strings.ReplaceAll(scenario, "$DATA", dataPath)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := fuzzCLI(t, "validate", scPath)
		if code != exitOK && code != exitUsage {
			t.Fatalf("validate: exit %d, want 0 or 2:\n%s", code, stderr)
		}
		if code != exitOK {
			return
		}
		var sc scenarios.Scenario
		if err := scenarios.Load(scPath, nil, nil, &sc); err != nil {
			t.Fatalf("validate said ok, but the scenario does not load: %v", err)
		}
		if !smallRun(&sc, dataPath) {
			return
		}
		out := filepath.Join(dir, "out")
		code, stderr = fuzzCLI(t, "run", scPath, "--no-report", "--no-sensitivity", "-o", out)
		switch code {
		case exitOK:
			checkNoClip(t, filepath.Join(out, "summary.json"))
		case exitUsage:
			// Allowed only for what validate cannot see: a run that
			// reaches the horizon by queueing.
			if !strings.Contains(stderr, "horizon") {
				t.Fatalf("validate said ok, run refused the inputs:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("a refused run wrote %s", out)
			}
		default:
			t.Fatalf("validate said ok, run exited %d:\n%s", code, stderr)
		}
	})
}

// fuzzCLI runs the command line in process with a per-input limit: a
// command still running after it is a hang.
func fuzzCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	type res struct {
		code   int
		stderr string
	}
	done := make(chan res, 1)
	go func() {
		code, _, stderr := cli(t, nil, args...)
		done <- res{code, stderr}
	}()
	select {
	case r := <-done:
		if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
			t.Fatalf("%s: a crash, not a message:\n%s", strings.Join(args, " "), r.stderr)
		}
		return r.code, r.stderr
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: still running after 60 s (a hang; the tight limits keep a run under a second)", strings.Join(args, " "))
		return 0, ""
	}
}

// smallRun reports whether sc is within the fuzz target's tight limits:
// its data read from the fuzzed file only, and little work.
func smallRun(sc *scenarios.Scenario, data string) bool {
	if sc.Allocation != nil || sc.Calibration != "" {
		return false // reads the Alibaba node list / a profile: not fuzzed here
	}
	if d := sc.DataPath; d != nil {
		if d.Clients.Count*d.Clients.Requests*len(d.Paths) > 4000 || d.Clients.Count > 16 {
			return false
		}
	}
	if c := sc.Cluster; c != nil {
		fast := []string{"exclusive", "naive-share", "first-fit", "best-fit", "fgd"}
		for _, p := range c.Policies {
			if !slices.Contains(fast, p) {
				return false
			}
		}
		if c.Trace != data || (c.Nodes != "" && c.Nodes != data) || c.Seeds > 2 || c.Synthetic.Jobs > 200 || len(c.LeaveOutLongest) > 2 {
			return false
		}
		gpus := 0
		for _, g := range c.GPUs {
			gpus += g.Count
		}
		if gpus > 64 {
			return false
		}
	}
	if tr := sc.Training; tr != nil {
		s := tr.Jobs.Synthetic
		switch {
		case tr.Seeds > 2, tr.Cluster.Servers > 64:
			return false
		case tr.Jobs.Source == "list" && tr.Jobs.List != data, tr.Jobs.Source == "trace" && tr.Jobs.Trace != data:
			return false
		case tr.Jobs.Source == "synthetic" && (s.Jobs > 16 || s.MaxIterations > 5000):
			return false
		case tr.Jobs.Source == "list":
			// Iterations are stepped where jobs contend: few in all.
			jobs, err := train.ReadJobList(data)
			total := 0
			for _, j := range jobs {
				total += j.Iterations
			}
			if err == nil && total > 100_000 {
				return false
			}
		case tr.Jobs.Source == "trace":
			return false // iterations from durations: unbounded work
		}
	}
	return true
}

// checkNoClip fails if summary.json holds a time in seconds past the
// engine's horizon: a result computed from a clipped clock.
func checkNoClip(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("run exited 0 without a summary: %v", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.ToLower(k), e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case float64:
			timeKey := strings.Contains(key, "jct") || strings.HasSuffix(key, "_s") || strings.Contains(key, "queue")
			if timeKey && x > engine.HorizonSeconds {
				t.Fatalf("%s: %s = %g s, past the engine's horizon (%g s): a clipped result", path, key, x, engine.HorizonSeconds)
			}
		}
	}
	walk("", v)
}

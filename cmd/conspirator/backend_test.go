package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --backend host performs the stages the host can (the tcp path's
// network and reply over loopback, host copies, host CPU work), keeps the
// rest simulated with a reason, and writes backend.json and a report
// section. The measured times are this machine's and are not asserted,
// only that they were taken.
func TestRunBackendHost(t *testing.T) {
	if testing.Short() {
		t.Skip("performs real loopback transfers")
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := cli(t, nil, "run", "paper/e2e", "--backend", "host", "--backend-reps", "5",
		"--set", "datapath.clients.requests=50", "--no-sensitivity", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "stages on the host backend beside the model") {
		t.Errorf("no backend table:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "backend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Backend string
		Stages  []struct {
			Path, Stage, Kind string
			Real              *struct {
				Op    string
				Reps  int
				P50US float64 `json:"p50_us"`
			}
			Simulated string
		}
		Paths []struct {
			Path      string
			Performed int `json:"stages_performed"`
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range rep.Stages {
		performed := s.Real != nil && s.Real.Reps == 5 && s.Real.P50US > 0
		got[s.Path+"/"+s.Stage] = performed
		if !performed && s.Simulated == "" {
			t.Errorf("%s/%s: neither performed nor said why not", s.Path, s.Stage)
		}
	}
	for key, want := range map[string]bool{
		"tcp/network": true, "tcp/reply": true, "tcp/copy-h2d": true, "tcp/decide": true,
		"tcp/gpu": false, "conspirator/network": false, "conspirator/dma": false, "conspirator/poll": true,
	} {
		if got[key] != want {
			t.Errorf("%s performed = %v, want %v", key, got[key], want)
		}
	}
	if rep.Backend != "host" || len(rep.Paths) != 4 || rep.Paths[0].Performed != 5 {
		t.Errorf("backend %q, paths %+v; want host and 4 paths, tcp with 5 stages performed", rep.Backend, rep.Paths)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Stages on the host backend") {
		t.Error("report.md lacks the backend section")
	}
}

func TestRunBackendBadInput(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "paper/e2e", "--backend", "cuda"}, "-tags cuda"},
		{[]string{"run", "paper/e2e", "--backend", "gpu"}, `--backend "gpu": use host`},
		{[]string{"run", "paper/e2e", "--backend", "host", "--backend-reps", "0"}, "--backend-reps 0"},
		{[]string{"run", "paper/gpu-hours", "--backend", "host", "--set", "cluster.seeds=1"}, "no datapath section"},
		{[]string{"run", "paper/e2e", "--backend", "host", "--set", "datapath.record_requests=false"}, "record_requests=true"},
	} {
		args := append(c.args, "--no-sensitivity", "--no-report", "-o", filepath.Join(out, "x"))
		code, _, stderr := cli(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

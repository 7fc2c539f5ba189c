package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// A compute CSV (the synthetic one of realhw/calib's testdata, measured
// "on" an h100-80gb) imports into a profile whose compute table a run of
// that GPU applies: batch 8 reads the 2 ms graph row (compute_time 2ms in
// summary.json, with where it came from); the same profile on paper/e2e's
// A100s, or on a MIG instance, is refused with exit 2 and nothing written.
func TestCalibrateComputeImportThenRun(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join("..", "..", "realhw", "calib", "testdata", "compute-synthetic.csv")
	out := filepath.Join(dir, "cal")
	code, _, stderr := cli(t, nil, "calibrate", "--import", csv, "-o", out)
	if code != 0 {
		t.Fatalf("calibrate --import: exit %d: %s", code, stderr)
	}
	prof := filepath.Join(out, "profile.yaml")
	run := filepath.Join(dir, "run")
	code, _, stderr = cli(t, nil, "run", "paper/e2e", "--set", "calibration="+prof, "--set", "datapath.clients.requests=50",
		"--set", "datapath.gpus=[{type: h100-80gb, count: 2}]", "--no-report", "--no-sensitivity", "-o", run)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var s struct {
		Inputs struct {
			DataPath struct {
				Request struct {
					ComputeTime string `json:"compute_time"`
				} `json:"request"`
			} `json:"datapath"`
		} `json:"inputs"`
		Calibration struct {
			Machine string
			Values  []struct{ Key, Value, From string }
		} `json:"calibration"`
	}
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Inputs.DataPath.Request.ComputeTime != "2ms" {
		t.Errorf("compute_time %q, want 2ms (the graph row at batch 8)", s.Inputs.DataPath.Request.ComputeTime)
	}
	if len(s.Calibration.Values) != 1 || !strings.Contains(s.Calibration.Values[0].From, "resnet50 fp16 graph compute at batch 8 on h100-80gb") ||
		!strings.Contains(s.Calibration.Machine, "Example GPU, h100-80gb, driver 1.2.3") {
		t.Errorf("calibration trace %+v", s.Calibration)
	}
	for _, c := range []struct {
		sets []string
		want []string
	}{
		{nil, []string{"measured on h100-80gb, but datapath.gpus[0] is a100-80gb", "--set 'datapath.gpus=[{type: h100-80gb, count: 2}]'"}},
		{[]string{"--set", "datapath.gpus=[{type: h100-80gb, profile: 3g.40gb, count: 2}]"}, []string{"MIG instance (3g.40gb)"}},
		{[]string{"--set", "datapath.gpus=[{type: h100-80gb, count: 2}]", "--set", "datapath.request.batch=64"}, []string{"batch 64 is outside the measured resnet50 graph batches 1..32"}},
	} {
		bad := filepath.Join(dir, "bad")
		args := append([]string{"run", "paper/e2e", "--set", "calibration=" + prof, "--no-report", "-o", bad}, c.sets...)
		code, _, stderr := cli(t, nil, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", c.sets, code, exitUsage, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.sets, w, stderr)
			}
		}
		if _, err := os.Stat(bad); err == nil {
			t.Errorf("%v: %s written", c.sets, bad)
		}
	}
	// A PyTorch JSON names no catalog GPU: --gpu-type is required.
	js := writeFile(t, dir, "r.json", `{"model": "torchvision resnet50", "graph_fp16_bs8": {"p50_us": 1200, "p99_us": 1300}}`)
	if code, _, stderr := cli(t, nil, "calibrate", "--import", js, "-o", filepath.Join(dir, "j")); code != exitUsage || !strings.Contains(stderr, "give --gpu-type") {
		t.Errorf("JSON without --gpu-type: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, nil, "calibrate", "--import", csv, "--gpu-type", "a100-80gb", "-o", filepath.Join(dir, "k")); code != exitUsage || !strings.Contains(stderr, "measured on h100-80gb, but --gpu-type") {
		t.Errorf("CSV of another GPU than --gpu-type: exit %d: %s", code, stderr)
	}
}

// The shipped H200 profile is what its README's command makes from
// ../shared's measurements (all but the date of the import), and its
// scenario runs under it.
func TestShippedH200Profile(t *testing.T) {
	dir := shareddata.Path(t, "reference", "measured-h200-2026-11-27")
	root := filepath.Join("..", "..")
	shipped, err := os.ReadFile(filepath.Join(root, "realhw", "data", "h200-2026-11-27", "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cal")
	// The README's command runs from the repository root with relative
	// paths, which the profile records as its sources.
	rel := func(f string) string {
		return filepath.Join("..", "shared", "reference", "measured-h200-2026-11-27", f)
	}
	t.Chdir(root)
	if _, err := os.Stat(rel("resnet50-pytorch.json")); err != nil {
		t.Skipf("../shared not beside the repository root (%s has it): %v", dir, err)
	}
	code, _, stderr := cli(t, nil, "calibrate", "--import", rel("realhw-cuda-measure.csv"), "--import", rel("resnet50-pytorch.json"),
		"--gpu-type", "h200-141gb", "--gpu-driver", "580.159.04", "--gpu-cuda", "13.0", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	made, err := os.ReadFile(filepath.Join(out, "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	date := regexp.MustCompile(`(?m)^  date: .*$`)
	if a, b := date.ReplaceAllString(string(shipped), ""), date.ReplaceAllString(string(made), ""); a != b {
		t.Errorf("realhw/data/h200-2026-11-27/profile.yaml differs from a fresh import; regenerate it with the README's command")
	}
	run := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := cli(t, nil, "run", filepath.Join("realhw", "data", "h200-2026-11-27", "e2e-h200.yaml"), "--set", "datapath.clients.requests=100",
		"--no-report", "--no-sensitivity", "-o", run)
	if code != 0 || !strings.Contains(stdout, "conspirator vs host-rdma") {
		t.Fatalf("run e2e-h200.yaml: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(run, "summary.json"))
	if !strings.Contains(string(b), `"compute_time": "1.20157ms"`) {
		t.Errorf("the H200 run's compute_time is not the measured graph p50 at batch 8 (1.20157ms)")
	}
}

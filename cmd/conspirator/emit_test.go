package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/sim/batch"
)

// A small sweep of the built-in paper/e2e: 2 loads x 2 seeds = 4 points.
var emitSweep = []string{"sweep", "paper/e2e", "--param", "datapath.host.background_load=0%,50%", "--seeds", "2",
	"--set", "datapath.clients.requests=50", "--set", "datapath.warmup_requests=10"}

func emitArgs(extra ...string) []string { return append(append([]string{}, emitSweep...), extra...) }

// Every misuse of --emit is a usage error (exit 2) saying which flag is
// wrong and what would be right, and writes nothing.
func TestEmitBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sw")
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown scheduler", nil, emitArgs("--emit", "pbs", "-o", dir), `--emit "pbs": unknown scheduler; use slurm`},
		{"no output directory", nil, emitArgs("--emit", "slurm"), "--emit slurm needs -o DIR"},
		{"zero shards", nil, emitArgs("--emit", "slurm", "--shards", "0", "-o", dir), "--shards 0"},
		{"negative shards", nil, emitArgs("--emit", "k8s", "--shards", "-2", "-o", dir), "--shards -2"},
		{"more shards than points", nil, emitArgs("--emit", "slurm", "--shards", "5", "-o", dir), "only 4 points"},
		{"negative throttle", nil, emitArgs("--emit", "slurm", "--throttle", "-1", "-o", dir), "--throttle -1"},
		{"shards without emit", nil, emitArgs("--shards", "4", "-o", dir), "--shards only applies with --emit"},
		{"emit with shard", nil, emitArgs("--emit", "slurm", "--shard", "0/2", "-o", dir), "drop --shard"},
		{"image for slurm", nil, emitArgs("--emit", "slurm", "--image", "x", "-o", dir), "--image only applies with --emit k8s"},
		{"relative binary", nil, emitArgs("--emit", "slurm", "--binary", "conspirator", "-o", dir), "absolute path"},
		{"percent in the directory", nil, emitArgs("--emit", "slurm", "--binary", "/bin/true", "-o", filepath.Join(dir, "50%")), "#SBATCH"},
		{"scenario key in the environment", []string{"CONSPIRATOR_DATAPATH__HOST__CORES=4"},
			emitArgs("--emit", "slurm", "-o", dir), "CONSPIRATOR_DATAPATH__HOST__CORES is set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.env, c.args...)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, batch.SlurmFile)); err == nil {
				t.Errorf("a failed emit left %s", filepath.Join(dir, batch.SlurmFile))
			}
		})
	}
}

// The emitted directory is what the tasks expect: a task run in it (the
// script's command with --shard i/n) resumes into the prepared sweep.json
// instead of refusing a different sweep, and emitting again afterwards
// names the tasks with unfinished points.
// A calibration profile given by a relative path would not be found from
// the copy of the scenario in DIR: refused, with the fix.
func TestEmitRelativeCalibration(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	writeFile(t, tmp, "prof.yaml", fmt.Sprintf("version: %d\n", calib.ProfileVersion))
	code, _, stderr := cli(t, nil, emitArgs("--emit", "slurm", "--set", "calibration=prof.yaml", "-o", filepath.Join(tmp, "sw"))...)
	if code != exitUsage || !strings.Contains(stderr, "calibration: prof.yaml is relative") || !strings.Contains(stderr, "absolute path") {
		t.Errorf("exit %d, %q; want exit 2 naming the relative profile", code, stderr)
	}
}

func TestEmitThenRunATask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sw")
	code, stdout, stderr := cli(t, nil, emitArgs("--emit", "slurm", "--shards", "2", "--throttle", "1", "--binary", "/opt/conspirator", "-o", dir)...)
	if code != exitOK {
		t.Fatalf("emit: exit %d\n%s", code, stderr)
	}
	script := filepath.Join(dir, batch.SlurmFile)
	if !strings.Contains(stdout, "submit: sbatch "+script) {
		t.Errorf("emit printed %q, want the submit line", stdout)
	}
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-1%1\n", "exec /opt/conspirator sweep scenario.yaml --param 'datapath.host.background_load=0%,50%' --seeds 2 --set datapath.clients.requests=50 --set datapath.warmup_requests=10 -j 1 --resume --no-report --shard \"${SLURM_ARRAY_TASK_ID}/2\" -o " + dir + "\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("%s lacks %q:\n%s", script, want, text)
		}
	}
	// The scenario copy is the built-in text, so the array does not depend
	// on the binary's library or the working directory.
	sc, _ := os.ReadFile(filepath.Join(dir, batch.ScenarioFile))
	if !strings.HasPrefix(string(sc), "# The end-to-end comparison") {
		t.Errorf("scenario.yaml is not paper/e2e's text: %.60q", sc)
	}

	// Task 1 of 2 as the script runs it (points 1 and 3 of 0..3).
	t.Chdir(dir)
	task := append([]string{"sweep", batch.ScenarioFile}, emitSweep[2:]...)
	task = append(task, "-j", "1", "--resume", "--no-report", "--shard", "1/2", "-o", dir)
	if code, out, stderr := cli(t, nil, task...); code != exitOK || !strings.Contains(out, "2 points in this shard, 2 ran, 0 already done") {
		t.Fatalf("task 1: exit %d\n%s%s", code, out, stderr)
	}
	if got, err := batch.MissingShards(dir); err != nil || len(got) != 1 || got[0] != 0 {
		t.Fatalf("MissingShards = %v, %v; want [0]", got, err)
	}
	code, stdout, stderr = cli(t, nil, emitArgs("--emit", "slurm", "--shards", "2", "--throttle", "1", "--binary", "/opt/conspirator", "-o", dir)...)
	if code != exitOK || !strings.Contains(stdout, "rerun the 1 tasks with unfinished points: sbatch --array=0 "+script) {
		t.Errorf("emit again: exit %d, %q %q; want the rerun line for task 0", code, stdout, stderr)
	}
}

func TestEmitK8s(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sw")
	code, stdout, stderr := cli(t, nil, emitArgs("--emit", "k8s", "--shards", "3", "--image", "registry.example/conspirator:1", "-o", dir)...)
	if code != exitOK || !strings.Contains(stdout, "kubectl apply -f "+filepath.Join(dir, batch.K8sFile)) {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	m, _ := os.ReadFile(filepath.Join(dir, batch.K8sFile))
	for _, want := range []string{"completions: 3\n", "parallelism: 3\n", "image: registry.example/conspirator:1\n",
		"- " + batch.DefaultK8sBinary + "\n", "value: \"3\"\n", "NOT TESTED"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
}

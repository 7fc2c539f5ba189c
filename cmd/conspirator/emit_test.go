package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/batch"
	"github.com/conspirator-sim/conspirator/workloads/trace"
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
	if builtin, err := scenarios.Show("paper/e2e"); err != nil || !bytes.Equal(sc, builtin) || !strings.Contains(string(sc), "\n# The end-to-end comparison") {
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

// An emitted cluster sweep runs where it is sent (issue 34): its trace is
// given relative to the directory the emit ran in, and the task, run by
// bash from the emitted script exactly as Slurm would (another working
// directory, SLURM_ARRAY_TASK_ID set), finds it by the absolute path the
// emit resolved and checked. A k8s emit copies the trace into the sweep's
// inputs/ and gives the pods its path there; a missing trace fails the
// emit at once, naming the key, the resolved path and the directory.
func TestEmittedClusterSweepRunsWhereItIsSent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the emitted task as a process")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the Slurm script")
	}
	work := t.TempDir()
	t.Chdir(work)
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p1,1000,1024,1,500,,BE,Running,10,500,10\np2,1000,1024,1,1000,,BE,Running,20,900,20\n" +
		"p3,1000,1024,2,1000,,LS,Running,30,700,30\np4,1000,1024,1,250,,BE,Running,40,400,40\n"
	if err := os.WriteFile("pods.csv", []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(work, "conspirator")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nSIM_TEST_AS_CLI=1 exec "+os.Args[0]+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sweepArgs := []string{"sweep", "paper/heuristic-vs-optimal", "--param", "cluster.window.jobs=3,4", "--set", "cluster.trace=pods.csv",
		"--set", "cluster.policies=[conspirator, naive-share]", "--set", "cluster.policy_args={}", "--set", "cluster.baseline=naive-share", "--set", "cluster.window.skip=0"}
	dir := filepath.Join(t.TempDir(), "sw")
	code, stdout, stderr := cli(t, nil, append(sweepArgs, "--emit", "slurm", "--binary", wrapper, "-o", dir)...)
	if code != exitOK {
		t.Fatalf("emit: exit %d\n%s%s", code, stdout, stderr)
	}
	script, _ := os.ReadFile(filepath.Join(dir, batch.SlurmFile))
	abs := filepath.Join(work, "pods.csv")
	if !strings.Contains(string(script), "--set cluster.trace="+abs) {
		t.Errorf("the script does not give the tasks the trace's absolute path %s:\n%s", abs, script)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, batch.ReadmeFile))
	if !strings.Contains(string(readme), "`cluster.trace`: `"+abs+"`") {
		t.Errorf("README.md does not list the data file:\n%s", readme)
	}
	elsewhere := t.TempDir()
	for task := range 2 {
		cmd := exec.Command("bash", filepath.Join(dir, batch.SlurmFile))
		cmd.Dir = elsewhere
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", task))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %d from %s: %v\n%s", task, elsewhere, err, out)
		}
	}
	if missing, err := batch.MissingShards(dir); err != nil || len(missing) != 0 {
		t.Fatalf("after both tasks, unfinished tasks %v, %v", missing, err)
	}
	if code, out, serr := cli(t, nil, "report", dir); code != exitOK {
		t.Fatalf("report: exit %d\n%s%s", code, out, serr)
	}

	kdir := filepath.Join(t.TempDir(), "k")
	if code, out, serr := cli(t, nil, append(sweepArgs, "--emit", "k8s", "-o", kdir)...); code != exitOK {
		t.Fatalf("emit k8s: exit %d\n%s%s", code, out, serr)
	}
	copyPath := filepath.Join(kdir, batch.InputsDir, "cluster-trace-pods.csv")
	copied, err := os.ReadFile(copyPath)
	if err != nil || string(copied) != pods {
		t.Errorf("k8s: the trace was not copied into inputs/: %v", err)
	}
	// A copy, not a link to the user's data: editing it leaves pods.csv
	// as it was (an edit in place, as an editor that truncates does).
	notAliased(t, abs, copyPath, pods)
	m, _ := os.ReadFile(filepath.Join(kdir, batch.K8sFile))
	if !strings.Contains(string(m), "cluster.trace="+batch.K8sMount+"/inputs/cluster-trace-pods.csv") {
		t.Errorf("k8s: the pods are not given the copy's path:\n%s", m)
	}

	os.Remove("pods.csv")
	code, _, stderr = cli(t, nil, append(sweepArgs, "--emit", "slurm", "--binary", wrapper, "-o", filepath.Join(t.TempDir(), "x"))...)
	for _, want := range []string{"cluster.trace: file pods.csv not found (resolved to " + abs + " from the working directory " + work + ")",
		trace.Source("pods.csv", "") + "; download the file there, or point cluster.trace at your copy"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("emit with a missing trace: exit %d, stderr %q; want exit 2 with %q", code, stderr, want)
		}
	}
}

// notAliased checks that dst is a file of its own, not src under another
// name: another inode, and writing into dst in place leaves src holding
// want.
func notAliased(t *testing.T, src, dst, want string) {
	t.Helper()
	a, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(a, b) {
		t.Errorf("%s is a hard link to the user's %s (one inode)", dst, src)
	}
	if err := os.WriteFile(dst, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(src); err != nil || string(got) != want {
		t.Errorf("editing %s changed the user's %s: now %q (%v)", dst, src, got, err)
	}
}

// copyInput gives a Kubernetes sweep's inputs/ a copy of each data file in
// every case: a new file, a file already there with other bytes, one with
// the same bytes (kept as it is), and a hard link to the source that an
// earlier version left (replaced by a copy).
func TestCopyInputNeverAliases(t *testing.T) {
	const data = "a,b\n1,2\n"
	for _, tc := range []struct {
		name     string
		before   func(src, dst string) error
		keepsOld bool // the file at dst is the one that was there
	}{
		{"new", func(src, dst string) error { return nil }, false},
		{"other bytes there", func(src, dst string) error { return os.WriteFile(dst, []byte("old\n"), 0o644) }, false},
		{"same bytes there", func(src, dst string) error { return os.WriteFile(dst, []byte(data), 0o644) }, true},
		{"link to the source there", func(src, dst string) error { return os.Link(src, dst) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "trace.csv")
			dst := filepath.Join(dir, "sweep", batch.InputsDir, "cluster-trace-trace.csv")
			if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.before(src, dst); err != nil {
				t.Fatal(err)
			}
			var old os.FileInfo
			if st, err := os.Stat(dst); err == nil {
				old = st
			}
			if err := copyInput(src, dst); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(dst); err != nil || string(got) != data {
				t.Fatalf("copy holds %q (%v), want %q", got, err, data)
			}
			now, _ := os.Stat(dst)
			if kept := old != nil && os.SameFile(old, now); kept != tc.keepsOld {
				t.Errorf("the file that was at dst kept: %v, want %v", kept, tc.keepsOld)
			}
			notAliased(t, src, dst, data)
		})
	}
}

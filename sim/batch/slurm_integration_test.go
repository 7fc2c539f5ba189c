//go:build slurm

package batch_test

// The integration test of `sweep --emit slurm` on a real Slurm: it starts
// munged, slurmctld and slurmd on 127.0.0.1 (no systemd; as root), submits
// the emitted job array, merges, and compares byte for byte with the same
// sweep run locally with -j 1; then it kills one task half-way, finds it with
// MissingShards, reruns it alone and checks that no finished point was
// redone. Run it with .ci/slurm.sh (which installs slurm-wlm and munge):
//
//	go test -tags slurm -run Slurm -v ./sim/batch/

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/internal/filetree"
	"github.com/conspirator-sim/conspirator/sim/batch"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// The sweep: 2 load values x 3 seeds = 6 points in 3 tasks, 2 at once; each
// point is a short paper/e2e run (200 measured requests).
var sweepArgs = []string{"paper/e2e",
	"--param", "datapath.host.background_load=0%,60%", "--seeds", "3",
	"--set", "datapath.clients.requests=60", "--set", "datapath.warmup_requests=40"}

const shards, throttle = 3, 2

func TestSlurmArray(t *testing.T) {
	for _, p := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo", "scancel"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("SKIP: %s is not on PATH: this test needs a real Slurm (Debian packages slurm-wlm and munge; .ci/slurm.sh installs them as root)", p)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the single-node Slurm runs its daemons as root (SlurmUser=root); run as root")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	cl := startSlurm(t, filepath.Join(tmp, "slurm"))

	// The reference: the same sweep on this machine, -j 1, no scheduler.
	dir := filepath.Join(tmp, "array")
	emit(t, bin, dir)
	local := filepath.Join(tmp, "local")
	runIn(t, dir, nil, bin, localArgs(local)...)

	// 1. The whole array, then merge.
	if out, err := cl.sbatch(t, filepath.Join(dir, batch.SlurmFile)); err != nil {
		t.Fatalf("sbatch --wait: %v\n%s\n%s", err, out, logs(dir))
	}
	if m, err := batch.MissingShards(dir); err != nil || len(m) != 0 {
		t.Fatalf("after the array: MissingShards = %v, %v; want none\n%s", m, err, logs(dir))
	}
	merged := filepath.Join(tmp, "merged")
	if err := sweep.Merge(merged, dir); err != nil {
		t.Fatalf("merge: %v", err)
	}
	sameTree(t, "merged array", merged, "local -j 1", local)

	// 2. Task 1 finishes one of its two points and is killed (SIGKILL):
	// a wrapper binary injects the fault until the file "heal" exists.
	dir2 := filepath.Join(tmp, "array-killed")
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	var task1 []sweep.Point // shard 1: indices 1 and 4
	for _, p := range spec.Points {
		if p.Index%shards == 1 {
			task1 = append(task1, p)
		}
	}
	heal := filepath.Join(tmp, "heal")
	wrapper := filepath.Join(tmp, "conspirator-faulty")
	script := fmt.Sprintf(`#!/bin/bash
if [ "${SLURM_ARRAY_TASK_ID:-}" = 1 ] && [ ! -e %[1]s ]; then
  %[2]s "$@" || exit
  rm -rf %[3]s
  kill -KILL $$
fi
exec %[2]s "$@"
`, heal, bin, sweep.PointDir(dir2, task1[len(task1)-1]))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	emit(t, bin, dir2, "--binary", wrapper)
	out, err := cl.sbatch(t, filepath.Join(dir2, batch.SlurmFile))
	if err == nil {
		t.Fatalf("sbatch --wait succeeded with task 1 killed; want a non-zero exit (the highest of the tasks')\n%s", out)
	}
	t.Logf("array with task 1 killed: sbatch --wait: %v (expected)", err)

	// Detect: MissingShards, the merge and the emit command all name task 1.
	missing, err := batch.MissingShards(dir2)
	if err != nil || !slices.Equal(missing, []int{1}) {
		t.Fatalf("MissingShards = %v, %v; want [1]\n%s", missing, err, logs(dir2))
	}
	if err := sweep.Merge(filepath.Join(tmp, "merged-incomplete"), dir2); err == nil || !strings.Contains(err.Error(), "1 of 6 points are in no shard") {
		t.Fatalf("merge of the incomplete array: %v; want an error naming 1 missing point of 6", err)
	}
	again := emit(t, bin, dir2, "--binary", wrapper)
	wantLine := fmt.Sprintf("sbatch --array=1 %s", filepath.Join(dir2, batch.SlurmFile))
	if !strings.Contains(again, wantLine) {
		t.Fatalf("emitting again printed\n%s\nwant the rerun line %q", again, wantLine)
	}

	// Rerun task 1 alone; no finished point may be written again (a
	// rewritten point is a new directory renamed into place: new inode).
	before := pointInodes(t, dir2)
	if len(before) != 5 {
		t.Fatalf("%d finished points before the rerun, want 5 of 6", len(before))
	}
	if err := os.WriteFile(heal, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cl.sbatch(t, "--array=1", filepath.Join(dir2, batch.SlurmFile)); err != nil {
		t.Fatalf("rerun of task 1: %v\n%s\n%s", err, out, logs(dir2))
	}
	after := pointInodes(t, dir2)
	for id, ino := range before {
		if after[id] != ino {
			t.Errorf("point %s was rewritten by the rerun (inode %d -> %d)", id, ino, after[id])
		}
	}
	// Logs are task-<array job>_<task>.out: the killed attempt's log stays
	// beside the rerun's, and the rerun is the higher array job id.
	attempts := taskLogs(t, dir2, 1)
	if len(attempts) != 2 {
		t.Fatalf("task 1 has %d logs %v, want 2 (the killed attempt's kept beside the rerun's)", len(attempts), attempts)
	}
	log1, _ := os.ReadFile(attempts[len(attempts)-1])
	if !regexp.MustCompile(`2 points in this shard, 1 ran, 1 already done`).Match(log1) {
		t.Errorf("task 1's rerun log:\n%s\nwant it to run 1 point and skip the 1 finished", log1)
	}
	if m, err := batch.MissingShards(dir2); err != nil || len(m) != 0 {
		t.Fatalf("after the rerun: MissingShards = %v, %v; want none", m, err)
	}
	merged2 := filepath.Join(tmp, "merged-rerun")
	if err := sweep.Merge(merged2, dir2); err != nil {
		t.Fatalf("merge after the rerun: %v", err)
	}
	sameTree(t, "merged array after a rerun", merged2, "local -j 1", local)

	// Last, as it adds the rendered files to local: the reports of the
	// array and of the local run are identical too.
	reportIfAvailable(t, bin, dir, local)
}

// emit runs `sweep --emit slurm` into dir and returns its output.
func emit(t *testing.T, bin, dir string, extra ...string) string {
	t.Helper()
	args := append(append([]string{"sweep"}, sweepArgs...), "--emit", "slurm",
		"--shards", fmt.Sprint(shards), "--throttle", fmt.Sprint(throttle), "-o", dir)
	return runIn(t, "", nil, bin, append(args, extra...)...)
}

// localArgs is the emitted sweep run in the emitted directory (the tasks
// run scenario.yaml there), all points, one worker.
func localArgs(out string) []string {
	return append(append([]string{"sweep", batch.ScenarioFile}, sweepArgs[1:]...), "-j", "1", "--no-report", "-o", out)
}

// reportIfAvailable renders both directories with `conspirator report` and
// compares them again, where the binary has that command.
func reportIfAvailable(t *testing.T, bin, dir, local string) {
	if err := exec.Command(bin, "report", "--help").Run(); err != nil {
		t.Logf("conspirator has no report command yet: compared sweep.json and points/ only")
		return
	}
	runIn(t, "", nil, bin, "report", dir)
	runIn(t, "", nil, bin, "report", local)
	sameTree(t, "array after `report`", dir, "local -j 1 after `report`", local)
}

func runIn(t *testing.T, wd string, env []string, bin string, args ...string) string {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Dir = wd
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func buildBinary(t *testing.T, tmp string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	bin := filepath.Join(tmp, "conspirator")
	c := exec.Command("go", "build", "-o", bin, "./cmd/conspirator")
	c.Dir = root
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// emittedFiles are what --emit and Slurm add to a sweep directory; the
// rest must equal a local run's directory.
var emittedFiles = map[string]bool{batch.ScenarioFile: true, batch.StateFile: true, batch.SlurmFile: true,
	batch.K8sFile: true, batch.ReadmeFile: true, batch.LogDir: true}

// tree maps every file under dir (but the emitted ones) to its SHA-256.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree, err := filetree.Hashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	for p := range tree {
		if top, _, _ := strings.Cut(p, "/"); emittedFiles[top] {
			delete(tree, p)
		}
	}
	return tree
}

func sameTree(t *testing.T, nameA, a, nameB, b string) {
	t.Helper()
	ta, tb := tree(t, a), tree(t, b)
	var diffs []string
	for p, h := range ta {
		if tb[p] != h {
			diffs = append(diffs, fmt.Sprintf("%s: %s %.12s, %s %.12s", p, nameA, h, nameB, tb[p]))
		}
	}
	for p := range tb {
		if _, ok := ta[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: only in %s", p, nameB))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%s (%s) and %s (%s) differ in %d files:\n%s", nameA, a, nameB, b, len(diffs), strings.Join(diffs, "\n"))
	}
	if len(ta) < 2 {
		t.Fatalf("%s holds %d files: nothing was compared", a, len(ta))
	}
	t.Logf("%s and %s: %d files, byte-identical", nameA, nameB, len(ta))
}

// pointInodes maps each finished point of dir to its directory's inode.
func pointInodes(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]uint64{}
	for _, p := range spec.Points {
		if ok, _ := sweep.IsComplete(dir, p); !ok {
			continue
		}
		st, err := os.Stat(sweep.PointDir(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		m[p.ID] = st.Sys().(*syscall.Stat_t).Ino
	}
	return m
}

// taskLogs returns the stdout logs of array task i in dir, oldest array
// job first (sbatch names them task-%A_%a.out).
func taskLogs(t *testing.T, dir string, i int) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, batch.LogDir, fmt.Sprintf("task-*_%d.out", i)))
	if err != nil {
		t.Fatal(err)
	}
	job := func(p string) int {
		var a, b int
		if _, err := fmt.Sscanf(filepath.Base(p), "task-%d_%d.out", &a, &b); err != nil {
			t.Fatalf("log %s: %v; want task-<job>_<task>.out", p, err)
		}
		return a
	}
	slices.SortFunc(paths, func(x, y string) int { return job(x) - job(y) })
	return paths
}

func logs(dir string) string {
	var b strings.Builder
	paths, _ := filepath.Glob(filepath.Join(dir, batch.LogDir, "*"))
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "--- %s\n%s", p, data)
	}
	return b.String()
}

// cluster is a single-node Slurm on loopback started by this test.
type cluster struct {
	conf string // SLURM_CONF for the client commands
	dir  string
	jobs []string // submitted job ids, cancelled at cleanup
}

func (c *cluster) env() []string { return []string{"SLURM_CONF=" + c.conf} }

// sbatch submits with --wait (and --parsable, to learn the job id) and
// returns the output and the exit error: sbatch --wait exits with the
// highest exit code of the array's tasks.
func (c *cluster) sbatch(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sbatch", append([]string{"--parsable", "--wait"}, args...)...)
	cmd.Env = append(os.Environ(), c.env()...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if id, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n"); id != "" {
			c.jobs = append(c.jobs, strings.TrimSpace(id))
		}
		return out.String(), err
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("sbatch --wait %v: no result after 90 s\n%s\n%s", args, out.String(), c.daemonLogs())
		return "", nil
	}
}

func (c *cluster) daemonLogs() string {
	var b strings.Builder
	for _, n := range []string{"munged.log", "slurmctld.log", "slurmd.log"} {
		data, _ := os.ReadFile(filepath.Join(c.dir, n))
		lines := strings.Split(string(data), "\n")
		if len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", n, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// freePorts returns n distinct TCP ports that were free a moment ago:
// all n listeners are open at once (one after another, a closed port can
// be handed out again), then closed for the daemons to bind.
func freePorts(t *testing.T, n int) []any {
	t.Helper()
	var ports []any
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startSlurm starts munged, slurmctld and slurmd in the foreground as
// children of the test, with every file under dir, and stops each by its
// own process id at cleanup (also on failure, after printing their logs).
func startSlurm(t *testing.T, dir string) *cluster {
	t.Helper()
	for _, d := range []string{"state", "spool", "munge"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &cluster{conf: filepath.Join(dir, "slurm.conf"), dir: dir}
	sock := filepath.Join(dir, "munge", "munge.sock")
	key := filepath.Join(dir, "munge", "munge.key")
	if out, err := exec.Command("mungekey", "--create", "--keyfile="+key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey --create: %v\n%s", err, out)
	}
	conf := fmt.Sprintf(`ClusterName=conspirator-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%[3]s
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/slurmctld.log
SlurmdLogFile=%[4]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=1
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, append(freePorts(t, 2), sock, dir)...)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	var procs []*exec.Cmd
	t.Cleanup(func() {
		if len(c.jobs) > 0 {
			cmd := exec.Command("scancel", c.jobs...)
			cmd.Env = append(os.Environ(), c.env()...)
			cmd.Run()
		}
		if t.Failed() {
			t.Logf("daemon logs:\n%s", c.daemonLogs())
		}
		// Stop in reverse order of start, each by its own pid.
		for i := len(procs) - 1; i >= 0; i-- {
			stop(t, procs[i])
		}
	})
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), c.env()...)
		f, err := os.Create(filepath.Join(dir, name+".stdout"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		procs = append(procs, cmd)
	}
	start("munged", "--foreground", "--force", "--socket="+sock, "--key-file="+key,
		"--log-file="+filepath.Join(dir, "munged.log"), "--pid-file="+filepath.Join(dir, "munge", "munged.pid"),
		"--seed-file="+filepath.Join(dir, "munge", "munged.seed"))
	waitFor(t, c, "munged's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	start("slurmctld", "-D", "-i", "-f", c.conf)
	start("slurmd", "-D", "-N", "localhost", "-f", c.conf)
	waitFor(t, c, "node localhost idle in sinfo", func() bool {
		cmd := exec.Command("sinfo", "--noheader", "--nodes=localhost", "--format=%t")
		cmd.Env = append(os.Environ(), c.env()...)
		out, err := cmd.Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

func waitFor(t *testing.T, c *cluster, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			stdouts, _ := filepath.Glob(filepath.Join(c.dir, "*.stdout"))
			var b strings.Builder
			for _, p := range stdouts {
				data, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "--- %s\n%s\n", p, data)
			}
			t.Fatalf("waiting for %s: not after 30 s\n%s%s", what, b.String(), c.daemonLogs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop sends SIGTERM to the process, and SIGKILL if it has not exited
// within 10 s.
func stop(t *testing.T, cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Logf("%s (pid %d) ignored SIGTERM for 10 s: killing it", cmd.Path, cmd.Process.Pid)
		cmd.Process.Kill()
		<-done
	}
}

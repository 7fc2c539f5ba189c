package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Crash safety of the whole command: `conspirator sweep` (points, then the
// aggregate, plots and report) is SIGKILLed at 20 moments drawn at random
// over the length of a clean run (seeded, so a failure replays), each
// time restarted with --resume on the same directory; a last --resume
// finishes it. The directory is then byte-identical to an uninterrupted
// sweep: no temporary, no half-written aggregate or plot survives.
func TestSweepSurvivesRandomKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 22 processes")
	}
	args := func(out string) []string {
		return []string{"sweep", "paper/e2e", "--param", "datapath.host.background_load=0%,80%", "--seeds", "2",
			"--set", "datapath.clients.requests=100", "-j", "2", "--resume", "-o", out}
	}
	command := func(out string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args(out)...)
		cmd.Env = append(os.Environ(), "SIM_TEST_AS_CLI=1")
		return cmd
	}
	start := func(out string) *exec.Cmd {
		cmd := command(out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	root := t.TempDir()
	ref := filepath.Join(root, "ref")
	t0 := time.Now()
	if out, err := command(ref).CombinedOutput(); err != nil {
		t.Fatalf("clean sweep: %v\n%s", err, out)
	}
	// The wall time of a clean run only spreads the kill moments; no
	// assertion depends on it.
	span := time.Since(t0)
	dir := filepath.Join(root, "killed")
	rng := rand.New(rand.NewPCG(20, 16))
	finished := 0
	for kill := 0; kill < 20; kill++ {
		cmd := start(dir)
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			if err != nil {
				t.Fatalf("kill %d: the sweep failed on its own: %v", kill, err)
			}
			finished++
		}
	}
	if code, _, stderr := cli(t, nil, args(dir)...); code != 0 {
		t.Fatalf("final resume: exit %d: %s", code, stderr)
	}
	if a, b := treeHash(t, ref), treeHash(t, dir); a != b {
		t.Errorf("after 20 kills and a resume the sweep differs from a clean one:\n%s\n---\n%s", a, b)
	}
	t.Logf("20 kills over %v, %d after the sweep had finished", span, finished)
}

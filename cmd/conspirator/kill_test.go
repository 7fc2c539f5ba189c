package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
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

// Crash safety of replacing a result: `conspirator run -o DIR` over an
// earlier result is SIGKILLed at 20 moments drawn at random over a clean
// run's length, alternating between two seeds so that every run replaces
// a different result. After each kill DIR holds one of the two complete
// results, byte for byte (the earlier one or the new one: never a mixture,
// never absent), and the next run removes what a killed one left; after
// the last, no temporary is left beside DIR.
func TestRunReplaceSurvivesRandomKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 22 processes")
	}
	root := t.TempDir()
	args := func(out, seed string) []string {
		return []string{"run", "paper/e2e", "--seed", seed, "--set", "datapath.clients.requests=150", "--no-sensitivity", "-o", out}
	}
	command := func(out, seed string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args(out, seed)...)
		cmd.Env = append(os.Environ(), "SIM_TEST_AS_CLI=1")
		return cmd
	}
	refs := map[string]string{}
	t0 := time.Now()
	for _, seed := range []string{"1", "2"} {
		ref := filepath.Join(root, "ref"+seed)
		if out, err := command(ref, seed).CombinedOutput(); err != nil {
			t.Fatalf("clean run: %v\n%s", err, out)
		}
		refs[treeHash(t, ref)] = seed
	}
	// The wall time only spreads the kill moments, over 1.5 clean runs:
	// a killed run also waits for the one killed before it to let go.
	span := time.Since(t0) * 3 / 4
	dir := filepath.Join(root, "killed")
	if out, err := command(dir, "1").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	rng := rand.New(rand.NewPCG(33, 1))
	replaced := 0
	last := "1"
	for kill := 0; kill < 20; kill++ {
		seed := []string{"2", "1"}[kill%2]
		cmd := command(dir, seed)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		got, ok := refs[treeHash(t, dir)]
		if !ok {
			t.Fatalf("kill %d: %s is neither complete result", kill, dir)
		}
		if got != last {
			replaced++
		}
		last = got
	}
	if code, _, stderr := cli(t, nil, args(dir, "2")...); code != 0 {
		t.Fatalf("final run: exit %d: %s", code, stderr)
	}
	if tmp, _ := atomicfs.Temps(root); len(tmp) > 0 {
		t.Errorf("temporaries left after the final run: %v", tmp)
	}
	t.Logf("20 kills over %v; the result was replaced by %d of the killed runs", span, replaced)
}

// Two sweeps with different inputs started together into one directory,
// 12 times (SIM_TEST_RACE_TRIES for more): one of them writes the directory and the other is refused
// (the lock, or the other's sweep.json), never both; the directory then
// reports cleanly (every point's inputs match sweep.json) and equals the
// winner's clean sweep byte for byte.
func TestTwoSweepsIntoOneDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 24 processes")
	}
	root := t.TempDir()
	args := func(out, reqs string) []string {
		return []string{"sweep", "paper/e2e", "--param", "datapath.host.background_load=0%,80%",
			"--set", "datapath.clients.requests=" + reqs, "-j", "1", "-o", out}
	}
	command := func(out, reqs string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args(out, reqs)...)
		cmd.Env = append(os.Environ(), "SIM_TEST_AS_CLI=1")
		return cmd
	}
	refs := map[string]string{}
	for _, r := range []string{"100", "120"} {
		ref := filepath.Join(root, "ref"+r)
		if out, err := command(ref, r).CombinedOutput(); err != nil {
			t.Fatalf("clean sweep: %v\n%s", err, out)
		}
		// Drawn by report, as the race's directory is below (the page
		// names the command that wrote it).
		if code, _, stderr := cli(t, nil, "report", ref); code != 0 {
			t.Fatalf("report %s: exit %d: %s", ref, code, stderr)
		}
		refs[r] = treeHash(t, ref)
	}
	locked, refused := 0, 0
	tries := envCount(t, "SIM_TEST_RACE_TRIES", 12)
	for try := 0; try < tries; try++ {
		dir := filepath.Join(root, fmt.Sprintf("race%d", try))
		a, b := command(dir, "100"), command(dir, "120")
		var ea, eb bytes.Buffer
		a.Stderr, b.Stderr = &ea, &eb
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		errA, errB := a.Wait(), b.Wait()
		if (errA == nil) == (errB == nil) {
			t.Fatalf("try %d: both sweeps exited %v and %v; want exactly one to succeed:\n%s\n%s", try, errA, errB, ea.String(), eb.String())
		}
		winner, loser := "100", eb.String()
		if errA != nil {
			winner, loser = "120", ea.String()
		}
		switch {
		case strings.Contains(loser, "is writing"):
			locked++
		case strings.Contains(loser, "different sweep"):
			refused++
		default:
			t.Errorf("try %d: the loser's message names neither the lock nor the other sweep:\n%s", try, loser)
		}
		if code, _, stderr := cli(t, nil, "report", dir); code != 0 {
			t.Fatalf("try %d: report: exit %d: %s", try, code, stderr)
		}
		if got := treeHash(t, dir); got != refs[winner] {
			t.Errorf("try %d: the directory is not the winner's (%s) clean sweep", try, winner)
		}
	}
	t.Logf("%d races: the loser met the lock %d times and the winner's sweep.json %d times; 0 mixed directories", tries, locked, refused)
}

// envCount is a test's repeat count: def, or the environment variable
// name's value for a longer run (the figures: 50 races).
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

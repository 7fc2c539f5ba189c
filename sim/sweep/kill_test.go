package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// helperDirEnv makes the test binary act as a sweep process (the re-exec
// pattern): the parent test starts it, SIGKILLs it midway and resumes.
const helperDirEnv = "SWEEP_TEST_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperDirEnv); dir != "" {
		slow := func(ctx context.Context, p Point) (map[string][]byte, error) {
			time.Sleep(20 * time.Millisecond) // long enough to be killed mid-sweep
			return fakeRun(ctx, p)
		}
		_, err := Run(context.Background(), testPoints(), Options{Dir: dir, Jobs: 2, Resume: true}, slow)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A real process is SIGKILLed (no chance to clean up) after some points are
// complete; resume runs exactly the missing points, keeps every finished one
// untouched, and the directory equals an uninterrupted run.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	pts, ref := testPoints(), refSweep(t)
	dir := filepath.Join(t.TempDir(), "killed")
	cmd := startHelper(t, dir)
	const k = 4
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := 0
		if _, err := os.Stat(filepath.Join(dir, "points")); err == nil {
			n = len(completeIDs(t, dir))
		}
		if n >= k {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("helper finished only %d points in 20 s", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed by SIGKILL (%v): it finished before the kill; slow it down", err)
	}

	done := completeIDs(t, dir)
	if len(done) < k || len(done) >= len(pts) {
		t.Fatalf("%d points complete after the kill, want between %d and %d", len(done), k, len(pts)-1)
	}
	before := map[string][]byte{}
	for _, id := range done {
		files, err := ReadPointFiles(filepath.Join(dir, "points", id))
		if err != nil {
			t.Fatalf("finished point %s is damaged after SIGKILL: %v", id, err)
		}
		before[id] = manifest(files)
	}
	var ran atomic.Int32
	sum, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 2, Resume: true}, func(ctx context.Context, p Point) (map[string][]byte, error) {
		if _, ok := before[p.ID]; ok {
			t.Errorf("resume reran finished point %s", p.ID)
		}
		ran.Add(1)
		return fakeRun(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if int(ran.Load()) != len(pts)-len(done) || sum.Skipped != len(done) {
		t.Errorf("resume ran %d points, skipped %d; want %d and %d", ran.Load(), sum.Skipped, len(pts)-len(done), len(done))
	}
	sameTree(t, ref, dir) // also proves no .tmp- directory is left
	t.Logf("killed after %d of %d points; resume ran %d", len(done), len(pts), ran.Load())
}

func startHelper(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// Crash safety: the same sweep directory is SIGKILLed at 20 moments drawn
// at random (seeded, so a failure can be replayed; the moments fall
// anywhere: before the spec is written, inside a point's write, between
// points), each time restarted with resume; a last resume finishes it.
// The directory is then byte-identical to an uninterrupted run, and every
// kill left only whole points behind.
func TestResumeAfterRandomKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 subprocesses")
	}
	pts, ref := testPoints(), refSweep(t)
	dir := filepath.Join(t.TempDir(), "killed")
	rng := rand.New(rand.NewPCG(16, 20))
	finished := 0
	for kill := 0; kill < 20; kill++ {
		cmd := startHelper(t, dir)
		// 18 points at 20 ms on 2 workers take about 180 ms plus start-up.
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			if err != nil {
				t.Fatalf("kill %d: helper failed on its own: %v", kill, err)
			}
			finished++ // it completed before the kill: fine
		}
		if _, err := os.Stat(filepath.Join(dir, "points")); err != nil {
			continue // killed before it created the directory
		}
		for _, id := range completeIDs(t, dir) {
			if _, err := ReadPointFiles(filepath.Join(dir, "points", id)); err != nil {
				t.Fatalf("kill %d: point %s is damaged: %v", kill, id, err)
			}
		}
	}
	if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 2, Resume: true}, fakeRun); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ref, dir) // also proves no temporary is left
	t.Logf("20 kills, %d of them after the helper had finished", finished)
}

// refSweep is an uninterrupted run of testPoints, the tree a killed and
// resumed sweep must equal.
func refSweep(t *testing.T) string {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), testPoints(), Options{Dir: ref, Jobs: 2}, fakeRun); err != nil {
		t.Fatal(err)
	}
	return ref
}

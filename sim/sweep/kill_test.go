package sweep

import (
	"context"
	"fmt"
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
		_, err := Run(context.Background(), testPoints(), Options{Dir: dir, Jobs: 2}, slow)
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
	pts := testPoints()
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), pts, Options{Dir: ref, Jobs: 2}, fakeRun); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "killed")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const k = 4
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := 0
		if entries, err := os.ReadDir(filepath.Join(dir, "points")); err == nil {
			for _, e := range entries {
				if _, err := os.Stat(filepath.Join(dir, "points", e.Name(), DoneFile)); err == nil {
					n++
				}
			}
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

package dirlock

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func heldBy(t *testing.T, err error, pid int) {
	t.Helper()
	var h *HeldError
	if !errors.As(err, &h) {
		t.Fatalf("err = %v, want a *HeldError", err)
	}
	if len(h.PIDs) != 1 || h.PIDs[0] != pid {
		t.Errorf("holders %v, want [%d]; message: %v", h.PIDs, pid, err)
	}
	if !strings.Contains(err.Error(), "is writing "+h.Dir) {
		t.Errorf("message %q does not name the directory", err)
	}
}

// Writers and shards exclude each other as the package documentation
// says; each refusal names the holder (this process here).
func TestExclusion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	me := os.Getpid()

	a, err := Exclusive(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Exclusive(dir)
	heldBy(t, err, me)
	_, err = Shard(dir, 0, 2)
	heldBy(t, err, me)
	a.Release()
	a.Release() // twice is harmless

	s0, err := Shard(dir, 0, 2)
	if err != nil {
		t.Fatalf("shard 0/2 after release: %v", err)
	}
	s1, err := Shard(dir, 1, 2)
	if err != nil {
		t.Fatalf("shard 1/2 beside shard 0/2: %v", err)
	}
	_, err = Shard(dir, 0, 2)
	heldBy(t, err, me)
	_, err = Exclusive(dir)
	heldBy(t, err, me)
	s0.Release()
	_, err = Exclusive(dir)
	heldBy(t, err, me) // shard 1 still runs
	s1.Release()
	b, err := Exclusive(dir)
	if err != nil {
		t.Fatalf("exclusive after every shard left: %v", err)
	}
	b.Release()
	// A different directory is not held by any of this.
	c1, err := Exclusive(dir + "2")
	if err != nil {
		t.Fatal(err)
	}
	c1.Release()
}

// A lock dies with its process: a holder killed with SIGKILL leaves the
// directory free, and while it lives the refusal names its PID (read from
// the lock file it holds; no PID is checked for life).
func TestLockHeldByAnotherProcess(t *testing.T) {
	if os.Getenv("DIRLOCK_HOLD") != "" {
		l, err := Exclusive(os.Getenv("DIRLOCK_HOLD"))
		if err != nil {
			os.Exit(3)
		}
		defer l.Release()
		os.Stdout.WriteString("locked\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent kills us
		return
	}
	dir := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockHeldByAnotherProcess$")
	cmd.Env = append(os.Environ(), "DIRLOCK_HOLD="+dir)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("helper said %q", line)
	}
	_, err := Exclusive(dir)
	heldBy(t, err, cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	// The killed holder's PID is still in the lock file; a refusal now
	// names the live holder only (this process, as shard 0 of 2).
	s0, err := Shard(dir, 0, 2)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	_, err = Exclusive(dir)
	heldBy(t, err, os.Getpid())
	s0.Release()
	l, err := Exclusive(dir)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}

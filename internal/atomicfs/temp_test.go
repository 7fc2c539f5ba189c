package atomicfs

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// names lists dir's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// A temporary nobody holds a lock on is a killed writer's leftover,
// whatever its name says: CleanTemps removes those of the named files
// (including names of an earlier version that carried this process's and
// its parent's PIDs, both alive) and nothing else.
func TestCleanTempsRemovesUnlocked(t *testing.T) {
	dir := t.TempDir()
	me, parent := strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getppid())
	for _, n := range []string{
		".aggregate.json.tmp-" + me + "-3", // old style, a live PID: removed
		".aggregate.json.tmp-" + parent + "-1",
		".aggregate.json.tmp-k3j9x2", // new style
		".sweep.json.tmp-k3j9x2",     // another file's: not named, kept
		"aggregate.json", ".hidden",  // not temporaries
	} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".aggregate.json.tmp-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CleanTemps(OS, dir, "aggregate.json"); err != nil {
		t.Fatal(err)
	}
	want := []string{".hidden", ".sweep.json.tmp-k3j9x2", "aggregate.json"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if err := CleanTemps(OS, dir); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, dir), []string{".hidden", "aggregate.json"}; !slices.Equal(got, want) {
		t.Errorf("with no prefix: left %v, want %v", got, want)
	}
	if err := CleanTemps(OS, filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}

// A temporary is kept while its lock is held, by this process's writer
// (CreateTemp until ReleaseTemp) or by any other descriptor (a writer
// whose bookkeeping this process does not share), and removed once the
// lock is dropped.
func TestCleanTempsKeepsLockedInProcess(t *testing.T) {
	dir := t.TempDir()
	live, err := CreateTemp(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	released, err := CreateTemp(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	ReleaseTemp(released)
	other := filepath.Join(dir, ".c"+TmpInfix+"x")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := tryLock(f); err != nil {
		t.Fatal(err)
	}
	if err := CleanTemps(OS, dir); err != nil {
		t.Fatal(err)
	}
	for p, keep := range map[string]bool{live: true, released: false, other: true} {
		if _, err := os.Stat(p); (err == nil) != keep {
			t.Errorf("%s: kept %v, want %v", filepath.Base(p), err == nil, keep)
		}
	}
	f.Close()
	ReleaseTemp(live)
	if err := CleanTemps(OS, dir); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after the locks were dropped, left %v, want nothing", got)
	}
}

// holdTemp refuses a fresh temporary that a cleaner locked first (it is
// about to remove it) or has removed: the writer then makes another.
func TestHoldTempLosesToCleaner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".a"+TmpInfix+"x")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		t.Fatal(err)
	}
	if err := holdTemp(p); !errors.Is(err, errBusy) {
		t.Errorf("temporary locked by a cleaner: holdTemp = %v, want errBusy", err)
	}
	os.Remove(p)
	if err := holdTemp(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary removed by a cleaner: holdTemp = %v, want not exist", err)
	}
	if _, live := liveTemps.Load(p); live {
		t.Errorf("a temporary holdTemp refused is registered as live")
	}
}

// holdEnv names the directory in which the child process of
// TestCleanTempsAcrossProcesses creates its temporaries.
const holdEnv = "ATOMICFS_TEST_HOLD_IN"

// A writer in another process keeps its temporaries (a file and a
// directory) while it lives; once it is killed (SIGKILL: no cleanup of
// its own) the kernel drops its locks and CleanTemps removes them. The
// child's PID plays no part.
func TestCleanTempsAcrossProcesses(t *testing.T) {
	if dir := os.Getenv(holdEnv); dir != "" {
		file, err := CreateTemp(filepath.Join(dir, "sweep.json"))
		if err != nil {
			os.Exit(3)
		}
		tmpDir, _, err := tempDir(OS, filepath.Join(dir, "run"))
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(file + "\n" + tmpDir + "\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent kills us
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCleanTempsAcrossProcesses$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	var temps []string
	for range 2 {
		line, _ := r.ReadString('\n')
		if !strings.HasPrefix(line, dir) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q, want a temporary in %s", line, dir)
		}
		temps = append(temps, strings.TrimSpace(line))
	}
	if err := CleanTemps(OS, dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range temps {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("live writer's %s removed (%v)", filepath.Base(p), err)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := CleanTemps(OS, dir); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after the writer was killed, left %v, want nothing", got)
	}
}

// The old directory that Replace moves aside is locked under its
// temporary name until Replace has removed it, with and without the
// atomic exchange: a cleaner in another process, which sees only the
// lock, leaves it alone.
func TestReplaceHoldsOldDirectory(t *testing.T) {
	defer func() { testAfterMoveAside = nil }()
	for _, noExchange := range []bool{false, true} {
		root := t.TempDir()
		dir := filepath.Join(root, "run")
		if err := WriteDir(OS, dir, map[string][]byte{"old": []byte("1")}, false, nil); err != nil {
			t.Fatal(err)
		}
		seen := ""
		testAfterMoveAside = func(old string) {
			seen = old
			if _, err := os.Stat(filepath.Join(old, "old")); err != nil {
				t.Errorf("exchange=%v: %s is not the old directory (%v)", !noExchange, old, err)
			}
			f, err := os.Open(old)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := tryLock(f); !errors.Is(err, errBusy) {
				t.Errorf("exchange=%v: the old directory at %s is not locked (tryLock = %v)", !noExchange, filepath.Base(old), err)
			}
		}
		fsys := &Faulty{NoExchange: noExchange}
		if err := WriteDir(fsys, dir, map[string][]byte{"new": []byte("2")}, true, nil); err != nil {
			t.Fatal(err)
		}
		if seen == "" {
			t.Errorf("exchange=%v: the hook never ran", !noExchange)
		}
		if got := names(t, root); !slices.Equal(got, []string{"run"}) {
			t.Errorf("exchange=%v: left %v, want [run]", !noExchange, got)
		}
	}
}

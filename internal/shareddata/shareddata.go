// Package shareddata locates the real data that tests read in place: the
// traces and profiles in ../shared beside the repository root. A test that
// needs a file skips, saying which file and why, where it is absent (a
// user's fresh clone); CI has the folder.
package shareddata

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the directory holding go.mod, searching upward from the
// working directory (a test runs in its package's directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// Path returns ../shared/rel (rel joined from its parts) beside the
// repository root, or skips tb with a message naming the missing path.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Skipf("cannot locate ../shared: %v", err)
	}
	p := filepath.Join(append([]string{root, "..", "shared"}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("real data %s is absent (../shared is beside the repository in CI and the authors' checkout, not in a fresh clone): %v", p, err)
	}
	return p
}

// GoList runs `go list -f format patterns...` in the repository root and
// returns its output lines, for tests that check the module's structure
// (layers, the -update flag). It skips tb where no go command is on PATH.
func GoList(tb testing.TB, format string, patterns ...string) []string {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("no go command on PATH")
	}
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-f", format}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

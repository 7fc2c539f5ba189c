package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRootHoldsGoMod(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "module github.com/conspirator-sim/conspirator"; string(b[:len(want)]) != want {
		t.Errorf("go.mod at %s starts %q, want %q", root, b[:len(want)], want)
	}
}

// A missing path skips (never fails) the calling test.
func TestPathSkipsWhenAbsent(t *testing.T) {
	var skipped bool
	t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Path(t, "no-such-folder-here", "x.csv")
	})
	if !skipped {
		t.Error("Path did not skip for a missing file")
	}
}

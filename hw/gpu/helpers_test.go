package gpu

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedPath returns the path of rel under the shared data folder next to
// the repository root (the folder holding go.mod), skipping the test when
// that file is absent, as in a fresh clone.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("no go.mod above the test directory; cannot locate ../shared/%s", rel)
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s absent (%v); skipping the check against the real file", p, err)
	}
	return p
}

func mustLookup(t testing.TB, name string) Spec {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustParse(t testing.TB, s Spec, text string) Layout {
	t.Helper()
	l, err := ParseLayout(s, text)
	if err != nil {
		t.Fatalf("ParseLayout(%s, %q): %v", s.Name, text, err)
	}
	return l
}

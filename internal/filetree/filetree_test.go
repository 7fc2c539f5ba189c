package filetree

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two trees that differ in one file's content and one file's presence:
// SHA-256("x") = 2d711642b726b044..., and the diff names both paths.
func TestHashesAndDiff(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, "s/x.txt", "x")
	write(t, a, "same", "1")
	write(t, a, "only-a", "")
	write(t, b, "s/x.txt", "y")
	write(t, b, "same", "1")
	ha, err := Hashes(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := Hashes(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := ha["s/x.txt"]; got != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("hash of s/x.txt = %s", got)
	}
	want := []string{"only-a: only in a", "s/x.txt: 2d711642b726 vs a1fce4363854"}
	if got := Diff(ha, hb); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff = %q, want %q", got, want)
	}
	if d := Diff(ha, ha); len(d) != 0 {
		t.Errorf("a tree differs from itself: %v", d)
	}
	if _, err := Hashes(filepath.Join(a, "missing")); err == nil {
		t.Error("Hashes of a missing directory succeeded")
	}
}

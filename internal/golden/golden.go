// Package golden compares test outputs with reviewed files under testdata
// and rewrites them on request, so that any change of a result shows in
// review as a diff of those files.
//
//	go test ./... -update     rewrite every golden file, then review git diff
//
// Every test package of the module imports this package (most with a blank
// import in golden_flag_test.go) so that -update is a defined flag in
// each test binary; TestEveryPackageRegistersUpdate checks that.
package golden

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is -update: rewrite the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/ (then review the diff)")

// MaxInline is the largest output stored byte for byte. A larger one (a
// per-request CSV of megabytes) is stored as a digest: its SHA-256, size,
// line count and first lines, which pin every byte while keeping the
// repository small; a change shows the new head in the diff.
const MaxInline = 256 << 10

// headLines is how many leading lines a digest keeps for review.
const headLines = 20

// Check compares got with the golden file at path (relative to the test's
// package directory), or rewrites it under -update. An output larger than
// MaxInline is compared through path+".digest".
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if len(got) > MaxInline {
		path, got = path+".digest", Digest(got)
	}
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (create it with: go test -run '%s' -update, then review it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file: %s\n(if the change is intended: go test -run '%s' -update, and say why in the commit)", path, firstDiff(want, got), t.Name())
	}
}

// Digest is the stored form of a large output.
func Digest(b []byte) []byte {
	sum := sha256.Sum256(b)
	var out strings.Builder
	fmt.Fprintf(&out, "sha256 %s\nbytes %d\nlines %d\n--- first %d lines ---\n", hex.EncodeToString(sum[:]), len(b), bytes.Count(b, []byte{'\n'}), headLines)
	lines := bytes.SplitAfterN(b, []byte{'\n'}, headLines+1)
	if len(lines) > headLines {
		lines = lines[:headLines]
	}
	for _, l := range lines {
		out.Write(l)
	}
	return []byte(out.String())
}

// firstDiff describes the first differing line.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, clip(a), clip(b))
		}
	}
	return "same lines, different bytes"
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

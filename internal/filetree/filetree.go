// Package filetree fingerprints directory trees, so that tests can prove
// two result directories byte-identical (-j 1 vs -j N, sharded vs
// unsharded, a Slurm array vs a local run, a render vs a re-render).
package filetree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Hashes maps every regular file under dir, by its slash-separated path
// relative to dir, to the hex SHA-256 of its content.
func Hashes(dir string) (map[string]string, error) {
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		tree[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tree, nil
}

// Diff lists, sorted, every path whose content differs between trees a and
// b, and every path present in only one of them ("PATH: only in a/b").
func Diff(a, b map[string]string) []string {
	var out []string
	for p, h := range a {
		switch hb, ok := b[p]; {
		case !ok:
			out = append(out, p+": only in a")
		case hb != h:
			out = append(out, fmt.Sprintf("%s: %.12s vs %.12s", p, h, hb))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p+": only in b")
		}
	}
	slices.Sort(out)
	return out
}

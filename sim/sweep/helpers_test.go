package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/filetree"
)

// fakeRun is a deterministic stand-in for a simulation: its files depend on
// the point only (a splitmix64 sequence seeded by the seed and params).
func fakeRun(_ context.Context, p Point) (map[string][]byte, error) {
	x := p.Seed
	for _, kv := range p.Params {
		for _, c := range kv.Key + "=" + kv.Value {
			x = x*31 + uint64(c)
		}
	}
	var csv strings.Builder
	csv.WriteString("id,latency_us\n")
	for i := 0; i < 20; i++ {
		x += 0x9e3779b97f4a7c15
		z := (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		fmt.Fprintf(&csv, "%d,%d\n", i, z%1000)
	}
	return map[string][]byte{
		"result.json":    []byte(fmt.Sprintf("{\"id\":%q,\"seed\":%d}\n", p.ID, p.Seed)),
		"requests.csv":   []byte(csv.String()),
		"plots/note.txt": []byte(p.String() + "\n"),
	}, nil
}

// treeOf maps every file under dir (relative slash path) to its sha256.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree, err := filetree.Hashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// sameTree fails with the first differing path.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	ta, tb := treeOf(t, a), treeOf(t, b)
	var keys []string
	for k := range ta {
		keys = append(keys, k)
	}
	for k := range tb {
		if _, ok := ta[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ta[k] != tb[k] {
			t.Fatalf("trees differ at %s: %s has %q, %s has %q", k, a, ta[k], b, tb[k])
		}
	}
	if len(ta) == 0 {
		t.Fatalf("tree %s is empty", a)
	}
}

func testPoints() []Point {
	return Expand([]Param{
		{Key: "host.background_load", Values: []string{"0", "0.4", "0.8"}},
		{Key: "path", Values: []string{"tcp", "conspirator"}},
	}, []uint64{1, 2, 3})
}

// completeIDs lists the point IDs with a done marker in dir.
func completeIDs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "points"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		// A .tmp-ID directory gets its marker just before it is renamed
		// to ID: it is not a finished point yet.
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "points", e.Name(), DoneFile)); err == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

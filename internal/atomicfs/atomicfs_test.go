package atomicfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// countCalls runs write on a counting file system and returns how many
// times each fault's step is called, so the fault tests below can fail
// every call of every step, not a guessed few.
func countCalls(t *testing.T, write func(FS, string) error) map[Fault]int {
	t.Helper()
	n := map[Fault]int{}
	for _, f := range Faults {
		fs := &Faulty{Fault: f}
		if err := write(fs, t.TempDir()); err != nil {
			t.Fatalf("fault-free run: %v", err)
		}
		n[f] = fs.Calls()
	}
	return n
}

// Every step of WriteFile is failed in turn over an existing file: the
// error wraps the injected fault and names the file, the file holds the
// old bytes or the whole new ones (never half), and no temporary is left.
func TestWriteFileUnderEveryFault(t *testing.T) {
	old, new := []byte("old content\n"), bytes.Repeat([]byte("new content\n"), 1000)
	write := func(fsys FS, dir string) error {
		p := filepath.Join(dir, "summary.json")
		if err := os.WriteFile(p, old, 0o644); err != nil {
			return err
		}
		return WriteFile(fsys, p, new)
	}
	calls := countCalls(t, write)
	if calls[FaultWrite] != 1 || calls[FaultRename] != 1 || calls[FaultSyncDir] != 1 {
		t.Fatalf("steps per WriteFile = %v, want one write, one rename, one directory sync", calls)
	}
	for _, f := range Faults {
		for n := 1; n <= calls[f]; n++ {
			dir := t.TempDir()
			fsys := &Faulty{Fault: f, N: n}
			err := write(fsys, dir)
			if !fsys.Fired() {
				t.Fatalf("%s #%d: fault not injected", f, n)
			}
			if !errors.Is(err, ErrInjected) {
				t.Fatalf("%s #%d: err = %v, want the injected fault reported", f, n, err)
			}
			got, rerr := os.ReadFile(filepath.Join(dir, "summary.json"))
			if rerr != nil || !bytes.Equal(got, old) && !bytes.Equal(got, new) {
				t.Errorf("%s #%d: summary.json holds %d bytes (%v), want the old %d or the new %d", f, n, len(got), rerr, len(old), len(new))
			}
			if tmp, _ := Temps(dir); len(tmp) > 0 {
				t.Errorf("%s #%d: temporaries left: %v", f, n, tmp)
			}
		}
	}
}

// Every step of WriteDir is failed in turn: the target directory is either
// absent or has every file whole, and no temporary is left.
func TestWriteDirUnderEveryFault(t *testing.T) {
	files := map[string][]byte{
		"summary.json":     []byte("{}\n"),
		"requests.csv":     bytes.Repeat([]byte("1,2,3\n"), 500),
		"plots/a.svg":      []byte("<svg/>"),
		"plots/deep/b.txt": []byte("b"),
	}
	write := func(fsys FS, root string) error {
		return WriteDir(fsys, filepath.Join(root, "run"), files, false, func(tmp string) error {
			return WriteFile(fsys, filepath.Join(tmp, "report.md"), []byte("# report\n"))
		})
	}
	calls := countCalls(t, write)
	for _, f := range Faults {
		if calls[f] == 0 {
			t.Fatalf("step %s never called: %v", f, calls)
		}
		for n := 1; n <= calls[f]; n++ {
			root := t.TempDir()
			fsys := &Faulty{Fault: f, N: n}
			err := write(fsys, root)
			if !errors.Is(err, ErrInjected) {
				t.Fatalf("%s #%d: err = %v, want the injected fault", f, n, err)
			}
			dir := filepath.Join(root, "run")
			if _, serr := os.Stat(dir); serr == nil {
				// Only a failed sync after the rename may leave it, whole.
				for name, want := range files {
					got, rerr := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
					if rerr != nil || !bytes.Equal(got, want) {
						t.Errorf("%s #%d: visible directory has %s partial or missing (%v)", f, n, name, rerr)
					}
				}
			}
			if tmp, _ := Temps(root); len(tmp) > 0 {
				t.Errorf("%s #%d: temporaries left: %v", f, n, tmp)
			}
		}
	}
}

func TestWriteDirReplaceAndNames(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	if err := WriteDir(OS, dir, map[string][]byte{"a": []byte("1")}, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(OS, dir, map[string][]byte{"b": []byte("2")}, true, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("replaced directory still has the old file a (%v)", err)
	}
	for _, bad := range []string{"", "/abs", "../up", "a/../../b"} {
		err := WriteDir(OS, filepath.Join(root, "bad"), map[string][]byte{bad: nil}, false, nil)
		if err == nil {
			t.Errorf("file name %q accepted", bad)
		}
	}
	if tmp, _ := Temps(root); len(tmp) > 0 {
		t.Errorf("temporaries left: %v", tmp)
	}
}

func TestCleanTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".aggregate.json.tmp-12-3", ".sweep.json.tmp-9-1", "aggregate.json", ".hidden"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	if err := CleanTemps(OS, dir, "aggregate.json"); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	want := []string{".hidden", ".sweep.json.tmp-9-1", "aggregate.json"}
	if len(names) != len(want) {
		t.Fatalf("left %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("left %v, want %v", names, want)
		}
	}
	if err := CleanTemps(OS, filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}

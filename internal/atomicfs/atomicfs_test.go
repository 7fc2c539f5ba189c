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
		if calls[f] == 0 && f != FaultExchange && f != FaultLink { // a new directory is renamed, not exchanged
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

// treeFiles reads every regular file under root, keyed by slash path.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Replacing an existing directory, every step failed in turn, with and
// without the atomic exchange: the directory always holds exactly the old
// files or exactly the new ones (never absent after a failed step, never a
// mixture), and no temporary is left.
func TestWriteDirReplaceUnderEveryFault(t *testing.T) {
	oldFiles := map[string][]byte{"summary.json": []byte("{\"old\": 1}\n"), "report.md": []byte("old\n"), "requests.csv": []byte("a\n")}
	newFiles := map[string][]byte{"summary.json": []byte("{\"new\": 2}\n"), "plots/a.svg": []byte("<svg/>")}
	asStrings := func(m map[string][]byte) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	for _, noExchange := range []bool{false, true} {
		write := func(fsys FS, root string) error {
			dir := filepath.Join(root, "run")
			if err := WriteDir(OS, dir, oldFiles, false, nil); err != nil {
				return err
			}
			return WriteDir(fsys, dir, newFiles, true, nil)
		}
		calls := map[Fault]int{}
		for _, f := range Faults {
			fs := &Faulty{Fault: f, NoExchange: noExchange}
			if err := write(fs, t.TempDir()); err != nil {
				t.Fatalf("fault-free run: %v", err)
			}
			calls[f] = fs.Calls()
		}
		if !noExchange && calls[FaultExchange] != 1 {
			t.Fatalf("exchange called %d times, want 1", calls[FaultExchange])
		}
		if noExchange && calls[FaultRename] != 2 {
			t.Fatalf("without exchange, %d renames, want 2 (old aside, new in place)", calls[FaultRename])
		}
		for _, f := range Faults {
			for n := 1; n <= calls[f]; n++ {
				root := t.TempDir()
				fsys := &Faulty{Fault: f, N: n, NoExchange: noExchange}
				err := write(fsys, root)
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("exchange=%v %s #%d: err = %v, want the injected fault", !noExchange, f, n, err)
				}
				got := treeFiles(t, filepath.Join(root, "run"))
				if !sameFiles(got, asStrings(oldFiles)) && !sameFiles(got, asStrings(newFiles)) {
					t.Errorf("exchange=%v %s #%d: run holds %v, want the old or the new files", !noExchange, f, n, got)
				}
				if tmp, _ := Temps(root); len(tmp) > 0 {
					t.Errorf("exchange=%v %s #%d: temporaries left: %v", !noExchange, f, n, tmp)
				}
			}
		}
	}
}

// Rewrite keeps the files edit leaves alone (as links: the old tree's
// bytes are never touched), takes edit's changes, and under every fault
// leaves the directory as it was or as edited.
func TestRewrite(t *testing.T) {
	setup := func(root string) string {
		dir := filepath.Join(root, "run")
		files := map[string][]byte{"summary.json": []byte("{}\n"), "report.md": []byte("old report\n"), "points/p1/done": []byte("x\n"), "plots/old.svg": []byte("<svg/>")}
		if err := WriteDir(OS, dir, files, false, nil); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	edit := func(fsys FS) func(string) error {
		return func(tmp string) error {
			if err := WriteFile(fsys, filepath.Join(tmp, "report.md"), []byte("new report\n")); err != nil {
				return err
			}
			return fsys.RemoveAll(filepath.Join(tmp, "plots", "old.svg"))
		}
	}
	before := map[string]string{"summary.json": "{}\n", "report.md": "old report\n", "points/p1/done": "x\n", "plots/old.svg": "<svg/>"}
	after := map[string]string{"summary.json": "{}\n", "report.md": "new report\n", "points/p1/done": "x\n"}

	root := t.TempDir()
	dir := setup(root)
	held, _ := os.Open(filepath.Join(dir, "report.md")) // a reader holding the old file
	defer held.Close()
	if err := Rewrite(OS, dir, edit(OS)); err != nil {
		t.Fatal(err)
	}
	if got := treeFiles(t, dir); !sameFiles(got, after) {
		t.Fatalf("after Rewrite: %v, want %v", got, after)
	}
	var buf [64]byte
	n, _ := held.Read(buf[:])
	if string(buf[:n]) != "old report\n" {
		t.Errorf("the old report.md's bytes changed under a reader: %q", buf[:n])
	}
	calls := map[Fault]int{}
	for _, f := range Faults {
		fs := &Faulty{Fault: f}
		if err := Rewrite(fs, setup(t.TempDir()), edit(fs)); err != nil {
			t.Fatalf("fault-free run: %v", err)
		}
		calls[f] = fs.Calls()
	}
	for _, f := range Faults {
		if calls[f] == 0 && f != FaultRename && f != FaultFsync && f != FaultWrite {
			t.Fatalf("step %s never called: %v", f, calls)
		}
		for n := 1; n <= calls[f]; n++ {
			root := t.TempDir()
			dir := setup(root)
			fsys := &Faulty{Fault: f, N: n}
			err := Rewrite(fsys, dir, edit(fsys))
			if !errors.Is(err, ErrInjected) {
				t.Fatalf("%s #%d: err = %v, want the injected fault", f, n, err)
			}
			if got := treeFiles(t, dir); !sameFiles(got, before) && !sameFiles(got, after) {
				t.Errorf("%s #%d: %v, want the old or the edited tree", f, n, got)
			}
			if tmp, _ := Temps(root); len(tmp) > 0 {
				t.Errorf("%s #%d: temporaries left: %v", f, n, tmp)
			}
		}
	}
}

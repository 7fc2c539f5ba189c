package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// fileSystem is every file operation the runner performs, so tests can
// inject a failure at any step (a full disk, a failed rename) and check that
// no point ever looks complete without all its files.
type fileSystem interface {
	MkdirAll(path string) error
	// WriteFile creates or truncates path, writes data and fsyncs it.
	WriteFile(path string, data []byte) error
	Rename(oldpath, newpath string) error
	RemoveAll(path string) error
	// SyncDir fsyncs a directory so a rename inside it survives a crash.
	SyncDir(path string) error
}

type osFS struct{}

func (osFS) MkdirAll(p string) error { return os.MkdirAll(p, 0o755) }

func (osFS) WriteFile(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (osFS) Rename(o, n string) error { return os.Rename(o, n) }
func (osFS) RemoveAll(p string) error { return os.RemoveAll(p) }
func (osFS) SyncDir(p string) error {
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFileAtomic writes data to path so that a reader (or a crash) sees
// either the old file or the whole new one: it writes a temporary file in
// the same directory, fsyncs it, renames it over path and fsyncs the
// directory. The directory must exist. Errors name path.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := (osFS{}).SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

// DoneFile is the marker written last into a point directory. Its content is
// a manifest: one "sha256  name" line per file, sorted by name.
const DoneFile = "done"

const tmpPrefix = ".tmp-"

// checkFileName accepts a relative, slash-separated name inside a point
// directory, not hidden and not the marker.
func checkFileName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case strings.HasPrefix(name, "/") || strings.Contains(name, `\`):
		return fmt.Errorf("file name %q must be relative and use '/'", name)
	case path.Clean(name) != name:
		return fmt.Errorf("file name %q is not clean (want %q)", name, path.Clean(name))
	case name == DoneFile:
		return fmt.Errorf("file name %q is reserved for the completion marker", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || strings.HasPrefix(part, ".") {
			return fmt.Errorf("file name %q has a hidden or parent element %q", name, part)
		}
	}
	return nil
}

// manifest is the content of the done marker for files.
func manifest(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		b.WriteString(hex.EncodeToString(sum[:]))
		b.WriteString("  ")
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// writePointDir writes files into pointsDir/.tmp-ID, the marker last, then
// renames the directory to pointsDir/ID. Until the rename the point is not
// visible under its ID; after it, the point is complete.
func writePointDir(fsys fileSystem, pointsDir, id string, files map[string][]byte) error {
	for name := range files {
		if err := checkFileName(name); err != nil {
			return fmt.Errorf("point %s: %w", id, err)
		}
	}
	tmp := filepath.Join(pointsDir, tmpPrefix+id)
	final := filepath.Join(pointsDir, id)
	if err := fsys.RemoveAll(tmp); err != nil {
		return fmt.Errorf("point %s: remove stale %s: %w", id, tmp, err)
	}
	fail := func(err error) error {
		fsys.RemoveAll(tmp) // best effort: a leftover tmp dir never looks complete
		return err
	}
	if err := fsys.MkdirAll(tmp); err != nil {
		return fail(fmt.Errorf("point %s: %w", id, err))
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{tmp: true}
	for _, n := range names {
		p := filepath.Join(tmp, filepath.FromSlash(n))
		if d := filepath.Dir(p); !dirs[d] {
			if err := fsys.MkdirAll(d); err != nil {
				return fail(fmt.Errorf("point %s: %w", id, err))
			}
			dirs[d] = true
		}
		if err := fsys.WriteFile(p, files[n]); err != nil {
			return fail(fmt.Errorf("point %s: write %s: %w", id, p, err))
		}
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirList))) // children before parents
	for _, d := range dirList {
		if err := fsys.SyncDir(d); err != nil {
			return fail(fmt.Errorf("point %s: sync %s: %w", id, d, err))
		}
	}
	// The marker goes last: its presence means every file above is on disk.
	if err := fsys.WriteFile(filepath.Join(tmp, DoneFile), manifest(files)); err != nil {
		return fail(fmt.Errorf("point %s: write marker: %w", id, err))
	}
	if err := fsys.SyncDir(tmp); err != nil {
		return fail(fmt.Errorf("point %s: sync %s: %w", id, tmp, err))
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return fail(fmt.Errorf("point %s: rename %s to %s: %w", id, tmp, final, err))
	}
	if err := fsys.SyncDir(pointsDir); err != nil {
		return fmt.Errorf("point %s: sync %s: %w", id, pointsDir, err)
	}
	return nil
}

// ReadPointFiles reads every file of a complete point directory (without the
// marker) and checks them against the marker's manifest, so a point damaged
// after it was written is reported rather than trusted.
func ReadPointFiles(pointDir string) (map[string][]byte, error) {
	want, err := os.ReadFile(filepath.Join(pointDir, DoneFile))
	if err != nil {
		return nil, fmt.Errorf("point %s is not complete: %w", pointDir, err)
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(pointDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(pointDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == DoneFile {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read point %s: %w", pointDir, err)
	}
	if got := manifest(files); string(got) != string(want) {
		return nil, fmt.Errorf("point %s: files do not match its %s manifest (changed after the sweep wrote them?); delete the directory and rerun with --resume", pointDir, DoneFile)
	}
	return files, nil
}

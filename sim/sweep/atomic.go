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

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// fileSystem is every file operation the runner performs (see atomicfs):
// tests inject a failure at any step (a full disk, a failed rename) and
// check that no point ever looks complete without all its files.
type fileSystem = atomicfs.FS

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
	if err := atomicfs.WriteTree(fsys, tmp, files); err != nil {
		return fail(fmt.Errorf("point %s: %w", id, err))
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

// ReadPointFile reads one file of a complete point directory and checks it
// against the marker's manifest: the cheap check for a reader that needs
// one file of every point (the aggregate reads summary.json only).
func ReadPointFile(pointDir, name string) ([]byte, error) {
	want, err := os.ReadFile(filepath.Join(pointDir, DoneFile))
	if err != nil {
		return nil, fmt.Errorf("point %s is not complete: %w", pointDir, err)
	}
	data, err := os.ReadFile(filepath.Join(pointDir, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("read point %s: %w", pointDir, err)
	}
	sum := sha256.Sum256(data)
	if !strings.Contains("\n"+string(want), "\n"+hex.EncodeToString(sum[:])+"  "+name+"\n") {
		return nil, fmt.Errorf("point %s: %s does not match its %s manifest (changed after the sweep wrote it?); delete the directory and rerun with --resume", pointDir, name, DoneFile)
	}
	return data, nil
}

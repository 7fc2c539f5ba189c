// Package atomicfs is the one way conspirator writes result files: every
// file appears whole or not at all, and a directory of files appears whole
// or not at all, even across a crash (write a temporary, fsync it, rename
// it into place, fsync the directory).
//
// Every operation goes through the small FS interface so that tests can
// inject the failures a real disk produces (a short write on a full disk,
// a failed fsync, a failed rename) at any step and check that no partial
// file is ever visible under its final name. Faulty is that injector.
package atomicfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FS is every file operation a writer performs. Implementations must be
// safe for concurrent use.
type FS interface {
	// MkdirAll creates path and its parents (0755).
	MkdirAll(path string) error
	// WriteFile creates or truncates path (0644), writes data and fsyncs
	// the file before it returns nil.
	WriteFile(path string, data []byte) error
	// Rename renames oldpath to newpath, replacing a file (or an empty
	// directory) at newpath.
	Rename(oldpath, newpath string) error
	// RemoveAll removes path and everything below it; a missing path is
	// not an error.
	RemoveAll(path string) error
	// SyncDir fsyncs a directory so that entries renamed into it survive a
	// crash.
	SyncDir(path string) error
	// Exchange swaps the entries at a and b, both of which must exist, in
	// one atomic step: a reader sees one or the other at each name, never
	// neither. Where the file system cannot (ErrNoExchange), nothing moved.
	Exchange(a, b string) error
	// Link makes newpath a hard link to the file oldpath.
	Link(oldpath, newpath string) error
}

// ErrNoExchange is what Exchange returns where the file system (or the
// operating system) has no atomic exchange; the caller falls back to two
// renames.
var ErrNoExchange = errors.New("atomic exchange not supported here")

// OS is the real file system.
var OS FS = osFS{}

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

func (osFS) Rename(o, n string) error   { return os.Rename(o, n) }
func (osFS) Exchange(a, b string) error { return exchange(a, b) }
func (osFS) Link(o, n string) error     { return os.Link(o, n) }
func (osFS) RemoveAll(p string) error   { return os.RemoveAll(p) }

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

// WriteFile writes data to path so that a reader, or the disk after a
// crash, sees either the old file or the whole new one. The directory must
// exist. Errors name path; on error no temporary is left behind (best
// effort: a failing RemoveAll is not reported over the first error).
func WriteFile(fsys FS, path string, data []byte) error {
	tmp, err := CreateTemp(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer ReleaseTemp(tmp)
	if err := fsys.WriteFile(tmp, data); err != nil {
		fsys.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", path, hideTemp(err, tmp))
	}
	if err := fsys.Rename(tmp, path); err != nil {
		fsys.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", path, hideTemp(err, tmp))
	}
	dir := filepath.Dir(path)
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory %s: %w", path, dir, err)
	}
	return nil
}

// hideTemp drops the temporary's name from err (a *fs.PathError or
// *os.LinkError about it): the caller's message names the real path, and
// a temporary that is already removed means nothing to a user.
func hideTemp(err error, tmp string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Old == tmp {
		return le.Err
	}
	return err
}

// renamed is err with another message (the temporary directory's path
// replaced by the final one); errors.Is and As still see err.
type renamed struct {
	msg string
	err error
}

func (r renamed) Error() string { return r.msg }
func (r renamed) Unwrap() error { return r.err }

// tempDir creates the temporary sibling of dir that WriteDir and Rewrite
// build in, and fail, which removes it and returns err with the
// temporary's name replaced by dir: the temporary is gone when the user
// reads the error. The temporary is locked as live (see temp.go) until
// the caller releases it (ReleaseTemp), which it does in every case.
func tempDir(fsys FS, dir string) (tmp string, fail func(error) error, err error) {
	tmp, err = mkdirTemp(fsys, dir)
	fail = func(err error) error {
		if tmp != "" {
			fsys.RemoveAll(tmp)
		}
		return renamed{strings.ReplaceAll(err.Error(), tmp, dir), err}
	}
	if err != nil {
		return tmp, fail, fail(err)
	}
	return tmp, fail, nil
}

// WriteDir writes files (slash-separated names relative to dir) into a
// temporary sibling directory, fsyncs every file and directory, and renames
// it to dir, so that dir appears with all its files or not at all. When
// replace is true an existing dir is swapped with the new one in one
// atomic step and then removed (see Replace): a crash at any moment
// leaves the old complete directory or the new one at dir, never a
// mixture. fill, if not nil, runs on the temporary directory before the
// rename, to add derived files (plots) that are then part of the atomic
// step.
func WriteDir(fsys FS, dir string, files map[string][]byte, replace bool, fill func(tmp string) error) error {
	dir = filepath.Clean(dir)
	tmp, fail, err := tempDir(fsys, dir)
	defer ReleaseTemp(tmp)
	if err != nil {
		return err
	}
	if err := WriteTree(fsys, tmp, files); err != nil {
		return fail(err)
	}
	if fill != nil {
		if err := fill(tmp); err != nil {
			return fail(err)
		}
	}
	if replace {
		if err := Replace(fsys, tmp, dir); err != nil {
			return fail(err)
		}
		return nil
	}
	if err := fsys.Rename(tmp, dir); err != nil {
		return fail(fmt.Errorf("rename %s to %s: %w", tmp, dir, err))
	}
	parent := filepath.Dir(dir)
	if err := fsys.SyncDir(parent); err != nil {
		return fmt.Errorf("sync %s: %w", parent, err)
	}
	return nil
}

// Replace puts the complete directory tmp (a temporary sibling of dir,
// named by this package) in the place of the existing directory dir, and
// removes the old one. The swap is one atomic exchange of the two names
// (renameat2 with RENAME_EXCHANGE on Linux), so that a reader, or the disk
// after a crash, finds the old complete directory or the new one at dir
// at every moment; the old one then lies at the temporary name until it is
// removed, and a writer killed in between leaves it there as a temporary
// (IsTemp) that CleanTemps removes. Where the file system has no exchange,
// the old directory is first renamed aside to a temporary name and the new
// one renamed into place: between the two renames dir is absent (never
// partial). On error tmp may still exist; the caller removes it.
func Replace(fsys FS, tmp, dir string) error {
	parent := filepath.Dir(dir)
	old := tmp
	// The old directory is locked before it moves to a temporary name, so
	// that a cleaner leaves it to this writer while it lives (temp.go).
	release := holdAside(dir)
	defer release()
	err := fsys.Exchange(tmp, dir)
	if testAfterMoveAside != nil && err == nil {
		testAfterMoveAside(tmp)
	}
	switch {
	case errors.Is(err, ErrNoExchange):
		old = tempName(dir)
		liveTemps.Store(old, (*os.File)(nil)) // locked by holdAside
		defer ReleaseTemp(old)
		if err := fsys.Rename(dir, old); err != nil {
			return fmt.Errorf("replace %s: move the old directory aside: %w", dir, err)
		}
		if err := fsys.Rename(tmp, dir); err != nil {
			// Put the old one back so that dir is not left absent.
			if rerr := fsys.Rename(old, dir); rerr != nil {
				return fmt.Errorf("replace %s: %w (and the old directory could not be put back from %s: %v)", dir, err, old, rerr)
			}
			return fmt.Errorf("replace %s: %w", dir, err)
		}
		if testAfterMoveAside != nil {
			testAfterMoveAside(old)
		}
	case err != nil:
		return fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := fsys.SyncDir(parent); err != nil {
		fsys.RemoveAll(old) // the new directory is in place: the old one is garbage either way
		return fmt.Errorf("sync %s: %w", parent, err)
	}
	// The new directory is in place and durable; the old one is garbage.
	if err := fsys.RemoveAll(old); err != nil {
		return fmt.Errorf("remove the replaced directory %s: %w", old, err)
	}
	return nil
}

// testAfterMoveAside, where a test sets it, runs with the old directory's
// temporary name once Replace has moved it aside.
var testAfterMoveAside func(old string)

// Rewrite changes the existing directory dir as one atomic step: it
// builds a temporary sibling holding a hard link to every file of dir
// (sub-directories recreated, temporaries of this package skipped), runs
// edit on it, which may add, replace (through WriteFile, which renames
// over the link and so never touches the old file's bytes) or remove
// files, fsyncs it and swaps it with dir (Replace). A crash at any moment
// leaves dir as it was or as edit made it, never a mixture; a re-render
// of a report is written this way.
func Rewrite(fsys FS, dir string, edit func(tmp string) error) error {
	dir = filepath.Clean(dir)
	tmp, fail, err := tempDir(fsys, dir)
	defer ReleaseTemp(tmp)
	if err != nil {
		return err
	}
	var dirs []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if IsTemp(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, dst)
			return fsys.MkdirAll(dst)
		case d.Type().IsRegular():
			return fsys.Link(p, dst)
		default:
			return fmt.Errorf("%s is not a regular file or directory; a result directory holds only those", p)
		}
	})
	if err != nil {
		return fail(fmt.Errorf("copy %s: %w", dir, err))
	}
	if err := edit(tmp); err != nil {
		return fail(err)
	}
	// Children before parents, as WriteTree does.
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range append(dirs, tmp) {
		if _, err := os.Stat(d); err != nil {
			continue // edit removed it
		}
		if err := fsys.SyncDir(d); err != nil {
			return fail(fmt.Errorf("sync %s: %w", d, err))
		}
	}
	if err := Replace(fsys, tmp, dir); err != nil {
		return fail(err)
	}
	return nil
}

// WriteTree writes files into the existing directory root, creating
// sub-directories, and fsyncs every file and directory it wrote into
// (children before parents). It is not atomic by itself: callers write
// into a directory nobody reads yet and rename it (WriteDir, the sweep's
// points). File names must be relative and slash-separated.
func WriteTree(fsys FS, root string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{root: true}
	for _, n := range names {
		if n == "" || filepath.IsAbs(n) || hasParent(n) {
			return fmt.Errorf("file name %q must be a relative path inside %s", n, root)
		}
		p := filepath.Join(root, filepath.FromSlash(n))
		if d := filepath.Dir(p); !dirs[d] {
			if err := fsys.MkdirAll(d); err != nil {
				return fmt.Errorf("create %s: %w", d, err)
			}
			dirs[d] = true
		}
		if err := fsys.WriteFile(p, files[n]); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(list))) // children before parents
	for _, d := range list {
		if err := fsys.SyncDir(d); err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	return nil
}

func hasParent(name string) bool {
	for _, part := range strings.Split(filepath.ToSlash(name), "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// CopyFile writes a copy of the file src at dst as WriteFile writes
// (dst holds its old bytes or the whole copy, never a part), streaming
// the bytes: dst is always a new file of its own, never a link to src,
// so that editing one never changes the other.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := CreateTemp(dst)
	if err != nil {
		return fmt.Errorf("copy to %s: %w", dst, err)
	}
	defer ReleaseTemp(tmp)
	fail := func(err error) error {
		os.Remove(tmp)
		return fmt.Errorf("copy %s to %s: %w", src, dst, hideTemp(err, tmp))
	}
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fail(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fail(err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fail(err)
	}
	if err := out.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fail(err)
	}
	return OS.SyncDir(filepath.Dir(dst))
}

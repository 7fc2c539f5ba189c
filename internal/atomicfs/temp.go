package atomicfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A temporary is live while its writer holds an exclusive flock on it:
// the writer locks the temporary (file or directory) as soon as it has
// created it and keeps the lock until it has renamed or removed it, and
// the kernel drops the lock when the writer's process ends, however it
// ends (a SIGKILL, an OOM kill, a machine that reboots). CleanTemps
// removes a temporary only if it can take that lock itself, without
// waiting: a temporary it cannot lock belongs to a writer that is alive.
// No process ID takes part in the decision: a PID in a name says nothing
// after a reboot, and a reused or unrelated PID (a kernel thread on a
// host, any low PID in a container) read a killed writer as alive, or a
// live writer in another PID namespace as dead. See docs/decisions/engine.md.

// TmpInfix marks a temporary name: ".BASE" + TmpInfix + a random token. A
// file or directory whose name has it is never a result; IsTemp
// recognises it and CleanTemps removes the ones a killed writer left.
const TmpInfix = ".tmp-"

// tempName is a fresh sibling name of path, recognised by IsTemp. The
// token is random, not a process ID, so names do not collide between
// machines that share a file system either.
func tempName(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+TmpInfix+strconv.FormatUint(rand.Uint64(), 36))
}

// liveTemps maps each temporary this process is writing now (from its
// creation until ReleaseTemp) to its locked descriptor (nil where the
// file system refused the lock). CleanTemps consults it before the lock:
// where flock is emulated by POSIX record locks (NFS), two descriptors of
// one process do not exclude each other, and shards of one sweep share
// its directory, so one that starts must not remove another's sweep.json
// on its way in (seen in TestShardsShareDirectory).
var liveTemps sync.Map

// errBusy is what tryLock returns when another descriptor holds the lock.
var errBusy = errors.New("temporary locked by its writer")

// tempTries bounds how often a writer makes a new temporary after a
// cleaner removed the one it had just created (it saw it between its
// creation and its lock). Each try takes a new random name.
const tempTries = 8

// holdTemp locks the temporary name that this process has just created
// and registers it as live. It reports errBusy, or fs.ErrNotExist, when a
// concurrent CleanTemps took the fresh temporary before the lock (it
// removes it): the caller makes another one.
func holdTemp(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	switch err := tryLock(f); {
	case errors.Is(err, errBusy):
		f.Close()
		return err
	case err != nil:
		// This file system has no flock (see liveTemps): the temporary is
		// protected within this process only, and CleanTemps, which cannot
		// lock it either, leaves it alone.
		f.Close()
		liveTemps.Store(name, (*os.File)(nil))
		return nil
	}
	// The lock is on the inode we opened; the name must still be it (a
	// cleaner that locked it first has removed it by now).
	if !samePath(f, name) {
		f.Close()
		return os.ErrNotExist
	}
	liveTemps.Store(name, f)
	return nil
}

// samePath says whether name still names the file f has open.
func samePath(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// CreateTemp creates an empty file at a fresh temporary sibling of path,
// locked as live until ReleaseTemp; the caller writes it (through an FS's
// WriteFile, which truncates it in place) and renames, links or removes
// it, then calls ReleaseTemp whatever happened.
func CreateTemp(path string) (string, error) {
	var last error
	for range tempTries {
		tmp := tempName(path)
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			last = err
			continue
		}
		if err != nil {
			return "", err
		}
		f.Close()
		if last = holdTemp(tmp); last == nil {
			return tmp, nil
		}
	}
	return "", fmt.Errorf("create a temporary beside %s: %w", path, last)
}

// mkdirTemp is CreateTemp for a directory, created through fsys (so that
// tests can fail its creation).
func mkdirTemp(fsys FS, path string) (string, error) {
	var last error
	for range tempTries {
		tmp := tempName(path)
		if err := fsys.MkdirAll(tmp); err != nil {
			return tmp, fmt.Errorf("create %s: %w", tmp, err)
		}
		if last = holdTemp(tmp); last == nil {
			return tmp, nil
		}
	}
	return "", fmt.Errorf("create a temporary beside %s: %w", path, last)
}

// holdAside locks the existing entry at path before the writer moves it
// to a temporary name (the old directory that Replace swaps out), so that
// it stays live under that name until the writer has removed it. It is
// best effort: without the lock the old entry is garbage that a cleaner
// may remove first, which only the fallback of Replace (putting the old
// directory back after a failed rename) would notice. release drops it.
func holdAside(path string) (release func()) {
	f, err := os.Open(path)
	if err != nil {
		return func() {}
	}
	if tryLock(f) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// ReleaseTemp says that the writer of tmp (from CreateTemp, or the
// directory writers of this package) is done with it, whether it renamed
// it, removed it, or failed: the lock is dropped.
func ReleaseTemp(tmp string) {
	if f, ok := liveTemps.LoadAndDelete(tmp); ok && f.(*os.File) != nil {
		f.(*os.File).Close() // closing the last descriptor drops the flock
	}
}

// IsTemp says whether a directory entry's name is a temporary of this
// package (a leftover of a writer that was killed).
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, TmpInfix)
}

// removeIfStale removes the temporary p if its writer is gone: not this
// process's (liveTemps) and not locked by any process. It holds the lock
// while it removes, so that no writer can take p meanwhile. A temporary
// whose lock cannot be tried here (no flock on this file system, no
// permission to open it) is kept: it may be live.
func removeIfStale(fsys FS, p string) error {
	if _, live := liveTemps.Load(p); live {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil // gone already, or unreadable: not ours to judge
	}
	defer f.Close()
	if tryLock(f) != nil || !samePath(f, p) {
		return nil
	}
	return fsys.RemoveAll(p)
}

// CleanTemps removes, directly inside dir, the temporaries (IsTemp) whose
// name starts with one of the given prefixes ("." + base name of the file
// they were for) and that no live writer holds; with no prefix, every
// such temporary. It is for a writer that starts again after being
// killed; temporaries of files it does not own (another shard's) should
// not be named, although their writers' locks keep them too.
func CleanTemps(fsys FS, dir string, bases ...string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // nothing to clean; the writer reports a file in the way
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !IsTemp(e.Name()) {
			continue
		}
		match := len(bases) == 0
		for _, b := range bases {
			if strings.HasPrefix(e.Name(), "."+b+TmpInfix) {
				match = true
			}
		}
		if !match {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := removeIfStale(fsys, p); err != nil {
			return fmt.Errorf("remove stale %s: %w", p, err)
		}
	}
	return nil
}

// Temps lists, relative to root, every temporary (IsTemp) at any depth
// under root: after a writer returned, with or without an error, there
// should be none.
func Temps(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if IsTemp(d.Name()) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out, err
}

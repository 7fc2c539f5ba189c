// Package dirlock makes one conspirator process at a time the writer of a
// result directory: an advisory lock (flock) on a lock file beside the
// directory, so that two commands writing the same directory cannot mix
// their results. The second one fails at once and is told which process
// holds the directory.
//
// A run, a report, a calibration and an unsharded sweep take the lock
// exclusively. The shards of one sweep (--shard i/n) share it: each takes
// it shared, plus an exclusive lock of its own shard, so shards run
// together while a second copy of one shard, or any exclusive writer, is
// refused.
//
// The lock file, ".NAME.lock" beside the directory NAME, is left in place
// after the lock is released (removing it would let a process lock a file
// that another one has just unlinked). flock locks are released by the
// kernel when their process dies, so a killed writer never leaves a
// directory locked. On a shared file system the lock holds between
// machines where that file system supports flock (NFSv4, Lustre with
// flock, GPFS); elsewhere it holds between the processes of one machine.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// HeldError says that another process holds the directory.
type HeldError struct {
	Dir  string
	PIDs []int // the holders found, when they could be read
}

func (e *HeldError) Error() string {
	who := "another conspirator process"
	switch len(e.PIDs) {
	case 0:
	case 1:
		who = fmt.Sprintf("another conspirator process (PID %d)", e.PIDs[0])
	default:
		ids := make([]string, len(e.PIDs))
		for i, p := range e.PIDs {
			ids[i] = strconv.Itoa(p)
		}
		who = fmt.Sprintf("other conspirator processes (PIDs %s)", strings.Join(ids, ", "))
	}
	return fmt.Sprintf("%s is writing %s; wait for it to finish, or write elsewhere with -o", who, e.Dir)
}

// Lock is a held directory lock; Release it when the writing is done.
type Lock struct {
	files []*os.File
}

// Release gives the lock up. It is safe to call more than once.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	for i := len(l.files) - 1; i >= 0; i-- {
		f := l.files[i]
		// An exclusive holder's PID is cleared so that a later shared
		// holder is not reported under it.
		f.Truncate(0)
		unlock(f)
		f.Close()
	}
	l.files = nil
}

// Path is the lock file of dir.
func Path(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
}

func shardPath(dir string, i, n int) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), fmt.Sprintf(".%s.shard-%d-of-%d.lock", filepath.Base(dir), i, n))
}

// Exclusive locks dir for one writer. It fails at once with a *HeldError
// when another process holds dir, exclusively or as a shard. The parent of
// dir must exist.
func Exclusive(dir string) (*Lock, error) {
	f, err := take(Path(dir), true)
	if err != nil {
		return nil, held(dir, err)
	}
	return &Lock{files: []*os.File{f}}, nil
}

// Shard locks dir as shard i of n of one sweep: shared with the other
// shards, exclusive for this shard.
func Shard(dir string, i, n int) (*Lock, error) {
	main, err := take(Path(dir), false)
	if err != nil {
		return nil, held(dir, err)
	}
	own, err := take(shardPath(dir, i, n), true)
	if err != nil {
		unlock(main)
		main.Close()
		return nil, held(dir, err)
	}
	return &Lock{files: []*os.File{main, own}}, nil
}

// ErrBusy is what TryFlock (and so take) returns when the lock is held.
var ErrBusy = errors.New("lock held")

// take opens path and locks it without waiting, exclusively or shared; an
// exclusive holder writes its PID into the file for the message of the
// next one.
func take(path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := lock(f, exclusive); err != nil {
		f.Close()
		return nil, err
	}
	if exclusive {
		f.Truncate(0)
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// held turns a failed take into the error a user reads: a *HeldError
// naming the holders where the lock is held, else the error itself.
func held(dir string, err error) error {
	if !errors.Is(err, ErrBusy) {
		return err
	}
	return &HeldError{Dir: filepath.Clean(dir), PIDs: holders(dir)}
}

// holders reads the PIDs of the processes that hold dir, for the message
// only: the exclusive holder's and every shard's, each read from a lock
// file that is locked now (a PID left in a file by a killed holder is not
// read, and no PID is checked for life: PIDs of another PID namespace or
// of a rebooted machine mean nothing here).
func holders(dir string) []int {
	var pids []int
	seen := map[int]bool{}
	// addIfHeld adds the PID in lock file p if some process holds p in a
	// way that excludes a lock of the kind given (shared: only an
	// exclusive holder does).
	addIfHeld := func(p string, exclusive bool) {
		f, err := os.Open(p)
		if err != nil {
			return
		}
		defer f.Close()
		if lock(f, exclusive) == nil { // not held now
			unlock(f)
			return
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || seen[pid] {
			return
		}
		seen[pid] = true
		pids = append(pids, pid)
	}
	addIfHeld(Path(dir), false)
	d := filepath.Clean(dir)
	shards, _ := filepath.Glob(filepath.Join(filepath.Dir(d), "."+globEscape(filepath.Base(d))+".shard-*-of-*.lock"))
	for _, p := range shards {
		addIfHeld(p, false)
	}
	sort.Ints(pids)
	return pids
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

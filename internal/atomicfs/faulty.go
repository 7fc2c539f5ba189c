package atomicfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
)

// Fault names the step a Faulty file system fails.
type Fault string

const (
	// FaultWrite is a short write on a full disk: WriteFile writes the
	// first half of the data, then fails with ENOSPC (the half-written
	// file stays where it was written).
	FaultWrite Fault = "write"
	// FaultFsync writes the whole file, then its fsync fails with EIO.
	FaultFsync Fault = "fsync"
	// FaultRename fails a rename with EIO; nothing moves.
	FaultRename Fault = "rename"
	// FaultSyncDir fails a directory fsync with EIO (the rename before it
	// has happened).
	FaultSyncDir Fault = "syncdir"
	// FaultMkdir fails a directory creation with ENOSPC.
	FaultMkdir Fault = "mkdir"
	// FaultExchange fails an atomic exchange with EIO; nothing moves.
	FaultExchange Fault = "exchange"
	// FaultLink fails a hard link with ENOSPC.
	FaultLink Fault = "link"
)

// Faults lists every fault kind, for table tests.
var Faults = []Fault{FaultWrite, FaultFsync, FaultRename, FaultSyncDir, FaultMkdir, FaultExchange, FaultLink}

// ErrInjected wraps every error a Faulty file system returns, so a test
// can tell its fault from a real one with errors.Is.
var ErrInjected = errors.New("injected fault")

// Faulty is the real file system, except that the N-th call (1-based) of
// the step named by Fault fails as that step fails on a real disk. It
// counts calls across goroutines. N = 0 never fails and only counts.
type Faulty struct {
	Fault Fault
	N     int
	// NoExchange makes Exchange answer ErrNoExchange, as a file system
	// without renameat2's exchange does, so the fallback is tested too.
	NoExchange bool

	calls atomic.Int64
	hits  atomic.Int64
}

// Calls is how many times the faulted step was called.
func (f *Faulty) Calls() int { return int(f.calls.Load()) }

// Fired says whether the fault was injected.
func (f *Faulty) Fired() bool { return f.hits.Load() > 0 }

func (f *Faulty) hit(step Fault) bool {
	if step != f.Fault {
		return false
	}
	if int(f.calls.Add(1)) == f.N {
		f.hits.Add(1)
		return true
	}
	return false
}

// injected is the error a real call returns (a *fs.PathError carrying the
// errno), marked so that errors.Is(err, ErrInjected) holds.
func injected(step Fault, path string, errno syscall.Errno) error {
	return &fs.PathError{Op: string(step), Path: path, Err: fmt.Errorf("%w (%w)", errno, ErrInjected)}
}

func (f *Faulty) MkdirAll(p string) error {
	if f.hit(FaultMkdir) {
		return injected(FaultMkdir, p, syscall.ENOSPC)
	}
	return OS.MkdirAll(p)
}

func (f *Faulty) WriteFile(p string, data []byte) error {
	if f.hit(FaultWrite) {
		if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
			return err
		}
		return injected(FaultWrite, p, syscall.ENOSPC)
	}
	if f.hit(FaultFsync) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		return injected(FaultFsync, p, syscall.EIO)
	}
	return OS.WriteFile(p, data)
}

func (f *Faulty) Rename(o, n string) error {
	if f.hit(FaultRename) {
		return injected(FaultRename, o, syscall.EIO)
	}
	return OS.Rename(o, n)
}

func (f *Faulty) RemoveAll(p string) error { return OS.RemoveAll(p) }

func (f *Faulty) Exchange(a, b string) error {
	if f.NoExchange {
		return ErrNoExchange
	}
	if f.hit(FaultExchange) {
		return injected(FaultExchange, a, syscall.EIO)
	}
	return OS.Exchange(a, b)
}

func (f *Faulty) Link(o, n string) error {
	if f.hit(FaultLink) {
		return injected(FaultLink, n, syscall.ENOSPC)
	}
	return OS.Link(o, n)
}

func (f *Faulty) SyncDir(p string) error {
	if f.hit(FaultSyncDir) {
		return injected(FaultSyncDir, p, syscall.EIO)
	}
	return OS.SyncDir(p)
}

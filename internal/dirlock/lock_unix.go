//go:build unix

package dirlock

import (
	"errors"
	"os"
	"syscall"
)

func lock(f *os.File, exclusive bool) error { return TryFlock(f, exclusive) }

// TryFlock takes a flock on f (exclusive, or shared) without waiting:
// ErrBusy where another open file description holds it (in this process
// or another), another error where the file system cannot lock at all.
// atomicfs locks its temporaries with it.
func TryFlock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrBusy
		default:
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

//go:build unix

package atomicfs

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting: errBusy where
// another open file description holds it (in this process or another),
// another error where the file system cannot lock at all.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errBusy
		default:
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
	}
}

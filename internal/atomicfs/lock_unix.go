//go:build unix

package atomicfs

import (
	"errors"
	"os"

	"github.com/conspirator-sim/conspirator/internal/dirlock"
)

// tryLock takes an exclusive flock on f without waiting: errBusy where
// another open file description holds it (in this process or another),
// another error where the file system cannot lock at all.
func tryLock(f *os.File) error {
	err := dirlock.TryFlock(f, true)
	if errors.Is(err, dirlock.ErrBusy) {
		return errBusy
	}
	return err
}

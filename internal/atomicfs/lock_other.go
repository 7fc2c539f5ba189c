//go:build !unix

package atomicfs

import (
	"errors"
	"os"
)

// tryLock: outside Unix there is no flock here. Temporaries are then
// protected within their process only (liveTemps), and CleanTemps keeps
// every temporary of another process, dead or alive.
func tryLock(f *os.File) error { return errors.New("no flock on this system") }

//go:build !unix

package dirlock

import "os"

// Outside Unix there is no flock: writers are not kept apart there (the
// package documentation's guarantee holds on Linux and macOS only).
func lock(f *os.File, exclusive bool) error { return nil }
func unlock(f *os.File)                     {}

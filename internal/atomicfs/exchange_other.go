//go:build !linux

package atomicfs

// exchange has no portable form outside Linux; Replace falls back to two
// renames there.
func exchange(a, b string) error { return ErrNoExchange }

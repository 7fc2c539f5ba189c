//go:build !linux

package host

// allowedCPUs is every CPU: there is no portable affinity mask.
func allowedCPUs() []int { return allCPUs() }

// pinThread does nothing outside Linux.
func pinThread(int) error { return nil }

// pinProcess does nothing outside Linux: runs there are unpinned.
func pinProcess(int) (func(), error) { return func() {}, nil }

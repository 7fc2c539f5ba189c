//go:build unix

package optimal

import "syscall"

// syscallAlive is nil when process pid exists (signal 0 probes it).
func syscallAlive(pid int) error { return syscall.Kill(pid, 0) }

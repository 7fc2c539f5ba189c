//go:build unix

package inputfile

import "syscall"

// nonBlock makes opening a FIFO return at once instead of waiting for a
// writer; a regular file ignores it.
const nonBlock = syscall.O_NONBLOCK

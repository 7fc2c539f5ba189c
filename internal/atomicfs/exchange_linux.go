package atomicfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps a and b with renameat2(RENAME_EXCHANGE) (Linux 3.15,
// ext4, xfs, btrfs, tmpfs, NFS and overlayfs among others); a file system
// without it answers EINVAL, an old kernel ENOSYS.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return ErrNoExchange
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}

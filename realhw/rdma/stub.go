//go:build !rdma

package rdma

import "github.com/conspirator-sim/conspirator/realhw"

// Config configures the RDMA backend.
type Config struct {
	Device  string // device name (ibv_devices); empty for the first
	Port    int    // port number, default 1
	GIDIdx  int    // GID index for RoCE; -1 to use the LID (InfiniBand)
	MaxSize int64  // largest write, default 64 MiB
}

// Backend is unavailable in this build.
type Backend struct{}

// Open reports ErrNotBuilt.
func Open(Config) (*Backend, error) { return nil, ErrNotBuilt }

// WriteLatency reports ErrNotBuilt.
func WriteLatency(Config, []int64, int) ([]realhw.Sample, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (b *Backend) Close() error { return nil }

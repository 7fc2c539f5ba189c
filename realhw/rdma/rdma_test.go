package rdma

import (
	"errors"
	"testing"
)

// Without -tags rdma every call says how to get RDMA support; with it, a
// machine without an RDMA NIC gets ErrNoDevice, not a crash or a hang.
func TestOpenReportsClearly(t *testing.T) {
	b, err := Open(Config{GIDIdx: -1})
	if err == nil {
		b.Close()
		t.Skip("an RDMA device exists here; the loopback write is exercised by WriteLatency")
	}
	if !errors.Is(err, ErrNotBuilt) && !errors.Is(err, ErrNoDevice) {
		t.Fatalf("Open: %v, want ErrNotBuilt or ErrNoDevice", err)
	}
	if _, err := WriteLatency(Config{GIDIdx: -1}, []int64{64}, 1); err == nil {
		t.Error("WriteLatency succeeded without a device")
	}
}

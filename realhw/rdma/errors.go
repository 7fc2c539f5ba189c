package rdma

import "errors"

// ErrNotBuilt is returned by every call in a build without -tags rdma.
var ErrNotBuilt = errors.New("realhw/rdma: built without RDMA support; rebuild with -tags rdma (needs cgo and libibverbs-dev)")

// ErrNoDevice is returned when libibverbs finds no RDMA device.
var ErrNoDevice = errors.New("realhw/rdma: no RDMA device found (ibv_get_device_list returned none): this machine has no RDMA NIC, or its driver/rdma-core provider is not loaded; try `ibv_devices`")

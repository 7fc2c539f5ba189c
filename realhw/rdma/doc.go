// Package rdma provides the RDMA backend of realhw: RDMA writes into
// registered host memory over a loopback-connected RC queue pair, through
// libibverbs. It is built only with -tags rdma (cgo, Debian package
// libibverbs-dev); without the tag every call reports that it was not built.
package rdma

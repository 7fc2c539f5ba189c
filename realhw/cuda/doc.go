// Package cuda provides the CUDA backend of realhw: pinned and pageable
// host-to-device and device-to-host copies over a range of sizes, kernel
// launch latency and a small kernel, through cgo against the CUDA driver
// and runtime. It is built only with -tags cuda; without it every call
// reports that it was not built.
//
// UNTESTED: the tagged code was written without a GPU or CUDA headers and
// has never been compiled. Expect to fix small things the first time it is
// built on a CUDA machine (`go vet -tags cuda ./realhw/cuda`).
package cuda

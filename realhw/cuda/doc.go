// Package cuda provides the CUDA backend of realhw: pinned and pageable
// host-to-device and device-to-host copies over a range of sizes, kernel
// launch latency and a small kernel, through cgo against the CUDA driver
// and runtime. It is built only with -tags cuda; without it every call
// reports that it was not built.
//
// Tested so far without a GPU only: CI compiles, links and runs the tagged
// package against testdata/stub, declarations of the calls it makes and
// libraries that answer "no device" as a GPU-less machine would. That
// checks the cgo code against the documented signatures, the argument
// checks and the no-GPU error; the measurements themselves have not yet
// run on a GPU (TestMeasure checks them where one answers).
package cuda

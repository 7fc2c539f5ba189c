// Package cuda provides the CUDA backend of realhw: pinned and pageable
// host-to-device and device-to-host copies over a range of sizes (as means,
// or every copy timed for a validation's p50 and p99), kernel launch
// latency with and without synchronize, a small kernel, and a Backend that
// performs a request's GPU-side stages (the copies, the launch, a stand-in
// kernel that spins for the model's compute time, the result copy), through
// cgo against the CUDA driver and runtime (the C side is rh.h). It is built
// only with -tags cuda; without it every call reports that it was not
// built (ErrNotBuilt) and Built is false.
//
// Where it has run: CI compiles, links and runs the tagged package against
// testdata/stub, declarations of the calls it makes and libraries that
// answer "no device" as a GPU-less machine would (the cgo code against the
// documented signatures, the argument checks, the no-GPU error). On a GPU,
// an H200 (driver 580.159.04, CUDA 13.0), on 2026-11-27: first Measure,
// through this package's test binary built against the stand-ins with the
// real sonames (../shared/reference/measured-h200-2026-11-27/
// realhw-cuda-measure.csv, which agrees with an independent cudaMemcpy
// program within 1%); then everything, by device-check.sh (binaries of
// commit e503caa): TestMeasure and TestBackend, MeasureEach and DeviceInfo
// under calibrate --backend cuda --validate, and the Backend with its spin
// kernel under run --backend cuda, all 9 steps exiting 0. Their outputs are
// the fixtures in realhw/data/h200-2026-11-27/device-check/. Since then
// the Backend's ResultCopy copies into pageable memory rather than pinned
// (as the model prices it); that change has not run on a GPU yet.
package cuda

// Package realhw provides the Backend interface through which a request
// pipeline's stages (network transfer, host copy, CPU work, DMA, GPU
// compute) run either on the simulator's model or on real hardware, and the
// Sample type in which real measurements travel to calibration. The swap
// subpackage performs a simulated run's stages on a Backend
// (`run --backend host`).
//
// The real backends live in subpackages: host (any Linux machine: loopback
// TCP, memcpy, a CPU load generator, kernel CPU accounting), cuda (build tag
// cuda) and rdma (build tag rdma). Parsers for external tools' output live in
// perftest and nvbandwidth; fitting, calibration profiles and the
// model-versus-real error report live in calib. Nothing here is needed by a
// plain build of the simulator, and the default build uses no cgo.
package realhw

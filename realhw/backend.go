package realhw

import (
	"errors"
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Stage names a kind of work a request pipeline does. It is the data-path
// model's stage vocabulary (datapath.StageKind), one set of names for what
// the model simulates, what a backend measures and what reports show;
// these are the kinds a Backend can perform.
type Stage = datapath.StageKind

const (
	// StageNetwork moves a request's bytes from the client into server
	// memory (TCP send+receive, or an RDMA write), ending when the last byte
	// is in the destination buffer.
	StageNetwork = datapath.KindNetwork
	// StageHostCopy copies bytes between two host buffers (memcpy, or the
	// host side of a pageable cudaMemcpy's staging).
	StageHostCopy = datapath.KindHostCopy
	// StageCPU runs a fixed amount of CPU work on one host thread (a
	// scheduling decision, a kernel launch's API call).
	StageCPU = datapath.KindHostCPU
	// StageDMA moves bytes by a copy engine: host to GPU (cudaMemcpy H2D
	// from pinned memory) or NIC to memory.
	StageDMA = datapath.KindDMA
	// StageCompute runs the request's computation (a GPU kernel; a small
	// CPU loop on the host backend).
	StageCompute = datapath.KindCompute
	// StageReply moves the result back to the client.
	StageReply = datapath.KindReply
)

// Stages lists the stages in pipeline order.
var Stages = []Stage{StageNetwork, StageHostCopy, StageCPU, StageDMA, StageCompute, StageReply}

// ErrUnsupported is wrapped by a Backend method whose stage the backend
// cannot perform (no DMA engine on the host backend, no network on the
// cuda backend). Callers test it with errors.Is and skip the stage.
var ErrUnsupported = errors.New("stage not supported by this backend")

// Unsupported returns an error wrapping ErrUnsupported that names the
// backend and the stage.
func Unsupported(backend string, s Stage) error {
	return fmt.Errorf("realhw: %s backend: %s: %w", backend, s, ErrUnsupported)
}

// Backend performs the stages of a request pipeline, one call per stage of
// one request, and says how long each took. The model (simulated time) and
// the real backends (wall-clock time on the machine) implement it, so that a
// pipeline written against it runs on either and the two can be compared.
//
// Contract, for every method:
//   - The call does the stage's work once and returns its duration as an
//     engine.Time (nanoseconds). A real backend measures the elapsed wall
//     time of the operation itself, excluding its own setup (buffers are
//     allocated once, at construction or on first use of a size, and reused);
//     a model backend returns the simulated duration.
//   - bytes is the payload size, >= 0. A negative size is an error, not a
//     panic. Payloads are real: a real backend moves that many bytes.
//   - An error wrapping ErrUnsupported means the backend cannot do this
//     stage at all; any other error means this attempt failed (I/O, device)
//     and the returned duration is meaningless.
//   - Methods are not safe for concurrent use: one pipeline drives one
//     Backend from one goroutine. A real backend may lock that goroutine to
//     its OS thread for the duration of a call.
//   - Close releases sockets, buffers and devices; calling a method after
//     Close is an error.
type Backend interface {
	// Name is the backend's short name ("host", "cuda", "rdma", "model").
	Name() string
	// Network moves bytes from the client into a server buffer.
	Network(bytes int64) (engine.Time, error)
	// HostCopy copies bytes from one host buffer to another (the stand-in
	// for the host's copy toward the GPU on the host backend).
	HostCopy(bytes int64) (engine.Time, error)
	// CPUWork runs work of one unloaded host core (its duration on an idle
	// machine) on one thread; under background load it takes longer, and
	// the returned time says how much.
	CPUWork(work engine.Time) (engine.Time, error)
	// DMA moves bytes with a copy engine into device memory.
	DMA(bytes int64) (engine.Time, error)
	// Compute runs the request's computation over bytes of input.
	Compute(bytes int64) (engine.Time, error)
	// Reply moves bytes of result from the server back to the client.
	Reply(bytes int64) (engine.Time, error)
	Close() error
}

// Sample is one measurement of one stage: Bytes moved or processed, the
// Latency it took, and the conditions it was taken under. Parsers of
// external tools and the real backends produce Samples; calib fits them.
type Sample struct {
	Stage string `json:"stage" yaml:"stage"`
	Bytes int64  `json:"bytes" yaml:"bytes"`
	// Latency is the time of one operation of this size. For a
	// throughput measurement (perftest *_bw, nvbandwidth) it is the
	// steady-state time per message, Bytes / bandwidth, so that a linear
	// fit of Latency on Bytes gives 1/bandwidth as its slope.
	Latency engine.Time `json:"latency_ns" yaml:"latency_ns"`
	// BackgroundLoad is the background CPU load u in [0, 1) on the machine
	// while the sample was taken (0 when unknown or none).
	BackgroundLoad float64 `json:"background_load" yaml:"background_load"`
	// CPUTime is the CPU time (user + system) the measuring thread spent on
	// the operation, from the kernel's accounting; 0 when not measured.
	CPUTime engine.Time `json:"cpu_ns,omitempty" yaml:"cpu_ns,omitempty"`
	// Source says where the sample came from ("ib_write_lat:12", "host").
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
}

// Validate reports what is wrong with s, if anything.
func (s Sample) Validate() error {
	switch {
	case s.Stage == "":
		return fmt.Errorf("sample from %q has no stage name", s.Source)
	case s.Bytes < 0:
		return fmt.Errorf("sample %s from %q: bytes %d must be >= 0", s.Stage, s.Source, s.Bytes)
	case s.Latency < 0:
		return fmt.Errorf("sample %s from %q: latency %v must be >= 0", s.Stage, s.Source, s.Latency)
	case !(s.BackgroundLoad >= 0 && s.BackgroundLoad < 1):
		return fmt.Errorf("sample %s from %q: background load %v must be in [0, 1)", s.Stage, s.Source, s.BackgroundLoad)
	case s.CPUTime < 0:
		return fmt.Errorf("sample %s from %q: CPU time %v must be >= 0", s.Stage, s.Source, s.CPUTime)
	}
	return nil
}

package hw

import (
	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
)

// GPUInstance is a whole GPU or one MIG instance executing kernels in FIFO
// order, one at a time (one CUDA stream per instance; MIG instances are
// isolated, so instances of one GPU do not slow each other).
type GPUInstance struct {
	Name    string // e.g. "gpu0" or "gpu0/3g.20gb@4"
	GPU     string // catalog GPU type, e.g. "a100-80gb"
	Profile string // MIG profile, "" for the whole GPU
	// Link is the GPU's PCIe link to the host; H2D carries pinned copies
	// into it, shared by concurrent copies.
	Link PCIeSpec
	H2D  *resource.Bandwidth

	q           *resource.Queue
	outstanding int         // requests assigned and not yet finished
	backlog     engine.Time // compute time of those requests
}

// NewGPUInstance returns an idle instance.
func NewGPUInstance(sim *engine.Simulator, name, gpuType, profile string, link PCIeSpec) (*GPUInstance, error) {
	q, err := resource.NewQueue(sim, 1)
	if err != nil {
		return nil, err
	}
	b, err := resource.NewBandwidth(sim, link.PinnedH2DBytesPerSec)
	if err != nil {
		return nil, err
	}
	return &GPUInstance{Name: name, GPU: gpuType, Profile: profile, Link: link, H2D: b, q: q}, nil
}

// Assign records that a request with the given compute time will run here:
// it counts towards the load a scheduler sees from the moment it is
// decided, not from when its data arrives.
func (g *GPUInstance) Assign(compute engine.Time) {
	g.outstanding++
	g.backlog += compute
}

// Run queues a kernel of the given compute time; done runs when it ends.
// It releases what Assign recorded for the request when it completes (call
// Finish from done).
func (g *GPUInstance) Run(compute engine.Time, done func()) { g.q.Submit(compute, done) }

// Finish removes a completed request from the load.
func (g *GPUInstance) Finish(compute engine.Time) {
	g.outstanding--
	g.backlog -= compute
}

// Backlog is the compute time of the requests assigned and not finished:
// the load a least-loaded scheduler compares across heterogeneous instances.
func (g *GPUInstance) Backlog() engine.Time { return g.backlog }

// Queue exposes the instance's FIFO for its statistics (utilisation).
func (g *GPUInstance) Queue() *resource.Queue { return g.q }

package hw

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
)

// DMAEngine moves data between a device's memory and another over PCIe:
// each operation pays a per-descriptor cost, then the bytes share the
// engine's bandwidth max-min fairly with the other operations in flight.
type DMAEngine struct {
	bw     *resource.Bandwidth
	perOp  engine.Time
	after  afterPool
	copied float64 // bytes given to Copy so far
}

// NewDMAEngine returns a DMA engine of the given rate and per-op cost.
func NewDMAEngine(sim *engine.Simulator, bytesPerSec float64, perOp engine.Time) (*DMAEngine, error) {
	if perOp < 0 {
		return nil, fmt.Errorf("hw: DMA per-operation cost %v must be >= 0", perOp)
	}
	if !(bytesPerSec > 0) || math.IsInf(bytesPerSec, 0) {
		return nil, fmt.Errorf("hw: DMA bandwidth %v B/s must be a finite number > 0", bytesPerSec)
	}
	b, err := resource.NewBandwidth(sim, bytesPerSec)
	if err != nil {
		return nil, err
	}
	return &DMAEngine{bw: b, perOp: perOp, after: afterPool{sim: sim}}, nil
}

// Copy transfers bytes, at most capBytesPerSec (<= 0: no cap; the
// destination's link is the usual cap); done runs when the data has landed.
func (d *DMAEngine) Copy(bytes, capBytesPerSec float64, done func()) {
	d.copied += bytes
	d.bw.Start(bytes, capBytesPerSec, d.after.get(d.perOp, done))
}

// Utilization is the share of the engine's bandwidth the bytes copied so
// far take over elapsed seconds (the per-operation cost is latency, not
// bandwidth).
func (d *DMAEngine) Utilization(elapsed float64) float64 {
	if !(elapsed > 0) {
		return 0
	}
	return d.copied / (d.bw.Capacity() * elapsed)
}

// CopyTime is the uncontended closed form of Copy.
func (d *DMAEngine) CopyTime(bytes, capBytesPerSec float64) engine.Time {
	return SerializationTime(bytes, d.bw.Capacity(), capBytesPerSec) + d.perOp
}

// Bandwidth exposes the engine's bandwidth for its statistics.
func (d *DMAEngine) Bandwidth() *resource.Bandwidth { return d.bw }

// BufferPolicy says what the SmartNIC does with a request that finds its
// buffer full.
type BufferPolicy string

const (
	// BufferWait makes the request wait, in FIFO order, for space: the
	// client's write is held back (RDMA receiver-not-ready, credit-based
	// flow control).
	BufferWait BufferPolicy = "wait"
	// BufferDrop refuses it; the client sees an error and the drop is
	// counted.
	BufferDrop BufferPolicy = "drop"
)

// SmartNICConfig configures a SmartNIC model.
type SmartNICConfig struct {
	Spec        SmartNICSpec
	BufferBytes int64
	Policy      BufferPolicy
}

// SmartNIC is an off-path DPU: Arm cores that run control code at
// Spec.ArmSpeed of a host core (each request's work runs to completion on
// one core, FIFO, as a DOCA worker loop does), an on-card buffer of fixed
// capacity that incoming requests occupy until their data has left, and a
// DMA engine to host or GPU memory.
type SmartNIC struct {
	spec    SmartNICSpec
	cores   *resource.Queue
	buffer  *resource.Pool
	policy  BufferPolicy
	DMA     *DMAEngine
	dropped uint64
	busy    float64 // Arm core-seconds of work served
}

// NewSmartNIC returns a SmartNIC.
func NewSmartNIC(sim *engine.Simulator, cfg SmartNICConfig) (*SmartNIC, error) {
	s := cfg.Spec
	switch {
	case s.ArmCores < 1:
		return nil, fmt.Errorf("hw: SmartNIC %s needs at least 1 Arm core, got %d", s.Name, s.ArmCores)
	case !(s.ArmSpeed > 0) || math.IsInf(s.ArmSpeed, 0):
		return nil, fmt.Errorf("hw: SmartNIC %s Arm speed %v must be > 0", s.Name, s.ArmSpeed)
	case cfg.BufferBytes < 1:
		return nil, fmt.Errorf("hw: SmartNIC %s buffer of %d bytes must be > 0", s.Name, cfg.BufferBytes)
	case cfg.Policy != BufferWait && cfg.Policy != BufferDrop:
		return nil, fmt.Errorf("hw: unknown SmartNIC buffer policy %q; use %q or %q", cfg.Policy, BufferWait, BufferDrop)
	}
	q, err := resource.NewQueue(sim, s.ArmCores)
	if err != nil {
		return nil, err
	}
	p, err := resource.NewPool(sim, cfg.BufferBytes)
	if err != nil {
		return nil, err
	}
	d, err := NewDMAEngine(sim, s.DMABytesPerSec, s.DMAPerOp)
	if err != nil {
		return nil, err
	}
	return &SmartNIC{spec: s, cores: q, buffer: p, policy: cfg.Policy, DMA: d}, nil
}

// ArmTime is how long work measured in host-core time takes on one Arm core.
func (n *SmartNIC) ArmTime(hostWork engine.Time) engine.Time {
	return engine.Time(math.Ceil(float64(hostWork) / n.spec.ArmSpeed))
}

// Compute runs work, given in host-core time, on the next free Arm core.
func (n *SmartNIC) Compute(hostWork engine.Time, done func()) {
	t := n.ArmTime(hostWork)
	n.busy += t.Seconds()
	n.cores.Submit(t, done)
}

// Reserve takes bytes of buffer for an incoming request. Under BufferWait
// granted runs once the space is held (always from an event); under
// BufferDrop it runs only if the space is free now, and Reserve reports
// false, counting a drop, otherwise. A request larger than the whole buffer
// can never fit: that is a configuration error, reported.
func (n *SmartNIC) Reserve(bytes int64, granted func()) (bool, error) {
	if bytes > n.buffer.Capacity() {
		return false, fmt.Errorf("hw: a %d-byte request cannot fit the %d-byte SmartNIC buffer", bytes, n.buffer.Capacity())
	}
	if n.policy == BufferDrop && (n.buffer.Free() < bytes || n.buffer.Waiting() > 0) {
		n.dropped++
		return false, nil
	}
	return true, n.buffer.Acquire(bytes, granted)
}

// TryReserve takes bytes of buffer now if they are free and nobody waits,
// and reports whether it did: the common case, without an event.
func (n *SmartNIC) TryReserve(bytes int64) bool { return n.buffer.TryAcquire(bytes) }

// Release gives back buffer space once the request's data has left.
func (n *SmartNIC) Release(bytes int64) { n.buffer.Release(bytes) }

// Dropped returns the requests refused for want of buffer space.
func (n *SmartNIC) Dropped() uint64 { return n.dropped }

// ArmSeconds returns the Arm core-seconds of work served so far.
func (n *SmartNIC) ArmSeconds() float64 { return n.busy }

// Cores and Buffer expose the resources for their statistics.
func (n *SmartNIC) Cores() *resource.Queue { return n.cores }
func (n *SmartNIC) Buffer() *resource.Pool { return n.buffer }

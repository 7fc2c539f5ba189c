package model

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Backend returns stage durations from a datapath.Config. Contention
// between requests is not modelled here (one request, idle server): the
// full discrete-event pipelines in sim/datapath do that.
type Backend struct {
	cfg    datapath.Config
	link   hw.LinkConfig
	host   hw.HostCPUConfig
	closed bool
}

var _ realhw.Backend = (*Backend)(nil)

// New returns the model backend of cfg, which must be valid.
func New(cfg datapath.Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("realhw/model: %w", err)
	}
	return &Backend{
		cfg: cfg,
		link: hw.LinkConfig{
			BytesPerSec: float64(cfg.Network.LineRate) * float64(cfg.Network.Efficiency),
			Latency:     engine.Time(cfg.Network.Latency),
			PerMessage:  engine.Time(cfg.Network.PerMessage),
		},
		host: hw.HostCPUConfig{
			Cores:        cfg.Host.Cores,
			Background:   float64(cfg.Host.BackgroundLoad),
			Model:        hw.BackgroundModel(cfg.Host.BackgroundModel),
			Interference: float64(cfg.Host.Interference),
		},
	}, nil
}

// Name implements realhw.Backend.
func (b *Backend) Name() string { return "model" }

func (b *Backend) check(bytes int64, s realhw.Stage) error {
	if b.closed {
		return fmt.Errorf("realhw/model: %s after Close", s)
	}
	if bytes < 0 {
		return fmt.Errorf("realhw/model: %s of %d bytes: the size must be >= 0", s, bytes)
	}
	return nil
}

// Network is an RDMA write of bytes: one-way latency, the NIC's
// per-message cost and serialisation at the goodput rate (no host CPU).
func (b *Backend) Network(bytes int64) (engine.Time, error) {
	if err := b.check(bytes, realhw.StageNetwork); err != nil {
		return 0, err
	}
	return b.link.TransferTime(float64(bytes)), nil
}

// HostCopy is the host-CPU side of a pageable copy: bytes at the pageable
// cudaMemcpy rate (pinned rate x pageable factor), on a host core, so it is
// stretched by the background load like every host-side stage.
func (b *Backend) HostCopy(bytes int64) (engine.Time, error) {
	if err := b.check(bytes, realhw.StageHostCopy); err != nil {
		return 0, err
	}
	rate := float64(b.cfg.Host.PinnedH2D) * float64(b.cfg.Host.PageableFactor)
	return b.stretch(engine.Seconds(float64(bytes) / rate)), nil
}

// CPUWork is work of an idle host core, stretched by the background load
// (time-sharing of the cores and the interference factor).
func (b *Backend) CPUWork(work engine.Time) (engine.Time, error) {
	if err := b.check(0, realhw.StageCPU); err != nil {
		return 0, err
	}
	if work < 0 {
		return 0, fmt.Errorf("realhw/model: cpu work %v: must be >= 0", work)
	}
	return b.stretch(work), nil
}

func (b *Backend) stretch(t engine.Time) engine.Time {
	return engine.Time(float64(t)*b.host.Stretch() + 0.5)
}

// DMA is a copy-engine transfer into GPU memory: the SmartNIC DMA engine's
// per-operation cost plus bytes at its rate (the conspirator path's DMA).
func (b *Backend) DMA(bytes int64) (engine.Time, error) {
	if err := b.check(bytes, realhw.StageDMA); err != nil {
		return 0, err
	}
	return engine.Time(b.cfg.SmartNIC.DMAPerOp) + engine.Seconds(float64(bytes)/float64(b.cfg.SmartNIC.DMABandwidth)), nil
}

// Compute is the request's GPU time on the first configured GPU: the
// configured compute_time, or the serving stack's time for the request's
// model and batch. bytes is ignored:
// the batch, not the payload, sets the work.
func (b *Backend) Compute(bytes int64) (engine.Time, error) {
	if err := b.check(bytes, realhw.StageCompute); err != nil {
		return 0, err
	}
	r := b.cfg.Request
	if r.ComputeTime > 0 {
		return engine.Time(r.ComputeTime), nil
	}
	g := b.cfg.GPUs[0]
	t, err := gpu.ComputeModel{Stack: gpu.Stack(r.Stack)}.Time(g.Type, g.Profile, r.Model, r.Batch)
	if err != nil {
		return 0, fmt.Errorf("realhw/model: compute: %w", err)
	}
	return t, nil
}

// Reply sends bytes of result back to the client over the same link.
func (b *Backend) Reply(bytes int64) (engine.Time, error) {
	if err := b.check(bytes, realhw.StageReply); err != nil {
		return 0, err
	}
	return b.link.TransferTime(float64(bytes)), nil
}

// Close implements realhw.Backend.
func (b *Backend) Close() error {
	b.closed = true
	return nil
}

package realhw

import (
	"errors"

	"github.com/conspirator-sim/conspirator/engine"
)

// KernelWorker is a Backend that runs a stand-in GPU kernel of a given
// length (the cuda backend): the compute stage of a GPU path.
type KernelWorker interface {
	KernelWork(d engine.Time) (engine.Time, error)
}

// Launcher is a Backend that launches a kernel: the CPU cost of a launch.
type Launcher interface {
	Launch() (engine.Time, error)
}

// ResultCopier is a Backend that copies a result from the device to the
// host.
type ResultCopier interface {
	ResultCopy(bytes int64) (engine.Time, error)
}

// Combine returns a Backend that performs each stage on primary, and on
// fallback where primary cannot (ErrUnsupported): the cuda backend for
// the GPU's stages, the host backend for the network and the CPU. Its name
// is "primary+fallback"; Close closes both.
func Combine(primary, fallback Backend) Backend { return &combined{primary, fallback} }

type combined struct{ p, f Backend }

func (c *combined) Name() string { return c.p.Name() + "+" + c.f.Name() }

func either(a, b func() (engine.Time, error)) (engine.Time, error) {
	d, err := a()
	if errors.Is(err, ErrUnsupported) {
		return b()
	}
	return d, err
}

func (c *combined) Network(n int64) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.Network(n) }, func() (engine.Time, error) { return c.f.Network(n) })
}

func (c *combined) HostCopy(n int64) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.HostCopy(n) }, func() (engine.Time, error) { return c.f.HostCopy(n) })
}

func (c *combined) CPUWork(w engine.Time) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.CPUWork(w) }, func() (engine.Time, error) { return c.f.CPUWork(w) })
}

func (c *combined) DMA(n int64) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.DMA(n) }, func() (engine.Time, error) { return c.f.DMA(n) })
}

func (c *combined) Compute(n int64) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.Compute(n) }, func() (engine.Time, error) { return c.f.Compute(n) })
}

func (c *combined) Reply(n int64) (engine.Time, error) {
	return either(func() (engine.Time, error) { return c.p.Reply(n) }, func() (engine.Time, error) { return c.f.Reply(n) })
}

// KernelWork, Launch and ResultCopy are the primary's, where it has them.
func (c *combined) KernelWork(d engine.Time) (engine.Time, error) {
	if k, ok := c.p.(KernelWorker); ok {
		return k.KernelWork(d)
	}
	return 0, Unsupported(c.Name(), StageCompute)
}

func (c *combined) Launch() (engine.Time, error) {
	if l, ok := c.p.(Launcher); ok {
		return l.Launch()
	}
	return 0, Unsupported(c.Name(), StageCPU)
}

func (c *combined) ResultCopy(n int64) (engine.Time, error) {
	if r, ok := c.p.(ResultCopier); ok {
		return r.ResultCopy(n)
	}
	return 0, Unsupported(c.Name(), StageDMA)
}

func (c *combined) Close() error { return errors.Join(c.p.Close(), c.f.Close()) }

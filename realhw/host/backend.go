package host

import (
	"errors"
	"fmt"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// Backend is the host implementation of realhw.Backend: Network and Reply
// are real loopback TCP exchanges, HostCopy a memcpy, CPUWork a calibrated
// spin loop, Compute the fixed FNV compute; there is no DMA engine.
type Backend struct {
	srv       *Server
	cl        *Client
	src, dst  []byte
	cal       []byte  // the CPU work loop's calibration buffer
	itersPerS float64 // Compute bytes per second on this machine, the fastest seen (calibrate)
	closed    bool
	// Timeout bounds each network exchange (default 10 s).
	Timeout time.Duration
}

var _ realhw.Backend = (*Backend)(nil)

// NewBackend starts a loopback server and connects to it, and measures the
// speed of the CPU work loop.
func NewBackend() (*Backend, error) {
	origin := time.Now()
	srv, err := NewServer(origin)
	if err != nil {
		return nil, err
	}
	cl, err := Dial(srv.Addr(), origin)
	if err != nil {
		srv.Close()
		return nil, err
	}
	b := &Backend{srv: srv, cl: cl, Timeout: 10 * time.Second}
	// Bytes of Compute per second, so that CPUWork(d) runs d of CPU: the
	// fastest pass over 64 KiB (about 20-50 us) seen so far, 32 passes
	// here and one more before every CPUWork. Preemption only makes a pass
	// slower, so the fastest one is the loop's own speed even when the
	// machine is busy; one 2 ms window, as first done, came out 3x slow
	// whenever another process took the core during it, and 32 passes at
	// construction alone came out 2x slow in most runs of
	// run --backend host (the loop ran twice as fast a few milliseconds
	// later: the core's clock or its hyperthread sibling), hence the pass
	// before each call.
	b.calibrate(32)
	if !(b.itersPerS > 0) {
		cl.Close()
		srv.Close()
		return nil, errors.New("realhw/host: the clock did not advance while measuring the CPU work loop")
	}
	return b, nil
}

func (b *Backend) Name() string { return "host" }

func (b *Backend) check(n int64) error {
	if b.closed {
		return errors.New("realhw/host: backend used after Close")
	}
	if n < 0 || n > MaxPayload {
		return fmt.Errorf("realhw/host: size %d must be in [0, %d]", n, MaxPayload)
	}
	return nil
}

// Network sends bytes to the server and returns the time until the server
// holds them all.
func (b *Backend) Network(bytes int64) (engine.Time, error) {
	if err := b.check(bytes); err != nil {
		return 0, err
	}
	rt, err := b.cl.Do(bytes, 0, 0, time.Now().Add(b.Timeout))
	return engine.Time(rt.Network), err
}

// Reply asks the server for bytes and returns the time from the server's
// write to the client holding them.
func (b *Backend) Reply(bytes int64) (engine.Time, error) {
	if err := b.check(bytes); err != nil {
		return 0, err
	}
	rt, err := b.cl.Do(0, bytes, 0, time.Now().Add(b.Timeout))
	return engine.Time(rt.Reply), err
}

// HostCopy copies bytes between two host buffers.
func (b *Backend) HostCopy(bytes int64) (engine.Time, error) {
	if err := b.check(bytes); err != nil {
		return 0, err
	}
	b.src, b.dst = grow(b.src, int(bytes)), grow(b.dst, int(bytes))
	t0 := time.Now()
	copy(b.dst, b.src)
	return engine.Time(time.Since(t0)), nil
}

// CPUWork runs the Compute loop for as many bytes as take work on this
// machine when idle, and returns how long it took now.
func (b *Backend) CPUWork(work engine.Time) (engine.Time, error) {
	if err := b.check(0); err != nil {
		return 0, err
	}
	if work < 0 || work > engine.Time(10*time.Second) {
		return 0, fmt.Errorf("realhw/host: CPU work %v must be in [0, 10s]", work)
	}
	b.calibrate(1)
	n := int(b.itersPerS * work.Seconds())
	b.src = grow(b.src, 64<<10)
	t0 := time.Now()
	Compute(b.src, n)
	return engine.Time(time.Since(t0)), nil
}

// calibrate runs passes of the CPU work loop over 64 KiB and keeps the
// fastest speed seen.
func (b *Backend) calibrate(passes int) {
	b.cal = grow(b.cal, 64<<10)
	for range passes {
		t0 := time.Now()
		Compute(b.cal, len(b.cal))
		if dt := time.Since(t0).Seconds(); dt > 0 {
			b.itersPerS = max(b.itersPerS, float64(len(b.cal))/dt)
		}
	}
}

// DMA is not available on the host backend.
func (b *Backend) DMA(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("host", realhw.StageDMA)
}

// Compute runs the fixed FNV compute over bytes.
func (b *Backend) Compute(bytes int64) (engine.Time, error) {
	if err := b.check(bytes); err != nil {
		return 0, err
	}
	b.dst = grow(b.dst, int(max(bytes, 1)))
	t0 := time.Now()
	Compute(b.dst, int(bytes))
	return engine.Time(time.Since(t0)), nil
}

// Close shuts the connection and the server down.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	cerr := b.cl.Close()
	if err := b.srv.Close(); err != nil {
		return err
	}
	return cerr
}

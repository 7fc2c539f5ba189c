package hw

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
)

// LinkConfig configures one direction of a network path between the
// clients and the server's NIC (or the SmartNIC's NIC).
type LinkConfig struct {
	// BytesPerSec is the payload rate shared by all transfers (line rate
	// times efficiency), max-min fairly.
	BytesPerSec float64
	// Latency is the one-way small-message latency NIC to NIC: wire,
	// switch and both NICs' pipelines (perftest's RTT/2).
	Latency engine.Time
	// PerMessage is the NIC's per-message overhead (1 / message rate).
	PerMessage engine.Time
}

// Validate reports what is physically impossible in c.
func (c LinkConfig) Validate() error {
	switch {
	case !(c.BytesPerSec > 0) || math.IsInf(c.BytesPerSec, 0):
		return fmt.Errorf("hw: link bandwidth %v B/s must be a finite number > 0", c.BytesPerSec)
	case c.Latency < 0:
		return fmt.Errorf("hw: link latency %v must be >= 0", c.Latency)
	case c.PerMessage < 0:
		return fmt.Errorf("hw: per-message overhead %v must be >= 0", c.PerMessage)
	}
	return nil
}

// TransferTime is the uncontended time of one message of the given size:
// per-message overhead + serialization + latency. The closed form the
// pipeline tests compare a single request against.
func (c LinkConfig) TransferTime(bytes float64) engine.Time {
	return c.PerMessage + SerializationTime(bytes, c.BytesPerSec, 0) + c.Latency
}

// SerializationTime is bytes at the smaller of rate and cap (cap <= 0: no
// cap), rounded up to the nanosecond.
func SerializationTime(bytes, rate, cap float64) engine.Time {
	if cap > 0 && cap < rate {
		rate = cap
	}
	return engine.Time(math.Ceil(bytes / rate * 1e9))
}

// Link is one direction of a network path. Concurrent messages share its
// bandwidth max-min fairly (a flow capped by a slower sender or receiver
// gets its cap, the rest split what is left); each message then pays the
// per-message overhead and the latency.
type Link struct {
	sim   *engine.Simulator
	cfg   LinkConfig
	wire  *resource.Bandwidth
	after afterPool
	sent  float64 // bytes given to Send so far
}

// NewLink returns a link.
func NewLink(sim *engine.Simulator, cfg LinkConfig) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := resource.NewBandwidth(sim, cfg.BytesPerSec)
	if err != nil {
		return nil, err
	}
	return &Link{sim: sim, cfg: cfg, wire: b, after: afterPool{sim: sim}}, nil
}

// Send moves bytes across the link, at most capBytesPerSec (<= 0: no cap
// beyond the link); done runs when the last byte has arrived at the far
// side. The serialization shares the link; overhead and latency do not.
func (l *Link) Send(bytes, capBytesPerSec float64, done func()) {
	l.sent += bytes
	l.wire.Start(bytes, capBytesPerSec, l.after.get(l.cfg.PerMessage+l.cfg.Latency, done))
}

// Utilization is the share of the link's capacity the bytes sent so far
// take over elapsed seconds.
func (l *Link) Utilization(elapsed float64) float64 {
	if !(elapsed > 0) {
		return 0
	}
	return l.sent / (l.wire.Capacity() * elapsed)
}

// Wire exposes the shared bandwidth for its statistics (utilisation).
func (l *Link) Wire() *resource.Bandwidth { return l.wire }

// afterPool hands out reusable callbacks that schedule next after a fixed
// delay: a two-step activity (transfer, then latency) without a closure
// allocated per message.
type afterPool struct {
	sim  *engine.Simulator
	free []*afterRec
}

type afterRec struct {
	pool  *afterPool
	delay engine.Time
	next  func()
	fire  func()
}

func (p *afterPool) get(d engine.Time, next func()) func() {
	var r *afterRec
	if n := len(p.free); n > 0 {
		r = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		r = &afterRec{pool: p}
		r.fire = r.run
	}
	r.delay, r.next = d, next
	return r.fire
}

func (r *afterRec) run() {
	d, next := r.delay, r.next
	r.next = nil
	r.pool.free = append(r.pool.free, r)
	if next == nil {
		return
	}
	if d == 0 {
		next()
		return
	}
	r.pool.sim.MustAfter(d, next)
}

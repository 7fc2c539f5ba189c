package resource

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// Pool is a fixed amount of an integral resource (bytes of SmartNIC buffer,
// DMA descriptors, GPU memory pages) taken and given back in arbitrary
// amounts. Requests that do not fit wait in strict FIFO order: a small
// request never overtakes a large one at the head of the line, so a large
// request cannot starve.
//
// The Pool does not know who holds what: Release is trusted to give back
// what the caller acquired.
type Pool struct {
	sim      *engine.Simulator
	capacity int64
	inUse    int64
	waiters  fifo[poolWaiter]

	inUseTW   stats.TimeWeighted
	waitingTW stats.TimeWeighted
	waits     stats.Tally
	noStats   bool // StopStats was called
	granted   uint64
}

type poolWaiter struct {
	n       int64
	since   engine.Time
	granted func()
}

// NewPool returns a pool of the given capacity (> 0 units), all free.
func NewPool(sim *engine.Simulator, capacity int64) (*Pool, error) {
	if sim == nil {
		return nil, fmt.Errorf("resource: NewPool needs a simulator, got nil")
	}
	if capacity <= 0 {
		return nil, fmt.Errorf("resource: pool capacity is %d: it must be > 0", capacity)
	}
	now := sim.Now()
	return &Pool{
		sim:       sim,
		capacity:  capacity,
		inUseTW:   *stats.NewTimeWeighted(now, 0),
		waitingTW: *stats.NewTimeWeighted(now, 0),
	}, nil
}

// Acquire requests n units; granted (may be nil) runs once they are held.
// The units are taken as soon as they are free and no earlier request is
// waiting, but granted always runs from a zero-delay event, never inside
// Acquire or Release: a caller's state is never re-entered, and a grant
// never depends on whether the units happened to be free at the call.
// It returns an error, and queues nothing, if n <= 0 or n exceeds the
// capacity (such a request could never be granted).
func (p *Pool) Acquire(n int64, granted func()) error {
	if n <= 0 || n > p.capacity {
		return fmt.Errorf("resource: pool request of %d units: it must be between 1 and the pool capacity %d", n, p.capacity)
	}
	now := p.sim.Now()
	if p.waiters.len() == 0 && n <= p.capacity-p.inUse {
		p.grant(n, now, granted, now)
		return nil
	}
	p.waiters.push(poolWaiter{n: n, since: now, granted: granted})
	if !p.noStats {
		p.waitingTW.Set(now, float64(p.waiters.len()))
	}
	return nil
}

// TryAcquire takes n units now, if they are free and no request is waiting
// (it does not overtake waiters either), and reports whether it did. It
// returns false for n <= 0 or n above the capacity.
func (p *Pool) TryAcquire(n int64) bool {
	if n <= 0 || n > p.capacity || p.waiters.len() > 0 || n > p.capacity-p.inUse {
		return false
	}
	p.inUse += n
	p.granted++
	if !p.noStats {
		p.inUseTW.Set(p.sim.Now(), float64(p.inUse))
		p.waits.Add(0)
	}
	return true
}

// Release gives back n units and grants waiting requests, in FIFO order,
// while the one at the head fits. Releasing n <= 0 or more than is in use
// means the model lost track of what it holds; that is a bug, and Release
// panics rather than let the pool's accounting go wrong.
func (p *Pool) Release(n int64) {
	if n <= 0 || n > p.inUse {
		panic(fmt.Sprintf("resource: pool release of %d units with %d in use: a release must be between 1 and the units in use", n, p.inUse))
	}
	now := p.sim.Now()
	p.inUse -= n
	for p.waiters.len() > 0 && p.waiters.front().n <= p.capacity-p.inUse {
		w := p.waiters.pop()
		p.grant(w.n, w.since, w.granted, now)
	}
	if !p.noStats {
		p.inUseTW.Set(now, float64(p.inUse))
		p.waitingTW.Set(now, float64(p.waiters.len()))
	}
}

func (p *Pool) grant(n int64, since engine.Time, granted func(), now engine.Time) {
	p.inUse += n
	p.granted++
	if !p.noStats {
		p.inUseTW.Set(now, float64(p.inUse))
		p.waits.Add((now - since).Seconds())
	}
	if granted != nil {
		p.sim.MustAfter(0, granted)
	}
}

// Capacity returns the pool size.
func (p *Pool) Capacity() int64 { return p.capacity }

// InUse returns the units held (including those granted whose callback has
// not run yet).
func (p *Pool) InUse() int64 { return p.inUse }

// Free returns the units neither held nor granted.
func (p *Pool) Free() int64 { return p.capacity - p.inUse }

// Waiting returns the number of requests waiting.
func (p *Pool) Waiting() int { return p.waiters.len() }

// Waits returns the time each request granted since the last ResetStats
// waited (Acquire to grant, in seconds; 0 when it fitted at once).
func (p *Pool) Waits() *stats.Tally { return &p.waits }

// Occupancy tracks the units in use over time; Max gives the high-water
// mark.
func (p *Pool) Occupancy() *stats.TimeWeighted { return &p.inUseTW }

// QueueLength tracks the number of waiting requests over time.
func (p *Pool) QueueLength() *stats.TimeWeighted { return &p.waitingTW }

// ResetStats discards the statistics gathered so far and starts new
// observation windows now. Holdings and waiters are kept.
func (p *Pool) ResetStats() {
	now := p.sim.Now()
	p.waits.Reset()
	resetTW(&p.inUseTW, now, p.noStats)
	resetTW(&p.waitingTW, now, p.noStats)
}

// StopStats stops gathering statistics for good; see Queue.StopStats.
func (p *Pool) StopStats() {
	p.noStats = true
	p.ResetStats()
}

// KeepSamples chooses whether the Waits tally stores every sample (the
// default) or only running moments. See stats.Tally.KeepSamples.
func (p *Pool) KeepSamples(keep bool) { p.waits.KeepSamples(keep) }

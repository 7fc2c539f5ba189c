package resource

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// FlowID names a flow on a Bandwidth. IDs are never reused within one
// Bandwidth; the zero FlowID names no flow.
type FlowID uint64

// Bandwidth is a link (or PCIe lane, or DMA engine) whose capacity in bytes
// per second is shared max-min fairly among the flows crossing it, each
// optionally capped (by its NIC, its sender, a slower hop): the flow-level
// model of SimGrid. On one link, progressive filling reduces to: a flow
// whose cap is below the fair share gets its cap, and the others split
// what is left equally. Rates are recomputed whenever a flow starts or ends
// or the capacity changes.
//
// Flows are kept sorted by cap, so recomputing the rates is one O(n) pass;
// each event also advances every flow, so an event costs O(n). Links carry
// tens of concurrent flows, not thousands.
type Bandwidth struct {
	sim      *engine.Simulator
	capacity float64
	flows    []flow // sorted by (cap, id)
	at       engine.Time
	lastID   FlowID

	next     engine.Handle
	fire     func()
	finished []flow

	active     stats.TimeWeighted
	throughput stats.TimeWeighted
	durations  stats.Tally
	noStats    bool // StopStats was called
	completed  uint64
}

type flow struct {
	id        FlowID
	cap       float64 // +Inf when uncapped
	remaining float64 // bytes
	rate      float64 // bytes per second
	started   engine.Time
	done      func()
}

// NewBandwidth returns a link of the given capacity (> 0 bytes per second).
func NewBandwidth(sim *engine.Simulator, bytesPerSec float64) (*Bandwidth, error) {
	if sim == nil {
		return nil, fmt.Errorf("resource: NewBandwidth needs a simulator, got nil")
	}
	if err := checkRate("bandwidth capacity (bytes per second)", bytesPerSec, false); err != nil {
		return nil, err
	}
	now := sim.Now()
	b := &Bandwidth{
		sim:        sim,
		capacity:   bytesPerSec,
		at:         now,
		active:     *stats.NewTimeWeighted(now, 0),
		throughput: *stats.NewTimeWeighted(now, 0),
	}
	b.fire = b.complete
	return b, nil
}

// Start begins a transfer of the given bytes, at most capBytesPerSec
// (<= 0: uncapped); done (may be nil) runs when the last byte has crossed.
// A transfer of zero bytes finishes at the current time, from an event.
// Negative, infinite or NaN bytes, or a NaN cap, are model bugs and panic.
func (b *Bandwidth) Start(bytes float64, capBytesPerSec float64, done func()) FlowID {
	if !(bytes >= 0) || math.IsInf(bytes, 1) {
		panic(fmt.Sprintf("resource: flow of %v bytes: bytes must be a finite number >= 0", bytes))
	}
	if math.IsNaN(capBytesPerSec) {
		panic("resource: flow cap is NaN: give a rate in bytes per second, or <= 0 for uncapped")
	}
	if capBytesPerSec <= 0 {
		capBytesPerSec = math.Inf(1)
	}
	now := b.sim.Now()
	b.advance(now)
	b.lastID++
	f := flow{id: b.lastID, cap: capBytesPerSec, remaining: bytes, started: now, done: done}
	// The new id is the largest, so it goes after every flow with cap <= its
	// cap: at the end when no flow has a larger cap (the common case, and
	// an append, not an insert).
	if n := len(b.flows); n == 0 || b.flows[n-1].cap <= capBytesPerSec {
		b.flows = append(b.flows, f)
	} else {
		i, _ := slices.BinarySearchFunc(b.flows, capBytesPerSec, func(g flow, c float64) int {
			if g.cap <= c {
				return -1
			}
			return 1
		})
		b.flows = slices.Insert(b.flows, i, f)
	}
	b.update(now)
	return f.id
}

// SetCapacity changes the link capacity from now on (c >= 0; 0 stalls every
// flow). Bytes already sent are kept. A negative or non-finite c is a model
// bug and panics.
func (b *Bandwidth) SetCapacity(c float64) {
	if err := checkRate("bandwidth capacity (bytes per second)", c, true); err != nil {
		panic(err.Error())
	}
	now := b.sim.Now()
	b.advance(now)
	b.capacity = c
	b.update(now)
}

// advance moves every flow forward to now at its current rate.
func (b *Bandwidth) advance(now engine.Time) {
	if now > b.at {
		dt := (now - b.at).Seconds()
		for i := range b.flows {
			f := &b.flows[i]
			f.remaining -= f.rate * dt
		}
	}
	b.at = now
}

// update recomputes the max-min fair rates by progressive filling and
// reschedules the next completion.
func (b *Bandwidth) update(now engine.Time) {
	left := b.capacity
	m := len(b.flows)
	total := 0.0
	for i := range b.flows {
		f := &b.flows[i]
		share := left / float64(m)
		if f.cap <= share {
			// Bottlenecked by its own cap; later flows have larger caps.
			f.rate = f.cap
			left = max(0, left-f.cap)
			m--
			total += f.rate
			continue
		}
		// Every remaining flow has cap > share: they split what is left.
		for j := i; j < len(b.flows); j++ {
			b.flows[j].rate = share
		}
		total += share * float64(m)
		break
	}
	if !b.noStats {
		b.active.Set(now, float64(len(b.flows)))
		b.throughput.Set(now, total)
	}

	b.sim.Cancel(b.next)
	b.next = engine.Handle{}
	soonest, done, found := math.Inf(1), false, false
	for i := range b.flows {
		f := &b.flows[i]
		if f.remaining <= f.rate*completionSlack {
			done, found = true, true
			break
		}
		if f.rate > 0 {
			soonest = min(soonest, f.remaining/f.rate)
			found = true
		}
	}
	if found {
		b.next = b.sim.MustAfter(delayFor(soonest, done), b.fire)
	}
}

// complete ends every flow within the slack of done, then runs their done
// callbacks in the order the flows were started.
func (b *Bandwidth) complete() {
	now := b.sim.Now()
	b.next = engine.Handle{}
	b.advance(now)
	fin := b.finished[:0]
	kept := b.flows[:0]
	for i := range b.flows {
		f := &b.flows[i]
		if f.remaining <= f.rate*completionSlack {
			fin = append(fin, *f)
			continue
		}
		kept = append(kept, *f)
	}
	clear(b.flows[len(kept):])
	b.flows = kept
	if len(fin) > 1 {
		slices.SortFunc(fin, func(x, y flow) int { return cmp.Compare(x.id, y.id) })
	}
	b.completed += uint64(len(fin))
	if !b.noStats {
		for i := range fin {
			b.durations.Add((now - fin[i].started).Seconds())
		}
	}
	b.update(now)
	for i := range fin {
		if d := fin[i].done; d != nil {
			fin[i].done = nil
			d()
		}
	}
	b.finished = fin[:0]
}

func (b *Bandwidth) find(id FlowID) *flow {
	for i := range b.flows {
		if b.flows[i].id == id {
			return &b.flows[i]
		}
	}
	return nil
}

// Rate returns the current rate of flow id in bytes per second, or 0 if
// the flow has finished or never existed.
func (b *Bandwidth) Rate(id FlowID) float64 {
	if f := b.find(id); f != nil {
		return f.rate
	}
	return 0
}

// Remaining returns the bytes flow id has still to send now, or 0 if it
// has finished or never existed.
func (b *Bandwidth) Remaining(id FlowID) float64 {
	f := b.find(id)
	if f == nil {
		return 0
	}
	return max(0, f.remaining-f.rate*(b.sim.Now()-b.at).Seconds())
}

// Capacity returns the current capacity in bytes per second.
func (b *Bandwidth) Capacity() float64 { return b.capacity }

// Throughput tracks the sum of the flows' rates (bytes per second) over
// time; its Mean divided by Capacity() is the link utilisation, and its
// Integral the bytes carried.
func (b *Bandwidth) Throughput() *stats.TimeWeighted { return &b.throughput }

// Durations returns the transfer times (start to last byte, in seconds) of
// the flows finished since the last ResetStats.
func (b *Bandwidth) Durations() *stats.Tally { return &b.durations }

// ResetStats discards the statistics gathered so far and starts new
// observation windows now. Flows in progress are kept.
func (b *Bandwidth) ResetStats() {
	now := b.sim.Now()
	b.durations.Reset()
	resetTW(&b.active, now, b.noStats)
	resetTW(&b.throughput, now, b.noStats)
}

// StopStats stops gathering statistics for good; see Queue.StopStats.
func (b *Bandwidth) StopStats() {
	b.noStats = true
	b.ResetStats()
}

// KeepSamples chooses whether the Durations tally stores every sample (the
// default) or only running moments. See stats.Tally.KeepSamples.
func (b *Bandwidth) KeepSamples(keep bool) { b.durations.KeepSamples(keep) }

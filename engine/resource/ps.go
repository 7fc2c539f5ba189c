package resource

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// PS is a processor-sharing server: every active job progresses at the same
// rate min(perJobCap, capacity/n), in work units per second (cores, for a
// HostCPU whose jobs are single-threaded when perJobCap is 1). Capacity can
// change at any time, for instance when background load takes cores away.
//
// Because all active jobs share one rate, the server keeps a single
// "attained service per job" clock v(t) = integral of the rate: a job
// submitted when v = v0 with work w finishes when v reaches v0 + w. Jobs sit
// in a min-heap on that finish tag, so a submission or completion costs
// O(log n), not O(n), and a capacity change only rescales the clock's speed.
type PS struct {
	sim       *engine.Simulator
	capacity  float64
	perJobCap float64 // +Inf when uncapped

	v    float64     // attained service per job since the last rebase
	vAt  engine.Time // time v was last brought up to date
	rate float64     // current per-job rate
	jobs []psJob     // min-heap by (tag, seq)
	seq  uint64

	next     engine.Handle
	fire     func()
	finished []psJob // scratch for one completion event

	active    stats.TimeWeighted
	used      stats.TimeWeighted
	responses stats.Tally
	noStats   bool // StopStats was called
	completed uint64
}

type psJob struct {
	tag       float64 // value of v at which the job is done
	seq       uint64  // submission order: breaks ties, keeps order deterministic
	work      float64
	submitted engine.Time
	done      func()
}

func (a *psJob) before(b *psJob) bool {
	if a.tag != b.tag {
		return a.tag < b.tag
	}
	return a.seq < b.seq
}

// rebaseAt bounds v so that tag - v keeps its precision in long runs: above
// it, v is subtracted from every tag (O(n), rare). v also returns to 0
// whenever the server empties.
const rebaseAt = 1 << 20

// NewPS returns a processor-sharing server with the given capacity (> 0,
// work units per second) and per-job rate cap (perJobCap <= 0: uncapped).
func NewPS(sim *engine.Simulator, capacity, perJobCap float64) (*PS, error) {
	if sim == nil {
		return nil, fmt.Errorf("resource: NewPS needs a simulator, got nil")
	}
	if err := checkRate("PS capacity", capacity, false); err != nil {
		return nil, err
	}
	if math.IsNaN(perJobCap) || math.IsInf(perJobCap, -1) {
		return nil, fmt.Errorf("resource: PS perJobCap is %v: it must be a number (<= 0 for uncapped)", perJobCap)
	}
	if perJobCap <= 0 {
		perJobCap = math.Inf(1)
	}
	now := sim.Now()
	p := &PS{
		sim:       sim,
		capacity:  capacity,
		perJobCap: perJobCap,
		vAt:       now,
		active:    *stats.NewTimeWeighted(now, 0),
		used:      *stats.NewTimeWeighted(now, 0),
	}
	p.fire = p.complete
	return p, nil
}

// Submit starts a job needing work units*seconds of service (core-seconds);
// done (may be nil) runs when it is finished. A job of zero work finishes at
// the current time, from an event. Negative or NaN work is a model bug and
// panics.
func (p *PS) Submit(work float64, done func()) {
	if !(work >= 0) || math.IsInf(work, 1) {
		panic(fmt.Sprintf("resource: PS job with work %v: work must be a finite number >= 0", work))
	}
	now := p.sim.Now()
	p.advance(now)
	p.seq++
	p.push(psJob{tag: p.v + work, seq: p.seq, work: work, submitted: now, done: done})
	p.update(now)
}

// SetCapacity changes the capacity from now on (c >= 0; 0 pauses every
// job). Work already done is kept: only the remaining work is served at the
// new rate. A negative or non-finite c is a model bug and panics.
func (p *PS) SetCapacity(c float64) {
	if err := checkRate("PS capacity", c, true); err != nil {
		panic(err.Error())
	}
	now := p.sim.Now()
	p.advance(now)
	p.capacity = c
	p.update(now)
}

// advance brings v up to now at the rate in force since vAt.
func (p *PS) advance(now engine.Time) {
	if now > p.vAt {
		p.v += p.rate * (now - p.vAt).Seconds()
	}
	p.vAt = now
}

// update recomputes the rate and statistics after the set of jobs or the
// capacity changed, and reschedules the next completion.
func (p *PS) update(now engine.Time) {
	n := len(p.jobs)
	p.rate = 0
	if n > 0 {
		p.rate = min(p.capacity/float64(n), p.perJobCap)
	}
	if !p.noStats {
		p.active.Set(now, float64(n))
		p.used.Set(now, p.rate*float64(n))
	}
	p.sim.Cancel(p.next)
	p.next = engine.Handle{}
	if n == 0 || p.rate <= 0 {
		return
	}
	rem := p.jobs[0].tag - p.v
	p.next = p.sim.MustAfter(delayFor(rem/p.rate, rem <= p.rate*completionSlack), p.fire)
}

// complete finishes every job whose remaining work is within the slack of
// zero, then runs their done callbacks in (finish tag, submission) order.
func (p *PS) complete() {
	now := p.sim.Now()
	p.next = engine.Handle{}
	p.advance(now)
	limit := p.v + p.rate*completionSlack
	fin := p.finished[:0]
	for len(p.jobs) > 0 && p.jobs[0].tag <= limit {
		j := p.pop()
		fin = append(fin, j)
		p.completed++
		if !p.noStats {
			p.responses.Add((now - j.submitted).Seconds())
		}
	}
	if len(p.jobs) == 0 {
		p.v = 0
	} else if p.v > rebaseAt {
		for i := range p.jobs {
			p.jobs[i].tag -= p.v
		}
		p.v = 0
	}
	p.update(now)
	for i := range fin {
		if d := fin[i].done; d != nil {
			fin[i].done = nil
			d()
		}
	}
	p.finished = fin[:0]
}

func (p *PS) push(j psJob) {
	p.jobs = append(p.jobs, j)
	h := p.jobs
	i := len(h) - 1
	for i > 0 {
		par := (i - 1) / 2
		if !j.before(&h[par]) {
			break
		}
		h[i] = h[par]
		i = par
	}
	h[i] = j
}

func (p *PS) pop() psJob {
	h := p.jobs
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h[n] = psJob{}
	h = h[:n]
	p.jobs = h
	if n == 0 {
		return top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].before(&h[l]) {
			c = r
		}
		if !h[c].before(&last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top
}

// Active returns the number of jobs in service.
func (p *PS) Active() int { return len(p.jobs) }

// Responses returns the response times (Submit to completion, in seconds)
// of jobs finished since the last ResetStats.
func (p *PS) Responses() *stats.Tally { return &p.responses }

// ActiveJobs tracks the number of jobs in service (L) over time.
func (p *PS) ActiveJobs() *stats.TimeWeighted { return &p.active }

// Used tracks the capacity in use (n times the per-job rate, at most the
// capacity) over time; its Integral is the busy core-seconds.
func (p *PS) Used() *stats.TimeWeighted { return &p.used }

// ResetStats discards the statistics gathered so far and starts new
// observation windows now. Jobs in service are kept.
func (p *PS) ResetStats() {
	now := p.sim.Now()
	p.responses.Reset()
	resetTW(&p.active, now, p.noStats)
	resetTW(&p.used, now, p.noStats)
}

// StopStats stops gathering statistics for good; see Queue.StopStats.
func (p *PS) StopStats() {
	p.noStats = true
	p.ResetStats()
}

// KeepSamples chooses whether the Responses tally stores every sample (the
// default) or only running moments. See stats.Tally.KeepSamples.
func (p *PS) KeepSamples(keep bool) { p.responses.KeepSamples(keep) }

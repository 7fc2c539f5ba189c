package resource

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// Queue is a FIFO queue in front of c identical servers (the G/G/c station
// of queueing theory): a job waits until a server is free, then holds it for
// its service time. Jobs begin service in the order they were submitted.
type Queue struct {
	sim     *engine.Simulator
	servers []*server
	idle    []int32 // indices of idle servers, used as a stack
	waiting fifo[queuedJob]
	busy    int

	waits     stats.Tally // seconds from Submit to start of service
	responses stats.Tally // seconds from Submit to completion
	busyTW    stats.TimeWeighted
	waitTW    stats.TimeWeighted
	systemTW  stats.TimeWeighted
	noStats   bool // StopStats was called
	completed uint64
}

type queuedJob struct {
	service     engine.Time
	start, done func()
	submitted   engine.Time
}

// server holds the job in service; its completion callback is bound once
// at construction, so starting a job allocates nothing.
type server struct {
	q    *Queue
	idx  int32
	job  queuedJob
	fire func()
}

// NewQueue returns a FIFO queue with the given number of servers (>= 1).
func NewQueue(sim *engine.Simulator, servers int) (*Queue, error) {
	if sim == nil {
		return nil, fmt.Errorf("resource: NewQueue needs a simulator, got nil")
	}
	if servers < 1 {
		return nil, fmt.Errorf("resource: queue servers is %d: it must be >= 1", servers)
	}
	now := sim.Now()
	q := &Queue{
		sim:      sim,
		servers:  make([]*server, servers),
		idle:     make([]int32, servers),
		busyTW:   *stats.NewTimeWeighted(now, 0),
		waitTW:   *stats.NewTimeWeighted(now, 0),
		systemTW: *stats.NewTimeWeighted(now, 0),
	}
	for i := range q.servers {
		s := &server{q: q, idx: int32(i)}
		s.fire = s.complete
		q.servers[i] = s
		// Stack order: server 0 is used first.
		q.idle[i] = int32(servers - 1 - i)
	}
	return q, nil
}

// Submit queues a job needing service time on one server; done (may be nil)
// runs when its service completes.
func (q *Queue) Submit(service engine.Time, done func()) { q.SubmitFunc(service, nil, done) }

// SubmitFunc is Submit with a start callback, run when the job begins
// service (for instance to record a timestamp or acquire a buffer). When a
// server is free, start runs before SubmitFunc returns. At a completion the
// next waiting job takes the freed server before the finished job's done
// runs, so work submitted from done cannot overtake jobs already waiting;
// done runs first, then the next job's start. Either callback may be nil.
//
// A negative service time is a model bug (a delay computed wrongly) and
// panics.
func (q *Queue) SubmitFunc(service engine.Time, start func(), done func()) {
	if service < 0 {
		panic(fmt.Sprintf("resource: Queue job with negative service time %v: service times must be >= 0", service))
	}
	now := q.sim.Now()
	j := queuedJob{service: service, start: start, done: done, submitted: now}
	if !q.noStats {
		q.systemTW.Set(now, float64(q.busy+q.waiting.len()+1))
	}
	if n := len(q.idle); n > 0 {
		s := q.servers[q.idle[n-1]]
		q.idle = q.idle[:n-1]
		q.begin(s, j, now)
		if start != nil {
			start()
		}
		return
	}
	q.waiting.push(j)
	if !q.noStats {
		q.waitTW.Set(now, float64(q.waiting.len()))
	}
}

// begin puts j into service on s.
func (q *Queue) begin(s *server, j queuedJob, now engine.Time) {
	s.job = j
	q.busy++
	if !q.noStats {
		q.busyTW.Set(now, float64(q.busy))
		q.waits.Add((now - j.submitted).Seconds())
	}
	q.sim.MustAfter(j.service, s.fire)
}

func (s *server) complete() {
	q := s.q
	now := q.sim.Now()
	j := s.job
	s.job = queuedJob{}
	q.busy--
	q.completed++
	var next func()
	handed := q.waiting.len() > 0 // the server goes to the next job
	if handed {
		nj := q.waiting.pop()
		q.begin(s, nj, now)
		next = nj.start
	} else {
		q.idle = append(q.idle, s.idx)
	}
	if !q.noStats {
		q.responses.Add((now - j.submitted).Seconds())
		if handed {
			q.waitTW.Set(now, float64(q.waiting.len()))
		} else {
			q.busyTW.Set(now, float64(q.busy))
		}
		q.systemTW.Set(now, float64(q.busy+q.waiting.len()))
	}
	if j.done != nil {
		j.done()
	}
	if next != nil {
		next()
	}
}

// InService returns the number of jobs being served (busy servers).
func (q *Queue) InService() int { return q.busy }

// Waiting returns the number of jobs waiting for a server.
func (q *Queue) Waiting() int { return q.waiting.len() }

// Completed returns the number of jobs whose service has completed.
func (q *Queue) Completed() uint64 { return q.completed }

// Waits returns the waiting times (Submit to start of service, in seconds)
// of jobs that started service since the last ResetStats.
func (q *Queue) Waits() *stats.Tally { return &q.waits }

// Responses returns the response times (Submit to completion, in seconds)
// of jobs that completed since the last ResetStats.
func (q *Queue) Responses() *stats.Tally { return &q.responses }

// QueueLength tracks the number of waiting jobs (Lq) over time.
func (q *Queue) QueueLength() *stats.TimeWeighted { return &q.waitTW }

// InSystem tracks the number of jobs waiting or in service (L) over time.
func (q *Queue) InSystem() *stats.TimeWeighted { return &q.systemTW }

// Utilisation returns the mean fraction of servers busy since the last
// ResetStats (NaN if no time has passed).
func (q *Queue) Utilisation() float64 {
	return q.busyTW.Mean(q.sim.Now()) / float64(len(q.servers))
}

// ResetStats discards the statistics gathered so far and starts new
// observation windows now, typically at the end of a warm-up. Jobs in the
// system are kept.
func (q *Queue) ResetStats() {
	now := q.sim.Now()
	q.waits.Reset()
	q.responses.Reset()
	resetTW(&q.busyTW, now, q.noStats)
	resetTW(&q.waitTW, now, q.noStats)
	resetTW(&q.systemTW, now, q.noStats)
}

// StopStats stops gathering statistics for the rest of the run and drops
// those gathered: a model that reads none of them (the data-path model
// reads none of its resources') saves their cost at every operation. The
// tallies are then empty and the time-weighted statistics NaN, so a
// reader cannot mistake them for measurements; ResetStats keeps them so.
// What the simulation does is unchanged. Bandwidth, PS and Pool have the
// same method.
func (q *Queue) StopStats() {
	q.noStats = true
	q.ResetStats()
}

// KeepSamples chooses whether the Waits and Responses tallies store every
// sample (the default: exact quantiles, 16 bytes a job) or only running
// moments, for runs of many millions of jobs. See stats.Tally.KeepSamples.
func (q *Queue) KeepSamples(keep bool) {
	q.waits.KeepSamples(keep)
	q.responses.KeepSamples(keep)
}

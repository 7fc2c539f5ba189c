package training

import (
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/ina"
)

// Fast-forwarding. A job whose pace nothing else can change runs its
// iterations at one fixed length, so the replay schedules its end in one
// event instead of two or more per iteration: a job on one server (its
// all-reduce stays on the server's GPU links, which no other job
// crosses), and a spanning job that shares no server with another
// spanning job and whose grant no other job can change (none and static
// always; esa-oracle while every spanning job's need fits the pool
// together; atp, esa (whose hashed windows may overlap) and a SmartNIC
// aggregator only while it is the one spanning job).
// The length is the one a lone job's phases take (planTime), so a
// fast-forwarded job ends at the same nanosecond as stepping it would.
// Whenever jobs start or end, every fast-forwarded job is reviewed: one
// that is no longer alone, or whose grant changed (static: it got a
// partition), finishes the iteration it is in at the old pace and goes on
// from the next one as beginIteration decides.

// isolatedNow says whether job k's pace is fixed now.
func (r *rack) isolatedNow(k int) bool {
	if r.cfg.stepAll {
		return false
	}
	j := &r.jobs[k]
	if len(j.servers) == 1 {
		return true
	}
	if r.cfg.Sync.Overlap == "full" {
		return false // stepped: its phases interleave (see fastForward)
	}
	for _, s := range j.servers {
		for _, m := range r.servers[s].jobs {
			if m != k && len(r.jobs[m].servers) > 1 {
				return false
			}
		}
	}
	if j.hostRing {
		return true // its host all-reduce, on servers of its own
	}
	base := ina.BaseName(r.polName)
	if r.smartNIC && base != "none" && len(r.netJobs) > 1 {
		return false // the SmartNIC's port and cores are shared
	}
	switch base {
	case "none", "static":
		return true
	case "esa-oracle":
		return len(r.netJobs)*r.need() <= r.dev.Slots
	}
	return len(r.netJobs) == 1
}

// iterLength is the length of one of job k's iterations when it runs
// alone: compute, then its synchronisation with the grant the policy would
// give it now; and the synchronisation's split into communication and
// waiting for aggregators.
func (r *rack) iterLength(k int) (length, comm, wait engine.Time) {
	j := &r.jobs[k]
	if len(j.servers) == 1 {
		return j.compute + j.local, j.local, 0
	}
	g := ina.Grant{Job: k, Ring: true}
	if !j.hostRing {
		g = r.pol.Peek(r.demand(k))
	}
	s := r.planTime(r.planFresh(j, g))
	w := min(s, engine.Time(math.Round(float64(s)*r.waitShare(j, g))))
	return j.compute + s, s - w, w
}

// fastForward runs job k's remaining iterations at its fixed length.
func (r *rack) fastForward(k int) {
	j := &r.jobs[k]
	n := j.spec.Iterations - j.iters
	length, comm, wait := r.iterLength(k)
	j.ffComm, j.ffWait = comm, wait
	total := engine.MulSat(int64(n), length) // saturates: the engine refuses it past its horizon
	if r.cfg.Sync.Overlap == "full" {
		// One server: compute and synchronisation overlap after the first
		// compute, one synchronisation at a time: C + (n-1) max(C,S) + S.
		s := length - j.compute
		total = engine.AddSat(engine.AddSat(j.compute, engine.MulSat(int64(n-1), max(j.compute, s))), s)
	}
	j.isolated, j.ffStart, j.ffIter, j.ffLen = true, r.sim.Now(), j.iters, length
	if r.pooled(j) {
		g := r.pol.Peek(r.demand(k))
		j.heldAny = j.heldAny || holds(g)
		// The occupancy series shows a fast-forwarded job's slots over
		// its phases as their time average.
		// (A reservation is recorded as it changes: holdReserved.)
		if _, reserves := r.pol.(ina.Reserver); !reserves && holds(g) {
			r.setHeldAvg(k, float64(g.Slots)*float64(comm+wait)/float64(length))
		}
	}
	j.ffEv, j.hasFF = r.sim.MustAfter(total, func() { r.ffEnd(k) }), true
}

// ffEnd ends a fast-forwarded job.
func (r *rack) ffEnd(k int) {
	j := &r.jobs[k]
	j.hasFF = false
	r.account(k, j.spec.Iterations-j.ffIter)
	j.iters = j.spec.Iterations
	j.isolated = false
	r.setHeld(k, ina.Grant{})
	r.finish(k)
}

// account adds n fast-forwarded iterations to job k's time split.
func (r *rack) account(k, n int) {
	j := &r.jobs[k]
	j.computeS += float64(n) * j.compute.Seconds()
	j.commS += float64(n) * j.ffComm.Seconds()
	j.waitS += float64(n) * j.ffWait.Seconds()
	r.ffIters += int64(n)
}

// reviewIsolation goes over the fast-forwarded jobs after a job started or
// ended (see the comment at the top of the file).
func (r *rack) reviewIsolation() {
	for k := range r.jobs {
		j := &r.jobs[k]
		if !j.isolated || !j.hasFF || len(j.servers) == 1 {
			continue
		}
		if r.isolatedNow(k) {
			if length, _, _ := r.iterLength(k); length == j.ffLen {
				continue
			}
		}
		r.leaveFastForward(k)
	}
}

// leaveFastForward takes job k back to stepping. An iteration in its
// compute goes on stepped from the end of that compute, exactly; one in
// its synchronisation finishes at the old pace (the one approximation of
// fast-forwarding: at most one synchronisation per change), and the job
// goes on from the next iteration by beginIteration.
func (r *rack) leaveFastForward(k int) {
	j := &r.jobs[k]
	elapsed := r.sim.Now() - j.ffStart
	doneIters := int(elapsed / j.ffLen)
	current := j.ffIter + doneIters // the iteration in flight
	if current >= j.spec.Iterations {
		return // its end is now: the scheduled end runs
	}
	begin := j.ffStart + engine.Time(doneIters)*j.ffLen
	inSync := r.sim.Now() >= begin+j.compute
	if inSync && current+1 >= j.spec.Iterations {
		return // the last synchronisation: its end is already scheduled
	}
	r.sim.Cancel(j.ffEv)
	j.hasFF, j.isolated = false, false
	r.setHeld(k, ina.Grant{})
	if !inSync {
		r.account(k, doneIters)
		j.iters = current
		j.phase = phaseCompute
		r.stepped++
		r.sim.MustAt(begin+j.compute, j.onCompute)
		return
	}
	r.account(k, doneIters+1)
	j.iters = current + 1
	r.sim.MustAt(begin+j.ffLen, j.onBegin)
}

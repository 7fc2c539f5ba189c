package pack

import (
	"slices"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// shape identifies the jobs PlacePending treats as one: a tenant, an
// Options slice (its first element and length) and gang size.
type shape struct {
	tenant string
	opts   *snapshot.Option
	n      int
	gang   int
}

// demand is what a task takes of its server.
type demand struct{ cpu, mem int64 }

// covers reports whether d asks at least as much as o of both.
func (d demand) covers(o demand) bool { return d.cpu >= o.cpu && d.mem >= o.mem }

// shapeQ is the pending jobs of one shape, in arrival order: their first
// tasks (a gang's first task stands for the gang).
type shapeQ struct {
	key shape
	q   []*slot
	// cur: q[:cur] were offered (or skipped) since the view last gained
	// room, and found none, or were placed: PlacePending goes on from cur.
	cur  int
	dead int // entries of q that left the queue, dropped when they are many
	// noRoom holds the least demands of this shape that found no room
	// since the view last gained room: a job asking at least as much of
	// both CPU and memory finds none either.
	noRoom []demand
	ready  bool // in View.ready
}

// enqueue lists a pending job (a gang: its first task, with the others in
// lead.tasks) in its shape's queue.
func (v *View) enqueue(lead *slot) {
	j := &lead.job
	key := shape{tenant: j.Tenant, n: len(j.Options), gang: max(1, len(lead.tasks))}
	if len(j.Options) > 0 {
		key.opts = &j.Options[0]
	}
	sq := v.shapes[key]
	if sq == nil {
		sq = &shapeQ{key: key}
		v.shapes[key] = sq
	}
	lead.sh = sq
	if n := len(sq.q); n > 0 && sq.q[n-1].seq > lead.seq {
		// A preempted job returns to its place in arrival order.
		k, _ := slices.BinarySearchFunc(sq.q, lead.seq, func(p *slot, seq int) int { return p.seq - seq })
		sq.q = slices.Insert(sq.q, k, lead)
	} else {
		sq.q = append(sq.q, lead)
	}
	v.markReady(sq)
}

func (v *View) markReady(sq *shapeQ) {
	if !sq.ready {
		sq.ready = true
		v.ready = append(v.ready, sq)
	}
}

// arrive adds a pending job in arrival order: a gang's later task joins
// the open gang (the tasks of a gang arrive one after the other).
func (v *View) arrive(sl *slot) {
	sl.queued = true
	if g := sl.job.Gang; g != 0 && v.open != nil && v.open.job.Gang == g {
		v.open.tasks = append(v.open.tasks, sl)
		sl.lead = v.open
		return
	}
	v.closeGang()
	if sl.job.Gang != 0 {
		sl.tasks = append(sl.tasks[:0], sl)
		v.open = sl
		return
	}
	v.enqueue(sl)
}

// closeGang lists the gang still taking tasks, if any.
func (v *View) closeGang() {
	if v.open != nil {
		v.enqueue(v.open)
		v.open = nil
	}
}

// leftQueue notes that a listed job (a gang's first task) left the queue,
// and drops the queue's departed entries once they are half of it.
func (v *View) leftQueue(lead *slot) {
	sq := lead.sh
	lead.sh = nil
	if sq == nil {
		return
	}
	sq.dead++
	if 2*sq.dead < len(sq.q) {
		return
	}
	q, cur := sq.q[:0], 0
	for k, l := range sq.q {
		if l.queued {
			q = append(q, l)
			if k < sq.cur {
				cur++
			}
		}
	}
	clear(sq.q[len(q):])
	sq.q, sq.cur, sq.dead = q, cur, 0
	if len(q) == 0 && !sq.ready {
		delete(v.shapes, sq.key)
	}
}

// need is what a listed job asks of a server in the no-room memo: its
// first task's CPU and memory, or nothing where no server models them
// (then a shape either fits or does not).
func (v *View) needOf(lead *slot) demand {
	if !v.withDemand {
		return demand{}
	}
	return demand{lead.job.CPUMilli, lead.job.MemoryMiB}
}

// next moves sq's cursor to its next job to offer: one still pending and
// not covered by the shape's no-room memo. It reports whether there is one.
func (v *View) next(sq *shapeQ) bool {
	for sq.cur < len(sq.q) {
		l := sq.q[sq.cur]
		if !l.queued || l.placed {
			sq.cur++
			continue
		}
		need := v.needOf(l)
		if slices.ContainsFunc(sq.noRoom, need.covers) {
			sq.cur++
			continue
		}
		return true
	}
	return false
}

// roomGained forgets what found no room: a shape may fit again.
func (v *View) roomGained() {
	for _, sq := range v.shapes {
		sq.cur, sq.noRoom = 0, sq.noRoom[:0]
		if len(sq.q) > 0 {
			v.markReady(sq)
		}
	}
}

// PlacePending offers the pending jobs, in snapshot (arrival) order, to
// place, which reports whether it placed the job. A job is not offered
// when a job of the same shape already found no room since the view last
// gained room: a view only loses room while jobs are placed, so it would
// find none either. Two jobs have the same shape when they have the same
// tenant and gang size and share one Options slice (the simulator gives
// jobs with equal options one slice); jobs with equal but separate slices
// are each offered, which costs time, never correctness. With servers that
// model CPU or memory, a job is skipped when one of its shape that asked
// no more of either found no room: fit only gets harder as a task asks
// more of its server. A session keeps what found no room from call to
// call until the cluster gains room, and keeps the jobs by shape, so that
// a call on a loaded cluster, where thousands of jobs of a few shapes
// wait, costs the shapes that may fit, not the queue (issue 12: a cluster
// where capacity binds; issue 17: a million jobs).
//
// The tasks of a pending gang are offered one after the other; when gangs
// stay on one server, Starts offers the later tasks only the server of the
// first. If a task finds no room there, the gang is taken off again, that
// server is barred and the gang offered anew, until it is placed whole or
// its first task finds no server: a gang is placed whole or not at all, by
// the policy's own rule on each task.
func (v *View) PlacePending(place func(j *snapshot.Job) bool) {
	v.closeGang()
	// The shapes with a job to offer, merged by the arrival of the job
	// each offers next: the order a scan of the whole queue would take.
	h := v.heap[:0]
	for _, sq := range v.ready {
		sq.ready = false
		if v.next(sq) {
			h = h.push(sq)
		}
	}
	v.ready = v.ready[:0]
	for len(h) > 0 {
		var sq *shapeQ
		h, sq = h.pop()
		l := sq.q[sq.cur]
		var ok bool
		if len(l.tasks) <= 1 {
			ok = place(&l.job)
		} else {
			ok = v.placeGang(l.tasks, place)
		}
		if !ok {
			// Keep only the least demands: drop those need covers.
			need := v.needOf(l)
			sq.noRoom = append(slices.DeleteFunc(sq.noRoom, func(d demand) bool { return d.covers(need) }), need)
		}
		sq.cur++
		if v.next(sq) {
			h = h.push(sq)
		}
	}
	v.heap = h
}

// shapeHeap is a binary min-heap of shapes by the arrival of the job each
// offers next.
type shapeHeap []*shapeQ

func (h shapeHeap) less(a, b int) bool { return h[a].q[h[a].cur].seq < h[b].q[h[b].cur].seq }

func (h shapeHeap) push(sq *shapeQ) shapeHeap {
	h = append(h, sq)
	for k := len(h) - 1; k > 0; {
		p := (k - 1) / 2
		if !h.less(k, p) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
	return h
}

func (h shapeHeap) pop() (shapeHeap, *shapeQ) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = nil
	h = h[:n]
	for k := 0; ; {
		l, r, m := 2*k+1, 2*k+2, k
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == k {
			break
		}
		h[k], h[m] = h[m], h[k]
		k = m
	}
	return h, top
}

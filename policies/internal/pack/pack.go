package pack

import (
	"math"
	"slices"
	"sync"

	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// fractionSlack matches snapshot's tolerance: 1/3+1/3+1/3 fits.
const fractionSlack = 1e-9

// shareSlack absorbs the rounding of a server's free shares added up: far
// above it, far below the least share a task takes (1/8 of a MIG GPU's
// compute, a thousandth of a GPU).
const shareSlack = 1e-6

// GPU is the state of one GPU while a decision is being built.
type GPU struct {
	ID    int
	Model *snapshot.GPUModel
	Srv   int // index into the view's servers; -1 when there are none
	Jobs  int // placements on it
	// Non-MIG: Used is the sum of fractions; Tenant the tenant of its jobs.
	Used   float64
	Tenant string
	// MIG: what the instances use (hw/mig keeps the rules).
	Occ mig.Occupancy
}

// Free returns the share of the GPU not allocated: 1 - fraction sum on a
// non-MIG GPU, free compute slices / ComputeSlices on a MIG GPU.
func (g *GPU) Free() float64 {
	if m := g.Model.MIG; m != nil {
		return float64(g.Occ.FreeCompute(m)) / float64(m.ComputeSlices)
	}
	return max(0, 1-g.Used)
}

// NoRoom reports whether no instance of any profile can be added to a MIG
// GPU (all its compute slices taken): then Starts is nil for every job,
// which a policy can learn without a profile lookup per option. It is
// false on a GPU without MIG, where the answer depends on the job.
func (g *GPU) NoRoom() bool {
	m := g.Model.MIG
	return m != nil && g.Occ.FreeCompute(m) <= 0
}

// FreeMem returns the free memory slices of a MIG GPU (0 on non-MIG).
func (g *GPU) FreeMem() int {
	if m := g.Model.MIG; m != nil {
		return g.Occ.FreeMem(m)
	}
	return 0
}

// server is one server of the view: its capacity (0: not modelled), what
// work the policy does not place holds of it, what is taken in all, and
// where its GPUs are listed.
type server struct {
	id               int
	cpuCap, memCap   int64
	heldCPU, heldMem int64
	cpu, mem         int64 // taken: held plus the jobs placed on its GPUs
	lo, hi           int   // positions of its GPUs, [lo, hi); -1 when none
}

// slot is one job of the view.
type slot struct {
	job    snapshot.Job
	placed bool
	pl     snapshot.Placement // where the decision being built puts it
	// cur is where a session's job ran when the call began: job.Current
	// points here while it runs.
	cur     snapshot.Placement
	queued  bool // pending: waiting to be placed
	touched bool // a session's call changed its placement at least once
	seq     int  // arrival order (a snapshot's: its position)
	// sh is the shape queue that lists the job (its first task, for a
	// gang); tasks are a pending gang's tasks, first included; lead is a
	// gang's first task.
	sh    *shapeQ
	tasks []*slot
	lead  *slot
}

// View is a cluster's GPUs, servers and jobs with the placements of the
// decision being built. It is made either from a snapshot for one call
// (New), or once for a whole replay (NewSession) and then kept up to date
// by the events the simulator reports; policies see the same view either
// way, which is what makes a session decide as the snapshot call does.
type View struct {
	// S is the snapshot of a one-call view; nil in a session.
	S      *snapshot.Snapshot
	GPUs   []GPU
	gpuPos map[int]int
	srvs   []server
	srvPos map[int]int
	// oneServer: a gang's tasks share a server (servers listed, no span).
	oneServer bool

	jobs  map[int]*slot
	spare []*slot // slots of a released one-call view, for the next New (a session does not reuse slots: its shape queues may still list them)
	// The pending jobs, by shape (queue.go).
	shapes     map[shape]*shapeQ
	ready      []*shapeQ // shapes that may have a job to offer
	heap       shapeHeap
	open       *slot   // the gang still taking tasks as they arrive
	withDemand bool    // some server models CPU or memory
	onGPU      [][]int // per GPU position: IDs of the jobs placed there
	touched    []*slot // a session's jobs changed during the current call
	inCall     bool    // a session's decide is running: changes are tracked
	freed      []int   // GPU positions that lost a job since the last call

	starts []int // scratch returned by Starts

	// gangs: per gang, its placed tasks and the server they are on.
	gangs map[int]gangPlace
	// banned servers take no task while PlacePending retries a gang.
	banned  []bool
	nBanned int

	gangMemo struct {
		gang, srv  int
		placed, ok bool
	}
	// gangNeed is what the whole gang being placed asks of the one
	// server it will share (placeGang): its first task goes only where
	// all of them fit by CPU and memory, and where the GPUs' free shares
	// add up to the tasks' least shares.
	gangNeed struct {
		gang     int
		cpu, mem int64
		share    float64
	}
	models []*snapshot.GPUModel // one GPU's model of each kind in view

	// cands caches Candidates while candsOK. Where every server's GPUs
	// are contiguous (srvSplice), a GPU turning empty or busy redoes only
	// its server's entries; otherwise the list is rebuilt (Candidates'
	// rule for a server listed in pieces depends on the servers between).
	cands     []int
	candsOK   bool
	srvSplice bool

	// idx indexes free capacity (CandidatesFor); nil until first asked.
	idx        *fitIndex
	contenders []int // returned by CandidatesFor

}

func newView() *View {
	return &View{gpuPos: map[int]int{}, srvPos: map[int]int{}, jobs: map[int]*slot{}, gangs: map[int]gangPlace{},
		shapes: map[shape]*shapeQ{}}
}

// setCluster lays out the view's GPUs and servers, all idle.
func (v *View) setCluster(gpus []snapshot.GPU, servers []snapshot.Server, gangSpan bool) {
	v.oneServer = len(servers) > 0 && !gangSpan
	v.srvs = v.srvs[:0]
	v.withDemand = false
	for k, sv := range servers {
		if sv.CPUMilli > 0 || sv.MemoryMiB > 0 {
			v.withDemand = true
		}
		v.srvPos[sv.ID] = k
		v.srvs = append(v.srvs, server{id: sv.ID, cpuCap: sv.CPUMilli, memCap: sv.MemoryMiB,
			heldCPU: sv.HeldCPUMilli, heldMem: sv.HeldMemoryMiB, cpu: sv.HeldCPUMilli, mem: sv.HeldMemoryMiB, lo: -1, hi: -1})
	}
	v.banned = append(v.banned[:0], make([]bool, len(servers))...)
	v.nBanned = 0
	v.GPUs = slices.Grow(v.GPUs[:0], len(gpus))
	v.models = v.models[:0]
	for k := range gpus {
		srv := -1
		if len(servers) > 0 {
			srv = v.srvPos[gpus[k].Server]
		}
		m := &gpus[k].Model
		v.GPUs = append(v.GPUs, GPU{ID: gpus[k].ID, Model: m, Srv: srv})
		v.gpuPos[gpus[k].ID] = k
		if !slices.ContainsFunc(v.models, func(o *snapshot.GPUModel) bool { return keyOf(o) == keyOf(m) }) {
			v.models = append(v.models, m)
		}
	}
	for len(v.onGPU) < len(gpus) {
		v.onGPU = append(v.onGPU, nil)
	}
	v.onGPU = v.onGPU[:len(gpus)]
	n := make([]int, len(servers))
	for k := range v.GPUs {
		if sv := v.GPUs[k].Srv; sv >= 0 {
			if v.srvs[sv].lo < 0 {
				v.srvs[sv].lo = k
			}
			v.srvs[sv].hi = k + 1
			n[sv]++
		}
	}
	v.srvSplice = len(servers) > 0
	for sv := range v.srvs {
		if v.srvs[sv].lo >= 0 && n[sv] != v.srvs[sv].hi-v.srvs[sv].lo {
			v.srvSplice = false // a server listed in pieces
		}
	}
}

// New returns a view of s for one call: the running jobs where they run,
// the pending ones waiting in snapshot order. A policy that is done with
// the view (its Decision taken) gives it back with Release: a simulator
// calls its policy at every event, and the view's maps were most of what
// a run allocated.
func New(s *snapshot.Snapshot) *View {
	v := viewPool.Get().(*View)
	v.S = s
	v.candsOK = false
	v.gangMemo.ok = false
	v.setCluster(s.GPUs, s.Servers, s.GangSpan)
	for k := range s.Jobs {
		sl := v.newSlot()
		sl.job, sl.seq = s.Jobs[k], k
		v.jobs[sl.job.ID] = sl
		if sl.job.Current == nil {
			v.arrive(sl)
		} else {
			v.closeGang() // a gang's pending tasks are listed together
		}
	}
	v.closeGang()
	for k := range s.Jobs {
		if c := s.Jobs[k].Current; c != nil {
			if gi, ok := v.gpuPos[c.GPU]; ok {
				v.add(gi, v.jobs[s.Jobs[k].ID], *c)
			}
		}
	}
	for _, id := range s.Freed {
		if gi, ok := v.gpuPos[id]; ok {
			v.freed = append(v.freed, gi)
		}
	}
	slices.Sort(v.freed)
	v.freed = slices.Compact(v.freed)
	return v
}

// newSlot returns an empty slot, reused where one is spare.
func (v *View) newSlot() *slot {
	if n := len(v.spare); n > 0 {
		sl := v.spare[n-1]
		v.spare = v.spare[:n-1]
		*sl = slot{}
		return sl
	}
	return &slot{}
}

var viewPool = sync.Pool{New: func() any { return newView() }}

// Release empties v and keeps it for a later New. v must not be used
// afterwards; what Decision returned stays valid (it shares nothing with v).
func (v *View) Release() {
	v.S = nil
	clear(v.gpuPos)
	clear(v.shapes)
	clear(v.ready)
	v.ready = v.ready[:0]
	v.open = nil
	clear(v.srvPos)
	clear(v.gangs)
	for _, sl := range v.jobs {
		sl.job = snapshot.Job{} // drop the pointers into the snapshot
		v.spare = append(v.spare, sl)
	}
	clear(v.jobs)
	for k := range v.onGPU {
		v.onGPU[k] = v.onGPU[k][:0]
	}
	v.freed = v.freed[:0]
	v.idx = nil
	clear(v.GPUs[:cap(v.GPUs)]) // drop the pointers into the snapshot
	v.GPUs = v.GPUs[:0]
	viewPool.Put(v)
}

// GPUIndex returns the position of GPU id in GPUs.
func (v *View) GPUIndex(id int) (int, bool) { k, ok := v.gpuPos[id]; return k, ok }

// Job returns the job with the given ID.
func (v *View) Job(id int) *snapshot.Job { return &v.jobs[id].job }

// Placed returns the job's placement in the decision so far.
func (v *View) Placed(id int) (snapshot.Placement, bool) {
	sl := v.jobs[id]
	if sl == nil || !sl.placed {
		return snapshot.Placement{}, false
	}
	return sl.pl, true
}

// Jobs returns every job of the view: in snapshot order for a view made
// by New, by ID in a session.
func (v *View) Jobs() []*snapshot.Job {
	out := make([]*snapshot.Job, 0, len(v.jobs))
	if v.S != nil {
		for k := range v.S.Jobs {
			out = append(out, &v.jobs[v.S.Jobs[k].ID].job)
		}
		return out
	}
	for _, sl := range v.jobs {
		out = append(out, &sl.job)
	}
	slices.SortFunc(out, func(a, b *snapshot.Job) int { return a.ID - b.ID })
	return out
}

// OnGPU returns the IDs of the jobs placed on GPU position gi, in the
// order they were placed there. The slice is the view's: read it, do not
// keep it across a placement.
func (v *View) OnGPU(gi int) []int { return v.onGPU[gi] }

// Freed returns the positions of the GPUs that lost a job since the
// previous call (Snapshot.Freed; a session's Finish), ascending.
func (v *View) Freed() []int { return v.freed }

// placeGang places tasks (one gang, all pending) whole or not at all.
func (v *View) placeGang(tasks []*slot, place func(j *snapshot.Job) bool) bool {
	defer v.unbanAll()
	if v.oneServer {
		// A server that cannot take the whole gang's CPU and memory, or
		// whose GPUs' free shares add up to less than the least the tasks
		// can take, would take the first task and fail a later one: it is
		// never offered, which gives the same end, placed or not, as
		// barring it after the failure, without the tries.
		v.gangNeed.gang, v.gangNeed.cpu, v.gangNeed.mem = tasks[0].job.Gang, 0, 0
		v.gangNeed.share = 0
		for _, sl := range tasks {
			v.gangNeed.cpu += sl.job.CPUMilli
			v.gangNeed.mem += sl.job.MemoryMiB
			v.gangNeed.share += v.leastShare(&sl.job)
		}
		defer func() { v.gangNeed.gang = 0 }()
	}
	for {
		if !place(&tasks[0].job) {
			return false
		}
		srv := v.GPUs[v.gpuPos[tasks[0].pl.GPU]].Srv
		all := true
		for t := 1; t < len(tasks); t++ {
			if !place(&tasks[t].job) {
				all = false
				break
			}
		}
		if all {
			return true
		}
		for _, sl := range tasks {
			v.unplace(sl)
		}
		if srv < 0 || !v.oneServer {
			return false // no other server would do better
		}
		v.ban(srv)
	}
}

// ban bars server srv while a gang is retried.
func (v *View) ban(srv int) {
	v.banned[srv] = true
	v.nBanned++
	if v.idx != nil && v.idx.bySrv {
		v.idx.server(v, srv)
	}
}

// unbanAll lifts every bar once a gang is placed or given up.
func (v *View) unbanAll() {
	if v.nBanned == 0 {
		return
	}
	for srv, b := range v.banned {
		if b {
			v.banned[srv] = false
			if v.idx != nil && v.idx.bySrv {
				v.idx.server(v, srv)
			}
		}
	}
	v.nBanned = 0
}

// need is what job j asks of the server it joins when it is placed now:
// its own CPU and memory, or the whole gang's for the first task of a
// gang being placed (placeGang).
func (v *View) need(j *snapshot.Job) (cpu, mem int64, share float64) {
	if j.Gang != 0 && j.Gang == v.gangNeed.gang {
		if _, placed := v.gangServer(j.Gang); !placed {
			return v.gangNeed.cpu, v.gangNeed.mem, v.gangNeed.share
		}
	}
	return j.CPUMilli, j.MemoryMiB, 0
}

// leastShare is the least share of a GPU any option of j takes on any
// model in view (Share); 0 when none fits any.
func (v *View) leastShare(j *snapshot.Job) float64 {
	least := math.Inf(1)
	for t := range j.Options {
		for _, m := range v.models {
			if j.Options[t].Fits(m) {
				least = min(least, Share(m, j.Options[t]))
			}
		}
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return least
}

// freeShare is the sum of the free shares of server srv's GPUs.
func (v *View) freeShare(srv int) float64 {
	f := 0.0
	for gi := v.srvs[srv].lo; gi >= 0 && gi < v.srvs[srv].hi; gi++ {
		f += v.GPUs[gi].Free()
	}
	return f
}

// Starts returns the legal starts at which job j's option t can be added to
// GPU gi now (a single 0 for a non-MIG GPU), or nil when it does not fit:
// type, MIG-ness, capacity, tenant isolation. The slice is the view's
// scratch space, valid until the next call of Starts: policies call it in
// their innermost loop, where a fresh slice per call was most of the
// allocation.
func (v *View) Starts(gi int, j *snapshot.Job, t int) []int {
	g := &v.GPUs[gi]
	o := &j.Options[t]
	if o.GPUType != "" && o.GPUType != g.Model.Name {
		return nil
	}
	if g.Srv >= 0 && !v.serverFits(g.Srv, j) {
		return nil
	}
	if m := g.Model.MIG; m != nil {
		// One profile lookup serves both the fit (Option.Fits) and the
		// starts: this is the policies' innermost loop.
		if o.Profile == "" {
			return nil
		}
		p, ok := m.Profile(o.Profile)
		if !ok {
			return nil
		}
		v.starts = m.AppendStarts(v.starts[:0], &g.Occ, p)
		if len(v.starts) == 0 {
			return nil
		}
		return v.starts
	}
	if !o.Fits(g.Model) || g.Jobs > 0 && g.Tenant != j.Tenant || g.Used+o.Fraction > 1+fractionSlack {
		return nil
	}
	v.starts = append(v.starts[:0], 0)
	return v.starts
}

// serverFits reports whether job j may join server srv (an index into
// the view's servers): its CPU and memory fit, the server is not barred,
// and a gang with tasks placed elsewhere does not forbid it.
func (v *View) serverFits(srv int, j *snapshot.Job) bool {
	sv := &v.srvs[srv]
	cpu, mem, share := v.need(j)
	if sv.cpuCap > 0 && sv.cpu+cpu > sv.cpuCap ||
		sv.memCap > 0 && sv.mem+mem > sv.memCap {
		return false
	}
	if share > 0 && v.srvSplice && v.freeShare(srv)+shareSlack < share {
		return false
	}
	if v.nBanned > 0 && v.banned[srv] {
		return false
	}
	if j.Gang != 0 && v.oneServer {
		if at, ok := v.gangServer(j.Gang); ok && at != srv {
			return false
		}
	}
	return true
}

// gangPlace is how many tasks of a gang are placed, and on which server.
type gangPlace struct{ n, srv int }

// gangServer returns the server of gang's placed tasks (false when none
// is placed). Starts asks it for one job on GPU after GPU: the last answer
// is kept until a task of a gang is placed or taken off.
func (v *View) gangServer(gang int) (int, bool) {
	if !v.gangMemo.ok || v.gangMemo.gang != gang {
		v.gangMemo.gang, v.gangMemo.ok = gang, true
		at := v.gangs[gang]
		v.gangMemo.placed, v.gangMemo.srv = at.n > 0, at.srv
	}
	return v.gangMemo.srv, v.gangMemo.placed
}

// Fits reports whether option t of j can be added to GPU gi at some start.
func (v *View) Fits(gi int, j *snapshot.Job, t int) bool { return len(v.Starts(gi, j, t)) > 0 }

// BestStart returns the start among starts (legal for option t of j on GPU
// gi) that leaves the layout most open (Openness), the lowest on ties.
func (v *View) BestStart(gi int, j *snapshot.Job, t int, starts []int) int {
	g := &v.GPUs[gi]
	if !g.Model.IsMIG() || len(starts) == 1 {
		return starts[0]
	}
	p, _ := g.Model.Profile(j.Options[t].Profile)
	best, bestOpen := starts[0], -1
	for _, st := range starts {
		if o := g.Model.MIG.Openness(g.Occ, p, st); o > bestOpen {
			best, bestOpen = st, o
		}
	}
	return best
}

// Place puts job j on GPU gi with option t at start (0 on non-MIG GPUs).
// The caller has checked it with Starts.
func (v *View) Place(gi int, j *snapshot.Job, t, start int) snapshot.Placement {
	g := &v.GPUs[gi]
	o := j.Options[t]
	p := snapshot.Placement{JobID: j.ID, GPU: g.ID, Option: t}
	if g.Model.IsMIG() {
		p.Profile, p.Start = o.Profile, start
	} else {
		p.Fraction = o.Fraction
	}
	v.add(gi, v.jobs[j.ID], p)
	return p
}

func (v *View) add(gi int, sl *slot, p snapshot.Placement) {
	g := &v.GPUs[gi]
	j := &sl.job
	v.touch(sl)
	g.Jobs++
	if g.Jobs == 1 {
		v.candsChanged(gi)
	}
	if g.Srv >= 0 {
		v.srvs[g.Srv].cpu += j.CPUMilli
		v.srvs[g.Srv].mem += j.MemoryMiB
		if j.Gang != 0 {
			v.gangs[j.Gang] = gangPlace{n: v.gangs[j.Gang].n + 1, srv: g.Srv}
			v.gangMemo.ok = false
		}
	}
	if g.Model.IsMIG() {
		pr, _ := g.Model.Profile(p.Profile)
		g.Occ.Add(g.Model.MIG, pr, p.Start)
	} else {
		g.Used += p.Fraction
		g.Tenant = j.Tenant
	}
	sl.placed, sl.pl = true, p
	v.onGPU[gi] = append(v.onGPU[gi], j.ID)
	if v.idx != nil {
		v.idx.update(v, gi)
	}
}

// Remove takes job id off its GPU in the decision being built.
func (v *View) Remove(id int) {
	if sl := v.jobs[id]; sl != nil && sl.placed {
		v.roomGained()
		v.unplace(sl)
	}
}

// unplace takes a job off its GPU. Unlike Remove it keeps noRoom: a gang
// taken off again leaves the view as it was before the gang.
func (v *View) unplace(sl *slot) {
	if !sl.placed {
		return
	}
	v.touch(sl)
	p := sl.pl
	sl.placed = false
	gi := v.gpuPos[p.GPU]
	g := &v.GPUs[gi]
	g.Jobs--
	if g.Jobs == 0 {
		v.candsChanged(gi)
	}
	j := &sl.job
	if g.Srv >= 0 {
		v.srvs[g.Srv].cpu -= j.CPUMilli
		v.srvs[g.Srv].mem -= j.MemoryMiB
		if j.Gang != 0 {
			at := v.gangs[j.Gang]
			at.n--
			if at.n == 0 {
				delete(v.gangs, j.Gang)
			} else {
				v.gangs[j.Gang] = at
			}
			v.gangMemo.ok = false
		}
	}
	if g.Model.IsMIG() {
		pr, _ := g.Model.Profile(p.Profile)
		g.Occ.Remove(g.Model.MIG, pr, p.Start)
	} else {
		g.Used -= p.Fraction
		if g.Jobs == 0 {
			g.Used, g.Tenant = 0, ""
		}
	}
	if k := slices.Index(v.onGPU[gi], j.ID); k >= 0 {
		v.onGPU[gi] = slices.Delete(v.onGPU[gi], k, k+1)
	}
	if v.idx != nil {
		v.idx.update(v, gi)
	}
}

// touch notes, in a session's call, that the job's placement changes.
func (v *View) touch(sl *slot) {
	if v.inCall && !sl.touched {
		sl.touched = true
		v.touched = append(v.touched, sl)
	}
}

// candsChanged records that GPU gi turned empty or busy: where every
// server's GPUs are contiguous, only gi's server's entries of the cached
// Candidates are redone (the rest cannot change: emptiness is judged per
// model within one server); otherwise the list is rebuilt at the next
// call.
func (v *View) candsChanged(gi int) {
	if !v.candsOK {
		return
	}
	sv := v.GPUs[gi].Srv
	if sv < 0 || !v.srvSplice {
		v.candsOK = false
		return
	}
	lo, hi := v.srvs[sv].lo, v.srvs[sv].hi
	a, _ := slices.BinarySearch(v.cands, lo)
	b, _ := slices.BinarySearch(v.cands, hi)
	var seg [16]int
	v.cands = slices.Replace(v.cands, a, b, v.serverCands(seg[:0], lo, hi)...)
}

// serverCands appends the candidates among positions [lo, hi), one
// server's GPUs: every GPU holding a job, and the first empty GPU of each
// model.
func (v *View) serverCands(out []int, lo, hi int) []int {
	first := len(out)
	for k := lo; k < hi; k++ {
		if g := &v.GPUs[k]; g.Jobs > 0 || !v.hasEmptyLike(out[first:], g) {
			out = append(out, k)
		}
	}
	return out
}

// hasEmptyLike reports whether the candidates cs (GPUs of g's server)
// already hold an empty GPU of g's model on g's server: empty GPUs of one
// model on one server are interchangeable, so one stands for all.
func (v *View) hasEmptyLike(cs []int, g *GPU) bool {
	for _, c := range cs {
		if h := &v.GPUs[c]; h.Jobs == 0 && h.Srv == g.Srv && h.Model.Name == g.Model.Name {
			return true
		}
	}
	return false
}

// Candidates returns the GPU positions worth trying for a new placement, in
// position order: every GPU holding a job plus the first empty GPU of each
// model on each server (empty GPUs of one model on one server are
// interchangeable, so trying one is enough; taking the first keeps
// first-fit's lowest-index rule). Without servers, the first empty GPU of
// each model. The slice is the view's own and is updated in place when a
// GPU turns empty or busy: callers read it, must not change it, and must
// not keep it across a placement.
func (v *View) Candidates() []int {
	if v.candsOK {
		return v.cands
	}
	out := v.cands[:0]
	seen := map[string]bool{} // models with an empty GPU taken, without servers
	srv, firstOnSrv := -2, 0  // the server of the previous GPU; where its entries start
	for k := range v.GPUs {
		g := &v.GPUs[k]
		if g.Jobs > 0 {
			out = append(out, k)
			continue
		}
		if g.Srv < 0 {
			if !seen[g.Model.Name] {
				seen[g.Model.Name] = true
				out = append(out, k)
			}
			continue
		}
		// A server's GPUs are listed together (the simulator lists
		// servers in order), so only this server's entries need a look;
		// a server listed twice only gets more candidates.
		if g.Srv != srv {
			srv, firstOnSrv = g.Srv, len(out)
		}
		if !v.hasEmptyLike(out[firstOnSrv:], g) {
			out = append(out, k)
		}
	}
	v.cands, v.candsOK = out, true
	return out
}

// Decision returns the placements made so far, sorted by job ID, with every
// other job of the snapshot in Unscheduled (ascending). For a view made by
// New.
func (v *View) Decision() snapshot.Decision {
	var d snapshot.Decision
	for k := range v.S.Jobs {
		id := v.S.Jobs[k].ID
		if sl := v.jobs[id]; sl.placed {
			d.Placements = append(d.Placements, sl.pl)
		} else {
			d.Unscheduled = append(d.Unscheduled, id)
		}
	}
	slices.SortFunc(d.Placements, func(a, b snapshot.Placement) int { return a.JobID - b.JobID })
	slices.Sort(d.Unscheduled)
	return d
}

// Put adds an existing placement p of job j on GPU gi (to restore a job
// after a tentative move). The caller has checked that it fits.
func (v *View) Put(gi int, j *snapshot.Job, p snapshot.Placement) { v.add(gi, v.jobs[j.ID], p) }

// Share returns the share of a GPU of model m that option o takes: the
// fraction on a non-MIG GPU, compute slices / ComputeSlices on a MIG GPU.
func Share(m *snapshot.GPUModel, o snapshot.Option) float64 {
	if !m.IsMIG() {
		return o.Fraction
	}
	p, ok := m.Profile(o.Profile)
	if !ok {
		return 1
	}
	return m.MIG.Share(p)
}

// Speed returns o.Speed, or 1 when the snapshot gives none.
func Speed(o snapshot.Option) float64 {
	if o.Speed > 0 {
		return o.Speed
	}
	return 1
}

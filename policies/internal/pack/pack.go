package pack

import (
	"slices"
	"sync"

	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// fractionSlack matches snapshot's tolerance: 1/3+1/3+1/3 fits.
const fractionSlack = 1e-9

// GPU is the state of one GPU while a decision is being built.
type GPU struct {
	ID    int
	Model *snapshot.GPUModel
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

// FreeMem returns the free memory slices of a MIG GPU (0 on non-MIG).
func (g *GPU) FreeMem() int {
	if m := g.Model.MIG; m != nil {
		return g.Occ.FreeMem(m)
	}
	return 0
}

// View is the GPUs of a snapshot with the placements made so far.
type View struct {
	S      *snapshot.Snapshot
	GPUs   []GPU
	gpuPos map[int]int
	jobPos map[int]int
	placed map[int]snapshot.Placement

	starts []int // scratch returned by Starts

	// noRoom holds the shapes of pending jobs that found no
	// GPU in PlacePending since the view last gained room (Remove).
	noRoom map[shape]bool
}

// New returns an empty view of s: every GPU free, no job placed. A policy
// that is done with the view (its Decision taken) gives it back with
// Release: a simulator calls its policy at every event, and the view's
// maps were most of what a run allocated.
func New(s *snapshot.Snapshot) *View {
	v := viewPool.Get().(*View)
	v.S = s
	v.GPUs = slices.Grow(v.GPUs[:0], len(s.GPUs))
	for k := range s.GPUs {
		v.GPUs = append(v.GPUs, GPU{ID: s.GPUs[k].ID, Model: &s.GPUs[k].Model})
		v.gpuPos[s.GPUs[k].ID] = k
	}
	for k := range s.Jobs {
		v.jobPos[s.Jobs[k].ID] = k
	}
	return v
}

var viewPool = sync.Pool{New: func() any {
	return &View{gpuPos: map[int]int{}, jobPos: map[int]int{}, placed: map[int]snapshot.Placement{}}
}}

// Release empties v and keeps it for a later New. v must not be used
// afterwards; what Decision returned stays valid (it shares nothing with v).
func (v *View) Release() {
	v.S = nil
	clear(v.gpuPos)
	clear(v.jobPos)
	clear(v.placed)
	clear(v.noRoom)
	clear(v.GPUs[:cap(v.GPUs)]) // drop the pointers into the snapshot
	v.GPUs = v.GPUs[:0]
	viewPool.Put(v)
}

// GPUIndex returns the position of GPU id in S.GPUs and GPUs.
func (v *View) GPUIndex(id int) (int, bool) { k, ok := v.gpuPos[id]; return k, ok }

// Job returns the snapshot job with the given ID.
func (v *View) Job(id int) *snapshot.Job { return &v.S.Jobs[v.jobPos[id]] }

// Placed returns the job's placement in the decision so far.
func (v *View) Placed(id int) (snapshot.Placement, bool) { p, ok := v.placed[id]; return p, ok }

// Pending returns the jobs of the snapshot that are not running, in
// snapshot order (the simulator lists them by arrival).
func (v *View) Pending() []*snapshot.Job {
	var out []*snapshot.Job
	for k := range v.S.Jobs {
		if v.S.Jobs[k].Current == nil {
			out = append(out, &v.S.Jobs[k])
		}
	}
	return out
}

// PlacePending offers every pending job, in snapshot order, to place,
// which reports whether it placed the job. A job is not offered when a job
// of the same shape already found no room during this call: a view only
// loses room while jobs are placed, so it would find none either. Two jobs
// have the same shape when they have the same tenant and share one
// Options slice (the simulator gives jobs with equal options one slice);
// jobs with equal but separate slices are each offered, which costs time,
// never correctness. On a loaded cluster, where hundreds of pending jobs
// of a few shapes wait at every call, this skips most of the policies'
// work (issue 12: a cluster where capacity binds).
func (v *View) PlacePending(place func(j *snapshot.Job) bool) {
	for k := range v.S.Jobs {
		j := &v.S.Jobs[k]
		if j.Current != nil {
			continue
		}
		key := shape{tenant: j.Tenant, n: len(j.Options)}
		if len(j.Options) > 0 {
			key.opts = &j.Options[0]
		}
		if v.noRoom[key] {
			continue
		}
		if !place(j) {
			if v.noRoom == nil {
				v.noRoom = map[shape]bool{}
			}
			v.noRoom[key] = true
		}
	}
}

// shape identifies the jobs PlacePending treats as one: a tenant and an
// Options slice (its first element and length).
type shape struct {
	tenant string
	opts   *snapshot.Option
	n      int
}

// KeepRunning keeps every running job where it is. Running jobs of a valid
// snapshot always fit together again.
func (v *View) KeepRunning() {
	for k := range v.S.Jobs {
		if c := v.S.Jobs[k].Current; c != nil {
			if gi, ok := v.gpuPos[c.GPU]; ok {
				v.add(gi, &v.S.Jobs[k], *c)
			}
		}
	}
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
	v.add(gi, j, p)
	return p
}

func (v *View) add(gi int, j *snapshot.Job, p snapshot.Placement) {
	g := &v.GPUs[gi]
	g.Jobs++
	if g.Model.IsMIG() {
		pr, _ := g.Model.Profile(p.Profile)
		g.Occ.Add(g.Model.MIG, pr, p.Start)
	} else {
		g.Used += p.Fraction
		g.Tenant = j.Tenant
	}
	v.placed[j.ID] = p
}

// Remove takes job id off its GPU in the decision being built.
func (v *View) Remove(id int) {
	p, ok := v.placed[id]
	if !ok {
		return
	}
	delete(v.placed, id)
	clear(v.noRoom) // the view gains room: a shape may fit again
	g := &v.GPUs[v.gpuPos[p.GPU]]
	g.Jobs--
	if g.Model.IsMIG() {
		pr, _ := g.Model.Profile(p.Profile)
		g.Occ.Remove(g.Model.MIG, pr, p.Start)
	} else {
		g.Used -= p.Fraction
		if g.Jobs == 0 {
			g.Used, g.Tenant = 0, ""
		}
	}
}

// Candidates returns the GPU positions worth trying for a new placement, in
// position order: every GPU holding a job plus the first empty GPU of each
// model (empty GPUs of one model are interchangeable, so trying one is
// enough; taking the first keeps first-fit's lowest-index rule).
func (v *View) Candidates() []int {
	seen := map[string]bool{}
	out := make([]int, 0, 16)
	for k := range v.GPUs {
		g := &v.GPUs[k]
		if g.Jobs > 0 {
			out = append(out, k)
			continue
		}
		if !seen[g.Model.Name] {
			seen[g.Model.Name] = true
			out = append(out, k)
		}
	}
	return out
}

// Decision returns the placements made so far, sorted by job ID, with every
// other job of the snapshot in Unscheduled (ascending).
func (v *View) Decision() snapshot.Decision {
	var d snapshot.Decision
	for k := range v.S.Jobs {
		id := v.S.Jobs[k].ID
		if p, ok := v.placed[id]; ok {
			d.Placements = append(d.Placements, p)
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
func (v *View) Put(gi int, j *snapshot.Job, p snapshot.Placement) { v.add(gi, j, p) }

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

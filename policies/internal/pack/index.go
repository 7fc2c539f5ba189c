package pack

import (
	"math"
	"slices"

	"github.com/google/btree"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// fitIndex indexes the view's free capacity so that a policy that scores
// a placement by the GPU's model, the option and how full the GPU is (the
// conspirator heuristic) finds its few contenders without scanning the
// cluster. GPUs holding jobs are kept per group, ordered by free share
// then position:
//
//   - a MIG GPU in the group of every profile that has a legal start on
//     its layout now (so every member takes the profile);
//   - a non-MIG GPU in the group of its tenant (the only tenant it takes).
//
// Empty GPUs are kept per model, by position. The index is built when a
// policy first asks (CandidatesFor) and kept up to date by every placement
// and removal after that; a session keeps it for the whole replay.
type fitIndex struct {
	models    []modelRep
	groups    map[groupKey]*btree.BTreeG[entry]
	in        []member // per GPU position: where it is indexed now
	starts    []int    // scratch for AppendStarts
	emptyDone []int    // scratch: models whose first empty GPU was looked up

	// Empty GPUs. Without servers (or with servers listed out of
	// position order), per model the positions of its empty GPUs, where
	// the first one that fits is the answer. With servers, whose CPU and
	// memory may leave most empty GPUs unusable on a loaded cluster, per
	// model a tree over the servers that finds the first server with an
	// empty GPU of the model and the CPU and memory a job asks.
	empty     map[modelKey]*btree.BTreeG[int]
	bySrv     bool
	srvTrees  map[modelKey]*srvTree
	srvModels [][]modelRep // per server: the models of its GPUs
}

// modelKey names a GPU model within a view (a name may appear with and
// without MIG in a hand-made snapshot).
type modelKey struct {
	name string
	mig  bool
}

// modelRep is one model of the view with a GPU of it (for its geometry).
type modelRep struct {
	key modelKey
	m   *snapshot.GPUModel
}

// groupKey is a model and, for MIG, a profile name; without MIG, a tenant.
type groupKey struct {
	model modelKey
	slot  string
}

// entry orders a group's GPUs: least free share first, then position.
type entry struct {
	free float64
	pos  int
}

func entryLess(a, b entry) bool {
	if a.free != b.free {
		return a.free < b.free
	}
	return a.pos < b.pos
}

// member is where one GPU is indexed: empty, or in groups at free.
type member struct {
	empty  bool
	free   float64
	groups []groupKey
}

// tieSlack: GPUs whose free shares differ by less are contenders together,
// so that the policy's own comparison (with its 1e-12 tolerance) breaks
// the tie by position as it does over every GPU.
const tieSlack = 1e-9

func keyOf(m *snapshot.GPUModel) modelKey { return modelKey{m.Name, m.IsMIG()} }

func newFitIndex(v *View) *fitIndex {
	x := &fitIndex{groups: map[groupKey]*btree.BTreeG[entry]{}, empty: map[modelKey]*btree.BTreeG[int]{},
		in: make([]member, len(v.GPUs))}
	seen := map[modelKey]bool{}
	for gi := range v.GPUs {
		m := v.GPUs[gi].Model
		if k := keyOf(m); !seen[k] {
			seen[k] = true
			x.models = append(x.models, modelRep{k, m})
		}
	}
	// The server tree answers "first position" only where servers are
	// listed in position order, each in one piece.
	x.bySrv = v.srvSplice
	for sv := 1; x.bySrv && sv < len(v.srvs); sv++ {
		if v.srvs[sv].lo >= 0 && v.srvs[sv-1].lo >= 0 && v.srvs[sv].lo < v.srvs[sv-1].lo {
			x.bySrv = false
		}
	}
	if x.bySrv {
		x.srvTrees = map[modelKey]*srvTree{}
		x.srvModels = make([][]modelRep, len(v.srvs))
		for _, mr := range x.models {
			x.srvTrees[mr.key] = newSrvTree(len(v.srvs))
		}
		for gi := range v.GPUs {
			sv, k := v.GPUs[gi].Srv, keyOf(v.GPUs[gi].Model)
			if !slices.ContainsFunc(x.srvModels[sv], func(mr modelRep) bool { return mr.key == k }) {
				x.srvModels[sv] = append(x.srvModels[sv], modelRep{k, v.GPUs[gi].Model})
			}
		}
	}
	for gi := range v.GPUs {
		x.insert(v, gi)
	}
	for sv := range x.srvModels {
		x.server(v, sv)
	}
	return x
}

// update re-indexes GPU gi after its jobs changed.
func (x *fitIndex) update(v *View, gi int) {
	x.remove(v, gi)
	x.insert(v, gi)
	if x.bySrv {
		x.server(v, v.GPUs[gi].Srv)
	}
}

// server brings server sv's leaves up to date: for each model of its
// GPUs, the CPU and memory it has free if it has an empty GPU of the
// model, and -1 (no job fits) if it has none.
func (x *fitIndex) server(v *View, sv int) {
	s := &v.srvs[sv]
	cpu, mem := int64(math.MaxInt64), int64(math.MaxInt64)
	if s.cpuCap > 0 {
		cpu = s.cpuCap - s.cpu
	}
	if s.memCap > 0 {
		mem = s.memCap - s.mem
	}
	room := shareUnits(v.freeShare(sv))
	for _, mr := range x.srvModels[sv] {
		if v.banned[sv] || x.firstEmpty(v, sv, mr.key) < 0 {
			x.srvTrees[mr.key].set(sv, -1, -1, -1)
		} else {
			x.srvTrees[mr.key].set(sv, cpu, mem, room)
		}
	}
}

// firstEmpty returns the first empty GPU of model k on server sv, or -1.
func (x *fitIndex) firstEmpty(v *View, sv int, k modelKey) int {
	for gi := v.srvs[sv].lo; gi >= 0 && gi < v.srvs[sv].hi; gi++ {
		if g := &v.GPUs[gi]; g.Jobs == 0 && keyOf(g.Model) == k {
			return gi
		}
	}
	return -1
}

func (x *fitIndex) remove(v *View, gi int) {
	mb := &x.in[gi]
	if mb.empty {
		x.empty[keyOf(v.GPUs[gi].Model)].Delete(gi)
		mb.empty = false
	}
	for _, gk := range mb.groups {
		t := x.groups[gk]
		t.Delete(entry{mb.free, gi})
		if t.Len() == 0 {
			delete(x.groups, gk) // a finished tenant's group goes with it
		}
	}
	mb.groups = mb.groups[:0]
}

func (x *fitIndex) insert(v *View, gi int) {
	g := &v.GPUs[gi]
	mb := &x.in[gi]
	mk := keyOf(g.Model)
	if g.Jobs == 0 {
		if x.bySrv {
			return // the server tree holds it
		}
		t := x.empty[mk]
		if t == nil {
			t = btree.NewG(16, func(a, b int) bool { return a < b })
			x.empty[mk] = t
		}
		t.ReplaceOrInsert(gi)
		mb.empty = true
		return
	}
	mb.free = g.Free()
	if geo := g.Model.MIG; geo != nil {
		for k := range geo.Profiles {
			p := &geo.Profiles[k]
			if len(geo.AppendStarts(x.starts[:0], &g.Occ, p)) > 0 {
				mb.groups = append(mb.groups, groupKey{mk, p.Name})
			}
		}
	} else {
		mb.groups = append(mb.groups, groupKey{mk, g.Tenant})
	}
	for _, gk := range mb.groups {
		t := x.groups[gk]
		if t == nil {
			t = btree.NewG(16, entryLess)
			x.groups[gk] = t
		}
		t.ReplaceOrInsert(entry{mb.free, gi})
	}
}

// CandidatesFor returns, in position order, the GPUs on which a policy
// that scores by (model, option, free share) can find job j's best spot:
// for each option of j (those allowed, when allowed is not nil) and each
// model it fits, the fullest GPU in use where it fits (with those as full
// within tieSlack), and the first empty GPU where it fits. Scoring every
// option on these GPUs in this order gives the decision that scoring
// every option on every candidate GPU gives, when the score depends on
// the GPU only through its model, whether it is empty and its free share,
// and ties go to the lower position: the GPUs left out are beaten, on
// every option, by one kept. The slice is the view's until the next call.
func (v *View) CandidatesFor(j *snapshot.Job, allowed []bool) []int {
	if v.idx == nil {
		v.idx = newFitIndex(v)
	}
	x := v.idx
	out := v.contenders[:0]
	if j.Gang != 0 && v.oneServer {
		if sv, ok := v.gangServer(j.Gang); ok {
			// A gang's later task may go only where its first went: that
			// server's GPUs are all the contenders.
			for gi := v.srvs[sv].lo; gi < v.srvs[sv].hi; gi++ {
				out = append(out, gi)
			}
			v.contenders = out
			return out
		}
	}
	// The first empty GPU of a model where j fits depends on the model,
	// not on the option: each model's is looked up once.
	emptyDone := x.emptyDone[:0]
	for t := range j.Options {
		if allowed != nil && !allowed[t] {
			continue
		}
		o := &j.Options[t]
		for m, mr := range x.models {
			if o.GPUType != "" && o.GPUType != mr.key.name {
				continue
			}
			var gk groupKey
			lo := entry{pos: -1}
			if mr.key.mig {
				if _, ok := mr.m.Profile(o.Profile); o.Profile == "" || !ok {
					continue
				}
				gk = groupKey{mr.key, o.Profile}
			} else {
				if !o.Fits(mr.m) {
					continue
				}
				gk = groupKey{mr.key, j.Tenant}
				lo.free = o.Fraction - 2*fractionSlack
			}
			if tr := x.groups[gk]; tr != nil {
				first, found := 0.0, false
				tr.AscendGreaterOrEqual(lo, func(e entry) bool {
					if found && e.free > first+tieSlack {
						return false
					}
					if v.Starts(e.pos, j, t) != nil {
						if !found {
							first, found = e.free, true
						}
						out = append(out, e.pos)
					}
					return true
				})
			}
			if slices.Contains(emptyDone, m) {
				continue
			}
			emptyDone = append(emptyDone, m)
			if x.bySrv {
				st := x.srvTrees[mr.key]
				cpu, mem, share := v.need(j)
				need := max(0, shareUnits(share-shareSlack)-1)
				for from := 0; ; {
					sv := st.first(from, cpu, mem, need)
					if sv < 0 {
						break
					}
					if gi := x.firstEmpty(v, sv, mr.key); gi >= 0 && v.Starts(gi, j, t) != nil {
						out = append(out, gi)
						break
					}
					from = sv + 1 // not expected: the tree knows CPU, memory and bars
				}
			} else if tr := x.empty[mr.key]; tr != nil {
				tr.Ascend(func(gi int) bool {
					if v.Starts(gi, j, t) != nil {
						out = append(out, gi)
						return false
					}
					return true
				})
			}
		}
	}
	x.emptyDone = emptyDone
	slices.Sort(out)
	out = slices.Compact(out)
	v.contenders = out
	return out
}

// shareUnits is a sum of GPU shares in millionths (rounded down), as the
// server tree keeps it.
func shareUnits(f float64) int64 { return int64(math.Floor(f * 1e6)) }

// srvTree is a tree over servers (leaves in server order) holding per
// node the most CPU, the most memory and the most free GPU share (in
// millionths) among its leaves, so that the first server with enough of
// all three is found without visiting the servers that lack one.
type srvTree struct {
	n              int // leaves, a power of two
	cpu, mem, room []int64
}

func newSrvTree(servers int) *srvTree {
	n := 1
	for n < servers {
		n *= 2
	}
	t := &srvTree{n: n, cpu: make([]int64, 2*n), mem: make([]int64, 2*n), room: make([]int64, 2*n)}
	for k := range t.cpu {
		t.cpu[k], t.mem[k], t.room[k] = -1, -1, -1
	}
	return t
}

// set gives leaf i its free CPU, memory and share (-1: nothing fits there).
func (t *srvTree) set(i int, cpu, mem, room int64) {
	k := t.n + i
	if t.cpu[k] == cpu && t.mem[k] == mem && t.room[k] == room {
		return
	}
	t.cpu[k], t.mem[k], t.room[k] = cpu, mem, room
	for k /= 2; k >= 1; k /= 2 {
		t.cpu[k] = max(t.cpu[2*k], t.cpu[2*k+1])
		t.mem[k] = max(t.mem[2*k], t.mem[2*k+1])
		t.room[k] = max(t.room[2*k], t.room[2*k+1])
	}
}

// first returns the first leaf at or after from with at least cpu, mem
// and room free, or -1.
func (t *srvTree) first(from int, cpu, mem, room int64) int {
	return t.find(1, 0, t.n, from, cpu, mem, room)
}

func (t *srvTree) find(k, lo, hi, from int, cpu, mem, room int64) int {
	if hi <= from || t.cpu[k] < cpu || t.mem[k] < mem || t.room[k] < room {
		return -1
	}
	if k >= t.n {
		return k - t.n
	}
	mid := (lo + hi) / 2
	if r := t.find(2*k, lo, mid, from, cpu, mem, room); r >= 0 {
		return r
	}
	return t.find(2*k+1, mid, hi, from, cpu, mem, room)
}

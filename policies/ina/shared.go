package ina

import (
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
)

// ESA's priorities (argument priority): what a switch can read from a
// packet, set by the host.
const (
	PriorityRemainingIterations = "remaining-iterations"
	PrioritySizeClass           = "size-class"
	PriorityFIFO                = "fifo"
)

// Priorities lists esa's priorities.
func Priorities() []string {
	return []string{PriorityRemainingIterations, PrioritySizeClass, PriorityFIFO}
}

// shared is atp's and esa's pool: every job's chunks cycle over a hashed
// window of aggregators; a chunk holds its aggregator for one round trip,
// so a synchronising job holds Need of its Window at any moment, spread
// evenly over it (its chunks' indices advance). A chunk finds its
// aggregator held by job b with probability overlap(a,b)/W_a x
// held_b/W_b; held, it goes to the job's fallback (atp, and esa when b
// outranks or ties a), or takes the aggregator and sends b's partial
// aggregate to b's fallback (esa, when a outranks b). Grants are rates of
// these events, recomputed whenever a job enters or leaves its
// synchronisation: a collided aggregator is tried again by the next
// chunk, so a job's collisions fall as soon as the job holding its
// aggregators leave.
//
// Under esa a job also loses chunks that a job outranking it takes from
// it in flight: b's chunks land on aggregators a holds at b's chunk rate
// x overlap(a,b)/W_b x held_a/W_a, which over the rate of a's admitted
// chunks (held_a per round trip, as b's is held_b) is c_ab =
// overlap(a,b)/W_a x held_b/W_b, the share of a's chunks b turns away on
// arrival. Of a's chunks, t = sum of c_ab over the jobs at or above it
// are turned away, and of the 1-t admitted, e = sum of c_ab over the jobs
// strictly above it are taken in flight: a's collided share is
// t + (1-t) e (2c - c^2 for one job b above it), where an equal job loses
// t and one that outranks b nothing. Evicted chunks are counted as not
// held (they held their aggregator part of a round trip).
//
// What a job holds depends on what the others hold, and theirs on its:
// each Enter and Leave finds the fixed point, going over the jobs again
// until no holding moves (Gauss-Seidel, in entry order under atp and in
// rank order under esa, whose strict ranks settle in one pass). Holdings
// are whole slots, so a pass that moves none has settled; one that does
// not within SettlePasses (alternating by a slot) is left at its last pass
// and counted (Unsettled).
type shared struct {
	name     string
	pool     Pool
	priority string // esa's; "" for atp (no preemption)

	sets    map[int]bitset      // crc: job -> its window's slots
	words   map[int][]int32     // crc: job -> the words of its bitset holding any
	overlap map[int]map[int]int // crc: job -> job -> slots their windows share
	active  []sharedJob         // synchronising jobs, in entry order
	out     []Grant
	before  []holding // settle's scratch: holdings before the call
	seen    []int     // settle's scratch: the moves each job was priced after
	// unsettled counts calls whose holdings did not settle in SettlePasses.
	unsettled int64

	// frac[a.row*dim+b.row] is share(a, b)/a.w for two synchronising
	// jobs, set when the later of them enters: collided sums it over the
	// others at every grant, which looked a pair up in two maps (the
	// most of a replay with many jobs synchronising at once). Rows of
	// jobs that left are reused (free).
	frac []float64
	dim  int
	free []int
}

// sharedJob is a synchronising job and what it holds.
type sharedJob struct {
	d     Demand
	w     int     // its window, at most the pool
	rank  float64 // esa: lower outranks
	slots int     // held in flight
	ps    float64 // collided share
	row   int     // its row of frac; -1: none (Peek)
}

// holding is what a job holds: slots in flight and its collided share.
type holding struct {
	job   int
	slots int
	ps    float64
}

// SettlePasses bounds the passes of settle (see shared).
const SettlePasses = 64

type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

func newShared(name string, p Pool, priority string) (*shared, error) {
	return &shared{name: name, pool: p, priority: priority, sets: map[int]bitset{}, words: map[int][]int32{}, overlap: map[int]map[int]int{}}, nil
}

func (s *shared) Name() string { return s.name }
func (*shared) Start(int)      {}

func (s *shared) End(job int) {
	delete(s.sets, job)
	delete(s.words, job)
	for o := range s.overlap[job] {
		delete(s.overlap[o], job)
	}
	delete(s.overlap, job)
}

// appID is the 16-bit application ID ATP's hash takes: jobs are numbered
// in arrival order, offset by the seed so that each seed draws other
// pairs of windows (an operator assigns them; ATP's code takes one per
// job on the command line).
func (s *shared) appID(job int) uint16 {
	return uint16(1 + (uint64(job)+s.pool.Seed*7919)%65535)
}

// crcSet is job's window as ATP's HashNew_crc lays it out
// (in-ATP/ATP common/HashTable.cc): for index i, CRC-32 (IEEE, as its
// crc32_le with ~ at the end) of the bytes appID, index, salt (each
// little-endian 16 bits), truncated to its uint16_t, modulo the pool;
// the salt's low byte bumped (wrapping at 255 into the high byte, as
// there) until the slot is new to the job.
//
// The salt has 255 x 256 values: an index that finds no new slot in all
// of them (a window near or past the 65,536 slots the 16-bit hash can
// name; Config validation refuses one past CRCMaxWindow) is left out
// rather than searched for forever.
func crcSet(app uint16, w, slots int) bitset {
	b := newBitset(slots)
	in := [6]byte{byte(app), byte(app >> 8)}
	for i := range w {
		in[2], in[3], in[4], in[5] = byte(i), byte(i>>8), 0, 0
		for range 255 * 256 {
			v := int(uint16(crc32.ChecksumIEEE(in[:]))) % slots
			in[4]++
			if in[4] == 255 {
				in[4] = 0
				in[5]++
			}
			if !b.has(v) {
				b.set(v)
				break
			}
		}
	}
	return b
}

// CRCMaxWindow is the most aggregators ATP's 16-bit hash can name.
const CRCMaxWindow = 1 << 16

// window is job d's window on this pool.
func (s *shared) window(d Demand) int { return max(1, min(d.Window, s.pool.Slots)) }

// share is the slots job a's and job b's windows share: counted on ATP's
// hash, or their expectation w_a w_b / P under uniform hashing.
func (s *shared) share(a, b *sharedJob) float64 {
	if s.pool.Hash == HashUniform {
		return float64(a.w) * float64(b.w) / float64(s.pool.Slots)
	}
	ka, kb := a.d.Job, b.d.Job
	if n, ok := s.overlap[ka][kb]; ok {
		return float64(n)
	}
	sa, sb := s.set(ka, a.w), s.set(kb, b.w)
	wa, wb := s.words[ka], s.words[kb]
	if len(wb) < len(wa) {
		wa = wb
	}
	n := 0
	for _, w := range wa {
		n += bits.OnesCount64(sa[w] & sb[w])
	}
	for _, p := range [][2]int{{ka, kb}, {kb, ka}} {
		if s.overlap[p[0]] == nil {
			s.overlap[p[0]] = map[int]int{}
		}
		s.overlap[p[0]][p[1]] = n
	}
	return float64(n)
}

// set is job's window of w slots (crc), built when first needed.
func (s *shared) set(job, w int) bitset {
	if b, ok := s.sets[job]; ok {
		return b
	}
	b := crcSet(s.appID(job), w, s.pool.Slots)
	var ws []int32
	for i, x := range b {
		if x != 0 {
			ws = append(ws, int32(i))
		}
	}
	s.sets[job], s.words[job] = b, ws
	return b
}

// rank is job d's priority under esa, lower first; 0 for atp.
func (s *shared) rank(d Demand) float64 {
	switch s.priority {
	case PriorityRemainingIterations:
		return float64(d.RemainingIterations)
	case PrioritySizeClass:
		return float64(SizeClass(d.RemainingBytes))
	case PriorityFIFO:
		return float64(d.Arrival)
	}
	return 0
}

// SizeClass is the 4-bit priority class a host puts in its packets
// under esa's size-class priority: log2 of the job's remaining gradient
// bytes in gigabytes, 0 (under 2 GB) to 15 (2^15 GB, about 33 TB, and
// more). Training
// jobs have from about a gigabyte (ResNet-50's 102 MB for some
// iterations) to terabytes (BERT-large's 1.36 GB for thousands) left,
// which these classes tell apart; megabytes, as first read, put every
// job past 32 GB in one class, where ties block without preempting.
func SizeClass(remainingBytes float64) int {
	return int(math.Min(15, math.Max(0, math.Floor(math.Log2(remainingBytes/1e9)))))
}

// blocks says whether b's held aggregators turn a's chunks away (b is not
// preempted by a): always under atp; under esa unless a outranks b.
func (s *shared) blocks(a, b *sharedJob) bool {
	return s.priority == "" || b.rank <= a.rank
}

// collided is a's share of chunks that go to its fallback, given the
// others' holdings now: turned away on arrival (t), or under esa taken
// in flight (e), t + (1-t) e (see shared).
func (s *shared) collided(a *sharedJob) float64 {
	var t, e float64
	var fr []float64 // each pair's share/a.w, once a has a row
	if a.row >= 0 {
		fr = s.frac[a.row*s.dim : (a.row+1)*s.dim]
	}
	for i := range s.active {
		b := &s.active[i]
		if b.d.Job == a.d.Job || b.slots == 0 || !s.blocks(a, b) {
			continue
		}
		var c float64
		if fr != nil {
			c = fr[b.row] * float64(b.slots) / float64(b.w)
		} else {
			c = s.share(a, b) / float64(a.w) * float64(b.slots) / float64(b.w)
		}
		t += c
		if s.priority != "" && b.rank < a.rank {
			e += c
		}
	}
	t, e = math.Min(1, t), math.Min(1, e)
	return t + (1-t)*e
}

// addRow gives a, about to enter, a row of frac: its share with every
// synchronising job, and theirs with it.
func (s *shared) addRow(a *sharedJob) {
	if len(s.free) == 0 {
		n := max(8, 2*s.dim)
		frac := make([]float64, n*n)
		for r := range s.dim {
			copy(frac[r*n:r*n+s.dim], s.frac[r*s.dim:(r+1)*s.dim])
		}
		for r := n - 1; r >= s.dim; r-- {
			s.free = append(s.free, r)
		}
		s.frac, s.dim = frac, n
	}
	a.row = s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	for i := range s.active {
		b := &s.active[i]
		sh := s.share(a, b)
		s.frac[a.row*s.dim+b.row] = sh / float64(a.w)
		s.frac[b.row*s.dim+a.row] = sh / float64(b.w)
	}
}

// grant sets a's holding from its collided share and returns its grant.
func (s *shared) grant(a *sharedJob) Grant {
	a.ps = s.collided(a)
	a.slots = int(math.Round((1 - a.ps) * float64(min(a.d.Need, a.w))))
	return a.asGrant()
}

// asGrant is a's holding as a grant.
func (a *sharedJob) asGrant() Grant {
	g := Grant{Job: a.d.Job, Slots: a.slots, PSFraction: a.ps}
	if a.slots == 0 {
		g.PSFraction = 1
	}
	return g
}

// settle goes over the synchronising jobs until their holdings stop
// moving (see shared), each against the others' holdings as they stand,
// then appends the grant of every job but skip whose holding differs
// from before[its index] to out. A job of esa whose holding fell lost the
// partial aggregates in it to a job that outranks it.
func (s *shared) settle(skip int, before []holding, out []Grant) []Grant {
	// A job's collided share reads only the others' slots: a pass in
	// which no job's slots moved priced every job against the slots all
	// end with, so its shares are final too.
	// A job none of whose others' slots moved since its last pricing
	// would be priced the same: it is skipped (moves counts the moves,
	// seen[i] what it was when job i was last priced), so that a pass
	// after the last move, which only confirms, costs nothing per job.
	settled := false
	moves := 0
	seen := s.seen[:0]
	for range s.active {
		seen = append(seen, -1)
	}
	s.seen = seen
	for range SettlePasses {
		moved := false
		for i := range s.active {
			if seen[i] == moves {
				continue
			}
			a := &s.active[i]
			was := a.slots
			s.grant(a)
			if a.slots != was {
				moved = true
				moves++
			}
			seen[i] = moves
		}
		if !moved {
			settled = true
			break
		}
	}
	if !settled {
		s.unsettled++
	}
	for i := range s.active {
		a := &s.active[i]
		if a.d.Job == skip {
			continue
		}
		was := before[i]
		if a.slots == was.slots && a.ps == was.ps {
			continue
		}
		g := a.asGrant()
		if s.priority != "" && a.slots < was.slots {
			g.Evicted = was.slots - a.slots
		}
		out = append(out, g)
	}
	return out
}

// holdings records every synchronising job's holding, in s.active's
// order, into s.before.
func (s *shared) holdings() []holding {
	h := s.before[:0]
	for i := range s.active {
		a := &s.active[i]
		h = append(h, holding{job: a.d.Job, slots: a.slots, ps: a.ps})
	}
	s.before = h
	return h
}

// Unsettled is how many Enter and Leave calls ended without their
// holdings settling (see shared).
func (s *shared) Unsettled() int64 { return s.unsettled }

// Enter adds d to the synchronising jobs: atp in entry order, esa in
// rank order (then entry), so that a regrant meets every job after those
// that outrank it, at their new holdings.
func (s *shared) Enter(d Demand) []Grant {
	n := sharedJob{d: d, w: s.window(d), rank: s.rank(d)}
	s.addRow(&n)
	i := len(s.active)
	if s.priority != "" {
		for i > 0 && n.rank < s.active[i-1].rank {
			i--
		}
	}
	s.active = slices.Insert(s.active, i, n)
	before := s.holdings() // the entrant's: none yet
	s.grant(&s.active[i])  // priced against the others first, as it arrives
	out := s.settle(d.Job, before, s.out[:0])
	for k := range s.active {
		if s.active[k].d.Job == d.Job {
			out = slices.Insert(out, 0, s.active[k].asGrant())
			break
		}
	}
	s.out = out
	return out
}

func (s *shared) Leave(job int) []Grant {
	s.active = slices.DeleteFunc(s.active, func(a sharedJob) bool {
		if a.d.Job == job {
			s.free = append(s.free, a.row)
			return true
		}
		return false
	})
	s.out = s.settle(-1, s.holdings(), s.out[:0])
	return s.out
}

func (s *shared) Peek(d Demand) Grant {
	a := sharedJob{d: d, w: s.window(d), rank: s.rank(d), row: -1}
	return s.grant(&a)
}

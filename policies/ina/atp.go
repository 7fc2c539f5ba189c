package ina

import "math/bits"

// atp hashes each job's window onto the shared pool; a slot held by
// another job is a collision for the whole phase. The pool and each job's
// set are bitsets: entering is set AND NOT held, a word at a time, which
// is the same as testing the window's slots one by one (the replay of a
// 5,335-job list enters millions of phases of 2,800 slots).
type atp struct {
	pool Pool
	used bitset         // slots held now
	sets map[int]jobSet // job -> its window's slots
	held map[int]bitset // job -> the slots it holds now
	free []bitset       // spare bitsets, reused
	out  [1]Grant       // Enter's answer, reused
}

// jobSet is a job's window: its slots as a bitset, the indices of the
// bitset's words that hold any (a window of 4,096 in a SmartNIC's million
// slots touches a quarter of the words), and how many slots.
type jobSet struct {
	bits   bitset
	words  []int32
	window int
	n      int
}

type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

func newATP(p Pool) *atp {
	return &atp{pool: p, used: newBitset(p.Slots), sets: map[int]jobSet{}, held: map[int]bitset{}}
}

func (*atp) Name() string { return "atp" }
func (*atp) Start(int)    {}
func (a *atp) End(job int) {
	if s, ok := a.sets[job]; ok {
		a.free = append(a.free, s.bits)
		delete(a.sets, job)
	}
	if h, ok := a.held[job]; ok {
		a.free = append(a.free, h)
		delete(a.held, job)
	}
}

func (a *atp) bitset() bitset {
	if n := len(a.free); n > 0 {
		b := a.free[n-1]
		a.free = a.free[:n-1]
		clear(b)
		return b
	}
	return newBitset(a.pool.Slots)
}

// set is the job's window of distinct slots: index i of the window maps
// to hash(seed, job, i, salt) mod the pool, the salt bumped until the slot
// is new to the job, as ATP's HashNew_crc does. ATP hashes with CRC-32,
// which is linear: two jobs' sets are XOR-translates of each other before
// the modulus, and in a test they overlapped measurably more often than
// uniform hashing predicts. The hash here mixes fully (splitmix64's
// finaliser), so that the collisions are those of the uniform hashing ATP
// intends, and follow its closed form.
func (a *atp) set(job, window int) jobSet {
	if s, ok := a.sets[job]; ok && s.window == window {
		return s
	} else if ok {
		a.free = append(a.free, s.bits)
	}
	w := min(window, a.pool.Slots)
	bits := a.bitset()
	base := mix64(a.pool.Seed ^ mix64(uint64(job)+0x9e3779b97f4a7c15))
	for i := 0; i < w; i++ {
		for salt := uint64(0); ; salt++ {
			s := int32(mix64(base^mix64(uint64(i)<<20|salt)) % uint64(a.pool.Slots))
			if !bits.has(s) {
				bits.set(s)
				break
			}
		}
	}
	js := jobSet{bits: bits, window: window, n: w}
	for i, x := range bits {
		if x != 0 {
			js.words = append(js.words, int32(i))
		}
	}
	a.sets[job] = js
	return js
}

// mix64 is splitmix64's finaliser: every input bit moves every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (a *atp) Enter(d Demand) []Grant {
	js := a.set(d.Job, d.Window)
	h, ok := a.held[d.Job]
	if !ok {
		h = a.bitset()
		a.held[d.Job] = h
	}
	n := 0
	for _, w := range js.words {
		got := js.bits[w] &^ a.used[w]
		h[w] = got
		a.used[w] |= got
		n += bits.OnesCount64(got)
	}
	a.out[0] = a.grant(d.Job, js, n)
	return a.out[:]
}

func (a *atp) grant(job int, js jobSet, free int) Grant {
	g := Grant{Job: job, Slots: free}
	if js.n > 0 {
		g.PSFraction = float64(js.n-free) / float64(js.n)
	}
	return g
}

func (a *atp) Peek(d Demand) Grant {
	js := a.set(d.Job, d.Window)
	n := 0
	for _, w := range js.words {
		n += bits.OnesCount64(js.bits[w] &^ a.used[w])
	}
	return a.grant(d.Job, js, n)
}

func (a *atp) Leave(job int) []Grant {
	if h, ok := a.held[job]; ok {
		if js, ok := a.sets[job]; ok {
			for _, w := range js.words {
				a.used[w] &^= h[w]
				h[w] = 0
			}
		}
	}
	return nil
}

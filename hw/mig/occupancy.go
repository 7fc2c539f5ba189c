package mig

import "math/bits"

// Occupancy is what the instances on one GPU use: memory slices (bit i for
// slice i), compute slices, and instances per profile. It is the
// incremental form of Validate for code that adds and removes instances in
// an inner loop (the policies' packing, the enumeration of layouts): a
// layout built only through Fits and Add is valid. The zero value is an
// empty GPU; it is a plain value, so copying it is a snapshot.
type Occupancy struct {
	Mem     uint64
	Compute int
	count   [MaxProfiles]uint8
	n3, n4  uint8 // instances with 3 and 4 compute slices, for No4g3g
}

// slot returns the position of p in g.Profiles: p is normally a pointer
// into g (from Profile), found by address; otherwise by name.
func (g *Geometry) slot(p *Profile) int {
	for i := range g.Profiles {
		if &g.Profiles[i] == p {
			return i
		}
	}
	return g.index(p.Name)
}

// Fits reports whether an instance of p (a profile of g) can be added at
// start to a GPU of geometry g occupied as o. It does not check that start
// is one of p.Starts; callers take starts from there.
func (g *Geometry) Fits(o *Occupancy, p *Profile, start int) bool {
	if start < 0 || start+p.MemSlices > g.MemorySlices || o.Mem&Mask(p, start) != 0 {
		return false
	}
	return g.fitsCounts(o, p)
}

// fitsCounts checks the rules that do not depend on the start.
func (g *Geometry) fitsCounts(o *Occupancy, p *Profile) bool {
	if o.Compute+p.Compute > g.ComputeSlices {
		return false
	}
	if p.MaxCount > 0 {
		if k := g.slot(p); k >= 0 && int(o.count[k]) >= p.MaxCount {
			return false
		}
	}
	if g.No4g3g && (p.Compute == 3 && o.n4 > 0 || p.Compute == 4 && o.n3 > 0) {
		return false
	}
	return true
}

// AppendStarts appends to dst the legal starts of p at which an instance
// fits on a GPU occupied as o, ascending, and returns it.
func (g *Geometry) AppendStarts(dst []int, o *Occupancy, p *Profile) []int {
	if !g.fitsCounts(o, p) {
		return dst
	}
	for _, st := range p.Starts {
		if st >= 0 && st+p.MemSlices <= g.MemorySlices && o.Mem&Mask(p, st) == 0 {
			dst = append(dst, st)
		}
	}
	return dst
}

// Add records an instance of p at start. The caller has checked Fits.
func (o *Occupancy) Add(g *Geometry, p *Profile, start int) {
	o.Mem |= Mask(p, start)
	o.Compute += p.Compute
	if k := g.slot(p); k >= 0 {
		o.count[k]++
	}
	switch p.Compute {
	case 3:
		o.n3++
	case 4:
		o.n4++
	}
}

// Remove takes away an instance of p at start that Add recorded.
func (o *Occupancy) Remove(g *Geometry, p *Profile, start int) {
	o.Mem &^= Mask(p, start)
	o.Compute -= p.Compute
	if k := g.slot(p); k >= 0 {
		o.count[k]--
	}
	switch p.Compute {
	case 3:
		o.n3--
	case 4:
		o.n4--
	}
}

// FreeMem returns the memory slices of g not in use.
func (o *Occupancy) FreeMem(g *Geometry) int { return g.MemorySlices - bits.OnesCount64(o.Mem) }

// FreeCompute returns the compute slices of g not in use.
func (o *Occupancy) FreeCompute(g *Geometry) int { return g.ComputeSlices - o.Compute }

// FreeSlots lists the memory slices of g not in use, ascending.
func (o *Occupancy) FreeSlots(g *Geometry) []int {
	out := []int{}
	for m := range g.MemorySlices {
		if o.Mem&(1<<m) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// Openness counts the (profile, start) places of g that would still take a
// new instance after adding one of p at start to o: a measure of how much
// room a layout leaves for future instances, used to choose among the legal
// starts of a new instance. Only memory and compute are counted (not max
// counts), so that the measure is smooth.
func (g *Geometry) Openness(o Occupancy, p *Profile, start int) int {
	mem := o.Mem | Mask(p, start)
	free := g.ComputeSlices - o.Compute - p.Compute
	n := 0
	for k := range g.Profiles {
		q := &g.Profiles[k]
		if q.Compute > free {
			continue
		}
		for _, st := range q.Starts {
			if mem&Mask(q, st) == 0 {
				n++
			}
		}
	}
	return n
}

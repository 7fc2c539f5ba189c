package mig

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Instance is one MIG GPU instance: a profile, by name, at a start memory
// slice. The name is read in the geometry of the GPU that holds it.
type Instance struct {
	Profile string
	Start   int
}

// String formats in as "3g.20gb@4".
func (in Instance) String() string { return in.Profile + "@" + strconv.Itoa(in.Start) }

// Layout is a set of MIG instances on one GPU, sorted by Start then profile
// name (instances never share a start, as each uses at least one memory
// slice, so the name only orders invalid layouts deterministically).
type Layout []Instance

// String formats l as "4g.20gb@0 3g.20gb@4"; the empty layout is "".
func (l Layout) String() string {
	parts := make([]string, len(l))
	for i, in := range l {
		parts[i] = in.String()
	}
	return strings.Join(parts, " ")
}

// Sort orders l in place by start, then profile name.
func (l Layout) Sort() {
	slices.SortStableFunc(l, func(a, b Instance) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Profile, b.Profile)
	})
}

// With returns a sorted copy of l with in added. It does not validate.
func (l Layout) With(in Instance) Layout {
	out := make(Layout, 0, len(l)+1)
	out = append(out, l...)
	out = append(out, in)
	out.Sort()
	return out
}

// Without returns a copy of l without one instance equal to in, and whether
// it was there.
func (l Layout) Without(in Instance) (Layout, bool) {
	out := make(Layout, 0, len(l))
	found := false
	for _, q := range l {
		if !found && q == in {
			found = true
			continue
		}
		out = append(out, q)
	}
	return out, found
}

// Equal reports whether l and o hold the same instances, in any order.
func (l Layout) Equal(o Layout) bool {
	if len(l) != len(o) {
		return false
	}
	a, b := slices.Clone(l), slices.Clone(o)
	a.Sort()
	b.Sort()
	return slices.Equal(a, b)
}

// Sizes returns the compute-slice counts of l's instances in geometry g,
// largest first: the form MISO and the MIG guide use to name a partition
// ("4-2-1"). Unknown profiles count 0.
func (g *Geometry) Sizes(l Layout) []int {
	out := make([]int, len(l))
	for i, in := range l {
		if p, ok := g.Profile(in.Profile); ok {
			out[i] = p.Compute
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// Validate checks that l can exist on a GPU of geometry g: known profiles
// at legal starts, no shared memory slice, at most ComputeSlices compute
// slices in use, no profile above its max count, and no 4g beside a 3g when
// No4g3g is set. The error names the first offending instance (1-based, in
// l's order) and the rule it breaks.
func (g *Geometry) Validate(l Layout) error {
	var owner [MaxSlices]int // index+1 of the instance using each slot
	var count [MaxProfiles]int
	compute := 0
	for i, in := range l {
		k := g.index(in.Profile)
		if k < 0 {
			return fmt.Errorf("instance %d (%s): gpu %s has no MIG profile %q; its profiles are %s",
				i+1, in, g.Model, in.Profile, strings.Join(g.ProfileNames(), ", "))
		}
		p := &g.Profiles[k]
		if !slices.Contains(p.Starts, in.Start) {
			return fmt.Errorf("instance %d (%s): start %d is not a legal start for %s; legal starts are %v",
				i+1, in, in.Start, p.Name, p.Starts)
		}
		for m := in.Start; m < in.Start+p.MemSlices; m++ {
			if o := owner[m]; o != 0 {
				return fmt.Errorf("instance %d (%s) overlaps instance %d (%s) in memory slice %d", i+1, in, o, l[o-1], m)
			}
			owner[m] = i + 1
		}
		compute += p.Compute
		if compute > g.ComputeSlices {
			return fmt.Errorf("instance %d (%s) brings compute slices in use to %d, more than the %d a %s has (layout %q)",
				i+1, in, compute, g.ComputeSlices, g.Model, l.String())
		}
		if g.No4g3g && (p.Compute == 3 || p.Compute == 4) {
			for j, q := range l[:i] {
				if qp, ok := g.Profile(q.Profile); ok && (qp.Compute == 3 || qp.Compute == 4) && qp.Compute != p.Compute {
					return fmt.Errorf("instance %d (%s) cannot share the gpu with instance %d (%s): a 4g and a 3g instance need driver R510 or later (No4g3g is set)",
						i+1, in, j+1, q)
				}
			}
		}
		count[k]++
		if p.MaxCount > 0 && count[k] > p.MaxCount {
			return fmt.Errorf("instance %d (%s) is %s number %d; at most %d fit on a %s", i+1, in, p.Name, count[k], p.MaxCount, g.Model)
		}
	}
	return nil
}

// index returns the position of the profile called name in g.Profiles, or
// -1.
func (g *Geometry) index(name string) int {
	for i := range g.Profiles {
		if g.Profiles[i].Name == name {
			return i
		}
	}
	return -1
}

// CanAdd returns the first (lowest) legal start at which an instance of the
// profile called name can be added to the valid layout l, and false if
// there is none.
func (g *Geometry) CanAdd(l Layout, name string) (start int, ok bool) {
	p, found := g.Profile(name)
	if !found {
		return 0, false
	}
	for _, st := range p.Starts {
		if g.Validate(l.With(Instance{Profile: name, Start: st})) == nil {
			return st, true
		}
	}
	return 0, false
}

// IsMaximal reports whether no instance of any profile can be added to l.
func (g *Geometry) IsMaximal(l Layout) bool {
	for _, p := range g.Profiles {
		if _, ok := g.CanAdd(l, p.Name); ok {
			return false
		}
	}
	return true
}

// Parse reads a layout in the form Layout.String writes: instances
// separated by spaces or commas, each "profile@start" ("3g.20gb@4"). A
// token without "@start" is placed at its lowest legal start given the
// instances before it (CanAdd); the real driver may choose another start,
// so write starts where they matter. An empty or blank text is the empty
// layout. The result is sorted and validated.
func (g *Geometry) Parse(text string) (Layout, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\n' })
	var l Layout
	for i, tok := range fields {
		name, startText, hasStart := strings.Cut(tok, "@")
		p, err := g.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("layout %q, instance %d (%q): %w", text, i+1, tok, err)
		}
		if !hasStart {
			start, ok := g.CanAdd(l, name)
			if !ok {
				var o Occupancy
				for _, in := range l {
					if q, ok := g.Profile(in.Profile); ok {
						o.Add(g, q, in.Start)
					}
				}
				return nil, fmt.Errorf("layout %q, instance %d (%q): no legal start for %s left after %q (free memory slots %v, compute slices used %d of %d)",
					text, i+1, tok, p.Name, l.String(), o.FreeSlots(g), o.Compute, g.ComputeSlices)
			}
			l = l.With(Instance{Profile: name, Start: start})
			continue
		}
		start, err := strconv.Atoi(startText)
		if err != nil {
			return nil, fmt.Errorf("layout %q, instance %d (%q): start %q is not an integer; want %s@N with N in %v", text, i+1, tok, startText, p.Name, p.Starts)
		}
		l = l.With(Instance{Profile: name, Start: start})
	}
	if err := g.Validate(l); err != nil {
		return nil, fmt.Errorf("layout %q: %w", text, err)
	}
	return l, nil
}

// Layouts returns every legal non-empty layout of g, or with maximal only
// those to which no instance can be added. The order is deterministic:
// depth-first over the candidate placements sorted by start then profile
// order, so a layout comes after its prefixes. The walk keeps an Occupancy
// rather than calling Validate at every step; the tests check each result
// with Validate.
func (g *Geometry) Layouts(maximal bool) []Layout {
	type cand struct {
		p     *Profile
		start int
	}
	var cands []cand
	for i := range g.Profiles {
		p := &g.Profiles[i]
		for _, st := range p.Starts {
			if st >= 0 && st+p.MemSlices <= g.MemorySlices {
				cands = append(cands, cand{p, st})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.start, b.start) })
	var (
		occ Occupancy
		cur Layout
		out []Layout
	)
	var walk func(from int)
	walk = func(from int) {
		for i := from; i < len(cands); i++ {
			c := cands[i]
			if !g.Fits(&occ, c.p, c.start) {
				continue
			}
			occ.Add(g, c.p, c.start)
			cur = append(cur, Instance{Profile: c.p.Name, Start: c.start})
			full := true
			if maximal {
				for _, d := range cands {
					if g.Fits(&occ, d.p, d.start) {
						full = false
						break
					}
				}
			}
			if full {
				out = append(out, slices.Clone(cur))
			}
			walk(i + 1)
			cur = cur[:len(cur)-1]
			occ.Remove(g, c.p, c.start)
		}
	}
	walk(0)
	return out
}

// ReconfigPlan returns the instances to destroy and to create to go from
// layout from to layout to; unchanged instances (same profile and start)
// keep running. Destroying first and then creating passes only through
// legal layouts: after the destroys what is left is a subset of to. The
// reconfiguration takes (len(destroy)+len(create)) x DefaultReconfigTime
// when done one operation at a time.
func ReconfigPlan(from, to Layout) (destroy, create []Instance) {
	for _, in := range from {
		if !slices.Contains(to, in) {
			destroy = append(destroy, in)
		}
	}
	for _, in := range to {
		if !slices.Contains(from, in) {
			create = append(create, in)
		}
	}
	return destroy, create
}

package gpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
)

// MIG geometry of A100 and H100: 7 compute (SM) slices and 8 memory slices.
// Source: V NVIDIA MIG User Guide v580, concepts ("one memory slice is 1/8
// of the memory", "one SM slice is 1/7 of the SMs"); hardware.md 6a.
const (
	MIGComputeSlices = 7
	MIGMemorySlices  = 8
	// MIGMaxInstances is the most GPU instances one GPU holds (V: same guide,
	// concurrency table). It follows from MIGComputeSlices since every
	// instance uses at least one compute slice.
	MIGMaxInstances = 7
)

// DefaultMIGReconfigTime is the time to create or destroy one MIG GPU
// instance (one `nvidia-smi mig -cgi` or `-dgi` operation). Grade E: no
// driver-level measurement was found (hardware.md 6d, 9.4); the debug log in
// NVIDIA/mig-parted issue #357 shows about 2 s per step, and the k8s GPU
// operator's 113 s full-template figure is dominated by pod and plugin
// restarts, which this simulator models elsewhere. Other instances keep
// running during the operation (NVIDIA/k8s-device-plugin #992); only the
// instance being destroyed must be idle.
const DefaultMIGReconfigTime = 2 * engine.Second

// MIGProfile is one GPU-instance profile of a MIG-capable GPU.
type MIGProfile struct {
	Name        string // e.g. "3g.20gb"
	ID          int    // GPU-instance profile ID as printed by `nvidia-smi mig -lgip`
	Compute     int    // compute (SM) slices, of MIGComputeSlices
	MemSlices   int    // memory slices, of MIGMemorySlices
	MemoryBytes int64  // nominal: MemSlices/8 of the GPU's memory
	Starts      []int  // legal start memory slots (`nvidia-smi mig -lgipp`)
	MaxCount    int    // most instances of this profile on one GPU
}

// migShape is a profile without the memory size, which depends on the GPU.
type migShape struct {
	suffixGB  int // memory in the name for a 40 GB part; doubled for 80 GB
	id        int
	compute   int
	memSlices int
	starts    []int
	maxCount  int
}

// a100Shapes are the GPU-instance profiles of the A100-40GB; 80 GB parts
// (A100-80GB, H100-80GB) use the same shapes with doubled memory in the name.
// Source: V NVIDIA MIG User Guide v580, supported-mig-profiles tables (IDs,
// compute, memory fraction, max count) and getting-started `nvidia-smi mig
// -lgipp` (starts); hardware.md 6b/6c; hardware-defaults.yaml mig.*.
// The guide's table prints a memory fraction of 1/8 for 1g.10gb (ID 15) but
// its placements use size 2, which matches the name (10 GB = 2 x 5 GB); we
// follow the placements. The "+me" profiles (ID 20, one per GPU, 1g with the
// media engines) are left out: they place like ID 19 and nothing in this
// project uses media engines.
var a100Shapes = []migShape{
	{suffixGB: 5, id: 19, compute: 1, memSlices: 1, starts: []int{0, 1, 2, 3, 4, 5, 6}, maxCount: 7},
	{suffixGB: 10, id: 15, compute: 1, memSlices: 2, starts: []int{0, 2, 4, 6}, maxCount: 4},
	{suffixGB: 10, id: 14, compute: 2, memSlices: 2, starts: []int{0, 2, 4}, maxCount: 3},
	{suffixGB: 20, id: 9, compute: 3, memSlices: 4, starts: []int{0, 4}, maxCount: 2},
	{suffixGB: 20, id: 5, compute: 4, memSlices: 4, starts: []int{0}, maxCount: 1},
	{suffixGB: 40, id: 0, compute: 7, memSlices: 8, starts: []int{0}, maxCount: 1},
}

// migProfiles builds the profile list of a GPU with memBytes of memory whose
// names carry memGB (40 or 80).
func migProfiles(memGB int, memBytes int64) []MIGProfile {
	scale := memGB / 40
	out := make([]MIGProfile, 0, len(a100Shapes))
	for _, sh := range a100Shapes {
		out = append(out, MIGProfile{
			Name:        fmt.Sprintf("%dg.%dgb", sh.compute, sh.suffixGB*scale),
			ID:          sh.id,
			Compute:     sh.compute,
			MemSlices:   sh.memSlices,
			MemoryBytes: memBytes / MIGMemorySlices * int64(sh.memSlices),
			Starts:      append([]int(nil), sh.starts...),
			MaxCount:    sh.maxCount,
		})
	}
	return out
}

// Profile returns the MIG profile called name ("3g.20gb"), or an error that
// lists the GPU's profiles.
func (s Spec) Profile(name string) (MIGProfile, error) {
	if !s.MIG {
		return MIGProfile{}, fmt.Errorf("gpu %s does not support MIG, so it has no profile %q (use the whole GPU)", s.Name, name)
	}
	for _, p := range s.Profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return MIGProfile{}, fmt.Errorf("gpu %s has no MIG profile %q; its profiles are %s", s.Name, name, strings.Join(s.ProfileNames(), ", "))
}

// ProfileNames lists the names of the GPU's MIG profiles, smallest first.
func (s Spec) ProfileNames() []string {
	out := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		out[i] = p.Name
	}
	return out
}

// Placement is one MIG instance: a profile at a start memory slot.
type Placement struct {
	Profile MIGProfile
	Start   int
}

// String formats p as "3g.20gb@4".
func (p Placement) String() string { return p.Profile.Name + "@" + strconv.Itoa(p.Start) }

// end returns one past the last memory slot p uses.
func (p Placement) end() int { return p.Start + p.Profile.MemSlices }

// Layout is a set of MIG instances on one GPU, sorted by Start then profile
// name (instances never share a start, as each uses at least one memory
// slice, so the name only orders invalid layouts deterministically).
type Layout []Placement

// String formats l as "4g.20gb@0 3g.20gb@4"; the empty layout is "".
func (l Layout) String() string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

// sortLayout orders l in place.
func sortLayout(l Layout) {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Start != l[j].Start {
			return l[i].Start < l[j].Start
		}
		return l[i].Profile.Name < l[j].Profile.Name
	})
}

// With returns a sorted copy of l with p added. It does not validate.
func (l Layout) With(p Placement) Layout {
	out := make(Layout, 0, len(l)+1)
	out = append(out, l...)
	out = append(out, p)
	sortLayout(out)
	return out
}

// Without returns a copy of l without the instance equal to p (same profile
// name and start), and whether it was there.
func (l Layout) Without(p Placement) (Layout, bool) {
	out := make(Layout, 0, len(l))
	found := false
	for _, q := range l {
		if !found && q.Start == p.Start && q.Profile.Name == p.Profile.Name {
			found = true
			continue
		}
		out = append(out, q)
	}
	return out, found
}

// ComputeUsed returns the compute slices used by l.
func (l Layout) ComputeUsed() int {
	n := 0
	for _, p := range l {
		n += p.Profile.Compute
	}
	return n
}

// MemSlicesUsed returns the memory slices used by l.
func (l Layout) MemSlicesUsed() int {
	n := 0
	for _, p := range l {
		n += p.Profile.MemSlices
	}
	return n
}

// Sizes returns the compute-slice counts of l's instances, largest first:
// the form MISO and the MIG guide use to name a partition ("4-2-1").
func (l Layout) Sizes() []int {
	out := make([]int, len(l))
	for i, p := range l {
		out[i] = p.Profile.Compute
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// Equal reports whether l and o hold the same instances (profile names and
// starts), in any order.
func (l Layout) Equal(o Layout) bool {
	if len(l) != len(o) {
		return false
	}
	a, b := append(Layout(nil), l...), append(Layout(nil), o...)
	sortLayout(a)
	sortLayout(b)
	for i := range a {
		if a[i].Start != b[i].Start || a[i].Profile.Name != b[i].Profile.Name {
			return false
		}
	}
	return true
}

// ParseLayout reads a layout in the form Layout.String writes: instances
// separated by spaces or commas, each "profile@start" ("3g.20gb@4"). A
// token without "@start" is placed at its lowest legal start given the
// instances before it (CanAdd); the real driver may choose another start,
// so write starts where they matter. An empty or blank
// text is the empty layout. The result is sorted and validated.
func ParseLayout(s Spec, text string) (Layout, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\n' })
	var l Layout
	for i, tok := range fields {
		name, startText, hasStart := strings.Cut(tok, "@")
		p, err := s.Profile(name)
		if err != nil {
			return nil, fmt.Errorf("layout %q, instance %d (%q): %w", text, i+1, tok, err)
		}
		if !hasStart {
			start, ok := s.CanAdd(l, p)
			if !ok {
				return nil, fmt.Errorf("layout %q, instance %d (%q): no legal start for %s left after %q (free memory slots %v, compute slices used %d of %d)",
					text, i+1, tok, p.Name, l.String(), freeSlots(l), l.ComputeUsed(), MIGComputeSlices)
			}
			l = l.With(Placement{Profile: p, Start: start})
			continue
		}
		start, err := strconv.Atoi(startText)
		if err != nil {
			return nil, fmt.Errorf("layout %q, instance %d (%q): start %q is not an integer; want %s@N with N in %v", text, i+1, tok, startText, p.Name, p.Starts)
		}
		l = l.With(Placement{Profile: p, Start: start})
	}
	if err := s.Validate(l); err != nil {
		return nil, fmt.Errorf("layout %q: %w", text, err)
	}
	return l, nil
}

// freeSlots lists the memory slots no instance of l uses.
func freeSlots(l Layout) []int {
	var used [MIGMemorySlices]bool
	for _, p := range l {
		for m := p.Start; m < p.end() && m < MIGMemorySlices; m++ {
			if m >= 0 {
				used[m] = true
			}
		}
	}
	var out []int
	for m, u := range used {
		if !u {
			out = append(out, m)
		}
	}
	return out
}

// Validate checks that l can exist on the GPU: every profile belongs to the
// GPU, every instance starts at a legal slot, no two instances share a
// memory slice, at most MIGComputeSlices compute slices are in use, and no
// profile exceeds its max count. The error names the first offending
// instance and the rule it breaks.
func (s Spec) Validate(l Layout) error {
	if len(l) == 0 {
		return nil
	}
	if !s.MIG {
		return fmt.Errorf("gpu %s does not support MIG, so it cannot hold instance %s", s.Name, l[0])
	}
	var owner [MIGMemorySlices]int // index+1 of the instance using each slot
	count := map[string]int{}
	compute := 0
	for i, p := range l {
		want, err := s.Profile(p.Profile.Name)
		if err != nil {
			return fmt.Errorf("instance %d (%s): %w", i+1, p, err)
		}
		if want.Compute != p.Profile.Compute || want.MemSlices != p.Profile.MemSlices {
			return fmt.Errorf("instance %d (%s): profile shape %dc/%dm differs from gpu %s's %s (%dc/%dm)",
				i+1, p, p.Profile.Compute, p.Profile.MemSlices, s.Name, want.Name, want.Compute, want.MemSlices)
		}
		if !containsInt(want.Starts, p.Start) {
			return fmt.Errorf("instance %d (%s): start %d is not a legal start for %s; legal starts are %v",
				i+1, p, p.Start, want.Name, want.Starts)
		}
		for m := p.Start; m < p.Start+want.MemSlices; m++ {
			if o := owner[m]; o != 0 {
				return fmt.Errorf("instance %d (%s) overlaps instance %d (%s) in memory slice %d",
					i+1, p, o, l[o-1], m)
			}
			owner[m] = i + 1
		}
		compute += want.Compute
		if compute > MIGComputeSlices {
			return fmt.Errorf("instance %d (%s) brings compute slices in use to %d, more than the %d the gpu has (layout %q)",
				i+1, p, compute, MIGComputeSlices, l.String())
		}
		if s.MIGNo4g3g && (want.Compute == 3 || want.Compute == 4) {
			for j, q := range l[:i] {
				if c := q.Profile.Compute; (c == 3 || c == 4) && c != want.Compute {
					return fmt.Errorf("instance %d (%s) cannot share the gpu with instance %d (%s): a 4g and a 3g instance need driver R510 or later (MIGNo4g3g is set)",
						i+1, p, j+1, q)
				}
			}
		}
		count[want.Name]++
		if count[want.Name] > want.MaxCount {
			return fmt.Errorf("instance %d (%s) is %s number %d; at most %d fit on a %s",
				i+1, p, want.Name, count[want.Name], want.MaxCount, s.Name)
		}
	}
	return nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// CanAdd returns the first (lowest) legal start at which an instance of p
// can be added to the valid layout l, and false if there is none.
func (s Spec) CanAdd(l Layout, p MIGProfile) (start int, ok bool) {
	for _, st := range p.Starts {
		if s.Validate(l.With(Placement{Profile: p, Start: st})) == nil {
			return st, true
		}
	}
	return 0, false
}

// IsMaximal reports whether no instance of any profile can be added to l.
func (s Spec) IsMaximal(l Layout) bool {
	for _, p := range s.Profiles {
		if _, ok := s.CanAdd(l, p); ok {
			return false
		}
	}
	return true
}

// Layouts returns every legal non-empty layout of the GPU (nil when it has
// no MIG), or with maximal only those to which no instance can be added.
// The order is deterministic: depth-first over the candidate placements
// sorted by start then profile order, so a layout comes after its prefixes.
// The walk keeps the used memory slots as a bit mask rather than calling
// Validate at every step; the tests check each result with Validate.
func (s Spec) Layouts(maximal bool) []Layout {
	if !s.MIG {
		return nil
	}
	type cand struct {
		pl   Placement
		prof int   // index into s.Profiles
		mask uint8 // memory slots used
	}
	var cands []cand
	for i, p := range s.Profiles {
		for _, st := range p.Starts {
			if st < 0 || st+p.MemSlices > MIGMemorySlices {
				continue // cannot be placed; Validate would reject it too
			}
			mask := uint8((1<<p.MemSlices - 1) << st)
			cands = append(cands, cand{Placement{Profile: p, Start: st}, i, mask})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].pl.Start < cands[j].pl.Start })
	var (
		used    uint8
		compute int
		counts  = make([]int, len(s.Profiles))
		big     [5]int // instances with 3 and 4 compute slices, for MIGNo4g3g
		cur     Layout
		out     []Layout
	)
	fits := func(c cand) bool {
		p := c.pl.Profile
		if used&c.mask != 0 || compute+p.Compute > MIGComputeSlices || counts[c.prof] >= p.MaxCount {
			return false
		}
		if s.MIGNo4g3g && (p.Compute == 3 && big[4] > 0 || p.Compute == 4 && big[3] > 0) {
			return false
		}
		return true
	}
	var walk func(from int)
	walk = func(from int) {
		for i := from; i < len(cands); i++ {
			c := cands[i]
			if !fits(c) {
				continue
			}
			p := c.pl.Profile
			used |= c.mask
			compute += p.Compute
			counts[c.prof]++
			if p.Compute == 3 || p.Compute == 4 {
				big[p.Compute]++
			}
			cur = append(cur, c.pl)
			full := true
			if maximal {
				for _, d := range cands {
					if fits(d) {
						full = false
						break
					}
				}
			}
			if full {
				out = append(out, append(Layout(nil), cur...))
			}
			walk(i + 1)
			cur = cur[:len(cur)-1]
			if p.Compute == 3 || p.Compute == 4 {
				big[p.Compute]--
			}
			counts[c.prof]--
			compute -= p.Compute
			used &^= c.mask
		}
	}
	walk(0)
	return out
}

// ReconfigPlan returns the instances to destroy and to create to go from
// layout from to layout to; unchanged instances (same profile and start)
// keep running. Destroying first and then creating passes only through
// legal layouts: after the destroys what is left is a subset of to. The
// reconfiguration takes (len(destroy)+len(create)) x DefaultMIGReconfigTime
// when done one operation at a time.
func ReconfigPlan(from, to Layout) (destroy, create []Placement) {
	for _, p := range from {
		if !layoutHas(to, p) {
			destroy = append(destroy, p)
		}
	}
	for _, p := range to {
		if !layoutHas(from, p) {
			create = append(create, p)
		}
	}
	return destroy, create
}

func layoutHas(l Layout, p Placement) bool {
	for _, q := range l {
		if q.Start == p.Start && q.Profile.Name == p.Profile.Name {
			return true
		}
	}
	return false
}

package mig

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestLayoutCounts checks the enumeration against counts derived by hand.
//
// Derivation. Slots 0-3 (left half) and 4-7 (right half) never share an
// instance except 7g. The left half holds at most 4 compute slices and the
// right half at most 3 (slot 7 starts nothing; it is only the second slice
// of 1g.10gb@6, 3g@4 or 7g), so the compute limit of 7 and every max count
// (1g.5gb 7, 1g.10gb 4, 2g 3, 3g 2) never bind: the halves are independent.
//
// All layouts, full profile set. A pair of slots (0-1, 2-3, 4-5) holds one
// of {nothing, 1g.5gb at either slot, both, 2g, 1g.10gb} = 6 options; pair
// 6-7 holds {nothing, 1g.5gb@6, 1g.10gb@6} = 3. Left: 6*6 + 4g@0 + 3g@0 =
// 38. Right: 6*3 + 3g@4 = 19. 38*19 = 722 combinations, minus the empty one,
// plus 7g = 722.
//
// Maximal, full set: a layout is maximal iff slots 0-6 are all used (a free
// slot <= 6 admits a 1g.5gb, and compute 7 needs both halves densely full).
// Full-cover options per pair: {1g+1g, 2g, 1g.10gb} = 3; pair 6-7: 2
// (1g.5gb@6 or 1g.10gb@6). Left: 3*3 + 4g + 3g = 11. Right: 3*2 + 3g = 7.
// 11*7 + 7g = 78.
//
// Classic set without 1g.10gb (MIG guide figure, MISO): pair options 5 and
// 2 (all), 2 and 1 (maximal). All: (5*5+2)*(5*2+1) = 27*11 = 297. Maximal:
// (2*2+2)*(2*1+1) + 1 = 19, the guide's 19 A100 configurations. Without
// 4g+3g (before R510): 18.
func TestLayoutCounts(t *testing.T) {
	classic := func(g *Geometry, no4g3g bool) *Geometry {
		var keep []string
		for _, p := range g.Profiles {
			if p.ID != 15 { // 1g.10gb on 40 GB, 1g.20gb on 80 GB parts
				keep = append(keep, p.Name)
			}
		}
		r, err := g.Restrict(keep...)
		if err != nil {
			t.Fatal(err)
		}
		r.No4g3g = no4g3g
		return r
	}
	tests := []struct {
		name         string
		spec         *Geometry
		all, maximal int
	}{
		{"a100-40gb", a100(), 722, 78},
		{"a100-80gb", a100_80(), 722, 78},
		{"h200-141gb", h200(), 722, 78},
		{"a100-40gb classic", classic(a100(), false), 297, 19},
		// Before R510: 4g only starts at 0, so a 3g beside it sits at 4;
		// 4g@0+3g@4 is the one layout lost, from all (297-1) and from the
		// maximal ones (19-1; 4g@0 with an empty right half was never
		// maximal and still is not, as 2g@4 fits).
		{"a100-40gb classic pre-R510", classic(a100(), true), 296, 18},
		// A30: 4 slots in two pairs; a pair holds {nothing, 1g at either
		// slot, both, 2g} = 5 options; 5*5 + 4g = 26, minus the empty one
		// = 25 layouts. Maximal: every slot used: 2 options per pair, 2*2
		// + 4g = 5. No compute or count limit binds (4 slices, 4 slots).
		{"a30-24gb", a30(), 25, 5},
	}
	for _, tc := range tests {
		all, max := tc.spec.Layouts(false), tc.spec.Layouts(true)
		if len(all) != tc.all || len(max) != tc.maximal {
			t.Errorf("%s: %d layouts, %d maximal; want %d, %d", tc.name, len(all), len(max), tc.all, tc.maximal)
		}
		seen := map[string]bool{}
		for _, l := range all {
			if err := tc.spec.Validate(l); err != nil {
				t.Errorf("%s: enumerated layout %q invalid: %v", tc.name, l, err)
			}
			if seen[l.String()] {
				t.Errorf("%s: layout %q enumerated twice", tc.name, l)
			}
			seen[l.String()] = true
		}
		for _, l := range max {
			if !seen[l.String()] {
				t.Errorf("%s: maximal layout %q missing from all layouts", tc.name, l)
			}
			// Second check of maximality, independent of IsMaximal: try
			// every profile at every start.
			for _, p := range tc.spec.Profiles {
				for _, st := range p.Starts {
					if tc.spec.Validate(l.With(Instance{p.Name, st})) == nil {
						t.Errorf("%s: %q called maximal but %s@%d fits", tc.name, l, p.Name, st)
					}
				}
			}
		}
	}
}

// TestGuideLayouts checks the example layouts of the MIG user guide
// (hardware.md 6c) and the placement subtleties of 7 compute vs 8 memory
// slices.
func TestGuideLayouts(t *testing.T) {
	s := a100()
	tests := []struct {
		text    string
		sizes   []int // compute sizes, largest first
		maximal bool
	}{
		{"1g.5gb@0 1g.5gb@1 2g.10gb@2 3g.20gb@4", []int{3, 2, 1, 1}, true},                        // guide 3-2-1-1
		{"1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 2g.10gb@4 1g.5gb@6", []int{2, 1, 1, 1, 1, 1}, true}, // guide 2-1-1-1-1-1
		{"4g.20gb@0 3g.20gb@4", []int{4, 3}, true},                                                // R510 and later
		{"3g.20gb@0 3g.20gb@4", []int{3, 3}, true},
		{"1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6", []int{1, 1, 1, 1, 1, 1, 1}, true},
		{"7g.40gb@0", []int{7}, true},
		{"1g.10gb@6 1g.10gb@0", []int{1, 1}, false}, // unsorted input is sorted; slots 2-5 free
	}
	for _, tc := range tests {
		l := mustParse(t, s, tc.text)
		if !reflect.DeepEqual(s.Sizes(l), tc.sizes) {
			t.Errorf("%q sizes %v, want %v", tc.text, s.Sizes(l), tc.sizes)
		}
		if s.IsMaximal(l) != tc.maximal {
			t.Errorf("%q maximal = %v", tc.text, s.IsMaximal(l))
		}
	}
	// 1g.5gb cannot start at 7 even though memory slot 7 exists.
	if _, ok := s.CanAdd(mustParse(t, s, "1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6"), "1g.5gb"); ok {
		t.Error("an eighth 1g.5gb was accepted")
	}
	if err := s.Validate(Layout{{"1g.5gb", 7}}); err == nil {
		t.Error("1g.5gb@7 accepted")
	}
}

// TestValidateErrors checks that each broken rule is reported with the
// offending instance and the reason.
func TestValidateErrors(t *testing.T) {
	s := a100()
	pre := s.Clone()
	pre.No4g3g = true
	tests := []struct {
		name string
		spec *Geometry
		l    Layout
		want []string // substrings of the error
	}{
		{"bad start", s, Layout{{"2g.10gb", 1}}, []string{"instance 1 (2g.10gb@1)", "legal starts are [0 2 4]"}},
		{"3g at 2", s, Layout{{"3g.20gb", 2}}, []string{"3g.20gb@2", "[0 4]"}},
		{"overlap", s, Layout{{"4g.20gb", 0}, {"1g.5gb", 3}}, []string{"instance 2 (1g.5gb@3) overlaps instance 1 (4g.20gb@0) in memory slice 3"}},
		{"7g plus", s, Layout{{"7g.40gb", 0}, {"1g.5gb", 6}}, []string{"overlaps", "memory slice 6"}},
		// Compute overflow and max counts cannot be reached with the
		// catalog's placements (see TestLayoutCounts); TestValidateLimits
		// covers them with a made-up profile.
		{"overlap at equal starts", s, Layout{{"2g.10gb", 0}, {"2g.10gb", 2}, {"2g.10gb", 4}, {"2g.10gb", 4}}, []string{"instance 4", "overlaps"}},
		{"other gpu's profile", s, Layout{{"1g.20gb", 0}}, []string{"1g.20gb@0", `no MIG profile "1g.20gb"`, "1g.5gb, 1g.10gb"}},
		{"A30 profile on an A100", s, Layout{{"2g.12gb", 0}}, []string{`no MIG profile "2g.12gb"`}},
		{"A30 past its 4 slots", a30(), Layout{{"1g.6gb", 4}}, []string{"legal starts are [0 1 2 3]"}},
		{"pre-R510", pre, Layout{{"4g.20gb", 0}, {"3g.20gb", 4}}, []string{"instance 2 (3g.20gb@4)", "instance 1 (4g.20gb@0)", "R510"}},
	}
	for _, tc := range tests {
		err := tc.spec.Validate(tc.l)
		if err == nil {
			t.Errorf("%s: %q accepted", tc.name, tc.l)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// TestValidateLimits reaches the compute and max-count rules, which the
// catalog's placements make unreachable (see TestLayoutCounts), through a
// spec with a made-up profile placed anywhere.
func TestValidateLimits(t *testing.T) {
	wide := Profile{Name: "2g.5gb", Compute: 2, MemSlices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6, 7}, MaxCount: 2}
	s := &Geometry{Model: "test", ComputeSlices: 7, MemorySlices: 8, Profiles: []Profile{wide}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	w := func(start int) Instance { return Instance{"2g.5gb", start} }
	// 2+2 = 4 compute: fine; a third instance breaks max count 2.
	if err := s.Validate(Layout{w(0), w(1)}); err != nil {
		t.Fatal(err)
	}
	err := s.Validate(Layout{w(0), w(1), w(2)})
	if err == nil || !strings.Contains(err.Error(), "2g.5gb number 3; at most 2") {
		t.Errorf("max count: %v", err)
	}
	s.Profiles[0].MaxCount = 8
	// 4 instances x 2 = 8 > 7 compute slices: the fourth is reported.
	err = s.Validate(Layout{w(0), w(1), w(2), w(3)})
	if err == nil || !strings.Contains(err.Error(), "instance 4 (2g.5gb@3) brings compute slices in use to 8, more than the 7 a test has") {
		t.Errorf("compute: %v", err)
	}
}

// TestParseRoundTrip parses the String of every layout of every MIG GPU.
func TestParseRoundTrip(t *testing.T) {
	for _, s := range []*Geometry{a100(), a100_80(), h200(), a30()} {
		g := s.Model
		for _, l := range s.Layouts(false) {
			back, err := s.Parse(l.String())
			if err != nil {
				t.Fatalf("%s: %q: %v", g, l, err)
			}
			if !reflect.DeepEqual(back, l) || back.String() != l.String() {
				t.Fatalf("%s: round trip %q -> %q", g, l, back)
			}
		}
	}
	s := a100()
	if l := mustParse(t, s, "  "); len(l) != 0 || l.String() != "" {
		t.Errorf("blank parsed to %q", l)
	}
	// Auto-placement: lowest legal start, in token order. 3g first goes to
	// 0, then 2g to 4 (0-3 taken), then 1g.5gb to 6.
	if got := mustParse(t, s, "3g.20gb,2g.10gb 1g.5gb").String(); got != "3g.20gb@0 2g.10gb@4 1g.5gb@6" {
		t.Errorf("auto placement = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	s := a100()
	tests := []struct{ text, want string }{
		{"3g.20gb@x", `start "x" is not an integer; want 3g.20gb@N with N in [0 4]`},
		{"9g.40gb@0", `instance 1 ("9g.40gb@0")`},
		{"1g.5gb@0 5g@0", `instance 2 ("5g@0"): gpu a100-40gb has no MIG profile "5g"`},
		{"3g.20gb@0 3g.20gb@4 3g.20gb", "no legal start for 3g.20gb left after \"3g.20gb@0 3g.20gb@4\" (free memory slots [], compute slices used 6 of 7)"},
		{"4g.20gb@0 4g.20gb@0", "overlaps"},
		{"2g.10gb@6", "legal starts are [0 2 4]"},
		{"1g.5gb@-1", "legal starts are [0 1 2 3 4 5 6]"},
	}
	for _, tc := range tests {
		_, err := s.Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
}

func FuzzParseLayout(f *testing.F) {
	for _, seed := range []string{"", "4g.20gb@0 3g.20gb@4", "1g.5gb@0,1g.5gb@1", "3g.20gb 3g.20gb", "7g.40gb@0",
		"1g.10gb@6 2g.10gb@99999999999999999999", "@", "1g.5gb@", "@3", "1g.5gb@-0", "2g.10gb@+2", "\x00@\xff"} {
		f.Add(seed)
	}
	s := a100()
	f.Fuzz(func(t *testing.T, text string) {
		l, err := s.Parse(text)
		if err != nil {
			return
		}
		if err := s.Validate(l); err != nil {
			t.Fatalf("Parse(%q) returned invalid %q: %v", text, l, err)
		}
		back, err := s.Parse(l.String())
		if err != nil || back.String() != l.String() {
			t.Fatalf("round trip of %q: %q, %v", l, back, err)
		}
	})
}

func TestCanAddAndReconfig(t *testing.T) {
	s := a100()
	tests := []struct {
		layout, add string
		start       int
		ok          bool
	}{
		{"", "3g.20gb", 0, true},
		{"3g.20gb@0", "3g.20gb", 4, true},
		{"1g.5gb@0", "3g.20gb", 4, true},
		{"1g.5gb@0", "4g.20gb", 0, false},
		{"1g.5gb@0 1g.5gb@4", "2g.10gb", 2, true},
		{"4g.20gb@0 2g.10gb@4", "1g.10gb", 6, true},
		{"4g.20gb@0 2g.10gb@4 1g.5gb@6", "1g.5gb", 0, false},            // compute 7 used
		{"1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.10gb@6", "1g.5gb", 0, false}, // memory full, compute 4
	}
	for _, tc := range tests {
		st, ok := s.CanAdd(mustParse(t, s, tc.layout), tc.add)
		if st != tc.start || ok != tc.ok {
			t.Errorf("CanAdd(%q, %s) = %d, %v; want %d, %v", tc.layout, tc.add, st, ok, tc.start, tc.ok)
		}
	}

	// 4g+3g -> 4g+2g+1g: destroy 3g@4, create 2g@4 and 1g@6, keep 4g@0.
	d, c := ReconfigPlan(mustParse(t, s, "4g.20gb@0 3g.20gb@4"), mustParse(t, s, "4g.20gb@0 2g.10gb@4 1g.5gb@6"))
	if fmt.Sprint(d, c) != "[3g.20gb@4] [2g.10gb@4 1g.5gb@6]" {
		t.Errorf("plan = %v %v", d, c)
	}
	if DefaultReconfigTime.Seconds() != 2 {
		t.Errorf("DefaultReconfigTime = %v, want 2s (hardware.md 6d)", DefaultReconfigTime)
	}
	// Property over many pairs of maximal layouts: doing the destroys then
	// the creates one at a time passes only through valid layouts and ends
	// at the target.
	max := s.Layouts(true)
	for i := 0; i < len(max); i += 3 {
		for j := 0; j < len(max); j += 5 {
			from, to := max[i], max[j]
			d, c := ReconfigPlan(from, to)
			cur := from
			for _, p := range d {
				var ok bool
				if cur, ok = cur.Without(p); !ok {
					t.Fatalf("%q -> %q: destroy %s not present", from, to, p)
				}
			}
			for _, p := range c {
				cur = cur.With(p)
				if err := s.Validate(cur); err != nil {
					t.Fatalf("%q -> %q: creating %s gives invalid %q: %v", from, to, p, cur, err)
				}
			}
			if !cur.Equal(to) {
				t.Fatalf("%q -> %q ended at %q", from, to, cur)
			}
		}
	}
}

// TestMISOPartitions relates MISO's 18 A100-40GB partitions
// (boringlee24/socc22-miso mps/scheduler/partition_code.json) to the
// enumeration. MISO lists compute sizes in an order that is not the memory
// order (e.g. [2,1,4] although 4g must start at 0), so the lists are
// compared as multisets. Findings: every MISO partition is realisable; the
// set of distinct MISO multisets (13) equals the multisets of the maximal
// layouts of the classic profile set (no 1g.10gb) under the pre-R510 rule
// (no 4g with 3g); with R510 rules the enumeration adds only {4,3}.
// Positionally there are 18 such layouts, as MISO has 18 entries, but
// MISO's multiplicities differ: 4 lists of {2,1,1,1,1,1} (the memory
// layout allows 3: 2g at 0, 2 or 4) and 2 of {2,2,1,1,1} (allows 3).
func TestMISOPartitions(t *testing.T) {
	path := sharedPath(t, "profiles/miso-a100-mig/mps/scheduler/partition_code.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var parts map[string][]int
	if err := json.Unmarshal(raw, &parts); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(parts) != 18 {
		t.Fatalf("%s: %d partitions, want 18", path, len(parts))
	}
	key := func(sizes []int) string {
		c := append([]int(nil), sizes...)
		sort.Sort(sort.Reverse(sort.IntSlice(c)))
		return fmt.Sprint(c)
	}
	s := a100()
	classic, err := s.Restrict("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	pre := classic.Clone()
	pre.No4g3g = true

	realisable := map[string]bool{}
	for _, l := range s.Layouts(false) {
		realisable[key(s.Sizes(l))] = true
	}
	misoSet := map[string]int{}
	for id, sizes := range parts {
		k := key(sizes)
		if !realisable[k] {
			t.Errorf("MISO partition %s %v is not realisable on an A100-40GB", id, sizes)
		}
		misoSet[k]++
	}
	maxSet := func(sp *Geometry) (map[string]int, int) {
		m := map[string]int{}
		ls := sp.Layouts(true)
		for _, l := range ls {
			m[key(sp.Sizes(l))]++
		}
		return m, len(ls)
	}
	preSet, preN := maxSet(pre)
	r510Set, _ := maxSet(classic)
	if len(misoSet) != 13 || !sameKeys(misoSet, preSet) || preN != 18 {
		t.Errorf("MISO multisets %v (%d) vs pre-R510 classic maximal %v (%d layouts)", misoSet, len(misoSet), preSet, preN)
	}
	delete(r510Set, "[4 3]")
	if !sameKeys(r510Set, preSet) {
		t.Errorf("R510 maximal minus {4,3} = %v, want %v", r510Set, preSet)
	}
	if misoSet["[2 1 1 1 1 1]"] != 4 || preSet["[2 1 1 1 1 1]"] != 3 || misoSet["[2 2 1 1 1]"] != 2 || preSet["[2 2 1 1 1]"] != 3 {
		t.Errorf("multiplicities: MISO %v, layouts %v", misoSet, preSet)
	}
}

func sameKeys(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func BenchmarkLayouts(b *testing.B) {
	s := a100()
	for _, maximal := range []bool{false, true} {
		b.Run(fmt.Sprintf("maximal=%v", maximal), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n := len(s.Layouts(maximal)); n == 0 {
					b.Fatal("no layouts")
				}
			}
		})
	}
}

// TestOccupancyAgreesWithValidate checks the incremental rules (Fits, Add,
// Remove, AppendStarts) against Validate, the whole-layout rules, on every
// layout of every geometry and every profile at every start: a second
// implementation of the same facts.
func TestOccupancyAgreesWithValidate(t *testing.T) {
	pre, err := a100().Restrict("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	pre.No4g3g = true
	for _, g := range []*Geometry{a100(), h200(), a30(), pre} {
		layouts := append([]Layout{nil}, g.Layouts(false)...)
		for _, l := range layouts {
			var o Occupancy
			for _, in := range l {
				p, _ := g.Profile(in.Profile)
				o.Add(g, p, in.Start)
			}
			for k := range g.Profiles {
				p := &g.Profiles[k]
				starts := g.AppendStarts(nil, &o, p)
				for _, st := range p.Starts {
					want := g.Validate(l.With(Instance{p.Name, st})) == nil
					if got := g.Fits(&o, p, st); got != want {
						t.Fatalf("%s: Fits(%q + %s@%d) = %v, Validate says %v", g.Model, l, p.Name, st, got, want)
					}
					if slices.Contains(starts, st) != want {
						t.Fatalf("%s: AppendStarts(%q, %s) = %v, disagrees at %d", g.Model, l, p.Name, starts, st)
					}
				}
			}
			// Removing everything returns to the empty GPU.
			for _, in := range l {
				p, _ := g.Profile(in.Profile)
				o.Remove(g, p, in.Start)
			}
			if o != (Occupancy{}) {
				t.Fatalf("%s: %q added and removed leaves %+v", g.Model, l, o)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, g := range []*Geometry{a100(), a100_80(), h200(), a30()} {
		if err := g.Check(); err != nil {
			t.Errorf("%s: %v", g.Model, err)
		}
	}
	tests := []struct {
		name string
		g    Geometry
		want string
	}{
		{"no slices", Geometry{Model: "x"}, "0 compute and 0 memory slices"},
		{"too many", Geometry{Model: "x", ComputeSlices: 65, MemorySlices: 8}, "want both in 1..64"},
		{"past end", Geometry{Model: "x", ComputeSlices: 4, MemorySlices: 4, Profiles: []Profile{{Name: "2g", Compute: 2, MemSlices: 2, Starts: []int{0, 3}}}}, "start 3 runs past memory slice 3"},
		{"duplicate", Geometry{Model: "x", ComputeSlices: 4, MemorySlices: 4, Profiles: []Profile{{Name: "1g", Compute: 1, MemSlices: 1, Starts: []int{0}}, {Name: "1g", Compute: 1, MemSlices: 1, Starts: []int{1}}}}, `duplicate profile name "1g"`},
		{"too big", Geometry{Model: "x", ComputeSlices: 4, MemorySlices: 4, Profiles: []Profile{{Name: "5g", Compute: 5, MemSlices: 4, Starts: []int{0}}}}, "want 1..4 and 1..4"},
		{"unsorted", Geometry{Model: "x", ComputeSlices: 4, MemorySlices: 4, Profiles: []Profile{{Name: "1g", Compute: 1, MemSlices: 1, Starts: []int{2, 0}}}}, "not ascending"},
		{"no start", Geometry{Model: "x", ComputeSlices: 4, MemorySlices: 4, Profiles: []Profile{{Name: "1g", Compute: 1, MemSlices: 1}}}, "no legal start"},
	}
	for _, tc := range tests {
		err := tc.g.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestShareAndCovers(t *testing.T) {
	g, a := a100(), a30()
	p3, _ := g.Profile("3g.20gb")
	q2, _ := a.Profile("2g.12gb")
	if g.Share(p3) != 3.0/7 || a.Share(q2) != 0.5 {
		t.Errorf("shares %v %v, want 3/7 and 1/2", g.Share(p3), a.Share(q2))
	}
	// 3g.20gb: 3/7 compute, 4/8 memory; covers a 0.4 share, not 0.45.
	if !g.Covers(p3, 0.4) || g.Covers(p3, 0.45) || !a.Covers(q2, 0.5) || a.Covers(q2, 0.51) {
		t.Error("Covers disagrees with min(compute, memory) share")
	}
}

// TestOpenness counts by hand on an empty A100-40GB. A 1g.5gb at 6 uses
// slot 6 and leaves 6 compute slices: 1g.5gb 0-5 (6), 1g.10gb 0,2,4 (3),
// 2g 0,2,4 (3), 3g 0 (1), 4g 0 (1), 7g none: 14. At 0: 1g.5gb 1-6 (6),
// 1g.10gb 2,4,6 (3), 2g 2,4 (2), 3g 4 (1), 4g and 7g none: 12.
func TestOpenness(t *testing.T) {
	g := a100()
	p, _ := g.Profile("1g.5gb")
	if at6, at0 := g.Openness(Occupancy{}, p, 6), g.Openness(Occupancy{}, p, 0); at6 != 14 || at0 != 12 {
		t.Errorf("openness after 1g.5gb@6 = %d, @0 = %d; want 14 and 12", at6, at0)
	}
}

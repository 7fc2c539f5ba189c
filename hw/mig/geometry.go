package mig

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
)

// DefaultReconfigTime is the time to create or destroy one MIG GPU
// instance (one `nvidia-smi mig -cgi` or `-dgi` operation). Grade E: no
// driver-level measurement was found (hardware.md 6d, 9.4); the debug log in
// NVIDIA/mig-parted issue #357 shows about 2 s per step, and the k8s GPU
// operator's 113 s full-template figure is dominated by pod and plugin
// restarts, which this simulator models elsewhere. Other instances keep
// running during the operation (NVIDIA/k8s-device-plugin #992); only the
// instance being destroyed must be idle.
const DefaultReconfigTime = 2 * engine.Second

// MaxSlices bounds the compute and memory slices of a geometry: layouts
// keep their used memory slices in one uint64.
const MaxSlices = 64

// MaxProfiles bounds the profiles of a geometry, so that an Occupancy
// counts instances per profile in a fixed array and copies cheaply.
const MaxProfiles = 16

// Profile is one GPU-instance profile of a MIG-capable GPU model.
type Profile struct {
	Name        string // e.g. "3g.20gb"
	ID          int    // GPU-instance profile ID as `nvidia-smi mig -lgip` prints it; -1 when unknown
	Compute     int    // compute (SM) slices, of Geometry.ComputeSlices
	MemSlices   int    // consecutive memory slices, of Geometry.MemorySlices
	MemoryBytes int64  // nominal: MemSlices/MemorySlices of the GPU's memory
	Starts      []int  // legal first memory slice, ascending (`nvidia-smi mig -lgipp`)
	MaxCount    int    // most instances of this profile on one GPU; 0 = no limit beyond the slices
	// SMs are the streaming multiprocessors an instance gets, as
	// `nvidia-smi mig -lgip` prints them; 0 where the device was never
	// asked (the guide's tables print no SM counts).
	SMs int
}

// Geometry is the MIG partitioning of one GPU model. A *Geometry handed
// out by the catalog is shared: treat it as read-only (Clone to change it).
type Geometry struct {
	Model         string    // GPU model name, for messages
	ComputeSlices int       // 7 on A100/H100/H200/B200, 4 on A30
	MemorySlices  int       // 8 on A100/H100/H200/B200, 4 on A30
	MemoryBytes   int64     // the GPU's memory
	Profiles      []Profile // smallest first
	// No4g3g forbids a 4g and a 3g instance on the same GPU, as drivers
	// before R510 did (MIG guide: "since R510, a (4 memory, 4 compute) and a
	// (4 memory, 3 compute) profile can be combined"). The catalog leaves it
	// false; set it to reproduce papers that used older drivers (MISO).
	No4g3g bool
	// SMs are the streaming multiprocessors of the instance that spans
	// the whole GPU (the 7g profile), the denominator of SMShare; 0 where
	// unknown.
	SMs    int
	Source string // citations and grades of the geometry
}

// Profile returns the profile called name. The pointer is into g: do not
// change it. Policies call this in their inner loops, so it compares the
// length and first byte before the whole string.
func (g *Geometry) Profile(name string) (*Profile, bool) {
	for i := range g.Profiles {
		p := &g.Profiles[i]
		if len(p.Name) == len(name) && len(name) > 0 && p.Name[0] == name[0] && p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// Lookup is Profile with an error that names the model and lists its
// profiles, for user input.
func (g *Geometry) Lookup(name string) (*Profile, error) {
	if p, ok := g.Profile(name); ok {
		return p, nil
	}
	return nil, fmt.Errorf("gpu %s has no MIG profile %q; its profiles are %s", g.Model, name, strings.Join(g.ProfileNames(), ", "))
}

// ProfileNames lists the names of the profiles, in g's order.
func (g *Geometry) ProfileNames() []string {
	out := make([]string, len(g.Profiles))
	for i, p := range g.Profiles {
		out[i] = p.Name
	}
	return out
}

// Share returns the part of the whole GPU that an instance of p is counted
// as: its compute slices over the GPU's.
func (g *Geometry) Share(p *Profile) float64 {
	return float64(p.Compute) / float64(g.ComputeSlices)
}

// Covers reports whether an instance of p gives at least share (0..1) of
// the GPU in both compute and memory: the rule by which a job that asks for
// a fraction of a GPU may run on that instance.
func (g *Geometry) Covers(p *Profile, share float64) bool {
	const slack = 1e-9
	return float64(p.Compute)/float64(g.ComputeSlices) >= share-slack &&
		float64(p.MemSlices)/float64(g.MemorySlices) >= share-slack
}

// Mask returns the memory slices an instance of p at start uses, bit i for
// slice i.
func Mask(p *Profile, start int) uint64 {
	return ((uint64(1) << p.MemSlices) - 1) << start
}

// Check reports every way g is malformed: slice counts out of 1..MaxSlices,
// more than MaxProfiles profiles, empty or duplicate profile names,
// profiles larger than the GPU, starts that run past the last memory slice
// or are not ascending, negative maximum counts.
func (g *Geometry) Check() error {
	var errs []error
	if g.ComputeSlices < 1 || g.ComputeSlices > MaxSlices || g.MemorySlices < 1 || g.MemorySlices > MaxSlices {
		return fmt.Errorf("MIG geometry of %q: %d compute and %d memory slices; want both in 1..%d", g.Model, g.ComputeSlices, g.MemorySlices, MaxSlices)
	}
	if len(g.Profiles) > MaxProfiles {
		errs = append(errs, fmt.Errorf("MIG geometry of %q: %d profiles; at most %d", g.Model, len(g.Profiles), MaxProfiles))
	}
	seen := map[string]bool{}
	for _, p := range g.Profiles {
		if p.Name == "" || seen[p.Name] {
			errs = append(errs, fmt.Errorf("MIG geometry of %q: empty or duplicate profile name %q", g.Model, p.Name))
		}
		seen[p.Name] = true
		if p.Compute < 1 || p.Compute > g.ComputeSlices || p.MemSlices < 1 || p.MemSlices > g.MemorySlices {
			errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: %d compute, %d memory slices; want 1..%d and 1..%d",
				g.Model, p.Name, p.Compute, p.MemSlices, g.ComputeSlices, g.MemorySlices))
			continue
		}
		if len(p.Starts) == 0 {
			errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: no legal start", g.Model, p.Name))
		}
		for k, st := range p.Starts {
			if st < 0 || st+p.MemSlices > g.MemorySlices {
				errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: start %d runs past memory slice %d", g.Model, p.Name, st, g.MemorySlices-1))
			}
			if k > 0 && st <= p.Starts[k-1] {
				errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: starts %v are not ascending", g.Model, p.Name, p.Starts))
				break
			}
		}
		if p.MaxCount < 0 {
			errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: max count %d; want >= 0", g.Model, p.Name, p.MaxCount))
		}
		if p.SMs < 0 || (g.SMs > 0 && p.SMs > g.SMs) || (g.SMs == 0 && p.SMs > 0) {
			errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: %d SMs; want 0 (unknown) or 1..%d, the whole GPU's (sms)", g.Model, p.Name, p.SMs, g.SMs))
		}
		if p.MemoryBytes < 0 {
			errs = append(errs, fmt.Errorf("MIG geometry of %q, profile %q: memory %d bytes; want >= 0", g.Model, p.Name, p.MemoryBytes))
		}
	}
	return errors.Join(errs...)
}

// Clone returns a deep copy of g.
func (g *Geometry) Clone() *Geometry {
	if g == nil {
		return nil
	}
	c := *g
	c.Profiles = make([]Profile, len(g.Profiles))
	for i, p := range g.Profiles {
		p.Starts = slices.Clone(p.Starts)
		c.Profiles[i] = p
	}
	return &c
}

// Restrict returns a copy of g that offers only the named profiles, in g's
// order, for schedulers that use a subset (MISO uses no 1g.10gb). An
// unknown name is an error that lists g's profiles.
func (g *Geometry) Restrict(names ...string) (*Geometry, error) {
	for _, n := range names {
		if _, err := g.Lookup(n); err != nil {
			return nil, err
		}
	}
	c := g.Clone()
	c.Profiles = slices.DeleteFunc(c.Profiles, func(p Profile) bool { return !slices.Contains(names, p.Name) })
	return c, nil
}

// shape is a profile of a family before the GPU's memory names it.
type shape struct {
	id, compute, memSlices int
	starts                 []int
	maxCount               int
}

// sevenSlice are the profile shapes of the A100 and every later part with 7
// compute and 8 memory slices, smallest first: 1g with one memory slice, 1g
// with two, 2g, 3g, 4g, 7g. IDs, compute, memory fractions and max counts:
// V, MIG guide v580 supported-mig-profiles tables (A100, H100, H200, B200
// share them). Starts: V, `nvidia-smi mig -lgipp` of the guide's
// getting-started example (A100), hardware.md 6c; the same list is
// published for H100 NVL (hardware.md 6c); for H200 and B200 it is D (the
// guide gives the same slice counts and profile table, and no other
// placement list). The guide's A100-40GB table prints a memory fraction of
// 1/8 for 1g.10gb (ID 15) but its placements use size 2, which matches the
// name (10 GB = 2 x 5 GB); we follow the placements. The "+me" profiles
// (one per GPU, 1g with the media engines) are left out: they place like
// the plain 1g and nothing here uses media engines.
var sevenSlice = [6]shape{
	{id: 19, compute: 1, memSlices: 1, starts: []int{0, 1, 2, 3, 4, 5, 6}, maxCount: 7},
	{id: 15, compute: 1, memSlices: 2, starts: []int{0, 2, 4, 6}, maxCount: 4},
	{id: 14, compute: 2, memSlices: 2, starts: []int{0, 2, 4}, maxCount: 3},
	{id: 9, compute: 3, memSlices: 4, starts: []int{0, 4}, maxCount: 2},
	{id: 5, compute: 4, memSlices: 4, starts: []int{0}, maxCount: 1},
	{id: 0, compute: 7, memSlices: 8, starts: []int{0}, maxCount: 1},
}

// fourSlice are the A30's profile shapes: 1g.6gb, 2g.12gb, 4g.24gb. Compute
// and memory fractions (1/4, 2/4, full) and counts (4, 2, 1): V, MIG guide
// v580 A30 table; starts {0..3}, {0,2}, {0}: A, NVIDIA/go-nvml mock of the
// A30 (pkg/nvml/mock/shared/gpus/a30.go), consistent with the design card's
// "start 0-3, 0/2, 0". IDs 14, 5, 0: E, as `nvidia-smi mig -lgip` prints
// them on an A30 in NVIDIA's A30 MIG blog, recalled, not checked here.
var fourSlice = [3]shape{
	{id: 14, compute: 1, memSlices: 1, starts: []int{0, 1, 2, 3}, maxCount: 4},
	{id: 5, compute: 2, memSlices: 2, starts: []int{0, 2}, maxCount: 2},
	{id: 0, compute: 4, memSlices: 4, starts: []int{0}, maxCount: 1},
}

func build(model string, compute, memory int, memBytes int64, names []string, shapes []shape, source string) *Geometry {
	g := &Geometry{Model: model, ComputeSlices: compute, MemorySlices: memory, MemoryBytes: memBytes, Source: source}
	for i, sh := range shapes {
		g.Profiles = append(g.Profiles, Profile{
			Name: names[i], ID: sh.id, Compute: sh.compute, MemSlices: sh.memSlices,
			MemoryBytes: memBytes / int64(memory) * int64(sh.memSlices),
			Starts:      slices.Clone(sh.starts), MaxCount: sh.maxCount,
		})
	}
	if err := g.Check(); err != nil {
		panic(fmt.Sprintf("mig: built-in geometry of %s: %v", model, err)) // a table typo; TestCatalogGeometries catches it
	}
	return g
}

// SevenSlice returns the geometry of a part with 7 compute and 8 memory
// slices (A100, H100, H200, B200) and memBytes of memory. names are its
// profile names in the order 1g (one memory slice), 1g (two), 2g, 3g, 4g,
// 7g, as the MIG guide's table for that part prints them ("1g.18gb",
// "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb" on an H200).
func SevenSlice(model string, memBytes int64, names [6]string, source string) *Geometry {
	return build(model, 7, 8, memBytes, names[:], sevenSlice[:], source)
}

// FourSlice returns the geometry of a part with 4 compute and 4 memory
// slices (A30-24GB); names in the order 1g, 2g, 4g.
func FourSlice(model string, memBytes int64, names [3]string, source string) *Geometry {
	return build(model, 4, 4, memBytes, names[:], fourSlice[:], source)
}

// WithDevice returns a copy of g (a SevenSlice or FourSlice geometry) with
// each profile's memory and SMs as the device reports them (`nvidia-smi
// mig -lgip`), in g's profile order, and source appended to its Source.
// The nominal memory (an equal share of the GPU's per memory slice) is
// not what the driver gives: an H200's 1g.18gb has 16,384 MiB, not
// 141 GiB / 8.
func (g *Geometry) WithDevice(memMiB []int64, sms []int, source string) *Geometry {
	if len(memMiB) != len(g.Profiles) || len(sms) != len(g.Profiles) {
		panic(fmt.Sprintf("mig: WithDevice for %s: %d memories and %d SM counts for %d profiles", g.Model, len(memMiB), len(sms), len(g.Profiles)))
	}
	c := g.Clone()
	for i := range c.Profiles {
		c.Profiles[i].MemoryBytes = memMiB[i] * MiB
		c.Profiles[i].SMs = sms[i]
		c.SMs = max(c.SMs, sms[i])
	}
	c.Source += "; " + source
	if err := c.Check(); err != nil {
		panic(fmt.Sprintf("mig: device geometry of %s: %v", g.Model, err))
	}
	return c
}

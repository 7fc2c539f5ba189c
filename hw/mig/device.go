package mig

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Compute bases: what share of the GPU's compute an instance is counted
// as when its speed is estimated.
const (
	// BasisSlices counts compute slices (k of 7): the MIG guide's unit,
	// and the only one the guide's tables give for every part.
	BasisSlices = "slices"
	// BasisSMs counts streaming multiprocessors (SMs of the instance over
	// those of the whole-GPU instance), where the geometry knows them
	// (nvidia-smi mig -lgip); slices elsewhere. On an H200 a 4g.71gb has
	// 64 of 132 SMs (48%), not 4/7 (57%).
	BasisSMs = "sms"
)

// Bases lists the compute bases.
var Bases = []string{BasisSMs, BasisSlices}

// SMShare returns the SMs of an instance of p over those of the whole-GPU
// instance, and whether the geometry knows both.
func (g *Geometry) SMShare(p *Profile) (float64, bool) {
	if g.SMs <= 0 || p.SMs <= 0 {
		return 0, false
	}
	return float64(p.SMs) / float64(g.SMs), true
}

// ComputeShare returns the share of the GPU's compute an instance of p
// has on basis (BasisSlices or BasisSMs): BasisSMs falls back to the
// slice share where the SM counts are unknown.
func (g *Geometry) ComputeShare(p *Profile, basis string) float64 {
	if basis == BasisSMs {
		if s, ok := g.SMShare(p); ok {
			return s
		}
	}
	return g.Share(p)
}

// MiB is one mebibyte, the unit nvidia-smi and geometry files give memory in.
const MiB = 1 << 20

// SMIProfile is one row of `nvidia-smi mig -lgip`: a GPU-instance profile
// as the driver prints it.
type SMIProfile struct {
	GPU       int    // GPU index
	Name      string // "1g.18gb", "1g.18gb+me"
	ID        int    // profile ID
	Total     int    // the "Free/Total" column's total: most instances on one GPU
	MemoryMiB int64  // the "Memory GiB" column (two decimals) in MiB
	SMs       int    // the "SM" column
	Where     string // file:line
}

// SMIPlacement is one line of `nvidia-smi mig -lgipp`: the legal first
// memory slices of a profile and its size in memory slices.
type SMIPlacement struct {
	GPU, ID int
	Starts  []int
	Size    int
	Where   string // file:line
}

// SMIOutput is what ParseNvidiaSMI read from one or more files.
type SMIOutput struct {
	Profiles   []SMIProfile
	Placements []SMIPlacement
}

// lgipRow matches a profile row of `nvidia-smi mig -lgip`:
// "|   0  MIG 1g.18gb         19     7/7        16.00      No     16     1     0   |"
// (GPU, name, ID, free/total, memory GiB, P2P, SM, DEC, ENC).
var lgipRow = regexp.MustCompile(`^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+(\d+(?:\.\d+)?)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$`)

// lgippRow matches a line of `nvidia-smi mig -lgipp`:
// "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1" (one placement is
// printed "Placement :").
var lgippRow = regexp.MustCompile(`^GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([0-9,\s]*)\}\s*:\s*(\d+)$`)

// smiExample says what the importer reads, for errors.
const smiExample = "a profile row of `nvidia-smi mig -lgip` (\"|   0  MIG 1g.18gb  19  7/7  16.00  No  16  1  0  |\") or a placement line of `nvidia-smi mig -lgipp` (\"GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\")"

// maxSMIValue bounds every number read, so that no arithmetic on them
// overflows (a GPU has a few hundred SMs, tens of profile IDs).
const maxSMIValue = 1 << 20

// ParseNvidiaSMI reads the output of `nvidia-smi mig -lgip`, of
// `nvidia-smi mig -lgipp`, or both, from data (name is the file, for
// messages). A line that starts like a profile row or a placement line but
// does not parse is an error naming it; a file with neither is an error
// that says what to run. It is pure: no I/O.
func ParseNvidiaSMI(name string, data []byte) (SMIOutput, error) {
	var out SMIOutput
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	num := func(s, what, where string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 0 || v > maxSMIValue {
			return 0, fmt.Errorf("%s: %s %q is not a number in 0..%d", where, what, s, maxSMIValue)
		}
		return v, nil
	}
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		where := fmt.Sprintf("%s:%d", name, line)
		switch {
		case strings.HasPrefix(t, "|") && strings.Contains(t, " MIG "):
			m := lgipRow.FindStringSubmatch(t)
			if m == nil {
				return out, fmt.Errorf("%s: a profile row of nvidia-smi mig -lgip that does not parse: %q; want %s", where, t, smiExample)
			}
			var p SMIProfile
			var err error
			var errs []error
			get := func(s, what string) int {
				v, e := num(s, what, where)
				errs = append(errs, e)
				return v
			}
			p.GPU, p.Name, p.ID = get(m[1], "GPU index"), m[2], get(m[3], "profile ID")
			free, total := get(m[4], "free instances"), get(m[5], "total instances")
			p.Total, p.SMs = total, get(m[8], "SM count")
			if err = errors.Join(errs...); err != nil {
				return out, err
			}
			if free > total {
				return out, fmt.Errorf("%s: %d of %d instances free: more free than in total", where, free, total)
			}
			gib, err := strconv.ParseFloat(m[6], 64)
			if err != nil || !(gib > 0) || gib > maxSMIValue {
				return out, fmt.Errorf("%s: memory %q GiB is not a positive number", where, m[6])
			}
			// Two decimals of GiB are exact in MiB (x 1024 / 100 is a
			// whole number of MiB for every .25 step the driver prints;
			// rounding keeps any other to the nearest MiB).
			p.MemoryMiB = int64(gib*1024 + 0.5)
			p.Where = where
			out.Profiles = append(out.Profiles, p)
		case strings.HasPrefix(t, "GPU") && strings.Contains(t, "Profile ID"):
			m := lgippRow.FindStringSubmatch(t)
			if m == nil {
				return out, fmt.Errorf("%s: a placement line of nvidia-smi mig -lgipp that does not parse: %q; want %s", where, t, smiExample)
			}
			var pl SMIPlacement
			var err error
			if pl.GPU, err = num(m[1], "GPU index", where); err != nil {
				return out, err
			}
			if pl.ID, err = num(m[2], "profile ID", where); err != nil {
				return out, err
			}
			if pl.Size, err = num(m[4], "placement size", where); err != nil {
				return out, err
			}
			for _, f := range strings.Split(m[3], ",") {
				if strings.TrimSpace(f) == "" {
					return out, fmt.Errorf("%s: empty start in placements {%s}", where, m[3])
				}
				st, err := num(f, "placement start", where)
				if err != nil {
					return out, err
				}
				pl.Starts = append(pl.Starts, st)
			}
			pl.Where = where
			out.Placements = append(out.Placements, pl)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	if len(out.Profiles) == 0 && len(out.Placements) == 0 {
		return out, fmt.Errorf("%s is not nvidia-smi mig output: no line is %s; on the GPU machine run `nvidia-smi mig -lgip > lgip.txt` and `nvidia-smi mig -lgipp > lgipp.txt` (both only read) and import both files", name, smiExample)
	}
	return out, nil
}

// Merge appends o's rows to s.
func (s *SMIOutput) Merge(o SMIOutput) {
	s.Profiles = append(s.Profiles, o.Profiles...)
	s.Placements = append(s.Placements, o.Placements...)
}

// profileName matches a plain profile name, "3g.71gb": compute slices and
// nominal GB. Variants ("1g.18gb+me", "1g.24gb+gfx", "1g.18gb-me") carry a
// suffix and are left out, as the catalog leaves them out: they place like
// the plain profile and add media or graphics engines nothing here uses.
var profileName = regexp.MustCompile(`^(\d+)g\.(\d+)gb$`)

// FromNvidiaSMI builds the MIG geometry of GPU gpuIndex of out, named
// model: one profile per plain profile row, with its ID, compute slices
// (from its name), memory slices and starts (from its placements), maximum
// count (the row's total), memory and SMs (the row's). It returns notes on
// what was left out (variant profiles, other GPUs). A profile without
// placements, placements that disagree, or a geometry that fails Check is
// an error naming the lines.
func FromNvidiaSMI(model string, gpuIndex int, out SMIOutput, source string) (*Geometry, []string, error) {
	var notes []string
	others := map[int]bool{}
	var rows []SMIProfile
	variants := map[int]string{}
	for _, p := range out.Profiles {
		if p.GPU != gpuIndex {
			others[p.GPU] = true
			continue
		}
		if !profileName.MatchString(p.Name) {
			variants[p.ID] = p.Name
			notes = append(notes, fmt.Sprintf("%s: profile %s (ID %d) left out: a variant of a plain profile (media or graphics engines), which places like it", p.Where, p.Name, p.ID))
			continue
		}
		rows = append(rows, p)
	}
	places := map[int]SMIPlacement{}
	for _, pl := range out.Placements {
		if pl.GPU != gpuIndex {
			others[pl.GPU] = true
			continue
		}
		if prev, ok := places[pl.ID]; ok && (prev.Size != pl.Size || !slices.Equal(prev.Starts, pl.Starts)) {
			return nil, nil, fmt.Errorf("%s: placements of profile ID %d disagree with %s; import the output of one GPU", pl.Where, pl.ID, prev.Where)
		}
		places[pl.ID] = pl
	}
	if len(others) > 0 {
		idx := make([]int, 0, len(others))
		for k := range others {
			idx = append(idx, k)
		}
		slices.Sort(idx)
		notes = append(notes, fmt.Sprintf("rows of GPUs %v left out: the geometry is GPU %d's (choose another with --gpu)", idx, gpuIndex))
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("no profile of GPU %d in the nvidia-smi mig -lgip output: import `nvidia-smi mig -lgip` beside `-lgipp` (both are needed: -lgip gives names, counts, memory and SMs; -lgipp the placements)", gpuIndex)
	}
	g := &Geometry{Model: model, Source: source}
	seenID := map[int]string{}
	for _, r := range rows {
		if prev, ok := seenID[r.ID]; ok {
			return nil, nil, fmt.Errorf("%s: profile ID %d appears twice (%s here); import the output of one GPU", r.Where, r.ID, prev)
		}
		seenID[r.ID] = r.Name
		m := profileName.FindStringSubmatch(r.Name)
		compute, err := strconv.Atoi(m[1])
		if err != nil || compute < 1 || compute > MaxSlices {
			return nil, nil, fmt.Errorf("%s: profile %s: %s compute slices; want 1..%d", r.Where, r.Name, m[1], MaxSlices)
		}
		pl, ok := places[r.ID]
		if !ok {
			return nil, nil, fmt.Errorf("%s: profile %s (ID %d) has no placement line: import the output of `nvidia-smi mig -lgipp` too", r.Where, r.Name, r.ID)
		}
		g.Profiles = append(g.Profiles, Profile{Name: r.Name, ID: r.ID, Compute: compute, MemSlices: pl.Size,
			MemoryBytes: r.MemoryMiB * MiB, Starts: slices.Clone(pl.Starts), MaxCount: r.Total, SMs: r.SMs})
		g.ComputeSlices = max(g.ComputeSlices, compute)
		for _, st := range pl.Starts {
			g.MemorySlices = max(g.MemorySlices, st+pl.Size)
		}
		g.MemoryBytes = max(g.MemoryBytes, r.MemoryMiB*MiB)
		g.SMs = max(g.SMs, r.SMs)
	}
	for id, pl := range places {
		if _, ok := seenID[id]; !ok {
			if _, v := variants[id]; !v {
				notes = append(notes, fmt.Sprintf("%s: placements of profile ID %d, which no -lgip row names, left out", pl.Where, id))
			}
		}
	}
	slices.SortStableFunc(notes, strings.Compare)
	slices.SortFunc(g.Profiles, func(a, b Profile) int {
		return cmp.Or(cmp.Compare(a.Compute, b.Compute), cmp.Compare(a.MemSlices, b.MemSlices), cmp.Compare(a.ID, b.ID))
	})
	if err := g.Check(); err != nil {
		return nil, nil, fmt.Errorf("the imported geometry is not a legal MIG geometry: %w", err)
	}
	return g, notes, nil
}

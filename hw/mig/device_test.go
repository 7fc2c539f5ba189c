package mig

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readSMI(t testing.TB, paths ...string) SMIOutput {
	t.Helper()
	var out SMIOutput
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseNvidiaSMI(filepath.Base(p), data)
		if err != nil {
			t.Fatal(err)
		}
		out.Merge(o)
	}
	return out
}

// The synthetic four-slice output of testdata/nvsmi (written by hand in the
// driver's layout) gives, derived by hand: compute slices from the names,
// memory slices and starts from -lgipp, counts from "Free/Total", memory
// GiB x 1024 in MiB (5.75 -> 5888), SMs from the SM column; the "+me"
// variant is left out with a note.
func TestFromNvidiaSMISynthetic(t *testing.T) {
	out := readSMI(t, "testdata/nvsmi/synthetic-lgip.txt", "testdata/nvsmi/synthetic-lgipp.txt")
	g, notes, err := FromNvidiaSMI("x30", 0, out, "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	want := &Geometry{Model: "x30", ComputeSlices: 4, MemorySlices: 4, MemoryBytes: 23808 * MiB, SMs: 56, Source: "synthetic",
		Profiles: []Profile{
			{Name: "1g.6gb", ID: 14, Compute: 1, MemSlices: 1, MemoryBytes: 5888 * MiB, Starts: []int{0, 1, 2, 3}, MaxCount: 4, SMs: 14},
			{Name: "2g.12gb", ID: 5, Compute: 2, MemSlices: 2, MemoryBytes: 11776 * MiB, Starts: []int{0, 2}, MaxCount: 2, SMs: 28},
			{Name: "4g.24gb", ID: 0, Compute: 4, MemSlices: 4, MemoryBytes: 23808 * MiB, Starts: []int{0}, MaxCount: 1, SMs: 56},
		}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("geometry\n got %+v\nwant %+v", g, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1g.6gb+me") || !strings.Contains(notes[0], "synthetic-lgip.txt:9") {
		t.Errorf("notes %q, want one naming the +me variant at its line", notes)
	}
	// The SM share and the slice share: 2g has 28 of 56 SMs (1/2) and 2
	// of 4 slices; 1g 14/56 = 1/4.
	p, _ := g.Profile("1g.6gb")
	if s, ok := g.SMShare(p); !ok || s != 0.25 {
		t.Errorf("SMShare(1g) = %v, %v; want 0.25", s, ok)
	}
	// Both files in one (cat lgip lgipp > both.txt) read the same.
	var both []byte
	for _, f := range []string{"synthetic-lgip.txt", "synthetic-lgipp.txt"} {
		b, _ := os.ReadFile(filepath.Join("testdata/nvsmi", f))
		both = append(both, b...)
	}
	one, err := ParseNvidiaSMI("both.txt", both)
	if err != nil {
		t.Fatal(err)
	}
	g2, _, err := FromNvidiaSMI("x30", 0, one, "synthetic")
	if err != nil || !reflect.DeepEqual(g2.Profiles, want.Profiles) {
		t.Errorf("one concatenated file: %v, %+v", err, g2)
	}
	// Written as YAML and read back: the same geometry.
	var b bytes.Buffer
	if err := g.WriteYAML(&b, "test"); err != nil {
		t.Fatal(err)
	}
	back, err := ReadYAML("x30.yaml", b.Bytes())
	if err != nil || !reflect.DeepEqual(back, g) {
		t.Errorf("YAML round trip: %v\n%s\n got %+v", err, b.String(), back)
	}
}

// The H200's own output (../shared, measured 2026-11-27) imports to the
// catalog's H200 geometry's shapes, with the device's memory (16,384 MiB
// for 1g.18gb, 33,280 for 1g.35gb and 2g.35gb, 71,424 for 3g and 4g,
// 143,360 for 7g) and SMs (16, 26, 32, 60, 64, 132), the numbers hw/gpu's
// catalog now carries (TestProfiles there checks them by hand).
func TestFromNvidiaSMIH200(t *testing.T) {
	dir := sharedPath(t, "reference/measured-h200-2026-11-27")
	out := readSMI(t, filepath.Join(dir, "nvidia-smi-mig-lgip.txt"), filepath.Join(dir, "nvidia-smi-mig-lgipp.txt"))
	g, notes, err := FromNvidiaSMI("h200-141gb", 0, out, "device")
	if err != nil {
		t.Fatal(err)
	}
	shapes := SevenSlice("h200-141gb", 141<<30, [6]string{"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}, "guide")
	mib := []int64{16384, 33280, 33280, 71424, 71424, 143360}
	sms := []int{16, 26, 32, 60, 64, 132}
	if len(g.Profiles) != 6 || g.ComputeSlices != 7 || g.MemorySlices != 8 || g.SMs != 132 {
		t.Fatalf("imported %+v", g)
	}
	for i, p := range g.Profiles {
		s := shapes.Profiles[i]
		if p.Name != s.Name || p.ID != s.ID || p.Compute != s.Compute || p.MemSlices != s.MemSlices ||
			!reflect.DeepEqual(p.Starts, s.Starts) || p.MaxCount != s.MaxCount || p.MemoryBytes != mib[i]*MiB || p.SMs != sms[i] {
			t.Errorf("profile %d: %+v; want the shape %+v with %d MiB and %d SMs", i, p, s, mib[i], sms[i])
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1g.18gb+me") {
		t.Errorf("notes %q, want the +me variant left out", notes)
	}
	// The SM share is not the slice share: 4g.71gb has 64 of 132 SMs.
	p, _ := g.Profile("4g.71gb")
	if s := g.ComputeShare(p, BasisSMs); s != 64.0/132 {
		t.Errorf("4g SM share %v, want 64/132", s)
	}
	if s := g.ComputeShare(p, BasisSlices); s != 4.0/7 {
		t.Errorf("4g slice share %v, want 4/7", s)
	}
}

// Input that is not nvidia-smi mig output, or is only half of it, is an
// error that names the file (and line) and says what to run.
func TestNvidiaSMIBadInput(t *testing.T) {
	lgip, _ := os.ReadFile("testdata/nvsmi/synthetic-lgip.txt")
	lgipp, _ := os.ReadFile("testdata/nvsmi/synthetic-lgipp.txt")
	for _, c := range []struct {
		name, text string
		want       []string // in the parse or the build error
	}{
		{"empty", "", []string{"empty is not nvidia-smi mig output", "nvidia-smi mig -lgip > lgip.txt"}},
		{"csv", "stage,bytes,latency_us\ncuda-h2d-pinned,4096,9.4\n", []string{"not nvidia-smi mig output"}},
		{"mangled row", "|   0  MIG 1g.18gb   19   7/7   lots   No  16  1  0  |\n", []string{"mangled row:1", "does not parse"}},
		{"mangled placement", "GPU  0 Profile ID 19 Placements: {0,1,x}:1\n", []string{"mangled placement:1", "does not parse"}},
		{"empty start", "GPU  0 Profile ID 19 Placements: {0,,2}:1\n", []string{"empty start"}},
		{"more free", "|   0  MIG 1g.18gb   19   8/7   16.00   No  16  1  0  |\n", []string{"more free than in total"}},
		{"lgip only", string(lgip), []string{"no placement line", "-lgipp"}},
		{"lgipp only", string(lgipp), []string{"no profile of GPU 0", "-lgip"}},
		{"placements disagree", string(lgip) + string(lgipp) + "GPU  0 Profile ID  5 Placements: {0,1}:2\n", []string{"disagree"}},
		{"starts not ascending", string(lgip) + strings.Replace(string(lgipp), "{0,2}:2", "{2,0}:2", 1), []string{"not a legal MIG geometry", "not ascending"}},
	} {
		out, err := ParseNvidiaSMI(c.name, []byte(c.text))
		if err == nil {
			_, _, err = FromNvidiaSMI("x", 0, out, "")
		}
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to say %q", c.name, err, w)
			}
		}
	}
}

// A geometry file with an unknown key, or an illegal geometry, is refused
// with the file's name.
func TestReadYAMLBad(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "empty MIG geometry file"},
		{"model: x\ncompute_slice: 7\n", "field compute_slice not found"},
		{"model: x\ncompute_slices: 1\nmemory_slices: 1\nprofiles: []\n", "no profiles"},
		{"model: x\ncompute_slices: 1\nmemory_slices: 1\nsms: 10\nprofiles:\n  - {name: 1g, compute_slices: 1, memory_slices: 1, sms: 11, starts: [0]}\n", "11 SMs"},
		{"compute_slices: 1\n", "model is empty"},
	} {
		_, err := ReadYAML("g.yaml", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "g.yaml") {
			t.Errorf("%q: %v; want an error naming g.yaml and %q", c.text, err, c.want)
		}
	}
}

// Whatever the input, the parser and the geometry builder return an error
// or a geometry that passes Check and survives the YAML round trip; never
// a panic.
func FuzzParseNvidiaSMI(f *testing.F) {
	for _, p := range []string{"testdata/nvsmi/synthetic-lgip.txt", "testdata/nvsmi/synthetic-lgipp.txt"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	lgip, _ := os.ReadFile("testdata/nvsmi/synthetic-lgip.txt")
	lgipp, _ := os.ReadFile("testdata/nvsmi/synthetic-lgipp.txt")
	f.Add(append(append([]byte{}, lgip...), lgipp...))
	f.Add([]byte("GPU  0 Profile ID 0 Placement : {0}:64\n|   0  MIG 64g.1gb  0  1/1  1.00  No  1  0  0  |\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ParseNvidiaSMI("fuzz", data)
		if err != nil {
			return
		}
		g, _, err := FromNvidiaSMI("fuzz", 0, out, "fuzz")
		if err != nil {
			return
		}
		if err := g.Check(); err != nil {
			t.Fatalf("FromNvidiaSMI returned an illegal geometry: %v", err)
		}
		var b bytes.Buffer
		if err := g.WriteYAML(&b, ""); err != nil {
			t.Fatal(err)
		}
		back, err := ReadYAML("fuzz.yaml", b.Bytes())
		if err != nil || !reflect.DeepEqual(back, g) {
			t.Fatalf("YAML round trip: %v\n%s", err, b.String())
		}
		if g.MemorySlices <= 8 && len(g.Profiles) <= 6 {
			g.Layouts(false) // a GPU-sized import's layouts are enumerable
		}
	})
}

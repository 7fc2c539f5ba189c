package gpu

import (
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/mig"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		in, name string
		memGiB   int64
		mig      bool
	}{
		{"a100-40gb", "a100-40gb", 40, true},
		{"A100-80GB", "a100-80gb", 80, true},
		{" h100-80gb ", "h100-80gb", 80, true},
		{"h100-nvl", "h100-94gb", 94, true},
		{"H200", "h200-141gb", 141, true},
		{"b200", "b200-180gb", 180, true},
		{"a30", "a30-24gb", 24, true},
		{"v100m16", "v100", 16, false},
		{"V100M32", "v100m32", 32, false},
		{"p100", "p100", 16, false},
		{"t4", "t4", 16, false},
		{"a10", "a10", 24, false},
		{"l4", "l4", 24, false},
		{"k80", "k80", 12, false},
	}
	for _, tc := range tests {
		s, err := Lookup(tc.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tc.in, err)
			continue
		}
		if s.Name != tc.name || s.MemoryBytes != tc.memGiB*GiB || (s.MIG != nil) != tc.mig {
			t.Errorf("Lookup(%q) = %s %d B MIG=%v, want %s %d GiB MIG=%v", tc.in, s.Name, s.MemoryBytes, s.MIG != nil, tc.name, tc.memGiB, tc.mig)
		}
		if s.MIG != nil && (s.MIG.MemoryBytes != s.MemoryBytes || s.MIG.Model != s.Name) {
			t.Errorf("%s: geometry says %s with %d B", s.Name, s.MIG.Model, s.MIG.MemoryBytes)
		}
		if s.Name == "b200-180gb" {
			// No sourced speed or price (spec.go): stated, and a timed run
			// refuses it (TestUnsourcedGPURefused).
			if s.RelSpeed != nil || s.PricePerHour != 0 || !strings.Contains(s.Source, "none sourced") {
				t.Errorf("b200: speed %v price %v source %q; want none, stated", s.RelSpeed, s.PricePerHour, s.Source)
			}
			continue
		}
		if s.TDPWatts <= 0 || s.PricePerHour <= 0 || s.Source == "" || s.RelSpeed["resnet50"] <= 0 || s.RelSpeed["bert"] <= 0 {
			t.Errorf("%s: missing TDP, price, source or speed: %+v", s.Name, s)
		}
	}
	_, err := Lookup("a100-40")
	if err == nil || !strings.Contains(err.Error(), `did you mean "a100-40gb"`) || !strings.Contains(err.Error(), "h100-80gb, h100-94gb, h200-141gb, k80, l4") {
		t.Errorf("unknown name error: %v", err)
	}
	// Lookup hands out copies.
	s := mustLookup(t, "a100-40gb")
	s.MIG.Profiles[0].Starts[0] = 99
	s.RelSpeed["resnet50"] = 99
	again := mustLookup(t, "a100-40gb")
	if again.MIG.Profiles[0].Starts[0] != 0 || again.RelSpeed["resnet50"] == 99 {
		t.Error("changing a looked-up spec changed the catalog")
	}
	names := Names()
	want := "a10 a100-40gb a100-80gb a30-24gb b200-180gb h100-80gb h100-94gb h200-141gb k80 l4 p100 t4 v100 v100m32"
	if strings.Join(names, " ") != want {
		t.Errorf("Names() = %v, want %s", names, want)
	}
	for _, a := range Aliases() {
		alias, name, _ := strings.Cut(a, "=")
		if s, err := Lookup(alias); err != nil || s.Name != name {
			t.Errorf("alias %s: %v %v", a, s.Name, err)
		}
	}
	if _, err := mustLookup(t, "a100-40gb").MIG.Restrict("1g.5gb", "8g.50gb"); err == nil {
		t.Error("Restrict accepted an unknown profile")
	}
}

// TestProfiles checks the catalog's MIG profiles against the MIG user guide
// v580 tables as copied in hardware.md 6b/6c and design.md "MIG facts" (a
// second, hand-typed source): name, ID, compute and memory slices, memory,
// starts and max count of each.
func TestProfiles(t *testing.T) {
	seven := []int{0, 1, 2, 3, 4, 5, 6}
	tests := []struct {
		gpu, name        string
		id, compute, mem int
		memBytes         int64
		starts           []int
		max, sms         int
	}{
		{"a100-40gb", "1g.5gb", 19, 1, 1, 5 * GiB, seven, 7, 0},
		{"a100-40gb", "1g.10gb", 15, 1, 2, 10 * GiB, []int{0, 2, 4, 6}, 4, 0},
		{"a100-40gb", "2g.10gb", 14, 2, 2, 10 * GiB, []int{0, 2, 4}, 3, 0},
		{"a100-40gb", "3g.20gb", 9, 3, 4, 20 * GiB, []int{0, 4}, 2, 0},
		{"a100-40gb", "4g.20gb", 5, 4, 4, 20 * GiB, []int{0}, 1, 0},
		{"a100-40gb", "7g.40gb", 0, 7, 8, 40 * GiB, []int{0}, 1, 0},
		{"a100-80gb", "1g.10gb", 19, 1, 1, 10 * GiB, seven, 7, 0},
		{"a100-80gb", "1g.20gb", 15, 1, 2, 20 * GiB, []int{0, 2, 4, 6}, 4, 0},
		{"a100-80gb", "2g.20gb", 14, 2, 2, 20 * GiB, []int{0, 2, 4}, 3, 0},
		{"a100-80gb", "3g.40gb", 9, 3, 4, 40 * GiB, []int{0, 4}, 2, 0},
		{"a100-80gb", "4g.40gb", 5, 4, 4, 40 * GiB, []int{0}, 1, 0},
		{"a100-80gb", "7g.80gb", 0, 7, 8, 80 * GiB, []int{0}, 1, 0},
		{"h100-80gb", "1g.10gb", 19, 1, 1, 10 * GiB, seven, 7, 0},
		{"h100-80gb", "1g.20gb", 15, 1, 2, 20 * GiB, []int{0, 2, 4, 6}, 4, 0},
		{"h100-80gb", "7g.80gb", 0, 7, 8, 80 * GiB, []int{0}, 1, 0},
		{"h100-94gb", "1g.12gb", 19, 1, 1, 94 * GiB / 8, seven, 7, 0},
		{"h100-94gb", "3g.47gb", 9, 3, 4, 94 * GiB / 2, []int{0, 4}, 2, 0},
		{"h100-94gb", "7g.94gb", 0, 7, 8, 94 * GiB, []int{0}, 1, 0},
		// H200: memory and SMs as nvidia-smi mig -lgip printed them on
		// the device (16.00, 32.50, 69.75, 140.00 GiB; 16 ... 132 SMs),
		// not 141 GiB / 8 per memory slice.
		{"h200-141gb", "1g.18gb", 19, 1, 1, 16384 * mig.MiB, seven, 7, 16},
		{"h200-141gb", "1g.35gb", 15, 1, 2, 33280 * mig.MiB, []int{0, 2, 4, 6}, 4, 26},
		{"h200-141gb", "2g.35gb", 14, 2, 2, 33280 * mig.MiB, []int{0, 2, 4}, 3, 32},
		{"h200-141gb", "3g.71gb", 9, 3, 4, 71424 * mig.MiB, []int{0, 4}, 2, 60},
		{"h200-141gb", "4g.71gb", 5, 4, 4, 71424 * mig.MiB, []int{0}, 1, 64},
		{"h200-141gb", "7g.141gb", 0, 7, 8, 140 * GiB, []int{0}, 1, 132},
		{"b200-180gb", "1g.23gb", 19, 1, 1, 180 * GiB / 8, seven, 7, 0},
		{"b200-180gb", "7g.180gb", 0, 7, 8, 180 * GiB, []int{0}, 1, 0},
		{"a30-24gb", "1g.6gb", 14, 1, 1, 6 * GiB, []int{0, 1, 2, 3}, 4, 0},
		{"a30-24gb", "2g.12gb", 5, 2, 2, 12 * GiB, []int{0, 2}, 2, 0},
		{"a30-24gb", "4g.24gb", 0, 4, 4, 24 * GiB, []int{0}, 1, 0},
	}
	for _, tc := range tests {
		s := mustLookup(t, tc.gpu)
		p, err := s.Profile(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.gpu, err)
			continue
		}
		want := mig.Profile{Name: tc.name, ID: tc.id, Compute: tc.compute, MemSlices: tc.mem,
			MemoryBytes: tc.memBytes, Starts: tc.starts, MaxCount: tc.max, SMs: tc.sms}
		if !reflect.DeepEqual(*p, want) {
			t.Errorf("%s %s = %+v, want %+v", tc.gpu, tc.name, *p, want)
		}
	}
	slices := map[string][2]int{"a100-40gb": {7, 8}, "a100-80gb": {7, 8}, "h100-80gb": {7, 8}, "h100-94gb": {7, 8},
		"h200-141gb": {7, 8}, "b200-180gb": {7, 8}, "a30-24gb": {4, 4}}
	for _, name := range Names() {
		s := mustLookup(t, name)
		want, isMIG := slices[name]
		if (s.MIG != nil) != isMIG {
			t.Errorf("%s: MIG %v, want %v", name, s.MIG != nil, isMIG)
			continue
		}
		if s.MIG == nil {
			continue
		}
		if err := s.MIG.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got := [2]int{s.MIG.ComputeSlices, s.MIG.MemorySlices}; got != want {
			t.Errorf("%s: %v compute/memory slices, want %v", name, got, want)
		}
		if n, w := len(s.MIG.Profiles), map[bool]int{true: 3, false: 6}[want[0] == 4]; n != w {
			t.Errorf("%s has %d profiles, want %d", name, n, w)
		}
	}
	if _, err := mustLookup(t, "a100-80gb").Profile("1g.5gb"); err == nil || !strings.Contains(err.Error(), "1g.10gb, 1g.20gb") {
		t.Errorf("a100-80gb 1g.5gb: err %v, want one listing the 80 GB profiles", err)
	}
	if _, err := mustLookup(t, "t4").Profile("1g.5gb"); err == nil || !strings.Contains(err.Error(), "does not support MIG") {
		t.Errorf("t4 profile: err %v, want 'does not support MIG'", err)
	}
}

// TestUnsourcedGPURefused: a GPU without a sourced speed (b200-180gb) is
// refused by the compute model with a message that says why, rather than
// timed with an invented speed.
func TestUnsourcedGPURefused(t *testing.T) {
	_, err := ComputeTime("b200-180gb", "1g.23gb", "resnet50", 1)
	if err == nil || !strings.Contains(err.Error(), "gpu b200-180gb has no relative speed for model \"resnet50\"") {
		t.Errorf("b200 compute time: %v", err)
	}
}

// TestPeakDenseFP8 checks the dense FP8 peaks against the datasheets'
// sparse figures halved, and that only Ada and Hopper parts have one: an
// FP8 model on Volta, Turing or Ampere runs its GEMMs at the BF16 (FP16)
// peak (hw/llm). Where there is one it is twice the BF16 peak, to the
// datasheets' rounding (H100 NVL: 1,670.5 against 2 x 835.5 = 1,671).
func TestPeakDenseFP8(t *testing.T) {
	const tf = 1e12
	for _, c := range []struct {
		gpu        string
		bf16, fp8  float64 // TFLOPS, dense
		derivation string
	}{
		{"h100-80gb", 989.5, 1979, "SXM5: BF16 1,979 / 2; FP8 3,958 / 2"},
		{"h100-94gb", 835.5, 1670.5, "NVL: BF16 1,671 / 2; FP8 3,341 / 2"},
		{"h200-141gb", 989.5, 1979, "SXM: as H100 SXM (same GH100)"},
		{"l4", 121, 242.5, "BF16 242 / 2; FP8 485 / 2"},
		{"a100-40gb", 312, 0, "Ampere: no FP8 tensor cores"},
		{"a100-80gb", 312, 0, "Ampere"},
		{"a30-24gb", 165, 0, "Ampere"},
		{"a10", 125, 0, "Ampere"},
		{"v100", 125, 0, "Volta: FP16 tensor cores only"},
		{"t4", 65, 0, "Turing: FP16 tensor cores only"},
		{"b200-180gb", 0, 0, "no roofline figures sourced"},
	} {
		s := mustLookup(t, c.gpu)
		if s.PeakDenseBF16 != c.bf16*tf || s.PeakDenseFP8 != c.fp8*tf {
			t.Errorf("%s: BF16 %g, FP8 %g TFLOPS; want %g and %g (%s)", c.gpu, s.PeakDenseBF16/tf, s.PeakDenseFP8/tf, c.bf16, c.fp8, c.derivation)
		}
	}
	for _, n := range Names() {
		s := mustLookup(t, n)
		if s.PeakDenseFP8 == 0 {
			continue
		}
		if r := s.PeakDenseFP8 / s.PeakDenseBF16; r < 1.99 || r > 2.01 {
			t.Errorf("%s: FP8 peak %.4g x BF16, want 2 (FP8 tensor cores run twice the BF16 rate)", n, r)
		}
		if !strings.Contains(s.RooflineSource, "FP8") {
			t.Errorf("%s: FP8 peak without a source in RooflineSource %q", n, s.RooflineSource)
		}
	}
}

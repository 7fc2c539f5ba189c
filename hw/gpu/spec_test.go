package gpu

import (
	"strings"
	"testing"
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
		if s.Name != tc.name || s.MemoryBytes != tc.memGiB*GiB || s.MIG != tc.mig || (s.Profiles != nil) != tc.mig {
			t.Errorf("Lookup(%q) = %s %d B MIG=%v, want %s %d GiB MIG=%v", tc.in, s.Name, s.MemoryBytes, s.MIG, tc.name, tc.memGiB, tc.mig)
		}
		if s.TDPWatts <= 0 || s.PricePerHour <= 0 || s.Source == "" || s.RelSpeed["resnet50"] <= 0 || s.RelSpeed["bert"] <= 0 {
			t.Errorf("%s: missing TDP, price, source or speed: %+v", s.Name, s)
		}
	}
	_, err := Lookup("a100-40")
	if err == nil || !strings.Contains(err.Error(), `did you mean "a100-40gb"`) || !strings.Contains(err.Error(), "h100-80gb, k80, l4") {
		t.Errorf("unknown name error: %v", err)
	}
	// Lookup hands out copies.
	s := mustLookup(t, "a100-40gb")
	s.Profiles[0].Starts[0] = 99
	s.RelSpeed["resnet50"] = 99
	again := mustLookup(t, "a100-40gb")
	if again.Profiles[0].Starts[0] != 0 || again.RelSpeed["resnet50"] == 99 {
		t.Error("changing a looked-up spec changed the catalog")
	}
	names := Names()
	want := "a10 a100-40gb a100-80gb h100-80gb k80 l4 p100 t4 v100 v100m32"
	if strings.Join(names, " ") != want {
		t.Errorf("Names() = %v, want %s", names, want)
	}
	for _, a := range Aliases() {
		alias, name, _ := strings.Cut(a, "=")
		if s, err := Lookup(alias); err != nil || s.Name != name {
			t.Errorf("alias %s: %v %v", a, s.Name, err)
		}
	}
	if _, err := mustLookup(t, "a100-40gb").Restrict("1g.5gb", "8g.50gb"); err == nil {
		t.Error("Restrict accepted an unknown profile")
	}
}

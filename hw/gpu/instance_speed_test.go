package gpu

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/mig"
)

// On the slice basis an instance's speed is SpeedFraction of its compute
// slices; on the SM basis it is read at its SM share, which for the
// H200 (measured SMs) is not k/7: a 4g.71gb (64 of 132 SMs, 3.39 slices'
// worth) interpolates between the tables' 3g and 4g points, a 3g.71gb (60
// SMs, 3.18 slices) between 3g and 4g too, and a 1g.18gb (16 SMs, 0.85
// slices) is 0.85 of the one-slice point. Where the geometry knows no SMs
// (A100) both bases agree.
func TestInstanceSpeedFraction(t *testing.T) {
	h200 := mustLookup(t, "h200-141gb")
	a100 := mustLookup(t, "a100-80gb")
	prof := func(s Spec, name string) *mig.Profile {
		p, err := s.Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := func(c int) float64 { return SpeedFraction(a100, c, "resnet50") }
	lerp := func(x float64, lo, hi int) float64 {
		w := (x - float64(lo)) / float64(hi-lo)
		return (1-w)*f(lo) + w*f(hi)
	}
	for _, c := range []struct {
		spec        Spec
		profile     string
		basis       string
		want        float64
		description string
	}{
		{h200, "4g.71gb", mig.BasisSlices, f(4), "4 slices"},
		{h200, "4g.71gb", mig.BasisSMs, lerp(64.0/132*7, 3, 4), "64/132 x 7 = 3.39 slices"},
		{h200, "3g.71gb", mig.BasisSMs, lerp(60.0/132*7, 3, 4), "60/132 x 7 = 3.18 slices"},
		{h200, "1g.18gb", mig.BasisSMs, f(1) * 16.0 / 132 * 7, "0.85 of one slice"},
		{h200, "7g.141gb", mig.BasisSMs, 1, "the whole GPU"},
		{a100, "3g.40gb", mig.BasisSMs, f(3), "no SM counts: slices"},
		{a100, "3g.40gb", mig.BasisSlices, f(3), "slices"},
	} {
		got := InstanceSpeedFraction(c.spec, prof(c.spec, c.profile), "resnet50", c.basis)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s %s on %s (%s): %v, want %v", c.spec.Name, c.profile, c.basis, c.description, got, c.want)
		}
	}
	// The tables' 3g and 4g points are profiled (tableSlices), so the
	// interpolations above are between real measurements.
	if f(3) >= f(4) || !(f(3) > 0) {
		t.Errorf("A100 resnet50 3g %v, 4g %v: want 0 < 3g < 4g", f(3), f(4))
	}
}

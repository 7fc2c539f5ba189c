package cluster

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// A 20% service on an H200 (its own reference: capacity 0.2 x rel, memory
// 0.2 x 141 GiB = 28.2 GiB), smallest option, derived by hand from the
// resnet50 speed fractions: on the SM basis a 1g.35gb (26 of 132 SMs:
// 1.38 slices' worth, 0.219 of the GPU) gives the capacity and its
// 33,280 MiB hold the memory, so it runs there at max(0.2/0.219,
// 28.2/32.5); on the slice basis a 1g gives only 0.160 (one slice), and
// the smallest that serves it is the 2g.35gb (0.317): max(0.2/0.317,
// 28.2/32.5) = 0.868, memory-bound.
func TestMIGComputeBasisByHand(t *testing.T) {
	spec, err := gpu.Lookup("h200-141gb")
	if err != nil {
		t.Fatal(err)
	}
	isf := func(name, basis string) float64 {
		p, _ := spec.Profile(name)
		return gpu.InstanceSpeedFraction(spec, p, "resnet50", basis)
	}
	mem := 0.2 * float64(spec.MemoryBytes) / float64(33280*mig.MiB)
	for _, c := range []struct {
		basis, profile string
		fraction       float64
	}{
		{"", "1g.35gb", max(0.2/isf("1g.35gb", mig.BasisSMs), mem)}, // empty is sms
		{mig.BasisSMs, "1g.35gb", max(0.2/isf("1g.35gb", mig.BasisSMs), mem)},
		{mig.BasisSlices, "2g.35gb", max(0.2/isf("2g.35gb", mig.BasisSlices), mem)},
	} {
		cfg := small(nil, "h200-141gb", 1, "conspirator")
		cfg.MIGCompute, cfg.MIGOptions = c.basis, MIGOptionsSmallest
		types, _, _, _, err := buildCluster(cfg, nil, nil, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := newPlanner(cfg, types, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := service("s", 0, 100, 200)
		p, err := pl.plan(0, &s)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.optsMIG) != 1 || p.optsMIG[0].Profile != c.profile || math.Abs(p.optsMIG[0].Fraction-c.fraction) > 1e-12 {
			t.Errorf("basis %q: MIG options %+v, want %s at fraction %v", c.basis, p.optsMIG, c.profile, c.fraction)
		}
	}
	// The hand derivation's premise: 1g.35gb serves 20% on SMs only.
	if isf("1g.35gb", mig.BasisSMs) < 0.2 || isf("1g.35gb", mig.BasisSlices) >= 0.2 {
		t.Fatalf("1g.35gb speed fractions %v (sms), %v (slices)", isf("1g.35gb", mig.BasisSMs), isf("1g.35gb", mig.BasisSlices))
	}
}

// cluster.mig_geometry puts a geometry file in place of the catalog's: an
// H200 geometry without its 1g.35gb profile makes the same 20% service
// take the 2g.35gb; a file for another GPU, an unknown basis and a pair
// that is not TYPE=FILE are refused with the key.
func TestMIGGeometryFile(t *testing.T) {
	spec, _ := gpu.Lookup("h200-141gb")
	g, err := spec.MIG.Restrict("1g.18gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var b bytes.Buffer
	if err := g.WriteYAML(&b, "test"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "h200.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv
	env.Geometry = func(p string) (*mig.Geometry, error) {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return mig.ReadYAML(p, data)
	}
	cfg := small(nil, "h200-141gb", 1, "conspirator")
	cfg.MIGOptions = MIGOptionsSmallest
	cfg.MIGGeometry = "h200-141gb=" + path
	geoms, err := readGeometries(cfg, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Geometries = geoms
	types, _, _, _, err := buildCluster(cfg, nil, nil, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := newPlanner(cfg, types, nil)
	s := service("s", 0, 100, 200)
	p, err := pl.plan(0, &s)
	if err != nil || len(p.optsMIG) != 1 || p.optsMIG[0].Profile != "2g.35gb" {
		t.Errorf("with the file: %v %+v, want the 2g.35gb", err, p.optsMIG)
	}
	if keys, paths := cfg.Files(); len(keys) != 1 || keys[0] != "cluster.mig_geometry" || paths[0] != path {
		t.Errorf("Files() = %v %v, want the geometry file under cluster.mig_geometry", keys, paths)
	}
	// Set but not read: refused, not silently the catalog's.
	cfg.Geometries = nil
	if _, _, _, _, err := buildCluster(cfg, nil, nil, 1, nil); err == nil {
		t.Error("mig_geometry set and not read: no error")
	}

	other := cfg
	other.MIGGeometry = "a100-80gb=" + path
	other.GPUs = []GPUGroup{{Model: "a100-80gb", Count: 1}}
	if _, err := readGeometries(other, env, nil); err == nil || !strings.Contains(err.Error(), `describes "h200-141gb", not a100-80gb`) {
		t.Errorf("a geometry of another GPU: %v", err)
	}
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.MIGCompute = "cores" }, "mig_compute"},
		{func(c *Config) { c.MIGGeometry = "h200-141gb" }, "not TYPE=FILE"},
		{func(c *Config) { c.MIGGeometry = "h999=x.yaml" }, "mig_geometry"},
	} {
		bad := small(nil, "h200-141gb", 1, "conspirator")
		c.set(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
	}
}

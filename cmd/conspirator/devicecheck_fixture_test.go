package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/realhw/swap"
)

// deviceCheck is the output of realhw/cuda/device-check.sh on a real H200
// (2026-11-27), committed as fixtures (its README says what ran).
var deviceCheck = filepath.Join("..", "..", "realhw", "data", "h200-2026-11-27", "device-check")

// mig import of the device's own nvidia-smi output gives the built-in H200
// geometry: the same profiles, IDs, slices, placements, instance counts,
// memory per instance in MiB and SMs; and the same geometry as the
// mig-geometry.yaml the device-side import wrote. Besides the source, one
// field differs, on purpose: the GPU's memory, which the import takes from
// the 7g instance (143,360 MiB, 140 GiB) and the catalog from the card's
// nominal 141 GiB (nvidia-smi says 143,771 MiB in 01-nvidia-smi.log).
func TestDeviceCheckFixtureMigImport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "g.yaml")
	code, _, stderr := cli(t, nil, "mig", "import", filepath.Join(deviceCheck, "mig-lgip.txt"), filepath.Join(deviceCheck, "mig-lgipp.txt"), "--name", "h200-141gb", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	read := func(path string) *mig.Geometry {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := mig.ReadYAML(path, b)
		if err != nil {
			t.Fatal(err)
		}
		g.Source = ""
		return g
	}
	got := read(out)
	spec, err := gpu.Lookup("h200-141gb")
	if err != nil {
		t.Fatal(err)
	}
	builtin := spec.MIG.Clone()
	builtin.Source = ""
	if got.MemoryBytes != 143360*mig.MiB || builtin.MemoryBytes != 141<<30 {
		t.Errorf("GPU memory: imported %d MiB, built-in %d MiB; want 143360 (the 7g instance) and 144384 (141 GiB)", got.MemoryBytes/mig.MiB, builtin.MemoryBytes/mig.MiB)
	}
	builtin.MemoryBytes = got.MemoryBytes
	if !reflect.DeepEqual(got, builtin) {
		t.Errorf("imported from the device:\n%+v\nbuilt-in h200-141gb:\n%+v", got, builtin)
	}
	// Hand-checked against mig-lgip.txt: 3g.71gb is ID 9, 60 SMs,
	// 69.75 GiB = 71,424 MiB, placements {0,4}.
	if p, ok := got.Profile("3g.71gb"); !ok || p.ID != 9 || p.SMs != 60 || p.MemoryBytes != 71424*mig.MiB || !reflect.DeepEqual(p.Starts, []int{0, 4}) {
		t.Errorf("3g.71gb imported as %+v", p)
	}
	if dev := read(filepath.Join(deviceCheck, "mig-geometry.yaml")); !reflect.DeepEqual(got, dev) {
		t.Errorf("imported here:\n%+v\nimported on the device (mig-geometry.yaml):\n%+v", got, dev)
	}
}

// calibrate --import of the device's cuda.csv and compute.csv gives the
// values of the profile the device-side import wrote
// (calibrate-import/profile.yaml): every stage fit, every proposed
// scenario value and where it came from, the compute table, the GPU.
// Only the date and the source paths (/tmp/dc/... there) differ, and the
// D2H factor, which the device's build did not fit yet.
func TestDeviceCheckFixtureCalibrateImport(t *testing.T) {
	made, dev := importAsDevice(t, deviceCheck)
	if want := []string{"/tmp/dc/cuda.csv", "/tmp/dc/compute.csv"}; !reflect.DeepEqual(dev.Provenance.Sources, want) {
		t.Errorf("fixture sources %q, want %q", dev.Provenance.Sources, want)
	}
	for _, p := range []*calib.Profile{made, dev} {
		p.Provenance.Date, p.Provenance.Sources = "", nil
	}
	if !reflect.DeepEqual(made.Stages, dev.Stages) {
		t.Errorf("stage fits differ from the device's:\nhere   %+v\ndevice %+v", made.Stages, dev.Stages)
	}
	if !reflect.DeepEqual(made.Compute, dev.Compute) || made.ComputeMode != dev.ComputeMode {
		t.Errorf("compute table differs from the device's:\nhere   %+v %s\ndevice %+v %s", made.Compute, made.ComputeMode, dev.Compute, dev.ComputeMode)
	}
	if !reflect.DeepEqual(made.Provenance, dev.Provenance) {
		t.Errorf("provenance differs from the device's:\nhere   %+v\ndevice %+v", made.Provenance, dev.Provenance)
	}
	// The pageable D2H factor is fitted since the device ran (from the
	// D2H pair as pageable_factor is from the H2D pair): here only. On
	// cuda.csv the pinned/pageable D2H time ratios at 1, 4, 16, 64 and
	// 256 MiB are 0.206, 0.202, 0.201, 0.199 and 0.201: median 0.201.
	const d2h = "datapath.host.pageable_d2h_factor"
	if v := made.Scenario[d2h]; v != "20.1%" || !strings.Contains(made.ScenarioFrom[d2h], "D2H time over 5 sizes from 1 MiB (cuda-d2h-pinned, cuda-d2h-pageable): 0.199 to 0.206") {
		t.Errorf("%s = %v (%s), want 20.1%% from the D2H pair", d2h, v, made.ScenarioFrom[d2h])
	}
	delete(made.Scenario, d2h)
	delete(made.ScenarioFrom, d2h)
	if !reflect.DeepEqual(made.Scenario, dev.Scenario) || !reflect.DeepEqual(made.ScenarioFrom, dev.ScenarioFrom) {
		t.Errorf("proposed values differ from the device's:\nhere   %v\ndevice %v", made.Scenario, dev.Scenario)
	}
	// Hand-checked against 07-calibrate-import.log.
	if v := dev.Scenario["datapath.host.pageable_factor"]; v != "23.9%" {
		t.Errorf("fixture pageable_factor %v, want 23.9%%", v)
	}
}

// backend.json of run paper/e2e --backend cuda on the device parses, every
// stage is either performed (with the backend call that performed it, 200
// times) or says why it stayed simulated, and the GPU compute stage says
// it is the stand-in kernel, not the model's.
func TestDeviceCheckFixtureBackendJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deviceCheck, "run-cuda", "backend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep swap.Report
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Backend != "cuda+host" || len(rep.Paths) != 4 {
		t.Fatalf("backend %q, %d paths", rep.Backend, len(rep.Paths))
	}
	performed := map[string]int{}
	computes := 0
	for _, r := range rep.Rows {
		if (r.Real == nil) == (r.Simulated == "") {
			t.Errorf("%s/%s: performed %v, simulated %q: want exactly one", r.Path, r.Stage, r.Real != nil, r.Simulated)
			continue
		}
		if r.Real == nil {
			continue
		}
		performed[r.Path]++
		if r.Real.Op == "" || r.Real.Reps != 200 || !(r.Real.P50US > 0) {
			t.Errorf("%s/%s: performed stage without its call, reps or time: %+v", r.Path, r.Stage, r.Real)
		}
		if r.Kind == "compute" {
			computes++
			if !strings.Contains(r.Real.Op, "stand-in kernel") || !strings.Contains(r.Real.Op, "not the model's kernels") {
				t.Errorf("%s/%s: the compute stage is not labelled as the stand-in kernel: %q", r.Path, r.Stage, r.Real.Op)
			}
		}
	}
	if computes != 4 {
		t.Errorf("%d compute stages performed, want one per path", computes)
	}
	for _, p := range rep.Paths {
		if p.Performed != performed[p.Path] {
			t.Errorf("%s: paths says %d stages performed, the rows %d", p.Path, p.Performed, performed[p.Path])
		}
	}
	// Hand-checked against 08-run-cuda.log's table.
	if performed["tcp"] != 9 || performed["gpudirect"] != 4 || performed["host-rdma"] != 6 || performed["conspirator"] != 5 {
		t.Errorf("performed stages per path %v, want tcp 9, gpudirect 4, host-rdma 6, conspirator 5", performed)
	}
}

// deviceCheck2 is the second run of device-check.sh on an H200 the same
// day, built from e710591: the D2H factor fitted on the device, the result
// copied back into pageable memory.
var deviceCheck2 = filepath.Join("..", "..", "realhw", "data", "h200-2026-11-27", "device-check-2")

// Its calibrate --import gives, here, the profile the device wrote, the
// D2H factor included; its backend.json copies the result into pageable
// memory on every path, as the model prices it.
func TestDeviceCheck2Fixture(t *testing.T) {
	made, dev := importAsDevice(t, deviceCheck2)
	for _, p := range []*calib.Profile{made, dev} {
		p.Provenance.Date, p.Provenance.Sources = "", nil
	}
	if !reflect.DeepEqual(made.Stages, dev.Stages) || !reflect.DeepEqual(made.Compute, dev.Compute) || !reflect.DeepEqual(made.Scenario, dev.Scenario) || !reflect.DeepEqual(made.ScenarioFrom, dev.ScenarioFrom) {
		t.Errorf("the import here differs from the device's:\nhere   %v\ndevice %v", made.Scenario, dev.Scenario)
	}
	// Hand-checked against 07-calibrate-import.log.
	if v := dev.Scenario["datapath.host.pageable_d2h_factor"]; v == nil || v == "" {
		t.Errorf("the device's import proposes no pageable_d2h_factor: %v", dev.Scenario)
	}
	b, err := os.ReadFile(filepath.Join(deviceCheck2, "run-cuda", "backend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep swap.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rep.Rows {
		if r.Stage == "sync+d2h" && r.Real != nil {
			n++
			if !strings.Contains(r.Real.Op, "into pageable memory") {
				t.Errorf("%s: the result copy %q is not into pageable memory", r.Path, r.Real.Op)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d result copies performed, want one per path", n)
	}
}

// importAsDevice runs, here, the calibrate --import the device check in
// dir ran (its cuda.csv and compute.csv, the H200, its driver) and returns
// the profile it makes beside the one the device wrote.
func importAsDevice(t *testing.T, dir string) (made, dev *calib.Profile) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cal")
	code, _, stderr := cli(t, nil, "calibrate", "--import", filepath.Join(dir, "cuda.csv"), "--import", filepath.Join(dir, "compute.csv"),
		"--gpu-type", "h200-141gb", "--gpu-driver", "580.159.04", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	made, err := calib.LoadProfile(filepath.Join(out, "profile.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if dev, err = calib.LoadProfile(filepath.Join(dir, "calibrate-import", "profile.yaml")); err != nil {
		t.Fatal(err)
	}
	return made, dev
}

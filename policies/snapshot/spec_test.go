package snapshot

import (
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// TestModelFromSpecSharesTheGeometry checks that the policy view of every
// catalog GPU asks hw/mig, the one place that knows MIG: the same geometry,
// not a copy that could drift, and CheckLayout gives the geometry's verdict
// (hw/mig's TestOccupancyAgreesWithValidate checks that verdict against a
// second implementation).
func TestModelFromSpecSharesTheGeometry(t *testing.T) {
	migGPUs := 0
	for _, name := range gpu.Names() {
		spec, err := gpu.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		m := ModelFromSpec(spec)
		if m.Name != spec.Name || m.MIG != spec.MIG || m.IsMIG() != (spec.MIG != nil) {
			t.Errorf("%s: policy view %+v does not share the catalog's geometry", name, m)
		}
		if spec.MIG == nil {
			if err := CheckLayout(&m, []Instance{{Profile: "1g.5gb", Start: 0}}); err == nil || !strings.Contains(err.Error(), "non-MIG") {
				t.Errorf("%s: MIG instance on a non-MIG GPU: %v", name, err)
			}
			continue
		}
		migGPUs++
		for _, l := range spec.MIG.Layouts(true) {
			if err := CheckLayout(&m, l); err != nil {
				t.Fatalf("%s: maximal layout %s refused: %v", name, l, err)
			}
		}
	}
	if migGPUs < 6 {
		t.Errorf("%d MIG GPUs in the catalog; want A100-40/80, H100-80/94, H200, A30 at least", migGPUs)
	}
}

package snapshot

import (
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// TestCheckLayoutAgreesWithGPUValidate compares CheckLayout with the second,
// independent implementation gpu.Spec.Validate: on every legal layout of
// each MIG catalog type both accept, and on every layout extended by one
// more placement (profile x start) both give the same verdict.
func TestCheckLayoutAgreesWithGPUValidate(t *testing.T) {
	for _, name := range gpu.Names() {
		spec, err := gpu.Lookup(name)
		if err != nil || !spec.MIG {
			continue
		}
		m := ModelFromSpec(spec)
		layouts := spec.Layouts(false)
		if len(layouts) == 0 {
			t.Fatalf("%s: no layouts", name)
		}
		checked := 0
		for _, l := range layouts {
			for _, p := range spec.Profiles {
				for _, st := range p.Starts {
					ext := l.With(gpu.Placement{Profile: p, Start: st})
					in := make([]Instance, len(ext))
					for k, pl := range ext {
						in[k] = Instance{Profile: pl.Profile.Name, Start: pl.Start}
					}
					want := spec.Validate(ext) == nil
					if got := CheckLayout(&m, in) == nil; got != want {
						t.Fatalf("%s layout %s: CheckLayout legal=%v, gpu.Validate legal=%v", name, ext, got, want)
					}
					checked++
				}
			}
		}
		t.Logf("%s: %d layouts, %d extensions agree", name, len(layouts), checked)
	}
}

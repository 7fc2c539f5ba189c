//go:build !cuda

package cuda

import (
	"errors"
	"strings"
	"testing"
)

// Without -tags cuda, Measure returns no samples and ErrNotBuilt, whose
// message says how to build the backend. (The tagged build's tests are in
// cuda_tagged_test.go: against the no-device stand-in in CI, and on a GPU.)
func TestMeasureWithoutCUDA(t *testing.T) {
	samples, err := Measure([]int64{4096}, 1)
	if !errors.Is(err, ErrNotBuilt) || samples != nil {
		t.Fatalf("Measure = %v, %v; want no samples and ErrNotBuilt in a build without -tags cuda", samples, err)
	}
	if !strings.Contains(err.Error(), "-tags cuda") {
		t.Errorf("error %q does not say how to build the backend", err)
	}
}

// The rest of the API says the same.
func TestAPIWithoutCUDA(t *testing.T) {
	if Built {
		t.Fatal("Built is true in a build without -tags cuda")
	}
	_, e1 := NewBackend()
	_, e2 := DeviceInfo()
	_, e3 := MeasureEach([]int64{4096}, 1)
	for _, e := range []error{e1, e2, e3} {
		if !errors.Is(e, ErrNotBuilt) {
			t.Errorf("%v, want ErrNotBuilt", e)
		}
	}
	if v := version(12040); v != "12.4" {
		t.Errorf("version(12040) = %q, want 12.4", v)
	}
}

package cuda

import (
	"errors"
	"testing"
)

// In the default build the package exists and says how to enable it. The
// -tags cuda build is tested in cuda_tagged_test.go.
func TestMeasureWithoutCUDA(t *testing.T) {
	_, err := Measure([]int64{4096}, 1)
	if err == nil {
		t.Skip("built with -tags cuda and a GPU answered")
	}
	if !errors.Is(err, ErrNotBuilt) {
		t.Logf("Measure: %v (a cuda build on a machine without a usable GPU)", err)
	}
}

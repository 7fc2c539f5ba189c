//go:build !cuda

package cuda

import "github.com/conspirator-sim/conspirator/realhw"

// Built says whether this binary was built with -tags cuda.
const Built = false

// Measure reports ErrNotBuilt.
func Measure([]int64, int) ([]realhw.Sample, error) { return nil, ErrNotBuilt }

// MeasureEach reports ErrNotBuilt.
func MeasureEach([]int64, int) ([]realhw.Sample, error) { return nil, ErrNotBuilt }

// DeviceInfo reports ErrNotBuilt.
func DeviceInfo() (Info, error) { return Info{}, ErrNotBuilt }

// NewBackend reports ErrNotBuilt.
func NewBackend() (realhw.Backend, error) { return nil, ErrNotBuilt }

//go:build !cuda

package cuda

import "github.com/conspirator-sim/conspirator/realhw"

// Measure reports ErrNotBuilt.
func Measure([]int64, int) ([]realhw.Sample, error) { return nil, ErrNotBuilt }

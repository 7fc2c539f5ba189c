package snapshot

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// ModelFromSpec returns the policy view of a catalog GPU type: its name and
// its MIG geometry, shared, not copied.
func ModelFromSpec(s gpu.Spec) GPUModel {
	return GPUModel{Name: s.Name, MIG: s.MIG}
}

// LookupModel returns the policy view of the catalog GPU type called name
// (any spelling gpu.Lookup accepts).
func LookupModel(name string) (GPUModel, error) {
	s, err := gpu.Lookup(name)
	if err != nil {
		return GPUModel{}, fmt.Errorf("GPU model: %w", err)
	}
	return ModelFromSpec(s), nil
}

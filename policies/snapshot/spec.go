package snapshot

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

// ModelFromSpec returns the policy view of a catalog GPU type.
func ModelFromSpec(s gpu.Spec) GPUModel {
	m := GPUModel{Name: s.Name, MIG: s.MIG}
	if !s.MIG {
		return m
	}
	m.ComputeSlices, m.MemorySlices = gpu.MIGComputeSlices, gpu.MIGMemorySlices
	for _, p := range s.Profiles {
		m.Profiles = append(m.Profiles, MIGProfile{
			Name: p.Name, Compute: p.Compute, MemSlices: p.MemSlices,
			Starts: append([]int(nil), p.Starts...), MaxCount: p.MaxCount,
		})
	}
	return m
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

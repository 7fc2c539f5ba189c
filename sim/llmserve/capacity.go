package llmserve

import (
	"math"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// MaxCapacityRates bounds capacity.rates: each rate is a search of its own
// over every GPU type and TP degree.
const MaxCapacityRates = 64

// CapacityConfig is the configuration search `conspirator llm capacity`
// runs on a scenario: the GPU types, TP degrees and request rates to try,
// and the most GPUs a configuration may take. A flag of the command
// overrides its key; an empty list takes the section's own value (gpu,
// tp, the workload's rate). It changes nothing of `run`.
type CapacityConfig struct {
	GPUTypes []string     `yaml:"gpu_types" doc:"GPU types the configuration search prices (hw/gpu names; --gpu-types); []: the section's gpu" default:"[]"`
	TP       []int        `yaml:"tp" doc:"tensor-parallel degrees the configuration search tries (--tp); []: the section's tp" default:"[]"`
	Rates    []units.Rate `yaml:"rates" doc:"request rates the configuration search serves, e.g. [5/s, 20/s] (--rates); []: the workload's own" default:"[]"`
	MIG      []string     `yaml:"mig" doc:"MIG profiles the configuration search tries as replicas beside whole GPUs, each at tp 1 and charged its larger share of the GPU's compute and memory slices (--mig); []: none" default:"[]"`
	MaxGPUs  int          `yaml:"max_gpus" doc:"the most GPUs (replicas x tp) a configuration may take (--max-gpus)" default:"64"`
}

// Searches says whether the section asks for a configuration search
// (any list given).
func (c CapacityConfig) Searches() bool {
	return len(c.GPUTypes) > 0 || len(c.TP) > 0 || len(c.Rates) > 0 || len(c.MIG) > 0
}

func (c CapacityConfig) validate(add func(key, format string, a ...any)) {
	for i, n := range c.GPUTypes {
		if _, err := gpu.Lookup(strings.TrimSpace(n)); err != nil {
			add("capacity.gpu_types", "entry %d: %v", i+1, err)
		}
	}
	for i, tp := range c.TP {
		if tp < 1 || tp > llm.MaxTP {
			add("capacity.tp", "entry %d: %d; want 1 to %d GPUs per replica", i+1, tp, llm.MaxTP)
		}
	}
	if len(c.Rates) > MaxCapacityRates {
		add("capacity.rates", "%d rates; want at most %d (each is a search of its own)", len(c.Rates), MaxCapacityRates)
	}
	for i, r := range c.Rates {
		if v := float64(r); !(v > 0) || math.IsInf(v, 0) {
			add("capacity.rates", "entry %d: %v; want a rate above 0, e.g. 10/s", i+1, r)
		}
	}
	if c.MaxGPUs < 1 || c.MaxGPUs > MaxReplicas*llm.MaxTP {
		add("capacity.max_gpus", "%d; want 1 to %d GPUs", c.MaxGPUs, MaxReplicas*llm.MaxTP)
	}
}

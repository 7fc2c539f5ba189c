package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim/alloc"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	"github.com/conspirator-sim/conspirator/sim/training"
)

// Scenario is the top level of a scenario file: the one config struct of a
// run. Each simulation owns the section it reads (datapath.Config here,
// with its defaults and validation beside the model that uses them); this
// package composes them, loads them strictly and documents every key
// (docs/scenario-keys.md, `conspirator scenarios schema`).
type Scenario struct {
	Name        string           `yaml:"name" doc:"short identifier used in output file names and plot titles"`
	Seed        uint64           `yaml:"seed" default:"1" doc:"seed of every random stream; the same seed gives byte-identical results"`
	Description string           `yaml:"description" doc:"free text shown by 'conspirator scenarios show'"`
	DataPath    *datapath.Config `yaml:"datapath" json:"datapath,omitempty" doc:"request-level simulation of the four data paths (tcp, gpudirect, host-rdma, conspirator); absent means not simulated"`
	Cluster     *cluster.Config  `yaml:"cluster" json:"cluster,omitempty" doc:"job-level simulation of GPU scheduling policies over a trace on MIG-partitioned, heterogeneous GPUs; absent means not simulated"`
	Allocation  *alloc.Config    `yaml:"allocation" json:"allocation,omitempty" doc:"the FGD paper's allocation experiment: pods of an openb pod list (CPU-only ones included) resampled to a multiple of the GPU capacity and placed one by one, never leaving, on the servers of a node list by node-level policies; absent means not simulated"`
	// Training is omitted from the resolved inputs when absent (omitempty),
	// so that adding it left the identity (inputs_sha256) of every
	// scenario without it as it was.
	Training *training.Config `yaml:"training,omitempty" json:"training,omitempty" doc:"distributed training that communicates: jobs iterating compute and gradient synchronisation on a rack's links, with in-network aggregation whose scarce aggregator memory (switch or SmartNIC) is shared by a policy (static, atp, esa, none); absent means not simulated"`
	// LLM, like Training, is omitted from the resolved inputs when absent.
	LLM         *llmserve.Config `yaml:"llm,omitempty" json:"llm,omitempty" doc:"LLM inference serving: replicas of one model on GPUs or MIG slices, each a vLLM-style continuous-batching scheduler over a paged KV cache, fed by a trace (Azure, Mooncake, BurstGPT) or a synthetic workload; TTFT, TPOT, throughput and goodput under SLOs; absent means not simulated"`
	Cost        *Cost            `yaml:"cost" json:"cost,omitempty" doc:"cost and power table of the control-plane processors; absent means: compare the simulated host CPU and SmartNIC on the same control work"`
	Calibration string           `yaml:"calibration" json:"calibration,omitempty" doc:"calibration profile (YAML written by 'conspirator calibrate') whose fitted values override the defaults; a relative path is relative to the scenario file; --set still wins"`
	Sweep       []string         `yaml:"sweep,omitempty" json:"sweep,omitempty" doc:"the scenario's own sweep, one swept key per entry as --param writes it (key=v1,v2,...): 'conspirator sweep' runs it when given no --param; 'run' ignores it"`

	// CalibrationTrace says what the calibration profile set and where
	// each value was measured; filled by the loader of the profile (the
	// CLI), not a scenario key. Runs copy it into summary.json.
	CalibrationTrace *CalibrationTrace `yaml:"-" json:"-"`
}

// CalibrationTrace is what a calibration profile applied to a run: the
// profile, when and on what machine it was measured, and every value it
// set with the measurement behind it.
type CalibrationTrace struct {
	Profile string            `json:"profile"`
	Date    string            `json:"date,omitempty"`
	Tool    string            `json:"tool"`
	Machine string            `json:"machine"`
	Sources []string          `json:"sources,omitempty"`
	Values  []CalibratedValue `json:"values"`
}

// CalibratedValue is one key a profile set. OverriddenBySet marks a key
// the user's --set gave another value, which the run used instead.
type CalibratedValue struct {
	Key             string `json:"key"`
	Value           string `json:"value"`
	From            string `json:"from"`
	OverriddenBySet bool   `json:"overridden_by_set,omitempty"`
}

// Validate refuses a scenario with nothing to simulate: without a
// datapath, cluster or cost section a run would produce an empty result
// (an empty or name-only file would otherwise pass validate and fail only
// when its report is drawn).
func (s *Scenario) Validate() error {
	if s.DataPath == nil && s.Cluster == nil && s.Cost == nil && s.Allocation == nil && s.Training == nil && s.LLM == nil {
		return errors.New("nothing to simulate: the scenario has no datapath, cluster, allocation, training, llm or cost section; add one (start from 'conspirator scenarios show paper/e2e', 'paper/gpu-hours', 'paper/fgd-allocation', 'paper/ina' or 'llm/azure-conv')")
	}
	if _, err := SweepParams(s.Sweep); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// SweepParam is one swept key and its values.
type SweepParam struct {
	Key    string
	Values []string
}

// SweepParams reads swept keys written key=v1,v2,... (a scenario's sweep
// list and the sweep command's --param flags): the one parser of that
// form. Whether each key and value is valid is checked by loading the
// scenario with it.
func SweepParams(raw []string) ([]SweepParam, error) {
	var ps []SweepParam
	for _, r := range raw {
		k, v, ok := strings.Cut(r, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("%q: write key=v1,v2,... (e.g. datapath.host.background_load=0%%,40%%,80%%)", r)
		}
		var vals []string
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x == "" {
				return nil, fmt.Errorf("%q: empty value in the list", r)
			}
			vals = append(vals, x)
		}
		ps = append(ps, SweepParam{Key: k, Values: vals})
	}
	return ps, nil
}

// Cost lists the processors of a cost and power comparison. The first one
// is the baseline the others are normalised to, as in the paper's table.
type Cost struct {
	Processors []Processor `yaml:"processors" json:"processors" doc:"processors to compare; the first is the baseline (cost-effectiveness 1.0)"`
}

// Processor is one row of the cost table.
type Processor struct {
	Name       string      `yaml:"name" json:"name" doc:"label in tables and plots"`
	Price      units.Money `yaml:"price" json:"price" doc:"purchase price, e.g. $231"`
	Power      units.Power `yaml:"power" json:"power" doc:"power draw, e.g. 150W"`
	Throughput float64     `yaml:"throughput" json:"throughput" doc:"control-plane throughput in any unit shared by all rows (the paper normalises the host CPU to 1000)"`
}

// Validate checks the cost section.
func (c *Cost) Validate() error {
	if len(c.Processors) == 0 {
		return units.Invalid("processors", "list at least one processor (the first is the baseline)")
	}
	return nil
}

// Validate checks one processor row.
func (p Processor) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, units.Invalid("name", "give the processor a name, e.g. host-cpu"))
	}
	if p.Price <= 0 {
		errs = append(errs, units.Invalid("price", "must be above $0, got %s", p.Price))
	}
	if p.Power <= 0 {
		errs = append(errs, units.Invalid("power", "must be above 0W, got %s", p.Power))
	}
	if !(p.Throughput > 0) {
		errs = append(errs, units.Invalid("throughput", "must be a number above 0, got %v", fmt.Sprint(p.Throughput)))
	}
	return errors.Join(errs...)
}

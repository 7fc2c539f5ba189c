package scenarios

import (
	"errors"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// The loader is generic over config structs. Its tests use this small,
// frozen schema (the first cut of the scenario schema) so that they keep
// testing the loader, not the simulator's evolving sections.

// tScenario is the top level of a scenario file. Its sections are the
// place where the simulator's models get their parameters: this first cut
// holds a deliberately small set of keys, to be extended by the data-path
// and cluster work (add fields with yaml, doc and default tags, and a
// Validate method on the section; docs/scenario-keys.md is regenerated
// from the tags).
type tScenario struct {
	Name        string     `yaml:"name" doc:"short identifier used in output file names and plot titles"`
	Seed        uint64     `yaml:"seed" default:"1" doc:"seed of every random stream; the same seed gives byte-identical results"`
	Description string     `yaml:"description" doc:"free text shown by 'conspirator scenarios show'"`
	DataPath    *tDataPath `yaml:"datapath" doc:"request-level simulation of the four data paths; absent means not simulated"`
	Cluster     *tCluster  `yaml:"cluster" doc:"job-level simulation of GPU scheduling over a trace; absent means not simulated"`
}

// tDataPath configures the request-level simulation (extend here).
type tDataPath struct {
	Paths    []string `yaml:"paths" default:"[tcp, gpudirect, host_rdma, smartnic]" doc:"data paths to compare: tcp (1), gpudirect (2), host_rdma (3), smartnic (4, Conspirator)"`
	Requests int      `yaml:"requests" default:"10000" doc:"requests simulated per path"`
	Host     tHost    `yaml:"host" doc:"the GPU server's host CPU"`
}

// tHost describes the server's host CPU (extend here).
type tHost struct {
	Cores          int            `yaml:"cores" default:"32" doc:"host CPU cores available to the serving stack and the background load"`
	BackgroundLoad units.Fraction `yaml:"background_load" default:"0%" doc:"share of host CPU time taken by other tenants' work"`
}

// tCluster configures the job-level scheduling simulation (extend here).
type tCluster struct {
	Trace    string      `yaml:"trace" doc:"job trace file (path relative to the working directory)"`
	Policies []string    `yaml:"policies" default:"[naive, first_fit, conspirator]" doc:"scheduling policies to compare"`
	GPUs     []tGPUGroup `yaml:"gpus" doc:"the cluster's GPUs, one entry per model"`
}

// tGPUGroup is a number of identical GPUs (extend here).
type tGPUGroup struct {
	Model string `yaml:"model" doc:"GPU model from the hardware catalog, e.g. A100-40GB"`
	Count int    `yaml:"count" default:"1" doc:"number of GPUs of this model"`
}

// Known data-path names; the data-path work owns the real list.
var tKnownPaths = map[string]bool{"tcp": true, "gpudirect": true, "host_rdma": true, "smartnic": true}

// Validate checks the data-path section's own keys.
func (d *tDataPath) Validate() error {
	var errs []error
	if len(d.Paths) == 0 {
		errs = append(errs, units.Invalid("paths", "list at least one path (tcp, gpudirect, host_rdma, smartnic)"))
	}
	seen := map[string]bool{}
	for i, p := range d.Paths {
		if !tKnownPaths[p] {
			errs = append(errs, units.Invalid("paths", "item %d: unknown path %q; known: gpudirect, host_rdma, smartnic, tcp", i, p))
		}
		if seen[p] {
			errs = append(errs, units.Invalid("paths", "path %q listed twice", p))
		}
		seen[p] = true
	}
	if d.Requests < 1 {
		errs = append(errs, units.Invalid("requests", "must be at least 1, got %d", d.Requests))
	}
	return errors.Join(errs...)
}

// Validate checks the host section.
func (h tHost) Validate() error {
	if h.Cores < 1 {
		return units.Invalid("cores", "must be at least 1, got %d", h.Cores)
	}
	return nil
}

// Validate checks the cluster section.
func (c *tCluster) Validate() error {
	var errs []error
	if len(c.Policies) == 0 {
		errs = append(errs, units.Invalid("policies", "list at least one policy"))
	}
	return errors.Join(errs...)
}

// Validate checks one GPU group.
func (g tGPUGroup) Validate() error {
	var errs []error
	if g.Model == "" {
		errs = append(errs, units.Invalid("model", "name a GPU model, e.g. A100-40GB"))
	}
	if g.Count < 1 {
		errs = append(errs, units.Invalid("count", "must be at least 1, got %d", g.Count))
	}
	return errors.Join(errs...)
}

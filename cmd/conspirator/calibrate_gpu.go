package main

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/scenarios"
)

// gpuSideOverrides checks that a profile measured on a GPU is applied to
// a scenario whose data path runs that GPU, whole, and adds the measured
// compute time of the scenario's model and batch to the profile's
// overrides (datapath.request.compute_time). A profile without GPU-side
// measurements, or a scenario without a data path, is left as it is.
func gpuSideOverrides(prof *calib.Profile, path string, sc *scenarios.Scenario) error {
	g := prof.Provenance.GPU
	if g == nil || g.Type == "" || sc == nil || sc.DataPath == nil {
		return nil
	}
	dp := sc.DataPath
	for i, x := range dp.GPUs {
		if canonicalGPU(x.Type) != g.Type {
			return usagef("calibration profile %s was measured on %s, but datapath.gpus[%d] is %s: run that GPU (--set 'datapath.gpus=[{type: %s, count: %d}]') or use a profile measured on %s",
				path, g.Type, i, x.Type, g.Type, max(1, x.Count), x.Type)
		}
		if x.Profile != "" && len(prof.Compute) > 0 {
			return usagef("calibration profile %s: its compute times were measured on the whole %s, but datapath.gpus[%d] is a MIG instance (%s); drop the profile key or measure on the instance", path, g.Type, i, x.Profile)
		}
	}
	if len(prof.Compute) == 0 {
		return nil
	}
	sec, from, err := prof.ComputeTime(dp.Request.Model, dp.Request.Batch)
	if err != nil {
		return usagef("calibration profile %s: datapath.request (model %s, batch %d): %v", path, dp.Request.Model, dp.Request.Batch, err)
	}
	if prof.Scenario == nil {
		prof.Scenario, prof.ScenarioFrom = map[string]any{}, map[string]string{}
	}
	if prof.ScenarioFrom == nil {
		prof.ScenarioFrom = map[string]string{}
	}
	const key = "datapath.request.compute_time"
	prof.Scenario[key] = units.Duration(engine.Seconds(sec)).String()
	prof.ScenarioFrom[key] = fmt.Sprintf("%s (driver %s, CUDA %s, torch %s)", from, g.Driver, g.CUDA, g.Torch)
	return nil
}

package cluster

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
)

// openbShares is the GPU share (GPUMilli) of openb's single-GPU pods with
// its count in openb_pod_list_default.csv (num_gpu = 1 rows; the 13 most
// common values, 99% of those pods). Kept here so that snapshots need no
// trace file.
var openbShares = []struct{ milli, count int }{
	{1000, 3911}, {810, 1078}, {470, 750}, {320, 328}, {650, 253}, {230, 140}, {460, 128},
	{590, 75}, {160, 74}, {550, 72}, {220, 62}, {370, 47}, {110, 24},
}

// SyntheticSnapshot returns a deterministic scheduling snapshot of jobs
// single-GPU openb-like jobs (shares drawn from openb's mix) on gpus
// A100-40GB, built the way Run builds its snapshots (MIG options as
// MIGOptionsFitting, speeds of the resnet50 model, one shared tenant,
// migration cost 1). About half the jobs, the earliest ones, already run:
// each in its smallest profile at the first free place, lowest GPU first;
// the rest are pending. Every GPU is shown. The same (seed, jobs, gpus)
// give the same snapshot; it is for measuring decision time on a fixed
// set of problems (benchmarks, calibration).
func SyntheticSnapshot(seed uint64, jobs, gpus int) (*snapshot.Snapshot, error) {
	if jobs < 0 || gpus < 1 {
		return nil, fmt.Errorf("cluster: synthetic snapshot of %d jobs on %d GPUs; want jobs >= 0 and gpus >= 1", jobs, gpus)
	}
	cfg := Defaults()
	cfg.Trace, cfg.Nodes = "", ""
	cfg.GPUs = []GPUGroup{{Model: "a100-40gb", Count: gpus}}
	tm, _ := gpu.ParseTraceTypeMap("")
	types, _, _, _, err := buildCluster(cfg, nil, nil, 0, tm)
	if err != nil {
		return nil, err
	}
	r := engine.NewStream(seed, fmt.Sprintf("cluster/synthetic-snapshot/%d/%d", jobs, gpus))
	total := 0
	for _, s := range openbShares {
		total += s.count
	}
	js := make([]workloads.Job, jobs)
	for k := range js {
		x := r.IntN(total)
		i := 0
		for x >= openbShares[i].count {
			x -= openbShares[i].count
			i++
		}
		js[k] = workloads.Job{ID: fmt.Sprint("j", k), NumGPU: 1, GPUMilli: openbShares[i].milli, Duration: engine.Second}
	}
	pl, err := newPlanner(cfg, types, tm)
	if err != nil {
		return nil, err
	}
	plans := make([]jobPlan, len(js))
	for k := range js {
		if plans[k], err = pl.plan(k, &js[k]); err != nil {
			return nil, err
		}
	}
	m := types[0].migModel
	s := &snapshot.Snapshot{GPUs: make([]snapshot.GPU, gpus)}
	for k := range s.GPUs {
		s.GPUs[k] = snapshot.GPU{ID: k, Model: m}
	}
	running := true
	for k := range plans {
		j := snapshot.Job{ID: k, Options: plans[k].optsMIG, MigrationCost: cfg.MigrationCost}
		if running && r.Float64() < 0.5 {
			if pl, ok := firstFree(s, &m, k, j.Options[0].Profile); ok {
				j.Current = &pl
				g := &s.GPUs[pl.GPU]
				g.Instances = append(g.Instances, snapshot.Instance{Profile: pl.Profile, Start: pl.Start})
			} else {
				running = false // the GPUs are full: the rest waits
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	if err := snapshot.CheckSnapshot(s); err != nil {
		return nil, fmt.Errorf("cluster: internal error, synthetic snapshot is invalid: %w", err)
	}
	return s, nil
}

// firstFree returns the first legal place of profile on the GPUs of s,
// lowest GPU and start first.
func firstFree(s *snapshot.Snapshot, m *snapshot.GPUModel, job int, profile string) (snapshot.Placement, bool) {
	p, ok := m.Profile(profile)
	if !ok {
		return snapshot.Placement{}, false
	}
	for gi := range s.GPUs {
		for _, st := range p.Starts {
			layout := append(append([]snapshot.Instance(nil), s.GPUs[gi].Instances...), snapshot.Instance{Profile: profile, Start: st})
			if snapshot.CheckLayout(m, layout) == nil {
				return snapshot.Placement{JobID: job, GPU: s.GPUs[gi].ID, Profile: profile, Start: st}, true
			}
		}
	}
	return snapshot.Placement{}, false
}

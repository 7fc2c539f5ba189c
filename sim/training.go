package sim

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"io/fs"
	"strings"

	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/training"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// TrainingSummary is summary.json's training section.
type TrainingSummary struct {
	// Device is the aggregating device; Slots its pool and Window the
	// slots a job's window asks for, as used.
	Device string `json:"device"`
	Slots  int    `json:"slots"`
	Window int    `json:"window"`
	// InFlight is the slots a synchronising job holds at once (its
	// bandwidth-delay product); Fallback where chunks the device does not
	// aggregate go; Hash how atp and esa map windows onto the pool.
	InFlight int `json:"in_flight"`
	// Use is ina.use: which spanning jobs aggregate (each policy's
	// jobs_on_host_ring counts those that did not).
	Use      string `json:"use"`
	Fallback string `json:"fallback"`
	Hash     string `json:"hash"`
	// Placement is server (each server's SmartNIC, ServerNIC, sums its
	// GPUs first) or absent for rack, the default, so that the summaries
	// of rack runs read as before.
	Placement string `json:"placement,omitempty"`
	ServerNIC string `json:"server_nic,omitempty"`
	// Models are the models trained, with their compute on the rack's GPU
	// and whether the figure is derived rather than measured.
	Models   []training.ModelInfo    `json:"models"`
	Jobs     int                     `json:"jobs"`
	Baseline string                  `json:"baseline,omitempty"`
	Policies []training.PolicyResult `json:"policies"`
}

// trainingEnv reads the training section's files for the model, turning
// a missing file into the usual message naming its key.
func trainingEnv(cfg training.Config) training.Env {
	notFound := func(key, path string, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return missingInput(key, path)
		}
		return &cluster.InputError{Err: fmt.Errorf("%s: %w", key, err)}
	}
	return training.Env{
		ReadList: func(p string) ([]train.Job, error) {
			jobs, err := train.ReadJobList(p)
			if err != nil {
				return nil, notFound("training.jobs.list", p, err)
			}
			return jobs, nil
		},
		ReadTrace: func(p string) ([]train.Job, error) {
			r, err := trace.ImportFile(p, trace.Options{Strict: true})
			if err != nil {
				return nil, notFound("training.jobs.trace", p, err)
			}
			jobs, err := train.FromTrace(r.Jobs, cfg.Jobs.Model, cfg.Cluster.GPU)
			if err != nil {
				return nil, notFound("training.jobs.trace", p, err)
			}
			return jobs, nil
		},
	}
}

// missingInput is the error for an input file that is not there, with
// where to get one: a job list is not an Alibaba trace.
func missingInput(key, path string) error {
	if strings.HasPrefix(key, "llm.") {
		return llmMissing(key, path)
	}
	if key != "training.jobs.list" {
		return &cluster.InputError{Err: fmt.Errorf("%s: file %s not found%s; %s", key, path, resolved(path), cluster.Hint(key, path))}
	}
	return &cluster.InputError{Err: fmt.Errorf("%s: file %s not found%s; a job list is a CSV with num_gpu,submit_time,iterations,model, such as the 5,335-job alibaba.csv of github.com/ChenYuHo/SwitchML-omnetpp; or set training.jobs.source: synthetic", key, path, resolved(path))}
}

// resolved says where a relative path led (trace.Resolved).
func resolved(path string) string { return trace.Resolved(path) }

// runTraining runs the training section and adds its files.
func runTraining(cfg training.Config, seed uint64, files map[string][]byte, prog progress.Func) (*TrainingSummary, error) {
	env := trainingEnv(cfg)
	env.Progress = prog
	res, err := training.Run(cfg, seed, env)
	if err != nil {
		return nil, err
	}
	files["training_jobs.csv"] = trainingJobsCSV(res)
	files["occupancy.csv"] = occupancyCSV(res)
	sum := &TrainingSummary{Device: res.Device, Slots: res.Slots, Window: res.Window, InFlight: res.InFlight, Use: res.Use, Fallback: res.Fallback, Hash: res.Hash, ServerNIC: res.ServerNIC, Models: res.Models, Jobs: res.Jobs, Baseline: res.Baseline, Policies: res.Policies}
	if res.Placement != training.PlacementRack {
		sum.Placement = res.Placement
	}
	return sum, nil
}

// trainingJobsCSV writes one row per job and policy (the first seed's).
func trainingJobsCSV(r *training.Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,id,model,gpus,servers,iterations,arrival_s,start_s,end_s,jct_s,compute_s,comm_s,wait_s,on_host_ring\n")
	for _, p := range r.Policies {
		for _, j := range p.JobRecords {
			jct := -1.0
			if j.EndS >= 0 {
				jct = j.EndS - j.ArrivalS
			}
			ring := 0
			if j.OnHostRing {
				ring = 1
			}
			fmt.Fprintf(&b, "%s,%s,%s,%d,%d,%d,%s,%s,%s,%s,%s,%s,%s,%d\n", csvField(p.Name), csvField(j.ID), j.Model, j.GPUs, j.Servers, j.Iterations,
				num(j.ArrivalS), num(j.StartS), num(j.EndS), num(jct), num(j.ComputeS), num(j.CommS), num(j.WaitS), ring)
		}
	}
	return b.Bytes()
}

// occupancyCSV writes the aggregator slots each job held over time.
func occupancyCSV(r *training.Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,time_s,job,slots\n")
	for _, p := range r.Policies {
		for _, o := range p.Occupancy {
			fmt.Fprintf(&b, "%s,%s,%d,%s\n", csvField(p.Name), num(o.T), o.Job, num(o.Slots))
		}
	}
	return b.Bytes()
}

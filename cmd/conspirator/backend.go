package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/realhw/cuda"
	"github.com/conspirator-sim/conspirator/realhw/host"
	"github.com/conspirator-sim/conspirator/realhw/swap"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// checkBackend refuses, before anything runs, a --backend the scenario
// or this binary cannot serve.
func checkBackend(name string, sc *scenarios.Scenario, reps int) error {
	switch name {
	case "host":
	case "cuda":
		if err := cudaReady("--backend cuda"); err != nil {
			return err
		}
	case "rdma":
		return usagef("--backend rdma: the RDMA backend is built with -tags rdma and its measurements are imported with calibrate --import (perftest output)")
	default:
		return usagef("--backend %q: use host or cuda", name)
	}
	if sc.DataPath == nil {
		return usagef("--backend %s swaps data-path stages for real ones; scenario %s has no datapath section", name, sc.Name)
	}
	if !sc.DataPath.RecordRequests {
		return usagef("--backend %s needs the model's stage times per request: set datapath.record_requests=true", name)
	}
	if reps < 1 || reps > 100000 {
		return usagef("--backend-reps %d must be in [1, 100000]", reps)
	}
	if u := float64(sc.DataPath.Host.BackgroundLoad); u > host.MaxLoadFraction {
		return usagef("--backend %s: the scenario's background load %v is above the %v the load generator runs", name, u, host.MaxLoadFraction)
	}
	return nil
}

// runBackend performs on the host backend the data-path stages it can,
// under the scenario's background load, and returns backend.json
// (checkBackend has passed).
func runBackend(name string, sc *scenarios.Scenario, out *sim.Output, reps int) (*swap.Report, []byte, error) {
	u := float64(sc.DataPath.Host.BackgroundLoad)
	hb, err := host.NewBackend()
	if err != nil {
		return nil, nil, err
	}
	var b realhw.Backend = hb
	if name == "cuda" {
		// The GPU's stages on the GPU, the network and CPU on the host.
		cb, err := cuda.NewBackend()
		if err != nil {
			hb.Close()
			return nil, nil, usageError{fmt.Errorf("--backend cuda: %w", err)}
		}
		b = realhw.Combine(cb, hb)
	}
	defer b.Close()
	var load *host.Load
	if u > 0 {
		if load, err = host.StartLoad(host.LoadConfig{Fraction: u}); err != nil {
			return nil, nil, err
		}
	}
	rep, err := swap.Run(*sc.DataPath, out.Summary.Paths, b, reps)
	if load != nil {
		if lr := load.Stop(); err == nil && lr.Err != nil {
			err = lr.Err
		}
	}
	if err != nil {
		return nil, nil, err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return rep, append(js, '\n'), nil
}

// printBackend writes the model's stage times beside the backend's.
func printBackend(w io.Writer, rep *swap.Report) {
	fmt.Fprintf(w, "\nstages on the %s backend beside the model (background load %.0f%%; %s):\n", rep.Backend, 100*rep.BackgroundLoad, reports.BackendFile)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "path\tstage\tkind\tmodel p50 us\treal p50 us\treal p99 us\treal / model\tbackend call or why simulated")
	for _, r := range rep.Rows {
		if r.Real == nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t-\t-\t-\tsimulated: %s\n", r.Path, r.Stage, r.Kind, r.ModelP50US, r.Simulated)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%.4g\t%.4g\t%.2f\t%s x %d\n", r.Path, r.Stage, r.Kind, r.ModelP50US, r.Real.P50US, r.Real.P99US, r.Real.P50US/r.ModelP50US, r.Real.Op, r.Real.Reps)
	}
	tw.Flush()
	mean := map[string][2]float64{}
	for _, p := range rep.Paths {
		fmt.Fprintf(w, "%s: mean %.4g us simulated, %.4g us with its %d performed stages' measured means (a lone request's sum; queueing not re-simulated)\n",
			p.Path, p.ModelMeanUS, p.WithRealMeanUS, p.Performed)
		mean[p.Path] = [2]float64{p.ModelMeanUS, p.WithRealMeanUS}
	}
	// The swap stands in stages this machine can perform for the ones it
	// cannot; where that reverses the headline, the stand-ins are why.
	hr, okh := mean["host-rdma"]
	co, okc := mean["conspirator"]
	if okh && okc && (co[0] < hr[0]) != (co[1] < hr[1]) {
		fmt.Fprintf(w, "NOTE: with the %s backend's stages host-rdma (%.4g us) and conspirator (%.4g us) swap places against the model (%.4g, %.4g us): the %s backend stands in a host memcpy for the PCIe host-to-GPU copy and loopback for the network, so this compares this machine's stand-ins, not the paths' hardware\n",
			rep.Backend, hr[1], co[1], hr[0], co[0], rep.Backend)
	}
}

// cudaReady refuses, with the reason and the fix, a CUDA measurement in a
// binary built without -tags cuda or on a machine without a usable GPU.
func cudaReady(what string) error {
	if !cuda.Built {
		return usagef("%s: this binary was built without CUDA; rebuild it with -tags cuda (go build -tags cuda ./cmd/conspirator: needs cgo, the CUDA headers and libcuda/libcudart), or measure on the GPU machine and --import the CSV (docs/calibration.md)", what)
	}
	if _, err := cuda.DeviceInfo(); err != nil {
		return usagef("%s: %v", what, err)
	}
	return nil
}

package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/realhw/cuda"
)

// cudaSizes are the fit's copy sizes: 4 KiB to 256 MiB in steps of 4x
// (16 MiB with --short), as realhw/cuda's CSV measurement.
func cudaSizes(short bool) []int64 {
	top := int64(256 << 20)
	if short {
		top = 16 << 20
	}
	var out []int64
	for n := int64(4 << 10); n <= top; n *= 4 {
		out = append(out, n)
	}
	return out
}

// calibrateCUDA measures GPU 0 and fits the profile; with validate it
// also times separate runs at held-out sizes and compares the model.
func calibrateCUDA(a *app, short, validate bool, date string, gpuInfo calib.GPUInfo) (*calib.Profile, *calib.CUDAValidation, error) {
	if err := cudaReady("--backend cuda"); err != nil {
		return nil, nil, err
	}
	info, err := cuda.DeviceInfo()
	if err != nil {
		return nil, nil, usagef("--backend cuda: %v", err)
	}
	reps := 20
	if short {
		reps = 5
	}
	sizes := cudaSizes(short)
	fmt.Fprintf(a.stderr, "calibrate: measuring %s (driver's CUDA %s, runtime %s): copies of %d sizes, %d each, launches, a kernel\n", info.Name, info.Driver, info.Runtime, len(sizes), reps)
	samples, err := cuda.Measure(sizes, reps)
	if err != nil {
		return nil, nil, err
	}
	prof := calib.FromSamples(samples)
	prof.Provenance.Date = date
	prof.Provenance.Tool = "conspirator calibrate --backend cuda"
	g := &calib.GPUInfo{Type: gpuInfo.Type, Name: info.Name, Driver: gpuInfo.Driver, CUDA: info.Runtime}
	if g.Driver == "" {
		g.Driver = "supports CUDA " + info.Driver
	}
	if g.Type != "" {
		g.Type = canonicalGPU(g.Type)
	} else {
		prof.Notes = append(prof.Notes, "no --gpu-type: the profile does not name the GPU's catalog type, and a scenario of any GPU applies it")
	}
	prof.Provenance.GPU = g
	if !validate {
		return prof, nil, nil
	}
	held := calib.HeldOutSizes(sizes)
	fmt.Fprintf(a.stderr, "calibrate: validating on separate runs at %d held-out sizes, each copy timed\n", len(held))
	hs, err := cuda.MeasureEach(held, max(reps, 50))
	if err != nil {
		return nil, nil, err
	}
	v, err := calib.ValidateCUDA(prof, sizes, hs, fmt.Sprintf("separate runs at held-out sizes %v, every copy timed with CUDA events, %d each; launches with synchronize", held, max(reps, 50)))
	if err != nil {
		return nil, nil, usagef("--validate: %v", err)
	}
	return prof, v, nil
}

// printCUDAValidation writes the model-versus-real table of the GPU-side
// stages.
func printCUDAValidation(a *app, v *calib.CUDAValidation) {
	fmt.Fprintf(a.stdout, "\nvalidation: %s\nagainst %s; error = (model - real) / real\n", v.Model, v.Held)
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tbytes\tsamples\treal p50 us\treal p99 us\tmodel us\tp50 error\tp99 error\ttarget\t")
	for _, s := range v.Stages {
		ok := "met"
		if !s.Met {
			ok = "missed"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%+.1f%%\t%+.1f%%\t%s\t\n", s.Stage, s.Bytes, s.Samples, s.RealP50US, s.RealP99US, s.ModelUS, 100*s.P50Error, 100*s.P99Error, ok)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "target: |p50 error| <= %.0f%% per stage and size; %d missed\n", 100*v.P50Target, v.Missed)
}

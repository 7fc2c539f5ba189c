package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/realhw/host"
	"github.com/conspirator-sim/conspirator/realhw/nvbandwidth"
	"github.com/conspirator-sim/conspirator/realhw/perftest"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/spf13/cobra"
)

func (a *app) calibrateCmd() *cobra.Command {
	var backend, outDir, format string
	var imports []string
	var validate, short, noPin bool
	var bufferBytes int64
	var fitLoads []string
	var validationLoads []string
	var gpuInfo calib.GPUInfo
	var computeMode string
	c := &cobra.Command{
		Use:   "calibrate [--backend host|cuda] [--validate] | --import FILE...",
		Short: "Measure real hardware (or import testbed measurements), fit the models and show their error",
		Long: `Calibrate the models against real measurements and write a calibration
profile (profile.yaml) that a scenario includes with the key
"calibration: PATH" to override catalog defaults. Every fit reports its
R-squared and residuals. A fit is kept with 'applied: false' and its
reason, never used silently, when it has fewer than 3 message sizes, when
its latency does not grow with size, when its fixed cost comes out
negative, or when its line misses the median of some size by more than
25% (the gate is that relative miss; R-squared is reported only, since a
fit weighted by relative error can follow a sweep from 2 B to 8 MiB
within 25% at R-squared 0.89).

--backend host measures this machine: real TCP over loopback with real
payloads at several background CPU loads (busy workers at a duty cycle),
memcpy bandwidth, and CPU time per byte from the kernel's accounting. It
runs on any Linux machine, a BlueField SoC's Arm cores included. The
background load runs as a separate process with one worker pinned to each
core (as stress-ng's per-core workers), and the measured client and server
are pinned to the first core for the run (as 'taskset -c' would): unpinned,
thread placement changes the latency from run to run (--no-pin to allow it).

--backend cuda (a binary built with -tags cuda) measures GPU 0: pinned
and pageable copies both ways from 4 KiB to 256 MiB (16 MiB with --short),
an empty kernel's launch with and without synchronize, and a stand-in
kernel (a scale by two over the copied bytes); it fits them as an import
of their CSV would (pinned_h2d, memcpy_issue, pageable_factor,
pageable_d2h_factor, kernel_launch, sync_wait) and records the device's name and CUDA versions
(give --gpu-type so that a scenario of another GPU refuses the profile).
With --validate it then times every copy one by one at held-out sizes
(between the fit's) and launches with synchronize, and writes, per stage
and size, the model's time against the real p50 and p99 (target |p50
error| <= 10%). A binary without the tag, or a machine without a GPU,
exits 2 saying so. GPU compute of a real model is measured by
realhw/torch/measure_compute.py and imported (compute-csv).

--validate checks the simulator itself against this machine. It fits
sim/datapath's loopback path (the request path a plain host can run:
client and server threads, loopback TCP, memcpy, CPU compute): the stage
costs from the unloaded calibration run, and the background model
(background_model: slice: interference, the share of wake-ups that wait
for a busy core, with a floor and a slope in the load, the slice they
wait) from the runs at 10% and 30% load. It then runs the path for real
at 20%, 40% and 60% load, loads the fit never saw (a level within 5
points of a fit run on the pinned core is marked near it),
and in sim/datapath with as many requests of each size, and prints the
p50, p99 and p99.9 error, met or missed per load (target |p50| <= 10%,
|p99| <= 25%), the load the generator measured over the cores and on the
CPU the client and server are pinned to (the model runs at the latter),
the model's p99 without stage spreads, the share of requests that waited,
and the stage whose error dominates. validation.json holds {"model":
"datapath", "path", "fit", "levels": [{"load", "measured_load",
"used_for_fit", "p50_error", "p99_error", "p999_error", "stages",
"dominant_stage", ...}]} (errors as fractions), with one CDF plot per
level in plots/. --fit-load (default 10%,30%) and --validation-loads set
the loads, each in (0%, 95%]; a validation load may also be 0% (a
separate unloaded run: whether the model carries the stalls the machine
has with no stressor).

Each host stage's cost is fitted as a distribution: a fixed part (the
fastest request of the unloaded run) plus an excess drawn from an
empirical quantile table, one request's draws coupled by a Gaussian
copula. profile.yaml keeps them (spread:, spread_correlation:) and
proposes datapath.host.spread.* (the part above the median) for runs
that apply it.

--import reads testbed output instead: perftest (ib_write_bw, ib_read_bw,
ib_write_lat, ib_read_lat, ib_send_lat; MiB/s vs Gb/s from the header,
write/send latency as half a round trip, read as a full one), NVIDIA
nvbandwidth text output (it prints no buffer size: give --buffer-bytes,
or keep the nvbandwidth command line with its -b in the file), a CSV
with the header stage,bytes,latency_us[,background_load] (the cuda
backend's measurements among them), the compute CSV of
realhw/torch/measure_compute.py (gpu,model,precision,mode,batch,p50_us,
p99_us,reps: the GPU's compute table; --compute-mode picks the rows a run
applies, graph by default) or a PyTorch JSON of the same points
("graph_fp16_bs8": {"p50_us", "p99_us"}; give --gpu-type). A perftest -a
sweep (2 B to 8 MiB) that no one line follows within 25% at every size is
fitted in two regimes: the latency from the sizes up to 64 B, the
bandwidth from 64 KiB on, with the worst size in between noted. A profile
with a GPU's measurements is refused (exit 2) by a scenario whose
datapath.gpus are of another type.`,
		Example: `  conspirator calibrate --backend host --validate --short -o out/calib
  conspirator calibrate --import ib_write_lat.txt --import nvbandwidth.txt --buffer-bytes 512MiB -o out/testbed
  conspirator run paper/e2e --set calibration=out/testbed/profile.yaml
  conspirator calibrate --backend cuda --validate --gpu-type h200-141gb -o out/gpu   # -tags cuda, on a GPU
  conspirator calibrate --import cuda.csv --import compute.csv --gpu-type h200-141gb -o out/h200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outDir == "" {
				outDir = filepath.Join(a.outRoot(), "calibration")
			}
			lock, err := claimDir(outDir)
			if err != nil {
				return err
			}
			defer lock.Release()
			date := time.Now().UTC().Format("2006-01-02") // provenance only
			files := map[string][]byte{}
			var prof *calib.Profile
			var val *calib.Validation
			var cval *calib.CUDAValidation
			switch {
			case format != "" && len(imports) == 0:
				return usagef("--format %s applies to --import files; give --import FILE", format)
			case len(imports) > 0:
				if validate {
					return usagef("--validate measures this machine; it does not apply to --import")
				}
				for _, name := range []string{"fit-load", "validation-loads"} {
					if cmd.Flags().Changed(name) {
						return usagef("--%s sets a background load of --backend host's runs; it does not apply to --import", name)
					}
				}
				samples, warnings, err := importSamples(imports, format, bufferBytes)
				if err != nil {
					return err
				}
				prof = calib.FromSamples(samples)
				// An import's warnings go into the profile's notes (kept
				// in profile.yaml and printed below), not only the screen.
				prof.Notes = append(prof.Notes, warnings...)
				if err := importCompute(prof, imports, format, gpuInfo, computeMode); err != nil {
					return err
				}
				prof.Provenance.Date = date
				prof.Provenance.Tool = "conspirator calibrate --import"
				prof.Provenance.Sources = imports
			case backend == "host":
				opts := calib.Options{Short: short, Date: date, NoPin: noPin}
				opts.CalibrationLoads = []float64{0}
				for i, v := range fitLoads {
					name := "--fit-load"
					if len(fitLoads) > 1 {
						name = fmt.Sprintf("--fit-load[%d]", i)
					}
					u, err := loadFlag(name, v, false)
					if err != nil {
						return err
					}
					if slices.Contains(opts.CalibrationLoads, u) {
						return usagef("%s %q: given twice; each fit load is one loaded run", name, v)
					}
					opts.CalibrationLoads = append(opts.CalibrationLoads, u)
				}
				if len(opts.CalibrationLoads) == 1 {
					return usagef("--fit-load: give at least one load, e.g. 10%%,30%%")
				}
				for i, v := range validationLoads {
					u, err := loadFlag(fmt.Sprintf("--validation-loads[%d]", i), v, true)
					if err != nil {
						return err
					}
					if slices.Contains(opts.ValidationLoads, u) {
						return usagef("--validation-loads[%d] %q: given twice; each validation load is one run", i, v)
					}
					opts.ValidationLoads = append(opts.ValidationLoads, u)
				}
				if validate {
					fmt.Fprintln(a.stderr, "calibrate: measuring this machine, then validating sim/datapath on separate runs (short: about 3 s; full: about 10 s on 2 cores)")
					if val, err = calib.Validate(opts); err != nil {
						return err
					}
					prof = val.Profile
				} else {
					fmt.Fprintln(a.stderr, "calibrate: measuring this machine")
					if prof, err = calib.Run(opts); err != nil {
						return err
					}
				}
			case backend == "cuda":
				for _, name := range []string{"fit-load", "validation-loads"} {
					if cmd.Flags().Changed(name) {
						return usagef("--%s sets a background load of --backend host's runs; it does not apply to --backend cuda", name)
					}
				}
				var err error
				if prof, cval, err = calibrateCUDA(a, short, validate, date, gpuInfo); err != nil {
					return err
				}
			case backend == "rdma":
				return usagef("--backend rdma measures with the realhw/rdma package, built with -tags rdma; its measurements are imported with --import (perftest output; see docs/calibration.md)")
			default:
				return usagef("--backend %q: use host or cuda (or --import FILE for testbed measurements)", backend)
			}
			var y bytes.Buffer
			if err := prof.WriteYAML(&y); err != nil {
				return err
			}
			files["profile.yaml"] = y.Bytes()
			if cval != nil {
				js, err := json.MarshalIndent(cval, "", "  ")
				if err != nil {
					return err
				}
				files["validation.json"] = append(js, '\n')
			}
			if val != nil {
				js, err := json.MarshalIndent(val, "", "  ")
				if err != nil {
					return err
				}
				files["validation.json"] = append(js, '\n')
			}
			// One CDF per level, measured against sim/datapath, drawn
			// into the directory before it is put in place.
			plots := func(tmp string) error {
				if val == nil {
					return nil
				}
				if err := os.MkdirAll(filepath.Join(tmp, "plots"), 0o755); err != nil {
					return err
				}
				for _, s := range val.Samples {
					load := fmt.Sprintf("%.0f%% load", 100*s.BackgroundLoad)
					sets := []reports.CDFSeries{
						{Label: "measured, " + load, Values: s.RealUS},
						{Label: "sim/datapath loopback, " + load, Values: s.ModelUS, Dashed: true}}
					name := fmt.Sprintf("validation_cdf_load%02.0f", 100*s.BackgroundLoad)
					if err := reports.CDFPlot(filepath.Join(tmp, "plots", name),
						"loopback TCP path at "+load+", measured vs model: CDF", "latency (µs)", sets); err != nil {
						return fmt.Errorf("plotting the validation CDF at %s: %w", load, err)
					}
				}
				return nil
			}
			if err := writeResultDirFS(atomicfs.OS, outDir, files, false, plots); err != nil {
				return err
			}
			printProfile(a, prof, val)
			if cval != nil {
				printCUDAValidation(a, cval)
			}
			fmt.Fprintf(a.stdout, "\nprofile: %s\n", filepath.Join(outDir, "profile.yaml"))
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&backend, "backend", "host", "real backend to measure: host, or cuda (a binary built with -tags cuda, on a GPU machine)")
	f.BoolVar(&validate, "validate", false, "host: after calibrating at 0%, 10% and 30% load, run sim/datapath's loopback path and separate real runs at 20%, 40%, 60% and compare; cuda: compare the model's GPU-side stages with separate runs at held-out sizes")
	f.StringSliceVar(&fitLoads, "fit-load", []string{"10%", "30%"}, "background loads of the loaded calibration runs, which the background model is fitted at (two or more fit the wake-up miss's floor and slope, one its slope alone); each in (0%, 95%]")
	f.StringSliceVar(&validationLoads, "validation-loads", []string{"20%", "40%", "60%"}, "background loads of the held-out validation runs; each in (0%, 95%], or 0% (a separate unloaded run)")
	f.BoolVar(&short, "short", false, "a CI-sized run of a few seconds (noisier)")
	f.BoolVar(&noPin, "no-pin", false, "leave the measured threads and the load workers free to migrate between cores")
	f.StringArrayVar(&imports, "import", nil, "testbed output to fit instead of measuring (perftest, nvbandwidth, CSV; repeatable)")
	f.StringVar(&format, "format", "", "format of the --import files: perftest, nvbandwidth or csv (default: from the content)")
	f.Var(bytesFlag{&bufferBytes}, "buffer-bytes", "nvbandwidth buffer size, e.g. 512MiB or 536870912 (its output does not print it; a pasted command line with -b is read instead)")
	f.StringVarP(&outDir, "output", "o", "", "output directory (default $CONSPIRATOR_OUT/calibration)")
	f.StringVar(&gpuInfo.Type, "gpu-type", "", "catalog GPU the imported GPU-side measurements were taken on (e.g. h200-141gb); a scenario that applies the profile must run it")
	f.StringVar(&gpuInfo.Driver, "gpu-driver", "", "driver version of that GPU, for the provenance (e.g. 580.159.04)")
	f.StringVar(&gpuInfo.CUDA, "gpu-cuda", "", "CUDA version, for the provenance (e.g. 13.0)")
	f.StringVar(&computeMode, "compute-mode", calib.ModeGraph, "which measured compute rows a run applies: graph (replayed as a CUDA graph, as a tuned server runs) or eager")
	return c
}

// importCompute reads the compute tables among the --import files
// (realhw/torch/measure_compute.py's CSV, a PyTorch JSON) into prof, and
// records the GPU of GPU-side measurements. The GPU must be a catalog
// type: from --gpu-type or the CSV's gpu column, which must agree.
func importCompute(prof *calib.Profile, paths []string, format string, info calib.GPUInfo, mode string) error {
	if !slices.Contains(calib.ComputeModes, mode) {
		return usagef("--compute-mode %q: use %s", mode, strings.Join(calib.ComputeModes, " or "))
	}
	cudaStages := false
	for _, s := range prof.Stages {
		cudaStages = cudaStages || strings.HasPrefix(s.Stage, "cuda-")
	}
	var rows []calib.ComputeRow
	for _, p := range paths {
		data, err := readImport(p, format)
		if err != nil {
			return usagef("--import %s: %v", p, err)
		}
		fm := format
		if fm == "" {
			fm = detectFormat(data)
		}
		var rs []calib.ComputeRow
		var got calib.GPUInfo
		switch fm {
		case "compute-csv":
			if rs, got, err = calib.ParseComputeCSV(bytes.NewReader(data), p); err != nil {
				return usageError{err}
			}
		case "torch-json":
			if info.Type == "" {
				return usagef("--import %s: the JSON does not name the GPU's catalog type; give --gpu-type (e.g. h200-141gb)", p)
			}
			var notes []string
			if rs, got, notes, err = calib.ParseTorchJSON(data, p, info.Type); err != nil {
				return usageError{err}
			}
			prof.Notes = append(prof.Notes, notes...)
		default:
			continue
		}
		if info.Type == "" {
			info.Type = got.Type
		}
		if got.Type != "" && canonicalGPU(got.Type) != canonicalGPU(info.Type) {
			return usagef("--import %s: measured on %s, but --gpu-type (or an earlier file) says %s; import one GPU's measurements per profile", p, got.Type, info.Type)
		}
		info.Name = cmp.Or(info.Name, got.Name)
		info.Driver = cmp.Or(info.Driver, got.Driver)
		info.CUDA = cmp.Or(info.CUDA, got.CUDA)
		info.Torch = cmp.Or(info.Torch, got.Torch)
		rows = append(rows, rs...)
	}
	if info.Type == "" {
		if len(rows) > 0 || cudaStages {
			prof.Notes = append(prof.Notes, "GPU-side stages imported without --gpu-type: the profile does not say which GPU they were measured on, and a scenario of any GPU applies them")
		}
		return nil
	}
	spec, err := gpu.Lookup(info.Type)
	if err != nil {
		return usagef("--gpu-type: %v", err)
	}
	info.Type = spec.Name
	for i := range rows {
		rows[i].GPU = spec.Name
	}
	calib.SortCompute(rows)
	prof.Provenance.GPU = &info
	prof.Compute = rows
	if len(rows) > 0 {
		prof.ComputeMode = mode
	}
	return nil
}

// canonicalGPU is a GPU's catalog name, or the name as given when the
// catalog does not know it (the caller reports that).
func canonicalGPU(name string) string {
	if s, err := gpu.Lookup(name); err == nil {
		return s.Name
	}
	return name
}

// importSamples parses testbed output files into samples, with the
// warnings of the parsers.
func importSamples(paths []string, format string, bufferBytes int64) ([]realhw.Sample, []string, error) {
	if format != "" && !slices.Contains(importFormats, format) {
		return nil, nil, usagef("--format %q: use one of %s (or leave it out to detect the format from each file)", format, strings.Join(importFormats, ", "))
	}
	var all []realhw.Sample
	var warnings []string
	computeFiles := 0
	for _, p := range paths {
		data, err := readImport(p, format)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, usagef("--import: file %s not found%s; it is the output of a testbed tool run on your machines (perftest's ib_write_bw/ib_read_bw/ib_write_lat, nvbandwidth) saved to a file, or a CSV of measurements (CONSPIRATOR_CUDA_CSV of the cuda backend writes one); see docs/calibration.md", p, trace.Resolved(p))
		}
		if err != nil {
			return nil, nil, usagef("--import %s: %v", p, err)
		}
		fm := format
		if fm == "" {
			fm = detectFormat(data)
		}
		switch fm {
		case "perftest":
			r, err := perftest.Parse(bytes.NewReader(data), p)
			if err != nil {
				return nil, nil, usageError{err}
			}
			all = append(all, r.Samples()...)
			warnings = append(warnings, r.Warnings...)
		case "nvbandwidth":
			buf := bufferBytes
			if b, line, ok := nvbandwidth.BufferFromCommand(data); ok {
				switch {
				case buf <= 0:
					buf = b
					warnings = append(warnings, fmt.Sprintf("%s:%d: buffer size %s read from the nvbandwidth command line", p, line, units.Bytes(b)))
				case buf != b:
					return nil, nil, usagef("--import %s: --buffer-bytes %s disagrees with the command line at line %d (-b %d MiB); drop one", p, units.Bytes(buf), line, b>>20)
				}
			}
			if buf <= 0 {
				return nil, nil, usagef("--import %s: nvbandwidth prints no buffer size and the file holds no nvbandwidth command line with -b; give it with --buffer-bytes (its -b option in MiB, default 512MiB = 536870912)", p)
			}
			ts, err := nvbandwidth.Parse(bytes.NewReader(data), p)
			if err != nil {
				return nil, nil, usageError{err}
			}
			ss, err := nvbandwidth.Samples(ts, buf)
			if err != nil {
				return nil, nil, usageError{err}
			}
			all = append(all, ss...)
		case "csv":
			ss, err := calib.ParseCSV(bytes.NewReader(data), p)
			if err != nil {
				return nil, nil, usageError{err}
			}
			all = append(all, ss...)
		case "compute-csv", "torch-json":
			// Compute tables, not stage samples: importCompute reads them
			// (and refuses one without a measurement).
			computeFiles++
		default:
			return nil, nil, usagef("--import %s: cannot tell the format (perftest, nvbandwidth, csv, compute-csv or torch-json); give --format", p)
		}
	}
	if len(all) == 0 && computeFiles == 0 {
		// An empty profile would override nothing and look like a fit.
		return nil, nil, usagef("--import %s: no measurement found; give files with measurements", strings.Join(paths, ", "))
	}
	return all, warnings, nil
}

// importFormats are the --format values.
var importFormats = []string{"perftest", "nvbandwidth", "csv", "compute-csv", "torch-json"}

// maxImportBytes bounds a file given to --import: a perftest -a sweep
// prints about 25 lines (a few KiB), an nvbandwidth run with every test a
// few hundred KiB, and a CSV of measurements one line per sample; a file
// of many MiB is the wrong file (a trace, a device), and would otherwise
// be read to its end.
const maxImportBytes = 64 << 20

// readImport reads one --import file, refusing one over maxImportBytes,
// or over 1 MiB where the format (given or detected from its first bytes)
// is perftest or nvbandwidth.
func readImport(path, format string) ([]byte, error) {
	data, err := scenarios.ReadLimited(path, maxImportBytes, "calibration import")
	if err != nil {
		return nil, err
	}
	fm := format
	if fm == "" {
		fm = detectFormat(data[:min(len(data), 64<<10)])
	}
	if (fm == "perftest" || fm == "nvbandwidth") && len(data) > 1<<20 {
		return nil, &scenarios.TooLargeError{Path: path, Limit: 1 << 20, What: fm + " output"}
	}
	return data, nil
}

func detectFormat(data []byte) string {
	s := string(data)
	switch {
	case strings.Contains(s, "nvbandwidth") || strings.Contains(s, "memcpy CE"):
		return "nvbandwidth"
	case strings.Contains(s, "#bytes"):
		return "perftest"
	case strings.HasPrefix(firstDataLine(s), "stage,"):
		return "csv"
	case calib.IsComputeCSV(firstDataLine(s)):
		return "compute-csv"
	case strings.HasPrefix(strings.TrimSpace(s), "{") && strings.Contains(s, `"p50_us"`):
		return "torch-json"
	}
	return ""
}

// firstDataLine is the first line of s that is neither blank nor a '#'
// comment, trimmed: the CSV's header, as calib.ParseCSV reads it (a CSV
// that opens with a comment on where it was measured is still a CSV).
func firstDataLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return t
		}
	}
	return ""
}

// printProfile writes the fits, the proposed scenario overrides and the
// validation table.
func printProfile(a *app, p *calib.Profile, v *calib.Validation) {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tkind\tfixed\tbandwidth\tR²\tsamples\tapplied")
	for _, s := range p.Stages {
		ap := "yes"
		if !s.Applied {
			ap = "no: " + s.Reason
		}
		kind := s.Kind
		if kind == "" {
			kind = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%d\t%s\n", s.Stage, kind, s.Fixed, s.Bandwidth, s.RSquared, s.Samples, ap)
	}
	tw.Flush()
	for _, n := range p.Notes {
		fmt.Fprintln(a.stderr, "calibrate: note:", n)
	}
	if len(p.Scenario) > 0 {
		fmt.Fprintln(a.stdout, "\nscenario overrides proposed by the profile:")
		keys := make([]string, 0, len(p.Scenario))
		for k := range p.Scenario {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := fmt.Sprint(p.Scenario[k])
			if sum, ok := spreadSummary(p, k); ok {
				v = sum // the table is in profile.yaml
			}
			fmt.Fprintf(a.stdout, "  %s = %s\n", k, v)
		}
	}
	if len(p.Spread) > 0 {
		fmt.Fprintln(a.stdout, "\nhost stage costs as distributions (unloaded run; fixed part = the fastest request, excess drawn from a 111-point quantile table):")
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "stage\tmeasured\tshift\texcess p50\tp99\tp99.9\tclamped\t")
		for _, sp := range p.Spread {
			fmt.Fprintf(tw, "%s\t%s\t%+.3g us\t%.3g us\t%.3g us\t%.3g us\t%d\t\n", sp.Stage, sp.Measured, sp.ShiftUS, sp.P50US, sp.P99US, sp.P999US, sp.Clamped)
		}
		tw.Flush()
	}
	if v != nil {
		f := v.Fit
		loads := []string{"0%"}
		for _, u := range f.FitLoads {
			loads = append(loads, fmt.Sprintf("%.1f%%", 100*u))
		}
		fmt.Fprintf(a.stdout, "\nvalidation: sim/datapath's %s path, fitted at loads %s as measured (unloaded stage costs; at the loaded ones interference %.3g, wake-up miss %.3g%% + %.3g x load, slice %.0f us from %d waits; the two wake-up stages %.2g us faster at %.0f%% than unloaded, reported, not applied), against separate real runs; error = (model - real) / real\n",
			v.Path, strings.Join(loads, ", "), f.Interference, 100*f.WakeupMissFloor, f.WakeupMiss, f.SliceUS, f.WaitsSeen, f.WakeDropUS, 100*f.WakeDropLoad)
		for _, n := range f.Notes {
			fmt.Fprintln(a.stderr, "calibrate: note:", n)
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "load\tmeasured\ton CPU\tfit\tp50 error\tp99 error\tp99.9 error\treal p99\tmodel p99\tno spread\ttail > %.0f us real\tmodel\ttarget\tworst stage\t\n", f.TailUS)
		for _, l := range v.Levels {
			ok, fit := "met", "held out"
			if !l.Met() {
				ok = "missed"
			}
			if l.NearFitLoad > 0 {
				fit = fmt.Sprintf("near %.0f%%", 100*l.NearFitLoad)
			}
			if l.UsedForFit {
				fit = "used"
			}
			onCPU := "-"
			if l.MeasuredLoadOnCPU > 0 {
				onCPU = fmt.Sprintf("%.1f%%", 100*l.MeasuredLoadOnCPU)
			}
			fmt.Fprintf(tw, "%.0f%%\t%.1f%%\t%s\t%s\t%+.1f%%\t%+.1f%%\t%+.1f%%\t%.0f us\t%.0f us\t%.0f us\t%.2f%%\t%.2f%%\t%s\t%s\t\n", 100*l.BackgroundLoad, 100*l.MeasuredLoad, onCPU, fit,
				100*l.P50Error, 100*l.P99Error, 100*l.P999Error, l.RealP99US, l.ModelP99US, l.ModelNoSpreadP99US,
				100*l.RealTailShare, 100*l.ModelTailShare, ok, l.DominantStage)
		}
		tw.Flush()
		fmt.Fprintf(a.stdout, "target: |p50 error| <= %.0f%%, |p99 error| <= %.0f%% at every held-out load (p99.9 reported, not judged; a level whose load on the pinned CPU lies within 5 points of a fit run's, \"near\", tests nothing between or beyond the fit loads); \"measured\" is the stressor's duty over the cores, \"on CPU\" on the one the client and server are pinned to, the one-core model's core, which the model runs at (at \"measured\" where unpinned); \"no spread\" is the model's p99 with constant stage costs; the worst stage has the largest model-real difference at the quantile that misses.\n",
			100*calib.P50Target, 100*calib.P99Target)
		fmt.Fprintln(a.stdout, "The p99 is ill-conditioned where about 1% of requests wait for a slice; the tail share says whether the model has the right number of them.")
	}
}

// spreadSummary shortens a proposed spread override to its quantiles
// (the 111-point table is in profile.yaml).
func spreadSummary(p *calib.Profile, key string) (string, bool) {
	for _, sp := range p.Spread {
		if sp.Key == key {
			return fmt.Sprintf("empirical table above the median (%d points in profile.yaml): p99 +%.3g us, p99.9 +%.3g us", len(sp.P), sp.P99US-sp.P50US, sp.P999US-sp.P50US), true
		}
	}
	return "", false
}

// loadFlag reads a background load target ("40%" or 0.4), which must lie
// in (0, host.MaxLoadFraction]; anything else is a usage error (exit 2)
// naming the flag.
//
// zeroOK admits 0 (a validation load: a separate unloaded run against
// the model with no background load, which says whether the model
// carries the stalls a machine has with no stressor at all).
func loadFlag(name, v string, zeroOK bool) (float64, error) {
	u, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		f, ferr := units.ParseFraction(v)
		if ferr != nil {
			return 0, usagef("%s %q: write a load as 40%% or 0.4 (%v)", name, v, ferr)
		}
		u = float64(f)
	}
	if zeroOK && u == 0 {
		return 0, nil
	}
	if !(u > 0 && u <= host.MaxLoadFraction) {
		return 0, usagef("%s %q: a background load target must be in (0%%, %.0f%%]: 0 is the unloaded run, which calibrate always makes, and above %.0f%% the measured threads barely run", name, v, 100*host.MaxLoadFraction, 100*host.MaxLoadFraction)
	}
	return u, nil
}

// bytesFlag is a size flag: a unit as in scenario files ("512MiB", "4KB")
// or a bare number of bytes.
type bytesFlag struct{ p *int64 }

func (b bytesFlag) String() string {
	if b.p == nil || *b.p == 0 {
		return ""
	}
	return units.Bytes(*b.p).String()
}

func (b bytesFlag) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		v, perr := units.ParseBytes(s)
		if perr != nil {
			return perr
		}
		n = int64(v)
	}
	if n < 1 {
		return fmt.Errorf("%d: a buffer size must be at least 1 byte, e.g. 512MiB (nvbandwidth's default -b 512)", n)
	}
	*b.p = n
	return nil
}

func (bytesFlag) Type() string { return "size" }

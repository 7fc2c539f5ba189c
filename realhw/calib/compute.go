package calib

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// GPUInfo says which GPU, driver and software stack GPU-side measurements
// (copies, compute) were taken on. Type is the GPU's catalog name: a
// scenario that applies the profile must run that GPU.
type GPUInfo struct {
	Type   string `yaml:"type"`
	Name   string `yaml:"name,omitempty"` // as the device reports it, e.g. "NVIDIA H200"
	Driver string `yaml:"driver,omitempty"`
	CUDA   string `yaml:"cuda,omitempty"`
	Torch  string `yaml:"torch,omitempty"`
}

// ComputeRow is one measured GPU compute time: a model's forward pass on
// the whole GPU at one batch size, precision and mode (eager: one kernel
// launch per operator from Python; graph: replayed as a CUDA graph).
type ComputeRow struct {
	GPU       string `yaml:"gpu"`
	Model     string `yaml:"model"`
	Precision string `yaml:"precision"`
	Mode      string `yaml:"mode"`
	Batch     int    `yaml:"batch"`
	P50       string `yaml:"p50"`
	P99       string `yaml:"p99"`
	Reps      int    `yaml:"reps,omitempty"`
	p50s      float64
}

// Compute modes.
const (
	ModeEager = "eager"
	ModeGraph = "graph"
)

// ComputeModes lists them; the first is the default a profile applies.
var ComputeModes = []string{ModeGraph, ModeEager}

// computeHeader is the header of the compute CSV that
// realhw/torch/measure_compute.py writes.
const computeHeader = "gpu,model,precision,mode,batch,p50_us,p99_us,reps"

// IsComputeCSV reports whether data's first line that is not a comment is
// the compute CSV's header.
func IsComputeCSV(first string) bool {
	return strings.HasPrefix(first, "gpu,model,precision,mode,batch,")
}

// ParseComputeCSV reads the compute CSV (name for messages): '#
// key: value' comment lines carry the provenance (gpu_name, driver, cuda,
// torch), then the header and one row per point. Every row must name the
// same GPU. Errors name the file and line.
func ParseComputeCSV(r io.Reader, name string) ([]ComputeRow, GPUInfo, error) {
	var info GPUInfo
	var rows []ComputeRow
	sc := bufio.NewScanner(r)
	line, header := 0, false
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(t, "#")), ":")
			if ok {
				v = strings.TrimSpace(v)
				switch strings.TrimSpace(k) {
				case "gpu_name":
					info.Name = v
				case "driver":
					info.Driver = v
				case "cuda":
					info.CUDA = v
				case "torch":
					info.Torch = v
				}
			}
			continue
		}
		if !header {
			if t != computeHeader {
				return nil, info, fmt.Errorf("%s:%d: header %q; want %q (realhw/torch/measure_compute.py writes it)", name, line, t, computeHeader)
			}
			header = true
			continue
		}
		f := strings.Split(t, ",")
		if len(f) != 8 {
			return nil, info, fmt.Errorf("%s:%d: %d fields; want 8 (%s)", name, line, len(f), computeHeader)
		}
		row := ComputeRow{GPU: f[0], Model: strings.ToLower(f[1]), Precision: f[2], Mode: f[3]}
		var err error
		if row.Batch, err = strconv.Atoi(f[4]); err != nil || row.Batch < 1 || row.Batch > 1<<20 {
			return nil, info, fmt.Errorf("%s:%d: batch %q; want an integer >= 1", name, line, f[4])
		}
		p50, err1 := strconv.ParseFloat(f[5], 64)
		p99, err2 := strconv.ParseFloat(f[6], 64)
		if err1 != nil || err2 != nil || !(p50 > 0) || !(p99 >= p50) || math.IsInf(p99, 0) || p99 > 1e9 {
			return nil, info, fmt.Errorf("%s:%d: p50_us %q, p99_us %q; want times in microseconds with 0 < p50 <= p99", name, line, f[5], f[6])
		}
		if row.Reps, err = strconv.Atoi(f[7]); err != nil || row.Reps < 1 {
			return nil, info, fmt.Errorf("%s:%d: reps %q; want an integer >= 1", name, line, f[7])
		}
		if !slices.Contains(ComputeModes, row.Mode) {
			return nil, info, fmt.Errorf("%s:%d: mode %q; want %s", name, line, row.Mode, strings.Join(ComputeModes, " or "))
		}
		if row.GPU == "" || row.Model == "" || row.Precision == "" {
			return nil, info, fmt.Errorf("%s:%d: gpu, model and precision must not be empty", name, line)
		}
		if len(rows) > 0 && rows[0].GPU != row.GPU {
			return nil, info, fmt.Errorf("%s:%d: gpu %q, but the file's first row says %q; one GPU per file", name, line, row.GPU, rows[0].GPU)
		}
		row.setTimes(p50, p99)
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, info, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, info, fmt.Errorf("%s: no compute rows under the header %q", name, computeHeader)
	}
	info.Type = rows[0].GPU
	return rows, info, nil
}

func (r *ComputeRow) setTimes(p50us, p99us float64) {
	r.p50s = p50us / 1e6
	r.P50 = units.Duration(engine.Seconds(round(p50us, 6) / 1e6)).String()
	r.P99 = units.Duration(engine.Seconds(round(p99us, 6) / 1e6)).String()
}

// torchKey matches the point keys of the torch JSON: "eager_fp16_bs8".
var torchKey = regexp.MustCompile(`^(eager|graph)_([a-z0-9]+)_bs(\d+)$`)

// ParseTorchJSON reads the JSON of an ad-hoc PyTorch measurement (as in
// ../shared/reference/measured-h200-2026-11-27/resnet50-pytorch.json):
// "gpu", "torch", "model" and points "MODE_PRECISION_bsN": {"p50_us",
// "p99_us"}. The JSON does not name the GPU's catalog type: gpuType does.
// Other keys (a single item's copy and end-to-end time) are returned as
// notes, not compute rows.
func ParseTorchJSON(data []byte, name, gpuType string) ([]ComputeRow, GPUInfo, []string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, GPUInfo{}, nil, fmt.Errorf("%s: not JSON: %w", name, err)
	}
	info := GPUInfo{Type: gpuType}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(raw[k], &s)
		return s
	}
	info.Name, info.Torch = str("gpu"), str("torch")
	// "torchvision resnet50 (random weights)" -> "resnet50": the first
	// word after the library's name.
	fields := strings.Fields(strings.ToLower(str("model")))
	if len(fields) > 0 && fields[0] == "torchvision" {
		fields = fields[1:]
	}
	model := ""
	if len(fields) > 0 {
		model = strings.ReplaceAll(fields[0], "-", "")
	}
	if model == "" {
		return nil, info, nil, fmt.Errorf("%s: \"model\" %q names no model (e.g. \"torchvision resnet50\")", name, str("model"))
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var rows []ComputeRow
	var notes []string
	for _, k := range keys {
		var pt struct {
			P50 *float64 `json:"p50_us"`
			P99 *float64 `json:"p99_us"`
		}
		if json.Unmarshal(raw[k], &pt) != nil || pt.P50 == nil {
			continue
		}
		m := torchKey.FindStringSubmatch(k)
		if m == nil {
			notes = append(notes, fmt.Sprintf("%s: %q (p50 %.1f us) is not a compute point (MODE_PRECISION_bsN); kept out of the compute table", name, k, *pt.P50))
			continue
		}
		batch, err := strconv.Atoi(m[3])
		p99 := *pt.P50
		if pt.P99 != nil {
			p99 = *pt.P99
		}
		if err != nil || batch < 1 || !(*pt.P50 > 0) || p99 < *pt.P50 || p99 > 1e9 {
			return nil, info, nil, fmt.Errorf("%s: %q: batch %s, p50 %v, p99 %v; want batch >= 1 and 0 < p50 <= p99 (microseconds)", name, k, m[3], *pt.P50, p99)
		}
		row := ComputeRow{GPU: gpuType, Model: model, Precision: m[2], Mode: m[1], Batch: batch}
		row.setTimes(*pt.P50, p99)
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, info, nil, fmt.Errorf("%s: no compute point (keys like \"graph_fp16_bs8\": {\"p50_us\": ..., \"p99_us\": ...})", name)
	}
	return rows, info, notes, nil
}

// SortCompute orders compute rows by model, precision, mode and batch.
func SortCompute(rows []ComputeRow) {
	slices.SortStableFunc(rows, func(a, b ComputeRow) int {
		if c := strings.Compare(a.Model+"\x00"+a.Precision+"\x00"+a.Mode, b.Model+"\x00"+b.Precision+"\x00"+b.Mode); c != 0 {
			return c
		}
		return a.Batch - b.Batch
	})
}

// ComputeTime returns the p50 compute time of model at batch on the
// profile's GPU in its ComputeMode, interpolated linearly between the
// measured batch sizes around it, and a sentence saying where it comes
// from. A batch outside the measured range, or a model not measured, is an
// error that lists what was.
func (p *Profile) ComputeTime(model string, batch int) (float64, string, error) {
	model = strings.ToLower(model)
	mode := p.ComputeMode
	if mode == "" {
		mode = ComputeModes[0]
	}
	var pts []ComputeRow
	var have []string
	for _, r := range p.Compute {
		have = append(have, fmt.Sprintf("%s %s %s bs%d", r.Model, r.Precision, r.Mode, r.Batch))
		if r.Model == model && r.Mode == mode {
			pts = append(pts, r)
		}
	}
	if len(pts) == 0 {
		return 0, "", fmt.Errorf("the profile has no %s compute time in %s mode; it has %s", model, mode, strings.Join(have, ", "))
	}
	if prec := pts[0].Precision; slices.ContainsFunc(pts, func(r ComputeRow) bool { return r.Precision != prec }) {
		return 0, "", fmt.Errorf("the profile's %s %s rows mix precisions; keep one", model, mode)
	}
	slices.SortFunc(pts, func(a, b ComputeRow) int { return a.Batch - b.Batch })
	lo, hi := pts[0], pts[len(pts)-1]
	if batch < lo.Batch || batch > hi.Batch {
		return 0, "", fmt.Errorf("batch %d is outside the measured %s %s batches %d..%d; measure it (realhw/torch/measure_compute.py --batches) or set datapath.request.compute_time", batch, model, mode, lo.Batch, hi.Batch)
	}
	gpu := ""
	if p.Provenance.GPU != nil {
		gpu = " on " + p.Provenance.GPU.Type
	}
	for k, r := range pts {
		if r.Batch == batch {
			reps := ""
			if r.Reps > 0 {
				reps = fmt.Sprintf(", %d reps", r.Reps)
			}
			return r.p50s, fmt.Sprintf("measured %s %s %s compute at batch %d%s: p50 %s (p99 %s%s)", r.Model, r.Precision, r.Mode, batch, gpu, r.P50, r.P99, reps), nil
		}
		if r.Batch > batch {
			a := pts[k-1]
			w := float64(batch-a.Batch) / float64(r.Batch-a.Batch)
			v := (1-w)*a.p50s + w*r.p50s
			return v, fmt.Sprintf("measured %s %s %s compute%s, p50 interpolated linearly in batch between %d (%s) and %d (%s)", r.Model, r.Precision, r.Mode, gpu, a.Batch, a.P50, r.Batch, r.P50), nil
		}
	}
	return 0, "", fmt.Errorf("batch %d not found", batch) // unreachable: the range was checked
}

// readComputeTimes fills the rows' p50 seconds after a profile is read.
func (p *Profile) readComputeTimes(name string) error {
	for i := range p.Compute {
		r := &p.Compute[i]
		d, err := units.ParseDuration(r.P50)
		if err != nil {
			return fmt.Errorf("%s: compute[%d].p50: %w", name, i, err)
		}
		if _, err := units.ParseDuration(r.P99); err != nil {
			return fmt.Errorf("%s: compute[%d].p99: %w", name, i, err)
		}
		if r.Batch < 1 || !slices.Contains(ComputeModes, r.Mode) || !(d.Time() > 0) {
			return fmt.Errorf("%s: compute[%d]: batch %d, mode %q, p50 %s; want batch >= 1, mode %s, p50 > 0", name, i, r.Batch, r.Mode, r.P50, strings.Join(ComputeModes, " or "))
		}
		r.p50s = d.Time().Seconds()
	}
	if p.ComputeMode != "" && !slices.Contains(ComputeModes, p.ComputeMode) {
		return fmt.Errorf("%s: compute_mode %q; want %s", name, p.ComputeMode, strings.Join(ComputeModes, " or "))
	}
	return nil
}

// fillCUDA proposes the host-side GPU costs from the CUDA backend's
// stages (realhw/cuda, or a CSV of them): the pinned H2D copy's bandwidth
// and fixed cost (datapath.host.pinned_h2d, memcpy_issue), the pageable
// factor as the median of pinned over pageable H2D time at the sizes of
// 1 MiB and more (the pageable rate falls with size, from 12 GB/s at
// 16 MiB to 7 GB/s at 256 MiB on the H200, so no one line fits it), the
// pageable D2H factor the same way from the D2H pair (the result's copy
// back: 20% on the H200, against 24% H2D), the launch (an async launch)
// and the wait for synchronize (a launch with synchronize less an async
// one).
func (p *Profile) fillCUDA(set map[string]any, from map[string]string) {
	pin, okPin := p.Stage("cuda-h2d-pinned")
	if okPin && pin.Applied && pin.PerByte > 0 {
		set["datapath.host.pinned_h2d"] = units.Bandwidth(round(1/pin.PerByte, 4)).String()
		from["datapath.host.pinned_h2d"] = fmt.Sprintf("cuda-h2d-pinned fit, bandwidth: %d samples over %d sizes, R-squared %.3f", pin.Samples, len(pin.Sizes), pin.RSquared)
		if pin.Fixed > 0 {
			set["datapath.host.memcpy_issue"] = units.Duration(engine.Seconds(round(pin.Fixed, 4))).String()
			from["datapath.host.memcpy_issue"] = fmt.Sprintf("cuda-h2d-pinned fit, fixed cost of a synchronous copy (CUDA events over back-to-back copies): %d samples over %d sizes", pin.Samples, len(pin.Sizes))
		}
	}
	for _, d := range []struct{ key, dir, pinned, pageable string }{
		{"datapath.host.pageable_factor", "H2D", "cuda-h2d-pinned", "cuda-h2d-pageable"},
		{"datapath.host.pageable_d2h_factor", "D2H", "cuda-d2h-pinned", "cuda-d2h-pageable"},
	} {
		if f, lo, hi, n, ok := p.pageableRatio(d.pinned, d.pageable); ok {
			set[d.key] = fmt.Sprintf("%.3g%%", 100*f)
			from[d.key] = fmt.Sprintf("median of pinned / pageable cudaMemcpy %s time over %d sizes from 1 MiB (%s, %s): %.3g to %.3g", d.dir, n, d.pinned, d.pageable, lo, hi)
		}
	}
	async, okA := p.Stage("cuda-launch-async")
	sync, okS := p.Stage("cuda-launch")
	if okA && len(async.Medians) == 1 && async.Medians[0] > 0 {
		set["datapath.host.kernel_launch"] = units.Duration(engine.Seconds(round(async.Medians[0], 4))).String()
		from["datapath.host.kernel_launch"] = fmt.Sprintf("cuda-launch-async: back-to-back launches of an empty kernel, per launch (%d samples)", async.Samples)
		if okS && len(sync.Medians) == 1 && sync.Medians[0] > async.Medians[0] {
			set["datapath.host.sync_wait"] = units.Duration(engine.Seconds(round(sync.Medians[0]-async.Medians[0], 4))).String()
			from["datapath.host.sync_wait"] = fmt.Sprintf("cuda-launch (launch + synchronize, median of %d) less cuda-launch-async", sync.Samples)
		}
	}
}

// pageableRatio is the median, over the sizes of 1 MiB and more that both
// stages measured, of the pinned stage's median time over the pageable
// one's: the pageable rate as a fraction of the pinned (at most 1), with
// the smallest and largest ratio and how many sizes; ok is false where
// either stage or a common size is missing.
func (p *Profile) pageableRatio(pinned, pageable string) (f, lo, hi float64, n int, ok bool) {
	pin, okPin := p.Stage(pinned)
	pag, okPag := p.Stage(pageable)
	if !okPin || !okPag || len(pin.Medians) == 0 || len(pag.Medians) == 0 {
		return 0, 0, 0, 0, false
	}
	var ratios []float64
	for i, size := range pin.Sizes {
		if size < 1<<20 {
			continue
		}
		if j, found := slices.BinarySearch(pag.Sizes, size); found && pag.Medians[j] > 0 {
			ratios = append(ratios, pin.Medians[i]/pag.Medians[j])
		}
	}
	if len(ratios) == 0 {
		return 0, 0, 0, 0, false
	}
	slices.Sort(ratios)
	return min(1, median(ratios)), ratios[0], ratios[len(ratios)-1], len(ratios), true
}

package trace

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// GenericColumns are the columns of the generic CSV format, required ones
// first. See FORMATS.md.
var GenericColumns = []string{
	"id", "arrival_s", "num_gpu", // required
	"duration_s", "gpu_milli", "gpu_types", "tenant", "model", "qos", "status",
	"censored", "cpu_milli", "memory_mib", "rdma_percent",
}

// readGeneric imports this project's own CSV format, the way to bring any
// other trace: a header row naming columns in any order, then one job per
// row. Lines starting with '#' are comments.
//
//	id           required  unique job name
//	arrival_s    required  submission time: seconds (may be fractional) or "2006-01-02 15:04:05"
//	num_gpu      required  GPUs, 0 = CPU-only (skipped)
//	duration_s   run time in seconds on the reference GPU; required unless ArrivalOnly
//	gpu_milli    per-GPU share 1..1000 (default 1000)
//	gpu_types    '|'-separated allowed GPU types; empty = any
//	tenant, model, qos, status   free text
//	censored     true/false/1/0: the run time is a lower bound
//	cpu_milli, memory_mib, rdma_percent   optional host demands
//
// Columns whose name starts with "x_" are ignored; any other unknown column
// is an error, so that a misspelt "duraton_s" is not silently dropped.
func readGeneric(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, nil, GenericColumns[:3], true)
	if err != nil {
		return err
	}
	var unknown []string
	for name := range b.header {
		if !slices.Contains(GenericColumns, name) && !strings.HasPrefix(name, "x_") {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &RowError{File: b.file, Row: 1, Col: b.col(unknown[0]), Column: unknown[0], Reason: fmt.Sprintf(
			"unknown column(s) %s; want columns among %s (prefix extra columns with x_)",
			strings.Join(unknown, ", "), strings.Join(GenericColumns, ","))}
	}
	if _, ok := b.header["duration_s"]; !ok && !b.opt.ArrivalOnly {
		return &RowError{File: b.file, Row: 1, Reason: "no duration_s column; add run times or import with ArrivalOnly"}
	}
	return t.each(func(rec []string, line int) error {
		f := t.fields(rec)
		j := workloads.Job{Row: line, ID: f.str("id"), Tenant: f.str("tenant"), Model: f.str("model"),
			QoS: f.str("qos"), Status: f.str("status")}
		if j.ID == "" {
			f.bad("id", "job id is empty")
		}
		arr, ok := f.seconds("arrival_s")
		if f.err == nil && !ok {
			f.bad("arrival_s", "value is missing; want seconds from the trace start")
		}
		j.Arrival = arr
		j.NumGPU = int(f.int("num_gpu", 0, maxCountInFile))
		milli, ok := f.optInt("gpu_milli", 1, workloads.MaxGPUMilli)
		switch {
		case j.NumGPU == 0:
		case ok:
			j.GPUMilli = int(milli)
		default:
			j.GPUMilli = workloads.MaxGPUMilli
		}
		if s := f.str("gpu_types"); s != "" {
			j.GPUTypes = strings.Split(s, "|")
		}
		switch strings.ToLower(f.str("censored")) {
		case "", "0", "false", "no":
		case "1", "true", "yes":
			j.Censored = true
		default:
			f.bad("censored", "value %q is not a boolean; want true/false/1/0", truncate(f.str("censored"), 20))
		}
		cpu, _ := f.optInt("cpu_milli", 0, math.MaxInt32)
		mem, _ := f.optInt("memory_mib", 0, math.MaxInt64)
		j.RDMAPercent, _ = f.optFloat("rdma_percent", 0)
		j.CPUMilli, j.MemoryMiB = int(cpu), mem
		dur, ok := f.optFloat("duration_s", 0)
		switch {
		case f.err != nil:
		case dur > maxSeconds:
			f.bad("duration_s", "value %g is beyond %g s", dur, maxSeconds)
		case b.opt.ArrivalOnly:
		case !ok:
			f.bad("duration_s", "value is missing; want the run time in seconds (or import with ArrivalOnly)")
		case dur == 0:
			f.err = skipRow("zero run time", "duration_s is 0")
		default:
			j.Duration = engine.Seconds(dur)
		}
		if f.err != nil {
			return b.fail(line, f.err)
		}
		return b.addJob(j, "gpu_types")
	})
}

package workloads

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
)

// MaxGPUMilli is a whole GPU in Job.GPUMilli units (thousandths of a GPU).
const MaxGPUMilli = 1000

// Job is one unit of cluster demand: NumGPU GPUs, each used to the share
// GPUMilli/1000, from Arrival for Duration. A job is placed as a gang: all
// of its GPUs at once or none.
//
// Times are engine.Time (int64 ns). Importers in workloads/trace shift every
// arrival so that the earliest kept job arrives at 0, and report the shift
// they removed in trace.Result.Origin; a simulation therefore starts at 0.
type Job struct {
	// ID is the trace's own name for the job ("openb-pod-0017",
	// "jobname/taskname" for the v2020 PAI trace); unique within an import.
	ID string
	// Tenant is the user, virtual cluster or namespace; "" if unknown.
	Tenant string
	// Arrival is the submission (creation) time from the start of the trace.
	Arrival engine.Time
	// Duration is the run time on the GPUs of the trace (the reference GPU
	// of the simulation); 0 means unknown, as in arrival-only traces.
	Duration engine.Time
	// Censored marks a job still running when the trace snapshot ended:
	// Duration is then a lower bound on its real run time.
	Censored bool
	// NumGPU is the number of GPUs requested; 0 is a CPU-only job (importers
	// skip those and count them).
	NumGPU int
	// GPUMilli is the share of each of the NumGPU GPUs, 1..1000 (1000 = a
	// whole GPU); 0 only when NumGPU is 0. For the Alibaba traces a share of
	// 600 means 60% of the GPU's memory and at least 60% of its compute time.
	GPUMilli int
	// GPUTypes lists the GPU types the job may run on, as trace codes
	// ("T4", "V100M32", "G2") or catalog names; empty means any type.
	GPUTypes []string
	// Model is the workload (DNN model or role) name if the trace gives it;
	// "" if unknown.
	Model string
	// QoS is the trace's service class ("LS", "BE", ...); "" if unknown.
	QoS string
	// Status is the trace's final state of the job ("Running", "Failed",
	// "Terminated", "Pass", ...), kept verbatim; "" if unknown.
	Status string

	// Optional extras; 0 means not given.
	CPUMilli    int     // host CPU in thousandths of a core
	MemoryMiB   int64   // host memory
	RDMAPercent float64 // share of one RDMA NIC's bandwidth, in percent

	// Row is the 1-based line of the source file the job came from (the
	// header, where there is one, is line 1), for error messages; 0 for
	// synthetic jobs.
	Row int
}

// GPUDemand returns the job's GPU demand in whole GPUs, NumGPU*GPUMilli/1000.
func (j Job) GPUDemand() float64 { return float64(j.NumGPU) * float64(j.GPUMilli) / MaxGPUMilli }

// GPUHours returns the GPU time the job holds, GPUDemand*Duration, in hours.
func (j Job) GPUHours() float64 { return j.GPUDemand() * j.Duration.Seconds() / 3600 }

// Validate checks that the job is self-consistent and returns an error that
// names the job, its source row and the field at fault. It does not check
// limits of a particular cluster (GPUs per server, known GPU types): the
// importers and the scheduler do that.
func (j Job) Validate() error {
	fail := func(format string, a ...any) error {
		where := fmt.Sprintf("job %q", j.ID)
		if j.Row > 0 {
			where += fmt.Sprintf(" (row %d)", j.Row)
		}
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, a...))
	}
	switch {
	case j.ID == "":
		return fail("ID is empty; every job needs a name")
	case j.Arrival < 0:
		return fail("Arrival %v is negative; arrivals count from the trace start", j.Arrival)
	case j.Duration < 0:
		return fail("Duration %v is negative; want >= 0 (0 = unknown)", j.Duration)
	case j.NumGPU < 0:
		return fail("NumGPU %d is negative; want >= 0", j.NumGPU)
	case j.NumGPU == 0 && j.GPUMilli != 0:
		return fail("GPUMilli %d with NumGPU 0; a CPU-only job has GPUMilli 0", j.GPUMilli)
	case j.NumGPU > 0 && (j.GPUMilli < 1 || j.GPUMilli > MaxGPUMilli):
		return fail("GPUMilli %d is outside 1..%d (thousandths of one GPU)", j.GPUMilli, MaxGPUMilli)
	case j.CPUMilli < 0:
		return fail("CPUMilli %d is negative", j.CPUMilli)
	case j.MemoryMiB < 0:
		return fail("MemoryMiB %d is negative", j.MemoryMiB)
	case math.IsNaN(j.RDMAPercent) || math.IsInf(j.RDMAPercent, 0) || j.RDMAPercent < 0:
		return fail("RDMAPercent %v is not a finite number >= 0", j.RDMAPercent)
	}
	for i, t := range j.GPUTypes {
		if t == "" {
			return fail("GPUTypes[%d] is empty; list type names or leave GPUTypes empty for any type", i)
		}
	}
	return nil
}

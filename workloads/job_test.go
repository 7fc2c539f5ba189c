package workloads

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

func TestValidate(t *testing.T) {
	ok := Job{ID: "j", NumGPU: 1, GPUMilli: 460, Arrival: engine.Second, Duration: engine.Hour, Row: 3}
	tests := []struct {
		name string
		mod  func(*Job)
		want string // substring of the error; "" = valid
	}{
		{"valid share", func(*Job) {}, ""},
		{"valid CPU-only", func(j *Job) { j.NumGPU, j.GPUMilli = 0, 0 }, ""},
		{"valid whole GPUs", func(j *Job) { j.NumGPU, j.GPUMilli = 8, 1000 }, ""},
		{"unknown duration is fine", func(j *Job) { j.Duration = 0 }, ""},
		{"empty ID", func(j *Job) { j.ID = "" }, "ID is empty"},
		{"negative arrival", func(j *Job) { j.Arrival = -1 }, "Arrival"},
		{"negative duration", func(j *Job) { j.Duration = -engine.Second }, "Duration"},
		{"negative GPUs", func(j *Job) { j.NumGPU = -1 }, "NumGPU -1"},
		{"share without GPU", func(j *Job) { j.NumGPU = 0 }, "GPUMilli 460 with NumGPU 0"},
		{"zero share", func(j *Job) { j.GPUMilli = 0 }, "outside 1..1000"},
		{"share above a GPU", func(j *Job) { j.GPUMilli = 1001 }, "outside 1..1000"},
		{"negative CPU", func(j *Job) { j.CPUMilli = -5 }, "CPUMilli"},
		{"negative memory", func(j *Job) { j.MemoryMiB = -5 }, "MemoryMiB"},
		{"NaN RDMA", func(j *Job) { j.RDMAPercent = math.NaN() }, "RDMAPercent"},
		{"empty GPU type", func(j *Job) { j.GPUTypes = []string{"T4", ""} }, "GPUTypes[1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := ok
			tc.mod(&j)
			err := j.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.want)
			}
			// The message must say which job and which source row.
			if j.ID != "" && !strings.Contains(err.Error(), `"j" (row 3)`) {
				t.Errorf("error %q does not name the job and row", err)
			}
		})
	}
}

func TestGPUHours(t *testing.T) {
	// 4 GPUs at 50% for 90 minutes = 2 GPUs * 1.5 h = 3 GPU-hours.
	j := Job{ID: "x", NumGPU: 4, GPUMilli: 500, Duration: 90 * engine.Minute}
	if got := j.GPUDemand(); got != 2 {
		t.Errorf("GPUDemand = %v, want 2", got)
	}
	if got := j.GPUHours(); math.Abs(got-3) > 1e-12 {
		t.Errorf("GPUHours = %v, want 3", got)
	}
}

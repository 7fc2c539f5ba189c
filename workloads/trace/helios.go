package trace

import (
	"io"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

var heliosRequired = []string{"job_id", "user", "gpu_num", "submit_time", "start_time"}

// readHelios imports SenseTime Helios' cluster_log.csv (job_id, user, vc,
// gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time,
// duration, queue):
//
//   - ID = job_id, Tenant = user, Status = state; whole GPUs (GPUMilli 1000).
//   - Arrival = submit_time (seconds or "2020-04-01 00:00:11").
//   - Duration = the duration column (seconds) when given, else end_time -
//     start_time. Jobs without start_time are skipped as "never scheduled",
//     zero-length ones as "zero run time", gpu_num 0 as "cpu-only".
func readHelios(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, nil, heliosRequired, false)
	if err != nil {
		return err
	}
	return t.each(func(rec []string, line int) error {
		f := t.fields(rec)
		j := workloads.Job{Row: line, ID: f.str("job_id"), Tenant: f.str("user"), Status: f.str("state")}
		if j.ID == "" {
			f.bad("job_id", "job id is empty")
		}
		j.NumGPU = int(f.int("gpu_num", 0, maxCountInFile))
		if j.NumGPU > 0 {
			j.GPUMilli = workloads.MaxGPUMilli
		}
		cpu, _ := f.optInt("cpu_num", 0, math.MaxInt32/1000)
		j.CPUMilli = int(cpu * 1000)
		sub, okSub := f.seconds("submit_time")
		start, okStart := f.seconds("start_time")
		end, okEnd := f.seconds("end_time")
		dur, okDur := f.optFloat("duration", 0)
		if f.err == nil && !okSub {
			f.bad("submit_time", "value is missing; want seconds or a date")
		}
		j.Arrival = sub
		switch {
		case f.err != nil:
		case okStart && start < sub:
			f.bad("start_time", "job started at %v, before its submission at %v", start, sub)
		case okStart && okEnd && end < start:
			f.bad("end_time", "job ended at %v, before its start at %v", end, start)
		case okDur && dur > maxSeconds:
			f.bad("duration", "duration %g s is beyond %g s", dur, maxSeconds)
		case b.opt.ArrivalOnly:
		case !okStart:
			f.err = skipRow("never scheduled", "job never started (empty start_time, state "+j.Status+")")
		case okDur:
			j.Duration = engine.Seconds(dur)
		case okEnd:
			j.Duration = end - start
		default:
			f.err = skipRow("not finished", "job has neither duration nor end_time")
		}
		if f.err == nil && !b.opt.ArrivalOnly && j.Duration == 0 {
			f.err = skipRow("zero run time", "job ran for 0 s")
		}
		if f.err != nil {
			return b.fail(line, f.err)
		}
		return b.addJob(j, "")
	})
}

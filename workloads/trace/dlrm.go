package trace

import (
	"io"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

var dlrmRequired = []string{"instance_sn", "role", "app_name", "cpu_request", "gpu_request", "rdma_request",
	"memory_request", "creation_time", "scheduled_time", "deletion_time"}

// readDLRM imports the Alibaba v2025 disaggregated DLRM serving trace, one
// Job per instance:
//
//   - ID = instance_sn, Tenant = app_name, Model = role (CN or HN).
//   - CPUMilli = cpu_request x 1000 (vCPUs), MemoryMiB = memory_request x
//     1024 (GiB), RDMAPercent = rdma_request (percent of one RDMA NIC).
//   - gpu_request is GPUs (a fraction is a share of one GPU); 0 (the CN
//     role) is CPU-only and skipped.
//   - Empty times lie outside the trace window: an instance without
//     creation_time existed before the window and is skipped ("created
//     before trace window"); one created but never scheduled is skipped as
//     "never scheduled"; one without deletion_time was still running when
//     the window closed: it is kept, Censored, with its run time up to the
//     latest time in the file.
//   - The *_limit columns, disk and max_instance_per_node are not imported.
func readDLRM(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, nil, dlrmRequired, false)
	if err != nil {
		return err
	}
	type open struct {
		idx   int
		sched engine.Time
	}
	var running []open
	var windowEnd engine.Time
	err = t.each(func(rec []string, line int) error {
		f := t.fields(rec)
		j := workloads.Job{Row: line, ID: f.str("instance_sn"), Tenant: f.str("app_name"), Model: f.str("role")}
		if j.ID == "" {
			f.bad("instance_sn", "instance name is empty")
		}
		cpu := f.float("cpu_request", 0)
		gpu := f.float("gpu_request", 0)
		j.RDMAPercent = f.float("rdma_request", 0)
		mem := f.float("memory_request", 0)
		j.CPUMilli = int(math.Min(math.Round(cpu*1000), math.MaxInt32))
		j.MemoryMiB = int64(math.Min(math.Round(mem*1024), 1<<53))
		j.NumGPU, j.GPUMilli = gpuShare(gpu)
		created, okC := f.seconds("creation_time")
		sched, okS := f.seconds("scheduled_time")
		del, okD := f.seconds("deletion_time")
		j.Arrival = created
		for _, x := range []struct {
			ok bool
			t  engine.Time
		}{{okC, created}, {okS, sched}, {okD, del}} {
			if x.ok && f.err == nil {
				windowEnd = max(windowEnd, x.t)
			}
		}
		censored := false
		switch {
		case f.err != nil:
		case okC && okS && sched < created:
			f.bad("scheduled_time", "instance scheduled at %v, before its creation at %v", sched, created)
		case okS && okD && del < sched:
			f.bad("deletion_time", "instance deleted at %v, before it was scheduled at %v", del, sched)
		case !okC:
			f.err = skipRow("created before trace window", "empty creation_time: the instance was created before the trace window")
		case b.opt.ArrivalOnly:
		case !okS:
			f.err = skipRow("never scheduled", "empty scheduled_time: the instance never ran in the trace window")
		case !okD:
			censored = true
		case del == sched:
			f.err = skipRow("zero run time", "instance deleted the second it was scheduled")
		default:
			j.Duration = del - sched
		}
		if f.err != nil {
			return b.fail(line, f.err)
		}
		n := len(b.res.Jobs)
		if err := b.addJob(j, ""); err != nil {
			return err
		}
		if censored && len(b.res.Jobs) > n {
			running = append(running, open{n, sched})
		}
		return nil
	})
	for _, o := range running {
		b.res.Jobs[o.idx].Censored = true
		b.res.Jobs[o.idx].Duration = windowEnd - o.sched
	}
	return err
}

package trace

import (
	"io"
	"math"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// Columns of the Alibaba v2023 openb pod and node lists.
var (
	openbTimeCols  = []string{"creation_time", "deletion_time", "scheduled_time"}
	openbNodeCols  = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}
	maxCountInFile = int64(1 << 20) // bigger GPU counts are typos, not jobs
)

// readOpenB imports an openb pod list (Alibaba cluster-trace-gpu-v2023):
//
//   - ID = name, Arrival = creation_time, QoS = qos, Status = pod_phase.
//   - Duration = deletion_time - scheduled_time: the time the pod held its
//     GPU, not counting its wait. Pods still running when the snapshot was
//     taken (pod_phase Running and deletion_time equal to the file's largest
//     deletion_time, 12902960 s) are marked Censored.
//   - Pending pods (empty scheduled_time) never ran, so they have no run
//     time: skipped as "never scheduled" (kept with ArrivalOnly).
//   - num_gpu 0 (CPU-only pods) are skipped as "cpu-only".
//   - gpu_milli is the per-GPU share; gpu_spec lists allowed GPU models.
//
// The multigpu variants have no time columns and need ArrivalOnly; their
// jobs all arrive at 0, in file order.
func readOpenB(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, nil, []string{"name", "num_gpu", "gpu_milli"}, false)
	if err != nil {
		return err
	}
	timed := true
	for _, c := range openbTimeCols {
		if _, ok := b.header[c]; !ok {
			timed = false
		}
	}
	if !timed && !b.opt.ArrivalOnly {
		return &RowError{File: b.file, Row: 1, Reason: "this pod list has no creation/deletion/scheduled_time columns " +
			"(an openb multigpu variant): it can only be packed in file order; import it with ArrivalOnly"}
	}
	if timed {
		t.want = append(t.want, openbTimeCols...)
	} else {
		b.res.Notes = append(b.res.Notes, "no time columns: every job arrives at 0, in file order, with unknown duration")
	}
	var deletion []engine.Time // per kept job, to mark censored pods afterwards
	var lastDeletion engine.Time
	err = t.each(func(rec []string, line int) error {
		f := t.fields(rec)
		j := workloads.Job{Row: line, ID: f.str("name"), QoS: f.str("qos"), Status: f.str("pod_phase")}
		if j.ID == "" {
			f.bad("name", "pod name is empty")
		}
		cpu, _ := f.optInt("cpu_milli", 0, math.MaxInt32)
		mem, _ := f.optInt("memory_mib", 0, math.MaxInt64)
		j.CPUMilli, j.MemoryMiB = int(cpu), mem
		j.NumGPU = int(f.int("num_gpu", 0, maxCountInFile))
		j.GPUMilli = int(f.int("gpu_milli", 0, workloads.MaxGPUMilli))
		if spec := f.str("gpu_spec"); spec != "" {
			j.GPUTypes = strings.Split(spec, "|")
		}
		var del engine.Time
		if timed {
			created, ok := f.seconds("creation_time")
			if !ok && f.err == nil {
				f.bad("creation_time", "value is missing; want seconds")
			}
			del, ok = f.seconds("deletion_time")
			if !ok && f.err == nil {
				f.bad("deletion_time", "value is missing; want seconds")
			}
			sched, scheduled := f.seconds("scheduled_time")
			j.Arrival = created
			switch {
			case f.err != nil:
			case scheduled && sched < created:
				f.bad("scheduled_time", "pod scheduled at %v, before its creation at %v", sched, created)
			case scheduled && del < sched:
				f.bad("deletion_time", "pod deleted at %v, before it was scheduled at %v", del, sched)
			case !scheduled && del < created:
				f.bad("deletion_time", "pod deleted at %v, before its creation at %v", del, created)
			case b.opt.ArrivalOnly:
			case !scheduled:
				f.err = skipRow("never scheduled", "pod was never scheduled (empty scheduled_time, phase "+j.Status+"): it has no run time")
			case del == sched:
				f.err = skipRow("zero run time", "pod was deleted the second it was scheduled")
			default:
				j.Duration = del - sched
			}
			if f.err == nil {
				lastDeletion = max(lastDeletion, del)
			}
		}
		if f.err == nil && j.NumGPU > 0 && j.GPUMilli == 0 {
			f.bad("gpu_milli", "gpu_milli is 0 for a pod with %d GPU(s); want 1..1000", j.NumGPU)
		}
		if f.err != nil {
			return b.fail(line, f.err)
		}
		if j.NumGPU == 0 {
			j.GPUMilli = 0
		}
		n := len(b.res.Jobs)
		if err := b.addJob(j, "gpu_spec"); err != nil {
			return err
		}
		if len(b.res.Jobs) > n {
			deletion = append(deletion, del)
		}
		return nil
	})
	if timed && !b.opt.ArrivalOnly {
		for i := range b.res.Jobs {
			if deletion[i] == lastDeletion && b.res.Jobs[i].Status == "Running" {
				b.res.Jobs[i].Censored = true
			}
		}
	}
	return err
}

// readOpenBNodes imports an openb node list: sn, cpu_milli, memory_mib,
// gpu (count) and model (empty for a CPU-only node).
func readOpenBNodes(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, nil, openbNodeCols, false)
	if err != nil {
		return err
	}
	return t.each(func(rec []string, line int) error {
		return addNode(b, t.fields(rec), line, nodeCols{"sn", "model", "cpu_milli", "memory_mib", "gpu"}, 1, 1)
	})
}

// nodeCols names the columns of a node list.
type nodeCols struct{ name, gpuType, cpu, mem, gpus string }

// addNode checks and keeps one node; the scales turn the file's CPU and
// memory units into milli-cores and MiB.
func addNode(b *builder, f *fields, line int, c nodeCols, cpuScale, memScale int64) error {
	n := Node{Row: line, Name: f.str(c.name), GPUType: f.str(c.gpuType)}
	if n.Name == "" {
		f.bad(c.name, "node name is empty")
	}
	// A server without CPU or memory can host no pod: a zero here is a
	// broken row, not a way to leave CPU unmodelled (a node list without
	// those columns, or cluster.gpus, does that).
	cpu := f.int(c.cpu, 1, math.MaxInt32/cpuScale)
	mem := f.int(c.mem, 1, math.MaxInt64/memScale)
	gpus := f.int(c.gpus, 0, maxCountInFile)
	n.CPUMilli, n.MemoryMiB, n.NumGPU = int(cpu*cpuScale), mem*memScale, int(gpus)
	typeCol := c.gpuType
	nameCol := c.name
	if f.err == nil && n.NumGPU > 0 && n.GPUType == "" {
		f.bad(typeCol, "node has %d GPUs but no GPU model", n.NumGPU)
	}
	if f.err == nil && n.NumGPU > 0 {
		if _, fe := b.checkTypes([]string{n.GPUType}); fe != nil {
			fe.col = typeCol
			f.err = fe
		}
	}
	if f.err != nil {
		return b.fail(line, f.err)
	}
	if n.NumGPU == 0 {
		n.GPUType = ""
	}
	if _, dup := b.ids[n.Name]; dup {
		return b.reject(line, nameCol, "duplicate id", "node "+n.Name+" appears more than once", false)
	}
	b.ids[n.Name] = struct{}{}
	b.res.Nodes = append(b.res.Nodes, n)
	b.res.Used++
	return nil
}

package trace

import (
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// Column names of the headerless Alibaba v2020 PAI tables (from the
// trace's .header files).
var (
	paiJobCols      = []string{"job_name", "inst_id", "user", "status", "start_time", "end_time"}
	paiTaskCols     = []string{"job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"}
	paiInstanceCols = []string{"job_name", "task_name", "inst_name", "worker_name", "inst_id", "status", "start_time", "end_time", "machine"}
	paiMachineCols  = []string{"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"}
)

// importPAI imports the Alibaba v2020 PAI trace from its headerless tables
// (ImportFile with format alibaba-v2020). Each task (a gang of inst_num
// identical instances) becomes one Job:
//
//   - ID = job_name/task_name; Tenant = user of the job table.
//   - Arrival = the job's start_time (its submission), or the task's
//     start_time when the job table lacks the job.
//   - Duration = task end_time - start_time; with the instance table, the
//     span from the first instance start to the last instance end.
//   - plan_gpu is percent of a GPU per instance: NumGPU = inst_num x
//     ceil(plan_gpu/100), GPUMilli = plan_gpu*10/ceil(plan_gpu/100) (so 50 ->
//     one half GPU per instance, 150 -> two GPUs at 750 each). Empty or 0 is
//     a CPU-only task, skipped.
//   - plan_cpu is percent of a core (600 = 6 cores), plan_mem is GB;
//     gpu_type is one of MISC, P100, T4, V100, V100M32 or empty (any).
//   - Tasks that never started (status Waiting or empty start_time) are
//     skipped as "never scheduled", tasks without end_time as "not
//     finished" (both kept with ArrivalOnly when an arrival is known).
//
// Read, Used and the rejections count task-table rows; bad rows of the job
// and instance tables are errors in strict mode and otherwise ignored with a
// note.
func importPAI(files PAIFiles, opt Options) (Result, error) {
	if files.Tasks == "" {
		return Result{}, fmt.Errorf("alibaba-v2020: the task table (pai_task_table.csv) is required")
	}
	f, err := inputfile.Open(files.Tasks)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	opt.Format = FormatPAI
	opt.PAI = files
	return Import(f, files.Tasks, opt)
}

// fillPAIFiles finds the sibling tables of one PAI table file by name. It
// returns where the task table, the one required, would be.
func fillPAIFiles(files *PAIFiles, path string) (tasks string) {
	dir, base := filepath.Split(path)
	suffix := ""
	for _, p := range []string{"pai_job_table", "pai_task_table", "pai_instance_table"} {
		if strings.HasPrefix(strings.ToLower(base), p) {
			suffix = base[len(p):]
		}
	}
	find := func(field *string, table string) {
		if *field != "" {
			return
		}
		cand := filepath.Join(dir, table+suffix)
		if _, err := os.Stat(cand); err == nil {
			*field = cand
		}
	}
	find(&files.Tasks, "pai_task_table")
	find(&files.Jobs, "pai_job_table")
	find(&files.Instances, "pai_instance_table")
	return filepath.Join(dir, "pai_task_table"+suffix)
}

type paiJob struct {
	user      string
	submitted engine.Time
	hasSubmit bool
}

type paiSpan struct {
	first, last engine.Time
	complete    bool // every instance had both times
}

// readSideTable streams a headerless side table of the PAI trace with its
// own row accounting; bad rows are summarised in a note of b.
func readSideTable(path string, cols []string, b *builder, fn func(f *fields, line int) *fieldErr) error {
	file, err := inputfile.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	side, err := newBuilder(path, FormatPAI, b.opt)
	if err != nil {
		return err
	}
	t, err := openCSV(file, side, cols, cols[:2], false)
	if err != nil {
		return err
	}
	first := true
	err = t.each(func(rec []string, line int) error {
		if first && headerRow(rec, cols) {
			first = false
			return nil
		}
		first = false
		if fe := fn(t.fields(rec), line); fe != nil {
			return side.fail(line, fe)
		}
		return nil
	})
	if n := side.res.RejectedTotal(); n > 0 {
		b.res.Notes = append(b.res.Notes, fmt.Sprintf("%s: %d bad rows ignored (first: row %d: %s)",
			path, n, side.res.Rejected[0].Row, side.res.Rejected[0].Reason))
	}
	return err
}

// headerRow reports whether rec is a header line matching cols, which some
// users add to the headerless tables.
func headerRow(rec, cols []string) bool {
	if len(rec) < len(cols) {
		return false
	}
	for i, c := range cols {
		if strings.TrimSpace(rec[i]) != c {
			return false
		}
	}
	return true
}

func readPAI(r io.Reader, files PAIFiles, b *builder) error {
	jobs := map[string]paiJob{}
	if files.Jobs != "" {
		err := readSideTable(files.Jobs, paiJobCols, b, func(f *fields, line int) *fieldErr {
			name := f.str("job_name")
			if name == "" {
				f.bad("job_name", "job name is empty")
			}
			sub, ok := f.seconds("start_time")
			if f.err != nil {
				return f.err
			}
			jobs[name] = paiJob{user: f.str("user"), submitted: sub, hasSubmit: ok}
			return nil
		})
		if err != nil {
			return err
		}
	}
	spans := map[string]paiSpan{}
	if files.Instances != "" {
		err := readSideTable(files.Instances, paiInstanceCols, b, func(f *fields, line int) *fieldErr {
			key := f.str("job_name") + "\x00" + f.str("task_name")
			start, okS := f.seconds("start_time")
			end, okE := f.seconds("end_time")
			if f.err == nil && okS && okE && end < start {
				f.bad("end_time", "instance ends at %v, before its start at %v", end, start)
			}
			if f.err != nil {
				return f.err
			}
			s, seen := spans[key]
			if !seen {
				s = paiSpan{first: engine.MaxTime, complete: true}
			}
			if okS && okE {
				s.first, s.last = min(s.first, start), max(s.last, end)
			} else {
				s.complete = false
			}
			spans[key] = s
			return nil
		})
		if err != nil {
			return err
		}
	}

	t, err := openCSV(r, b, paiTaskCols, paiTaskCols[:9], false)
	if err != nil {
		return err
	}
	first := true
	return t.each(func(rec []string, line int) error {
		if first && headerRow(rec, paiTaskCols) {
			first = false
			b.res.Read-- // a header, not a task
			return nil
		}
		first = false
		f := t.fields(rec)
		jobName, taskName := f.str("job_name"), f.str("task_name")
		j := workloads.Job{Row: line, ID: jobName + "/" + taskName, Status: f.str("status")}
		if jobName == "" {
			f.bad("job_name", "job name is empty")
		}
		inst := f.int("inst_num", 1, maxCountInFile)
		cpu, _ := f.optFloat("plan_cpu", 0)
		mem, _ := f.optFloat("plan_mem", 0)
		planGPU, _ := f.optFloat("plan_gpu", 0)
		j.CPUMilli = int(math.Min(math.Round(cpu*10), math.MaxInt32))
		j.MemoryMiB = int64(math.Min(math.Round(mem*1024), 1<<53))
		perInst, milli := gpuShare(planGPU / 100)
		j.NumGPU, j.GPUMilli = int(min(inst*int64(perInst), maxCountInFile+1)), milli
		if gt := f.str("gpu_type"); gt != "" {
			j.GPUTypes = []string{gt}
		}
		start, started := f.seconds("start_time")
		end, ended := f.seconds("end_time")
		job, known := jobs[jobName]
		j.Tenant = job.user
		j.Arrival = start
		if known && job.hasSubmit && (!started || job.submitted <= start) {
			j.Arrival = job.submitted
		}
		switch {
		case f.err != nil:
		case started && ended && end < start:
			f.bad("end_time", "task ends at %v, before its start at %v", end, start)
		case !started && !(known && job.hasSubmit):
			f.err = skipRow("never scheduled", "task never started (status "+j.Status+") and its job has no submission time")
		case b.opt.ArrivalOnly:
		case !started || j.Status == "Waiting":
			f.err = skipRow("never scheduled", "task never started (status "+j.Status+")")
		case !ended:
			f.err = skipRow("not finished", "task has no end_time (status "+j.Status+")")
		default:
			j.Duration = end - start
			if s, ok := spans[jobName+"\x00"+taskName]; ok && s.complete {
				j.Duration = s.last - s.first
			}
			if j.Duration == 0 {
				f.err = skipRow("zero run time", "task ended the second it started")
			}
		}
		if f.err != nil {
			return b.fail(line, f.err)
		}
		return b.addJob(j, "gpu_type")
	})
}

// readPAIMachines imports pai_machine_spec: machine, gpu_type (CPU for a
// CPU-only machine), cap_cpu (cores), cap_mem (GB), cap_gpu.
func readPAIMachines(r io.Reader, b *builder) error {
	t, err := openCSV(r, b, paiMachineCols, paiMachineCols, false)
	if err != nil {
		return err
	}
	first := true
	return t.each(func(rec []string, line int) error {
		if first && headerRow(rec, paiMachineCols) {
			first = false
			b.res.Read--
			return nil
		}
		first = false
		f := t.fields(rec)
		if f.str("gpu_type") == "CPU" {
			f.rec[b.header["gpu_type"]] = ""
		}
		return addNode(b, f, line, nodeCols{"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"}, 1000, 1024)
	})
}

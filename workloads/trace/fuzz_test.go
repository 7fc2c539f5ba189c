package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// fuzzImport imports data in both modes and checks the invariants that
// must hold for any input: no panic, Read = Used + rejected, every job
// valid, and a strict import either fails or agrees with the lenient one.
func fuzzImport(t *testing.T, data []byte, opt Options) {
	lenient, err := Import(bytes.NewReader(data), "fuzz.csv", opt)
	if err != nil {
		return
	}
	if lenient.Read != lenient.Used+lenient.RejectedTotal() {
		t.Fatalf("read %d != used %d + rejected %d", lenient.Read, lenient.Used, lenient.RejectedTotal())
	}
	if lenient.Used != len(lenient.Jobs)+len(lenient.Nodes) {
		t.Fatalf("used %d but %d jobs and %d nodes", lenient.Used, len(lenient.Jobs), len(lenient.Nodes))
	}
	for _, j := range lenient.Jobs {
		if err := j.Validate(); err != nil {
			t.Fatalf("imported an invalid job: %v", err)
		}
	}
	opt.Strict = true
	strict, err := Import(bytes.NewReader(data), "fuzz.csv", opt)
	if err == nil && (strict.Used != lenient.Used || strict.Read != lenient.Read) {
		t.Fatalf("strict used %d of %d, lenient %d of %d", strict.Used, strict.Read, lenient.Used, lenient.Read)
	}
}

func seed(f *testing.F, file string) {
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

func FuzzOpenB(f *testing.F) {
	seed(f, "openb_pods.csv")
	seed(f, "openb_multigpu.csv")
	f.Add([]byte("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\nx,1,1e3,1,2,\"1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, data, Options{Format: FormatOpenB})
		fuzzImport(t, data, Options{Format: FormatOpenB, ArrivalOnly: true})
	})
}

func FuzzOpenBNodes(f *testing.F) {
	seed(f, "openb_nodes.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatOpenBNodes}) })
}

func FuzzPAITasks(f *testing.F) {
	seed(f, "pai/pai_task_table.csv")
	f.Add([]byte("j,t,99999999999,Terminated,1,2,1e308,1e308,1e308,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatPAI}) })
}

func FuzzPAIMachines(f *testing.F) {
	seed(f, "pai/pai_machine_spec.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatPAIMachines}) })
}

func FuzzDLRM(f *testing.F) {
	seed(f, "dlrm.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatDLRM}) })
}

func FuzzPhilly(f *testing.F) {
	seed(f, "cluster_job_log.json")
	f.Add([]byte(`[{"jobid":"a","submitted_time":"2017-01-01 00:00:00","attempts":[{"start_time":null,"detail":[{"gpus":[1]}]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatPhilly}) })
}

func FuzzHelios(f *testing.F) {
	seed(f, "cluster_log.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, data, Options{Format: FormatHelios}) })
}

func FuzzGeneric(f *testing.F) {
	seed(f, "generic.csv")
	f.Add([]byte("id,arrival_s,num_gpu,duration_s,censored\na,1e9,1,1e10,maybe\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, data, Options{Format: FormatGeneric})
		fuzzImport(t, data, Options{}) // auto-detection on arbitrary bytes
	})
}

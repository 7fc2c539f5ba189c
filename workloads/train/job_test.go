package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// A list in the SwitchML-omnetpp format (num_gpu,duration,submit_time,
// iterations,model; duration ignored) reads in arrival order, shifted to
// start at 0, with the alias bert read as bert-large.
func TestParseJobList(t *testing.T) {
	in := "num_gpu,duration,submit_time,iterations,model\n" +
		"8,100,50,300,resnet50\n" +
		"2,10,20,5,bert\n" +
		"4,1,20,7,vgg16\n"
	jobs, err := ParseJobList("l.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "job-2", Arrival: 0, GPUs: 2, Iterations: 5, Model: "bert-large", Row: 3},
		{ID: "job-3", Arrival: 0, GPUs: 4, Iterations: 7, Model: "vgg16", Row: 4},
		{ID: "job-1", Arrival: engine.Seconds(30), GPUs: 8, Iterations: 300, Model: "resnet50", Row: 2},
	}
	if len(jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(jobs), len(want))
	}
	for i := range want {
		if jobs[i] != want[i] {
			t.Errorf("job %d = %+v, want %+v", i, jobs[i], want[i])
		}
	}
}

// Every bad row names the file, its line and column.
func TestParseJobListErrors(t *testing.T) {
	hdr := "num_gpu,submit_time,iterations,model\n"
	for _, c := range []struct {
		name, in string
		row, col int
		want     string
	}{
		{"empty", "", 0, 0, "file is empty"},
		{"no model column", "num_gpu,submit_time,iterations\n1,0,1\n", 1, 0, "header lacks column(s) model"},
		{"twice", "num_gpu,num_gpu,submit_time,iterations,model\n", 1, 2, "column appears twice"},
		{"no rows", hdr, 0, 0, "no job in the list"},
		{"zero iterations", hdr + "1,0,1,resnet50\n2,0,0,resnet50\n", 3, 3, "want a whole number of iterations from 1 to 1000000000"},
		{"iterations past the bound", hdr + "1,0,1000000001,resnet50\n", 2, 3, "from 1 to 1000000000"},
		{"1e18 iterations", hdr + "1,0,1000000000000000000,resnet50\n", 2, 3, "from 1 to 1000000000"},
		{"unknown model", hdr + "1,0,1,resnet-50x\n", 2, 4, "resnet-50x"},
		{"zero GPUs", hdr + "0,0,1,resnet50\n", 2, 1, "from 1 to 4096"},
		{"fractional GPUs", hdr + "1.5,0,1,resnet50\n", 2, 1, "whole number of GPUs"},
		{"negative time", hdr + "1,-3,1,resnet50\n", 2, 2, "want seconds from 0 to 3155760000"},
		{"NaN time", hdr + "1,NaN,1,resnet50\n", 2, 2, "want seconds from 0 to 3155760000"},
		{"time past the horizon", hdr + "1,3155760001,1,resnet50\n", 2, 2, "the simulator's horizon, 100 years"},
		{"short row", hdr + "1,0,1\n", 2, 0, "row has 3 fields but the header names 4"},
		{"quote", hdr + "1,0,\"1,resnet50\n", 2, 0, "CSV syntax"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJobList("l.csv", strings.NewReader(c.in))
			var re *trace.RowError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RowError", err)
			}
			if re.File != "l.csv" || re.Row != c.row || re.Col != c.col || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v (row %d col %d), want row %d col %d with %q", err, re.Row, re.Col, c.row, c.col, c.want)
			}
		})
	}
}

// FromTrace's rule by hand: resnet50 on an A100-80GB computes an
// iteration of 256 images at 938 img/s, c = 0.2729 s; a job of an hour
// runs round(3600 / c) = 13,191 iterations, one of 0.1 s 1 (at least
// one); CPU jobs and jobs without a run time are left out.
func TestFromTraceRule(t *testing.T) {
	m, err := Lookup("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.ComputeSeconds("a100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	src := []workloads.Job{
		{ID: "a", Arrival: engine.Seconds(100), NumGPU: 4, Duration: engine.Seconds(3600), Row: 2},
		{ID: "cpu", Arrival: engine.Seconds(50), NumGPU: 0, Duration: engine.Seconds(10), Row: 3},
		{ID: "never", Arrival: engine.Seconds(60), NumGPU: 1, Duration: 0, Row: 4},
		{ID: "b", Arrival: engine.Seconds(160), NumGPU: 1, Duration: engine.Seconds(0.1), Row: 5},
	}
	jobs, err := FromTrace(src, "resnet50", "a100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "a" || jobs[1].ID != "b" {
		t.Fatalf("jobs = %+v, want a then b", jobs)
	}
	if c != 256.0/938 {
		t.Fatalf("compute %v s, want 256/938", c)
	}
	if want := 13191; jobs[0].Iterations != want || jobs[0].GPUs != 4 || jobs[0].Arrival != 0 {
		t.Errorf("a = %+v, want %d iterations on 4 GPUs at 0", jobs[0], want)
	}
	if jobs[1].Iterations != 1 || jobs[1].Arrival != engine.Seconds(60) {
		t.Errorf("b = %+v", jobs[1])
	}
	if _, err := FromTrace(src[1:3], "resnet50", "a100-80gb"); err == nil {
		t.Error("a trace without GPU jobs gave no error")
	}
}

// Synthesis is a function of the stream: the same seed gives the same
// jobs, another seed others; every job is drawn from the mix.
func TestSynthesize(t *testing.T) {
	mix := Mix{GPUs: []int{2, 8}, GPUWeights: []float64{1, 0}, Models: []string{"vgg16"}, MinIterations: 10, MaxIterations: 20, MeanGapS: 5}
	a, err := Synthesize(50, mix, engine.NewStream(7, "t"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthesize(50, mix, engine.NewStream(7, "t"))
	c, _ := Synthesize(50, mix, engine.NewStream(8, "t"))
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("job %d differs under one seed: %+v, %+v", i, a[i], b[i])
		}
		same = same && a[i] == c[i]
		if a[i].GPUs != 2 || a[i].Model != "vgg16" || a[i].Iterations < 10 || a[i].Iterations > 20 {
			t.Errorf("job %+v is outside the mix (weight 0 on 8 GPUs)", a[i])
		}
		if i > 0 && a[i].Arrival < a[i-1].Arrival {
			t.Errorf("arrivals out of order at %d", i)
		}
	}
	if same {
		t.Error("seeds 7 and 8 drew the same jobs")
	}
}

// FuzzParseJobList: any input gives jobs or an error, never a panic, and
// the jobs it gives are valid.
func FuzzParseJobList(f *testing.F) {
	f.Add("num_gpu,duration,submit_time,iterations,model\n8,100,50,300,resnet50\n2,10,20,5,bert\n")
	f.Add("num_gpu,submit_time,iterations,model\n1,0,0,resnet50\n")
	f.Add("model,iterations,submit_time,num_gpu\n\"vgg16\",1,1e3,4\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseJobList("f.csv", strings.NewReader(in))
		if err != nil {
			return
		}
		for i, j := range jobs {
			if j.GPUs < 1 || j.Iterations < 1 || j.Arrival < 0 || (i > 0 && j.Arrival < jobs[i-1].Arrival) {
				t.Fatalf("invalid job %d: %+v", i, j)
			}
			if _, err := Lookup(j.Model); err != nil {
				t.Fatalf("job %d has model %q: %v", i, j.Model, err)
			}
		}
	})
}

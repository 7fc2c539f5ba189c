package trace

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/workloads"
)

// wantJob is the part of an imported job a fixture test checks.
type wantJob struct {
	id             string
	arrival, dur   float64 // seconds after normalisation
	gpus, milli    int
	censored       bool
	tenant         string
	types          []string
	row            int
	cpuMilli       int
	memMiB         int64
	rdma           float64
	checkResources bool
}

func TestFixtures(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		opt    Options
		format string
		read   int
		counts map[string]int
		jobs   []wantJob // in arrival order
		nodes  []Node
	}{
		{
			// Rows 2,3,6,13 are kept: durations are deletion - scheduled
			// (700-160=540, 1200-250=950, 5000-400=4600, 5000-720=4280) and
			// arrivals creation - 100 (the earliest kept creation). p4 is
			// Running at the file's last deletion time 5000 -> censored; p10
			// ends then too but Succeeded -> not censored.
			name: "openb pods", file: "openb_pods.csv", format: FormatOpenB, read: 12,
			counts: map[string]int{"cpu-only": 1, "never scheduled": 1, "bad num_gpu": 1, "unknown GPU type": 1,
				"too many GPUs": 1, "bad deletion_time": 1, "duplicate id": 1, "bad gpu_milli": 1},
			jobs: []wantJob{
				{id: "p0", arrival: 0, dur: 540, gpus: 1, milli: 500, row: 2, cpuMilli: 4000, memMiB: 8192, checkResources: true},
				{id: "p1", arrival: 100, dur: 950, gpus: 2, milli: 1000, types: []string{"V100M16", "V100M32"}, row: 3},
				{id: "p4", arrival: 300, dur: 4600, gpus: 1, milli: 250, censored: true, types: []string{"T4"}, row: 6},
				{id: "p10", arrival: 600, dur: 4280, gpus: 4, milli: 1000, types: []string{"G2"}, row: 13},
			},
		},
		{
			// No times: all arrive at 0 in file order, duration unknown.
			name: "openb multigpu arrival-only", file: "openb_multigpu.csv", opt: Options{ArrivalOnly: true},
			format: FormatOpenB, read: 3, counts: map[string]int{"cpu-only": 1},
			jobs: []wantJob{{id: "m0", gpus: 1, milli: 300, row: 2}, {id: "m1", gpus: 8, milli: 1000, row: 3}},
		},
		{
			// Pending p3 is kept in arrival-only mode; durations are 0.
			name: "openb pods arrival-only", file: "openb_pods.csv", opt: Options{ArrivalOnly: true}, format: FormatOpenB, read: 12,
			counts: map[string]int{"cpu-only": 1, "bad num_gpu": 1, "unknown GPU type": 1,
				"too many GPUs": 1, "bad deletion_time": 1, "duplicate id": 1, "bad gpu_milli": 1},
			jobs: []wantJob{
				{id: "p0", arrival: 0, gpus: 1, milli: 500, row: 2},
				{id: "p1", arrival: 100, gpus: 2, milli: 1000, types: []string{"V100M16", "V100M32"}, row: 3},
				{id: "p3", arrival: 250, gpus: 1, milli: 1000, row: 5},
				{id: "p4", arrival: 300, gpus: 1, milli: 250, types: []string{"T4"}, row: 6},
				{id: "p10", arrival: 600, gpus: 4, milli: 1000, types: []string{"G2"}, row: 13},
			},
		},
		{
			name: "openb nodes", file: "openb_nodes.csv", format: FormatOpenBNodes, read: 5,
			counts: map[string]int{"bad model": 1, "unknown GPU type": 1},
			nodes: []Node{
				{Name: "n0", CPUMilli: 64000, MemoryMiB: 262144, NumGPU: 2, GPUType: "P100", Row: 2},
				{Name: "n1", CPUMilli: 32000, MemoryMiB: 131072, Row: 3},
				{Name: "n2", CPUMilli: 96000, MemoryMiB: 786432, NumGPU: 8, GPUType: "V100M32", Row: 4},
			},
		},
		{
			// j1/worker: 4 instances x 50% of a V100, arrival = job submission
			// 1000 -> 0, run time from the instance table 4050-1120 = 2930,
			// plan_cpu 600% = 6000 milli, plan_mem 29.296875 GB = 30000 MiB.
			// j2/tensorflow: plan_gpu 150 -> 2 GPUs at 750, submission 1500 ->
			// 500, run time 2600-1600 (one instance lacks end_time, so the
			// task's own times). j6/worker: no job-table row -> tenant "" and
			// arrival = task start 2200 -> 1200, 2 whole GPUs, 1000 s.
			name: "pai v2020", file: "pai/pai_task_table.csv", format: FormatPAI, read: 7,
			counts: map[string]int{"cpu-only": 1, "never scheduled": 1, "not finished": 1, "unknown GPU type": 1},
			jobs: []wantJob{
				{id: "j1/worker", arrival: 0, dur: 2930, gpus: 4, milli: 500, tenant: "alice", types: []string{"V100"}, row: 1,
					cpuMilli: 6000, memMiB: 30000, checkResources: true},
				{id: "j2/tensorflow", arrival: 500, dur: 1000, gpus: 2, milli: 750, tenant: "bob", types: []string{"T4"}, row: 3},
				{id: "j6/worker", arrival: 1200, dur: 1000, gpus: 2, milli: 1000, row: 7},
			},
		},
		{
			// cap_cpu cores x 1000, cap_mem GB x 1024; CPU machines have no type.
			name: "pai machines", file: "pai/pai_machine_spec.csv", format: FormatPAIMachines, read: 3, counts: map[string]int{},
			nodes: []Node{
				{Name: "m1", CPUMilli: 96000, MemoryMiB: 524288, NumGPU: 8, GPUType: "V100", Row: 1},
				{Name: "m2", CPUMilli: 96000, MemoryMiB: 524288, Row: 2},
				{Name: "m3", CPUMilli: 64000, MemoryMiB: 524288, NumGPU: 2, GPUType: "T4", Row: 3},
			},
		},
		{
			// d0: 1110-110 = 1000 s, 12 vCPU, 120 GiB = 122880 MiB, RDMA 25%.
			// d3: never deleted -> censored, run to the file's latest time
			// 1110: 1110-250 = 860 s; arrival 200-100 = 100.
			name: "dlrm v2025", file: "dlrm.csv", format: FormatDLRM, read: 6,
			counts: map[string]int{"cpu-only": 1, "created before trace window": 1, "never scheduled": 1, "bad rdma_request": 1},
			jobs: []wantJob{
				{id: "d0", arrival: 0, dur: 1000, gpus: 1, milli: 1000, tenant: "app_0", row: 2,
					cpuMilli: 12000, memMiB: 122880, rdma: 25, checkResources: true},
				{id: "d3", arrival: 100, dur: 860, gpus: 1, milli: 1000, tenant: "app_1", censored: true, row: 5,
					cpuMilli: 8000, memMiB: 40960, rdma: 50, checkResources: true},
			},
		},
		{
			// application_1: 2+2 GPUs, 01:00:30-02:00:30 = 3600 s, arrives first.
			// application_2: 1 GPU, first start 01:20 to last end 02:10 = 3000 s,
			// submitted 10 min after application_1.
			name: "philly", file: "cluster_job_log.json", format: FormatPhilly, read: 7,
			counts: map[string]int{"never scheduled": 1, "not finished": 1, "bad submitted_time": 1, "too many GPUs": 1, "bad jobid": 1},
			jobs: []wantJob{
				{id: "application_1", arrival: 0, dur: 3600, gpus: 4, milli: 1000, tenant: "u1", row: 1},
				{id: "application_2", arrival: 600, dur: 3000, gpus: 1, milli: 1000, tenant: "u2", row: 2},
			},
		},
		{
			// Raising MaxGPUsPerJob keeps the 16-GPU application_6
			// (01:18-01:19 = 60 s, submitted 18 min after the first).
			name: "philly wide jobs", file: "cluster_job_log.json", opt: Options{MaxGPUsPerJob: 16}, format: FormatPhilly, read: 7,
			counts: map[string]int{"never scheduled": 1, "not finished": 1, "bad submitted_time": 1, "bad jobid": 1},
			jobs: []wantJob{
				{id: "application_1", arrival: 0, dur: 3600, gpus: 4, milli: 1000, tenant: "u1", row: 1},
				{id: "application_2", arrival: 600, dur: 3000, gpus: 1, milli: 1000, tenant: "u2", row: 2},
				{id: "application_6", arrival: 1080, dur: 60, gpus: 16, milli: 1000, tenant: "u3", row: 6},
			},
		},
		{
			// h1: duration column 3600; h2: no duration -> 00:20:05-00:10:05 = 600 s.
			name: "helios", file: "cluster_log.csv", format: FormatHelios, read: 7,
			counts: map[string]int{"cpu-only": 1, "never scheduled": 1, "too many GPUs": 1, "zero run time": 1, "bad gpu_num": 1},
			jobs: []wantJob{
				{id: "h1", arrival: 0, dur: 3600, gpus: 8, milli: 1000, tenant: "u1", row: 2, cpuMilli: 32000, checkResources: true},
				{id: "h2", arrival: 600, dur: 600, gpus: 1, milli: 1000, tenant: "u2", row: 3, cpuMilli: 4000, checkResources: true},
			},
		},
		{
			// Line 1 is a comment, so the header is line 2. g2's gpu_milli
			// defaults to 1000; arrivals 10 and 12.5 -> 0 and 2.5.
			name: "generic", file: "generic.csv", format: FormatGeneric, read: 7,
			counts: map[string]int{"cpu-only": 1, "bad duration_s": 1, "bad arrival_s": 1, "bad gpu_milli": 1, "unknown GPU type": 1},
			jobs: []wantJob{
				{id: "g1", arrival: 0, dur: 100, gpus: 1, milli: 250, tenant: "alice", types: []string{"A100", "H100"}, row: 3,
					cpuMilli: 4000, memMiB: 8192, checkResources: true},
				{id: "g2", arrival: 2.5, dur: 3600, gpus: 2, milli: 1000, tenant: "bob", row: 4},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ImportFile(filepath.Join("testdata", tc.file), tc.opt)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if res.Format != tc.format || !res.Detected {
				t.Errorf("format %q detected=%v, want %q detected", res.Format, res.Detected, tc.format)
			}
			if res.Read != tc.read || res.Used != len(tc.jobs)+len(tc.nodes) {
				t.Errorf("read %d used %d, want %d and %d", res.Read, res.Used, tc.read, len(tc.jobs)+len(tc.nodes))
			}
			if res.Read != res.Used+res.RejectedTotal() {
				t.Errorf("read %d != used %d + rejected %d", res.Read, res.Used, res.RejectedTotal())
			}
			if !maps.Equal(res.RejectCounts, tc.counts) {
				t.Errorf("reject counts %v\nwant %v\nrejections: %+v", res.RejectCounts, tc.counts, res.Rejected)
			}
			if len(res.Jobs) != len(tc.jobs) {
				t.Fatalf("got %d jobs, want %d: %+v", len(res.Jobs), len(tc.jobs), res.Jobs)
			}
			for i, w := range tc.jobs {
				j := res.Jobs[i]
				if err := j.Validate(); err != nil {
					t.Errorf("job %d: %v", i, err)
				}
				if j.ID != w.id || j.Arrival != engine.Seconds(w.arrival) || j.Duration != engine.Seconds(w.dur) ||
					j.NumGPU != w.gpus || j.GPUMilli != w.milli || j.Censored != w.censored || j.Tenant != w.tenant ||
					!slices.Equal(j.GPUTypes, w.types) || j.Row != w.row {
					t.Errorf("job %d = %+v\nwant %+v", i, j, w)
				}
				if w.checkResources && (j.CPUMilli != w.cpuMilli || j.MemoryMiB != w.memMiB || j.RDMAPercent != w.rdma) {
					t.Errorf("job %s resources cpu %d mem %d rdma %v, want %d %d %v",
						j.ID, j.CPUMilli, j.MemoryMiB, j.RDMAPercent, w.cpuMilli, w.memMiB, w.rdma)
				}
			}
			if !slices.Equal(res.Nodes, tc.nodes) {
				t.Errorf("nodes %+v\nwant %+v", res.Nodes, tc.nodes)
			}
		})
	}
}

// TestStrictErrors checks that strict mode stops at the first bad row and
// names file:row:column.
func TestStrictErrors(t *testing.T) {
	tests := []struct {
		file string
		opt  Options
		want string
	}{
		// Row 7 of the fixture has num_gpu -1 in column 4; the skips before
		// it (CPU-only row 4, Pending row 5) are not errors.
		{"openb_pods.csv", Options{}, "testdata/openb_pods.csv:7:4: num_gpu: value -1 is outside 0..1048576"},
		{"generic.csv", Options{}, "testdata/generic.csv:6:3: duration_s: value \"NaN\" is not a finite number"},
		{"dlrm.csv", Options{}, "testdata/dlrm.csv:7:8: rdma_request: value \"-5\" is below 0"},
		{"cluster_log.csv", Options{}, "testdata/cluster_log.csv:6: job asks for 16 GPUs; no server holds more than 8"},
		{"cluster_job_log.json", Options{}, "testdata/cluster_job_log.json:5: submitted_time: time \"yesterday\""},
		{"pai/pai_task_table.csv", Options{}, "testdata/pai/pai_task_table.csv:6:10: gpu_type: GPU type \"K80\" is not one of MISC P100 T4 V100 V100M32"},
		{"openb_multigpu.csv", Options{}, "import it with ArrivalOnly"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			opt := tc.opt
			opt.Strict = true
			_, err := ImportFile(filepath.Join("testdata", tc.file), opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant containing %q", err, tc.want)
			}
			var re *RowError
			if !errors.As(err, &re) {
				t.Errorf("error %T is not a *RowError", err)
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	tests := []struct {
		name, text, format, want string
	}{
		{"misspelt generic column", "id,arrival_s,num_gpu,duraton_s\n", "", `1:4: duraton_s: unknown column(s) duraton_s`},
		{"generic without durations", "id,arrival_s,num_gpu\n", "", "no duration_s column"},
		{"openb missing column", "name,num_gpu,cpu_milli\n", FormatOpenB, "header lacks column(s) gpu_milli"},
		{"undetectable", "a,b,c\n1,2,3\n", "", "cannot detect the trace format"},
		{"unknown format", "a\n", "borg", `unknown trace format "borg"`},
		{"empty", "", FormatHelios, "file is empty"},
		{"philly not a list", `{"jobs": []}`, FormatPhilly, "want a list of jobs"},
		{"philly truncated", `[{"jobid": "a", `, FormatPhilly, "broken JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(strings.NewReader(tc.text), "x.csv", Options{Format: tc.format})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want containing %q", err, tc.want)
			}
		})
	}
}

// TestDetect checks auto-detection by header and file name.
func TestDetect(t *testing.T) {
	tests := []struct{ name, head, want string }{
		{"x.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", FormatOpenB},
		{"x.csv", "\ufeffsn,cpu_milli,memory_mib,gpu,model\r\n", FormatOpenBNodes},
		{"x.csv", "instance_sn,role,app_name,cpu_request,gpu_request,rdma_request\n", FormatDLRM},
		{"x.csv", "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time\n", FormatHelios},
		{"x.csv", "id,arrival_s,num_gpu,duration_s\n", FormatGeneric},
		{"cluster_job_log", "  \n[{", FormatPhilly},
		{"/a/pai_task_table.csv", "j,t,1\n", FormatPAI},
		{"pai_machine_spec.csv", "m,CPU,96,512,0\n", FormatPAIMachines},
	}
	for _, tc := range tests {
		got, detected, err := resolveFormat(tc.name, []byte(tc.head), "")
		if err != nil || got != tc.want || !detected {
			t.Errorf("resolveFormat(%q, %q) = %q, %v, %v; want %q", tc.name, tc.head, got, detected, err, tc.want)
		}
	}
	// Aliases resolve to the canonical names.
	if got, _, err := resolveFormat("x", nil, "OpenB"); err != nil || got != FormatOpenB {
		t.Errorf("alias openb -> %q, %v", got, err)
	}
}

// TestMaxRejections checks that the stored rejections are capped while the
// counts stay complete.
func TestMaxRejections(t *testing.T) {
	res, err := ImportFile("testdata/openb_pods.csv", Options{MaxRejections: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejected) != 2 || res.RejectedTotal() != 8 {
		t.Errorf("stored %d rejections, total %d; want 2 stored of 8", len(res.Rejected), res.RejectedTotal())
	}
	// The first two rejections in file order are rows 4 (CPU-only) and 5 (Pending).
	if res.Rejected[0].Row != 4 || res.Rejected[1].Row != 5 {
		t.Errorf("rejections %+v, want rows 4 and 5", res.Rejected)
	}
}

func TestGPUShare(t *testing.T) {
	tests := []struct {
		x        float64
		n, milli int
	}{
		{0, 0, 0}, {-1, 0, 0}, {0.25, 1, 250}, {1, 1, 1000}, {2, 2, 1000},
		{1.5, 2, 750},  // spread evenly over ceil(1.5) = 2 GPUs
		{0.0001, 1, 1}, // never rounds a GPU job down to a zero share
	}
	for _, tc := range tests {
		if n, m := gpuShare(tc.x); n != tc.n || m != tc.milli {
			t.Errorf("gpuShare(%v) = %d, %d; want %d, %d", tc.x, n, m, tc.n, tc.milli)
		}
	}
}

// repoShared returns ../shared/traces/rel, or skips the test where it is
// absent.
func repoShared(t testing.TB, rel string) string {
	t.Helper()
	return shareddata.Path(t, "traces", rel)
}

var _ = workloads.Job{}

// A field that is not valid UTF-8 (a Latin-1 file, a binary blob) is a
// rejected row naming its column, not garbage copied into job IDs.
func TestNonUTF8FieldRejected(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pods.csv")
	data := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"ok-pod,1000,1024,1,1000,,LS,Running,0,100,0\n" +
		"caf\xe9-pod,1000,1024,1,1000,,LS,Running,0,100,0\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ImportFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Used != 1 || res.RejectCounts["bad encoding"] != 1 || len(res.Rejected) != 1 || res.Rejected[0].Row != 3 || res.Rejected[0].Column != "name" {
		t.Errorf("used %d, rejected %+v; want row 3's name rejected as bad encoding", res.Used, res.Rejected)
	}
	if _, err := ImportFile(p, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("strict import: %v, want an error naming UTF-8", err)
	}
}

// Trace times are bounded by the simulator's horizon (100 years,
// 3,155,760,000 s), each and an arrival plus its duration, naming the row
// and column; a job that ends exactly at the horizon is kept.
func TestTimesWithinTheHorizon(t *testing.T) {
	const hdr = "id,arrival_s,num_gpu,duration_s\n"
	for _, c := range []struct {
		name, rows, want string // want "": imported
	}{
		{"ends at the horizon", "j1,3155759000,1,1000\n", ""},
		{"arrival past it", "j1,3155760001,1,1\n", "x.csv:2:2: arrival_s"},
		{"duration past it", "j1,0,1,3155760001\n", "x.csv:2:4: duration_s: value 3.155760001e+09 is beyond 3.15576e+09 s"},
		{"sum past it", "j1,2000000000,1,2000000000\n", "x.csv:2:4: duration_s: arrival 2000000000 s plus duration 2000000000 s ends at 4000000000 s, past the simulator's horizon of 100 years"},
		{"the issue's row", "j1,8999999999,1,8999999999\n", "x.csv:2:2: arrival_s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(strings.NewReader(hdr+c.rows), "x.csv", Options{Strict: true})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}

package trace

import (
	"bytes"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRealOpenBDefault imports the real openb default pod list. The
// expected counts come from the README (8,152 pods) and from awk over the
// file: 897 rows have pod_phase Pending (all with empty scheduled_time),
// 1,088 have num_gpu 0, of which 36 are Pending, so 1,052 CPU-only pods
// remain; 8152 - 897 - 1052 = 6,203 GPU pods are kept. Pods with
// deletion_time 12902960 and phase Running: 34 (awk), all GPU pods or not;
// the censored count is checked to be at most that.
func TestRealOpenBDefault(t *testing.T) {
	path := repoShared(t, "alibaba-gpu-v2023/openb_pod_list_default.csv")
	res, err := ImportFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"cpu-only": 1052, "never scheduled": 897}
	if res.Read != 8152 || res.Used != 6203 || !maps.Equal(res.RejectCounts, want) {
		t.Errorf("read %d used %d rejects %v; want 8152, 6203, %v", res.Read, res.Used, res.RejectCounts, want)
	}
	if res.Read != res.Used+res.RejectedTotal() {
		t.Errorf("read %d != used %d + rejected %d", res.Read, res.Used, res.RejectedTotal())
	}
	censored := 0
	for _, j := range res.Jobs {
		if err := j.Validate(); err != nil {
			t.Fatal(err)
		}
		if j.Censored {
			censored++
		}
	}
	if censored == 0 || censored > 34 {
		t.Errorf("%d censored pods; want 1..34 (34 rows are Running at the snapshot end)", censored)
	}
	var buf bytes.Buffer
	if err := Inspect(res).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
	// The README: about 149 days.
	if s := Inspect(res); s.Span.Seconds()/86400 < 140 || s.Span.Seconds()/86400 > 150 {
		t.Errorf("span %.1f days, want about 149", s.Span.Seconds()/86400)
	}
}

// TestRealOpenBVariants checks that every real pod list imports without a
// malformed row (strict mode), and that the multigpu files need ArrivalOnly.
func TestRealOpenBVariants(t *testing.T) {
	dir := repoShared(t, "alibaba-gpu-v2023")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		entries = entries[:3]
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "openb_pod_list_") {
			continue
		}
		multi := strings.Contains(name, "multigpu")
		res, err := ImportFile(dir+"/"+name, Options{Strict: true, ArrivalOnly: multi})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.Used == 0 || res.Read != res.Used+res.RejectedTotal() {
			t.Errorf("%s: read %d used %d rejected %d", name, res.Read, res.Used, res.RejectedTotal())
		}
		if multi {
			if _, err := ImportFile(dir+"/"+name, Options{}); err == nil {
				t.Errorf("%s imported without ArrivalOnly; want an error", name)
			}
		}
	}
}

// TestRealOpenBNodes checks the node lists against the README: 1,213 GPU
// nodes with 6,212 GPUs; G2 549, T4 404, P100 134, V100M16 55, G3 39,
// V100M32 30, A10 2; 1,523 nodes in all.
func TestRealOpenBNodes(t *testing.T) {
	gpu := repoShared(t, "alibaba-gpu-v2023/openb_node_list_gpu_node.csv")
	res, err := ImportFile(gpu, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	s := Inspect(res)
	want := []KindCount{{"G2", 549}, {"T4", 404}, {"P100", 134}, {"V100M16", 55}, {"G3", 39}, {"V100M32", 30}, {"A10", 2}}
	if s.Nodes != 1213 || s.NodeGPUs != 6212 || !slices.Equal(s.NodesByGPUType, want) {
		t.Errorf("nodes %d GPUs %d types %v; want 1213, 6212, %v", s.Nodes, s.NodeGPUs, s.NodesByGPUType, want)
	}
	all, err := ImportFile(repoShared(t, "alibaba-gpu-v2023/openb_node_list_all_node.csv"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Nodes) != 1523 {
		t.Errorf("all nodes: %d, want 1523", len(all.Nodes))
	}
}

// TestRealPAIMachines checks pai_machine_spec.csv against the README: 1,897
// machines, 6,742 GPUs; P100 798, T4 497, MISC 280, V100M32 135, V100 104
// GPU machines and 83 CPU-only ones.
func TestRealPAIMachines(t *testing.T) {
	res, err := ImportFile(repoShared(t, "alibaba-gpu-v2020/pai_machine_spec.csv"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	s := Inspect(res)
	want := []KindCount{{"P100", 798}, {"T4", 497}, {"MISC", 280}, {"V100M32", 135}, {"V100", 104}}
	if s.Nodes != 1897 || s.NodeGPUs != 6742 || !slices.Equal(s.NodesByGPUType, want) {
		t.Errorf("machines %d GPUs %d types %v; want 1897, 6742, %v", s.Nodes, s.NodeGPUs, s.NodesByGPUType, want)
	}
}

// TestRealDLRM imports the v2025 trace. From awk over the file: 23,871
// instances; 7,280 have an empty creation_time (2,603 + 4,677), which the
// importer skips first; every kept instance is an HN with one GPU.
func TestRealDLRM(t *testing.T) {
	res, err := ImportFile(repoShared(t, "alibaba-gpu-v2025/disaggregated_DLRM_trace.csv"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != 23871 || res.RejectCounts["created before trace window"] != 7280 || res.Read != res.Used+res.RejectedTotal() {
		t.Errorf("read %d used %d rejects %v", res.Read, res.Used, res.RejectCounts)
	}
	for _, j := range res.Jobs {
		if j.Model != "HN" || j.NumGPU != 1 || j.RDMAPercent <= 0 {
			t.Fatalf("kept job %+v; want HN instances with 1 GPU and an RDMA request", j)
		}
	}
	var buf bytes.Buffer
	Inspect(res).WriteText(&buf)
	t.Logf("\n%s", buf.String())
}

// BenchmarkImportOpenBDefault measures importing the 575 KB default pod list.
func BenchmarkImportOpenBDefault(b *testing.B) {
	path := repoShared(b, "alibaba-gpu-v2023/openb_pod_list_default.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Import(bytes.NewReader(data), path, Options{})
		if err != nil || res.Used != 6203 {
			b.Fatalf("used %d, err %v", res.Used, err)
		}
	}
}

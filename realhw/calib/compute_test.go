package calib

import (
	"math"
	"os"
	"strings"
	"testing"
)

func mustComputeCSV(t *testing.T) ([]ComputeRow, GPUInfo) {
	t.Helper()
	f, err := os.Open("testdata/compute-synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, info, err := ParseComputeCSV(f, "compute-synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows, info
}

// The synthetic compute CSV (testdata, by hand): four rows, the GPU from
// the gpu column, provenance from the comment lines; the graph times at
// batch 1, 8, 32 are 1, 2, 5 ms, so batch 16 interpolates to
// 2 + (16-8)/(32-8) x 3 = 3 ms, batch 8 is exact, and the eager mode reads
// its own row.
func TestComputeCSVAndTime(t *testing.T) {
	rows, info := mustComputeCSV(t)
	if len(rows) != 4 || info != (GPUInfo{Type: "h100-80gb", Name: "Example GPU", Driver: "1.2.3", CUDA: "9.9", Torch: "0.0.1"}) {
		t.Fatalf("rows %d, info %+v", len(rows), info)
	}
	p := &Profile{Compute: rows, Provenance: Provenance{GPU: &info}}
	for _, c := range []struct {
		mode  string
		batch int
		want  float64
		from  string
	}{
		{"", 8, 2e-3, "at batch 8 on h100-80gb: p50 2ms (p99 2.2ms, 100 reps)"},
		{ModeGraph, 16, 3e-3, "interpolated linearly in batch between 8 (2ms) and 32 (5ms)"},
		{ModeGraph, 1, 1e-3, "at batch 1"},
		{ModeEager, 8, 6e-3, "eager compute at batch 8"},
	} {
		p.ComputeMode = c.mode
		got, from, err := p.ComputeTime("ResNet50", c.batch)
		if err != nil || math.Abs(got-c.want) > 1e-12 || !strings.Contains(from, c.from) {
			t.Errorf("mode %q batch %d: %v s, %q, %v; want %v s and %q", c.mode, c.batch, got, from, err, c.want, c.from)
		}
	}
	p.ComputeMode = ModeGraph
	for _, c := range []struct {
		model string
		batch int
		want  string
	}{
		{"resnet50", 64, "outside the measured resnet50 graph batches 1..32"},
		{"bert", 8, "no bert compute time in graph mode"},
	} {
		if _, _, err := p.ComputeTime(c.model, c.batch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s batch %d: %v, want %q", c.model, c.batch, err, c.want)
		}
	}
	p.ComputeMode = ModeEager
	if _, _, err := p.ComputeTime("resnet50", 4); err == nil || !strings.Contains(err.Error(), "outside the measured resnet50 eager batches 8..8") {
		t.Errorf("eager batch 4: %v", err)
	}
}

// Bad compute CSVs are refused with the file and line.
func TestComputeCSVBad(t *testing.T) {
	h := computeHeader + "\n"
	for _, c := range []struct{ text, want string }{
		{"stage,bytes,latency_us\n", "c.csv:1: header"},
		{h + "h100-80gb,resnet50,fp16,graph,0,1,2,3\n", "c.csv:2: batch"},
		{h + "h100-80gb,resnet50,fp16,graph,8,2,1,3\n", "c.csv:2: p50_us"},
		{h + "h100-80gb,resnet50,fp16,jit,8,1,2,3\n", `mode "jit"`},
		{h + "h100-80gb,resnet50,fp16,graph,8,1,2\n", "7 fields"},
		{h + "h100-80gb,resnet50,fp16,graph,8,1,2,3\na100-80gb,resnet50,fp16,graph,1,1,2,3\n", "c.csv:3: gpu"},
		{h, "no compute rows"},
	} {
		_, _, err := ParseComputeCSV(strings.NewReader(c.text), "c.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// The PyTorch JSON (a synthetic one in its layout): MODE_PRECISION_bsN
// points become rows on the given GPU; other points are notes.
func TestTorchJSON(t *testing.T) {
	js := `{"gpu": "Example GPU", "torch": "0.0.1", "model": "torchvision resnet50 (random weights)",
	 "graph_fp16_bs8": {"p50_us": 1500, "p99_us": 1600},
	 "eager_fp16_bs8": {"p50_us": 5000.5, "p99_us": 5100},
	 "item_e2e_pinned": {"p50_us": 900, "p99_us": 950}}`
	rows, info, notes, err := ParseTorchJSON([]byte(js), "t.json", "h100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	SortCompute(rows)
	if len(rows) != 2 || rows[0].Mode != ModeEager || rows[0].P50 != "5.0005ms" || rows[1].P50 != "1.5ms" || rows[1].Model != "resnet50" || rows[1].Batch != 8 {
		t.Errorf("rows %+v", rows)
	}
	if info.Name != "Example GPU" || info.Type != "h100-80gb" || len(notes) != 1 || !strings.Contains(notes[0], "item_e2e_pinned") {
		t.Errorf("info %+v notes %q", info, notes)
	}
	for _, c := range []struct{ text, want string }{
		{"[1]", "not JSON"},
		{`{"model": "torchvision", "graph_fp16_bs8": {"p50_us": 1}}`, "names no model"},
		{`{"model": "resnet50", "x": 1}`, "no compute point"},
		{`{"model": "resnet50", "graph_fp16_bs8": {"p50_us": 2, "p99_us": 1}}`, "0 < p50 <= p99"},
	} {
		if _, _, _, err := ParseTorchJSON([]byte(c.text), "t.json", "h100-80gb"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

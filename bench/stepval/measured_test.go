package main

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

const measuredHeader = "model,layers,gpu,mig,tp,phase,mode,batch,tokens,context,p50_us,p99_us,reps\n"

// A measured row is timed by llm.Step as the script ran it: the row's
// layers, no step fixed cost, eager rows without CUDA graphs, a decode at
// context c reading c + 1 tokens. Hand-built here: a row whose measured
// p50 is llm.Step's own time under those rules reads 0% error, and one
// twice as slow -50%.
func TestMeasuredAgainstStep(t *testing.T) {
	m, err := llm.Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	m.Layers = 4
	g, err := gpu.Lookup("h200-141gb")
	if err != nil {
		t.Fatal(err)
	}
	eff, err := llm.FittedEfficiency(g)
	if err != nil {
		t.Fatal(err)
	}
	eff.EagerStep, eff.GraphStep, eff.GraphBatchSizes = 0, 0, nil
	dec, err := llm.Step(m, llm.Placement{GPU: g, TP: 1}, llm.Batch{Decode: []int{2049, 2049}}, eff)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := llm.Step(m, llm.Placement{GPU: g, TP: 1}, llm.Batch{Prefill: []llm.Chunk{{Tokens: 512}}}, eff)
	if err != nil {
		t.Fatal(err)
	}
	csv := "# a comment\n" + measuredHeader +
		"llama-3.1-8b,4,h200-141gb,,1,decode,eager,2,2,2048," + us(dec.Seconds) + ",1,10\n" +
		"llama-3.1-8b,4,h200-141gb,,1,prefill,eager,1,512,0," + us(2*pre.Seconds) + ",1,10\n"
	ss, err := readMeasured(strings.NewReader(csv), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := modelMeasured(ss); err != nil {
		t.Fatal(err)
	}
	if e := ss[0].modelled/ss[0].p50 - 1; math.Abs(e) > 1e-6 {
		t.Errorf("decode row: error %g, want 0 (model %g s, measured %g s)", e, ss[0].modelled, ss[0].p50)
	}
	if e := ss[1].modelled/ss[1].p50 - 1; math.Abs(e+0.5) > 1e-6 {
		t.Errorf("prefill row measured at twice the model: error %g, want -0.5", e)
	}
	var out bytes.Buffer
	measuredReport(&out, ss)
	for _, want := range []string{"| h200-141gb | - | decode | eager | 1 | 0.0%", "| h200-141gb | - | prefill | eager | 1 | 50.0%", "-50.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// us writes seconds as the CSV's microseconds, exactly (shortest round trip).
func us(s float64) string { return strconv.FormatFloat(s*1e6, 'g', -1, 64) }

// Bad rows are refused with the file, line and field.
func TestMeasuredRefusals(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"model,gpu\n", "m.csv:1: header"},
		{measuredHeader + "llama-3.1-8b,4,h200-141gb,,1,decode,eager,2,2,2048,0,1,10\n", "m.csv:2: p50_us"},
		{measuredHeader + "llama-3.1-8b,x,h200-141gb,,1,decode,eager,2,2,2048,5,6,10\n", "m.csv:2: layers"},
		{measuredHeader + "llama-3.1-8b,4,h200-141gb,,1,decode,fast,2,2,2048,5,6,10\n", "m.csv:2: mode"},
		{measuredHeader + "llama-3.1-8b,4,h200-141gb,,1,prefill,graph,1,512,0,5,6,10\n", "m.csv:2: a prefill row"},
		{measuredHeader + "llama-3.1-8b,4,h200-141gb,,1,decode,eager,2,3,2048,5,6,10\n", "m.csv:2: a decode row's tokens"},
		{measuredHeader + "llama-3.1-8b,4,h200-141gb\n", "m.csv:2: 3 fields"},
		{"# only a comment\n", "no header line"},
	} {
		if _, err := readMeasured(strings.NewReader(c.csv), "m.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.csv, err, c.want)
		}
	}
	ss, err := readMeasured(strings.NewReader(measuredHeader+"llama-3.1-8b,4,h200-141gb,9g.1gb,1,decode,eager,2,2,2048,5,6,10\n"), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := modelMeasured(ss); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a MIG profile the GPU lacks: %v, want an error naming line 2", err)
	}
}

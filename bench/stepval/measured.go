package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// A measured step (realhw/torch/measure_llm_step.py's CSV): one forward
// pass of a Llama-style decoder at TP 1, on a whole GPU or a MIG instance,
// timed without the engine's scheduling and sampling. Compared with
// llm.Step row by row, nothing fitted to the rows: the held-out whole-step
// check of issue 54 on a GPU the project can measure.
type measuredStep struct {
	line                   int
	model                  string
	layers                 int
	gpu, mig               string
	tp                     int
	phase, mode            string
	batch, tokens, context int
	p50, p99               float64 // s
	reps                   int
	modelled               float64 // s, llm.Step's
	modelBound             string
}

var measuredColumns = []string{"model", "layers", "gpu", "mig", "tp", "phase", "mode", "batch", "tokens", "context", "p50_us", "p99_us", "reps"}

// readMeasured parses the CSV (lines starting with # are comments); an
// error names the line and the field.
func readMeasured(r io.Reader, name string) ([]measuredStep, error) {
	cr := csv.NewReader(r)
	cr.Comment, cr.FieldsPerRecord, cr.TrimLeadingSpace = '#', -1, true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: no header line; want %q", name, strings.Join(measuredColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if line, _ := cr.FieldPos(0); strings.Join(head, ",") != strings.Join(measuredColumns, ",") {
		return nil, fmt.Errorf("%s:%d: header %q; want %q (realhw/torch/measure_llm_step.py's)", name, line, strings.Join(head, ","), strings.Join(measuredColumns, ","))
	}
	var out []measuredStep
	for {
		f, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(f) != len(measuredColumns) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", name, line, len(f), len(measuredColumns))
		}
		col := func(c string) string { return f[slices.Index(measuredColumns, c)] }
		s := measuredStep{line: line, model: col("model"), gpu: col("gpu"), mig: col("mig"), phase: col("phase"), mode: col("mode")}
		for _, c := range []struct {
			col string
			v   *int
			min int
		}{{"layers", &s.layers, 1}, {"tp", &s.tp, 1}, {"batch", &s.batch, 1}, {"tokens", &s.tokens, 1}, {"context", &s.context, 0}, {"reps", &s.reps, 1}} {
			v, err := strconv.Atoi(col(c.col))
			if err != nil || v < c.min {
				return nil, fmt.Errorf("%s:%d: %s %q: want an integer >= %d", name, line, c.col, col(c.col), c.min)
			}
			*c.v = v
		}
		for _, c := range []struct {
			col string
			v   *float64
		}{{"p50_us", &s.p50}, {"p99_us", &s.p99}} {
			v, err := strconv.ParseFloat(col(c.col), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: %s %q: want a time in microseconds > 0", name, line, c.col, col(c.col))
			}
			*c.v = v / 1e6
		}
		switch {
		case s.phase != "prefill" && s.phase != "decode":
			return nil, fmt.Errorf("%s:%d: phase %q: want prefill or decode", name, line, s.phase)
		case s.mode != "eager" && s.mode != "graph":
			return nil, fmt.Errorf("%s:%d: mode %q: want eager or graph", name, line, s.mode)
		case s.phase == "prefill" && (s.mode != "eager" || s.batch != 1):
			return nil, fmt.Errorf("%s:%d: a prefill row is one eager chunk (batch 1, mode eager)", name, line)
		case s.phase == "decode" && s.tokens != s.batch:
			return nil, fmt.Errorf("%s:%d: a decode row's tokens (%d) are its batch (%d)", name, line, s.tokens, s.batch)
		}
		out = append(out, s)
	}
}

// modelMeasured times each row with llm.Step: the catalog model with the
// row's layers, the catalog GPU (and MIG profile), the fitted
// efficiencies with no step fixed cost (the measurement has no scheduler
// or sampler), eager rows without CUDA graphs. A decode at context c
// reads c + 1 tokens of KV (its own K and V too).
func modelMeasured(ss []measuredStep) error {
	for i := range ss {
		s := &ss[i]
		m, err := llm.Lookup(s.model)
		if err != nil {
			return fmt.Errorf("line %d: %w", s.line, err)
		}
		m.Layers = s.layers
		g, err := gpu.Lookup(s.gpu)
		if err != nil {
			return fmt.Errorf("line %d: %w", s.line, err)
		}
		p := llm.Placement{GPU: g, TP: s.tp}
		if s.mig != "" {
			if p.Slice, err = g.Profile(s.mig); err != nil {
				return fmt.Errorf("line %d: %w", s.line, err)
			}
		}
		eff, err := llm.FittedEfficiency(g)
		if err != nil {
			return fmt.Errorf("line %d: %w", s.line, err)
		}
		eff.EagerStep, eff.GraphStep = 0, 0
		if s.mode == "eager" {
			eff.GraphBatchSizes = nil
		}
		var b llm.Batch
		if s.phase == "prefill" {
			b.Prefill = []llm.Chunk{{Tokens: s.tokens, ContextBefore: s.context}}
		} else {
			for range s.batch {
				b.Decode = append(b.Decode, s.context+1)
			}
		}
		st, err := llm.Step(m, p, b, eff)
		if err != nil {
			return fmt.Errorf("line %d: %w", s.line, err)
		}
		s.modelled, s.modelBound = st.Seconds, st.Bound
	}
	return nil
}

// runMeasured reads path, times its rows and prints the report.
func runMeasured(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ss, err := readMeasured(f, path)
	if err != nil {
		return err
	}
	if err := modelMeasured(ss); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	measuredReport(os.Stdout, ss)
	return nil
}

// measuredReport prints the held-out comparison: per GPU, phase and mode,
// and every row.
func measuredReport(w io.Writer, ss []measuredStep) {
	type key struct{ gpu, mig, phase, mode string }
	groups := map[key][]float64{}
	var keys []key
	for _, s := range ss {
		k := key{s.gpu, s.mig, s.phase, s.mode}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s.modelled/s.p50-1)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.gpu+a.mig+a.phase+a.mode < b.gpu+b.mig+b.phase+b.mode
	})
	fmt.Fprintln(w, "Measured steps (realhw/torch/measure_llm_step.py) against llm.Step, held out (nothing fitted to them); error = model / measured p50 - 1:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| GPU | MIG | phase | mode | rows | median abs err | p90 | max | signed median |\n|---|---|---|---|---|---|---|---|---|")
	var all []float64
	for _, k := range keys {
		mig := k.mig
		if mig == "" {
			mig = "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", k.gpu, mig, k.phase, k.mode, statsOf(groups[k]).cells())
		all = append(all, groups[k]...)
	}
	fmt.Fprintf(w, "| all | | | | %s |\n\n", statsOf(all).cells())
	fmt.Fprintln(w, "| line | model (layers) | GPU | phase | mode | batch | tokens | context | measured p50 (ms) | p99 (ms) | model (ms) | bound | err |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range ss {
		g := s.gpu
		if s.mig != "" {
			g += " " + s.mig
		}
		fmt.Fprintf(w, "| %d | %s (%d) | %s | %s | %s | %d | %d | %d | %.3f | %.3f | %.3f | %s | %+.1f%% |\n",
			s.line, s.model, s.layers, g, s.phase, s.mode, s.batch, s.tokens, s.context, s.p50*1e3, s.p99*1e3, s.modelled*1e3, s.modelBound, 100*(s.modelled/s.p50-1))
	}
}

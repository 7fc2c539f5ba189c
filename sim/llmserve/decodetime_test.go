package llmserve

import (
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// The decode timer gives llm.Step's Seconds bit for bit on random
// decode-only batches, for a dense and a GQA model, TP 1, 2 and 8, an A100
// and an H100, a MIG slice, batch sizes inside and past the CUDA-graph
// sizes, and under a host slow enough to bound some steps and not others.
func TestDecodeTimerExact(t *testing.T) {
	rng := engine.NewStream(5, "decode-timer")
	type setup struct {
		model, gpu string
		tp         int
		slice      string
		host       llm.HostDispatch
	}
	for _, s := range []setup{{"llama-3.1-8b", "h100-80gb", 1, "", llm.HostDispatch{}}, {"llama-3.1-8b", "a100-80gb", 2, "", llm.HostDispatch{}},
		{"llama-3.1-70b", "h100-80gb", 8, "", llm.HostDispatch{}}, {"llama-3.1-8b", "h100-80gb", 1, "3g.40gb", llm.HostDispatch{}},
		{"llama-3.1-70b", "h100-80gb", 8, "", llm.HostDispatch{PerLayer: 300e-6, PerSequence: 250e-6}}} {
		p := testPlan(t)
		m, err := llm.Lookup(s.model)
		if err != nil {
			t.Fatal(err)
		}
		g, err := gpu.Lookup(s.gpu)
		if err != nil {
			t.Fatal(err)
		}
		eff, err := llm.FittedEfficiency(g)
		if err != nil {
			t.Fatal(err)
		}
		eff.Host = s.host
		p.Model, p.Eff, p.Placement = m, eff, llm.Placement{GPU: g, TP: s.tp}
		if s.slice != "" {
			for i := range g.MIG.Profiles {
				if g.MIG.Profiles[i].Name == s.slice {
					p.Placement.Slice = &g.MIG.Profiles[i]
				}
			}
			if p.Placement.Slice == nil {
				t.Fatalf("no slice %s", s.slice)
			}
		}
		d := newDecodeTimer(&p)
		fast, hostBound := 0, 0
		for range 3000 {
			n := 1 + rng.IntN(p.MaxSeqs)
			ctx := make([]int, n)
			var S int64
			for i := range ctx {
				ctx[i] = 1 + rng.IntN(3000)
				S += int64(ctx[i])
			}
			st, stepErr := llm.Step(p.Model, p.Placement, llm.Batch{Decode: ctx}, p.Eff)
			got, ok := d.time(ctx, S)
			if !ok {
				if stepErr == nil && d.templates[n] != nil {
					t.Fatalf("%v n %d S %d: Step times it, the timer (template built) does not", s, n, S)
				}
				continue
			}
			fast++
			if st.Host > 0 {
				hostBound++
			}
			if stepErr != nil || got != st.Seconds {
				t.Fatalf("%v n %d S %d: timer %v, Step %v (%v)", s, n, S, got, st.Seconds, stepErr)
			}
		}
		t.Logf("%v: %d of 3000 timed by the template, %d of them host-bound", s, fast, hostBound)
		if s.host.PerLayer > 0 && (hostBound == 0 || hostBound == fast) {
			t.Errorf("%v: %d of %d steps host-bound; want some but not all, so both branches are compared", s, hostBound, fast)
		}
		if fast < 300 {
			t.Errorf("%v: the timer answered %d of 3000 (the rest past memory); want more", s, fast)
		}
	}
}

// A whole run with the decode timer equals the same run with llm.Step
// called on every step.
func TestDecodeTimerRunIdentical(t *testing.T) {
	p := testPlan(t)
	p.Replicas = 2
	tr := synthetic(t, 500, 20, 9)
	fast, err := Simulate(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCluster(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	c.pools[0].decode = nil
	slow, err := c.run(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("the decode timer changed the run: %+v vs %+v", fast.Summary, slow.Summary)
	}
}

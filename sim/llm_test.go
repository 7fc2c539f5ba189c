package sim_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
)

// loadLLM loads a scenario text with its defaults, as a run does.
func loadLLM(t testing.TB, text string, sets ...string) *scenarios.Scenario {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var sc scenarios.Scenario
	if err := scenarios.Load(p, sets, nil, &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// The defaults resolve to vLLM's, and the KV capacity follows from the
// memory: h100-80gb, llama-3.1-8b, tp 1: 80 GiB x 0.9 = 77.31 GB usable;
// weights 8.03e9 x 2 B = 16.06 GB; activations 8,192 x (2 x 14,336 +
// 4 x 4,096) x 2 B + 256 x 128,256 x 4 B = 0.870 GB; a block is 16 tokens
// x 2 x 32 layers x 8 KV heads x 128 x 2 B = 2 MiB: (77.31 - 16.06 -
// 0.870) / 2.097e-3 = 28,791 blocks.
func TestLLMPlanDefaults(t *testing.T) {
	sc := loadLLM(t, "name: x\nllm:\n  tp: 1\n")
	p, err := sc.LLM.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Model.Name != "llama-3.1-8b" || p.Placement.GPU.Name != "h100-80gb" || p.Placement.TP != 1 || p.Replicas != 1 {
		t.Errorf("plan %s on %s tp %d x%d", p.Model.Name, p.Placement.GPU.Name, p.Placement.TP, p.Replicas)
	}
	if p.Scheduler != llmserve.SchedulerV1 || p.MaxBatchedTokens != 8192 || p.MaxSeqs != 256 || p.BlockSize != 16 || p.GPUMemoryUtilization != 0.9 {
		t.Errorf("vLLM defaults: %s, %d tokens, %d seqs, block %d, util %v", p.Scheduler, p.MaxBatchedTokens, p.MaxSeqs, p.BlockSize, p.GPUMemoryUtilization)
	}
	if p.KVBlocks != 28791 {
		t.Errorf("KV blocks %d, want 28,791 (derived above)", p.KVBlocks)
	}
	// gpus sets the replicas.
	sc = loadLLM(t, "name: x\nllm:\n  model: llama-3.1-70b\n  gpus: 8\n  tp: 4\n")
	if p, err := sc.LLM.Plan(nil); err != nil || p.Replicas != 2 {
		t.Errorf("gpus 8 tp 4: %d replicas, %v; want 2", p.Replicas, err)
	}
}

// A config.json model is read through the loader; a missing key is named.
func TestLLMConfigJSONModel(t *testing.T) {
	dir := t.TempDir()
	good := `{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072}`
	os.WriteFile(filepath.Join(dir, "good.json"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(strings.Replace(good, `"num_hidden_layers": 32, `, "", 1)), 0o644)
	sc := loadLLM(t, "name: x\nllm:\n  tp: 1\n", "llm.model="+filepath.Join(dir, "good.json"))
	keys, _ := sim.DataFiles(sc)
	if !reflect.DeepEqual(keys, []string{"llm.model"}) {
		t.Errorf("data files %v, want the config.json at llm.model", keys)
	}
	s, err := sim.RunLLM(*sc.LLM, 1)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := llm.Lookup("llama-3.1-8b")
	if s.Params != cat.Params() || s.KVBlocks != 28791 {
		t.Errorf("config.json of llama-3.1-8b: %d params, %d blocks; want the catalog's %d and 28,791", s.Params, s.KVBlocks, cat.Params())
	}
	sc = loadLLM(t, "name: x\nllm:\n  tp: 1\n", "llm.model="+filepath.Join(dir, "bad.json"))
	err = sim.Check(sc)
	var ie *cluster.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "llm.model") || !strings.Contains(err.Error(), "num_hidden_layers") {
		t.Errorf("config.json without num_hidden_layers: %v; want an input error naming llm.model and the key", err)
	}
}

// A synthetic workload: each seed draws its own requests, the summary
// gives means with CIs over them; the same inputs give the same bytes.
// A trace replays as recorded, so seeds > 1 are refused for it.
func TestLLMSeeds(t *testing.T) {
	text := "name: x\nllm:\n  gpu: a100-80gb\n  seeds: 3\n  workload:\n    synthetic:\n      requests: 200\n      rate: 4/s\n"
	sc := loadLLM(t, text)
	a, err := sim.Run(sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.Run(loadLLM(t, text))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "llm_requests.csv", "llm_samples.csv"} {
		if string(a.Files[f]) != string(b.Files[f]) {
			t.Errorf("%s differs between two runs of the same inputs", f)
		}
	}
	l := a.Summary.LLM
	if l == nil || l.Seeds != 3 || l.Result.TTFT.Mean.CI95 == nil || l.Result.Goodput.CI95 == nil {
		t.Fatalf("seeds 3: %+v; want CIs", l)
	}
	var js map[string]any
	if err := json.Unmarshal(a.Files["summary.json"], &js); err != nil || js["llm"] == nil {
		t.Errorf("summary.json has no llm section: %v", err)
	}
	one, err := sim.RunLLM(*loadLLM(t, text, "llm.seeds=1").LLM, 1)
	if err != nil {
		t.Fatal(err)
	}
	if one.Result.TTFT.Mean.CI95 != nil {
		t.Errorf("one seed has a CI")
	}
	tr := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(tr, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"), 0o644)
	var sc2 scenarios.Scenario
	err = scenarios.Load(writeTemp(t, "name: x\nllm:\n  seeds: 2\n  workload:\n    source: trace\n    trace: "+tr+"\n"), nil, nil, &sc2)
	if err == nil || !strings.Contains(err.Error(), "llm.seeds") || !strings.Contains(err.Error(), "replays as recorded") {
		t.Errorf("seeds 2 over a trace: %v", err)
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A missing trace names its key and where the data comes from, as a
// cluster trace's does.
func TestLLMMissingTrace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "AzureLLMInferenceTrace_conv.csv")
	sc := loadLLM(t, "name: x\nllm:\n  workload:\n    source: trace\n", "llm.workload.trace="+p)
	err := sim.Check(sc)
	var ie *cluster.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("%v: want an input error (exit 2)", err)
	}
	for _, w := range []string{"llm.workload.trace", p, "not found", "github.com/Azure/AzurePublicDataset", "point llm.workload.trace at your copy"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
}

// The prefix-aware router's fall-back to load: defaults (8,192 tokens,
// 1.5) reach the plan; a value out of range is refused at its key with
// the fix.
func TestLLMRouterBalance(t *testing.T) {
	p, err := loadLLM(t, "name: x\nllm:\n  router: prefix-aware\n").LLM.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.RouterBalanceAbs != 8192 || p.RouterBalanceRel != 1.5 {
		t.Errorf("defaults %d tokens, %v; want 8,192 and 1.5", p.RouterBalanceAbs, p.RouterBalanceRel)
	}
	for _, tc := range []struct{ set, key, fix string }{
		{"llm.router_balance_rel=0.9", "llm.router_balance_rel", "at least 1"},
		{"llm.router_balance_abs=-1", "llm.router_balance_abs", "0 (no fall-back)"},
	} {
		var sc scenarios.Scenario
		err := scenarios.Load(writeTemp(t, "name: x\nllm:\n  router: prefix-aware\n"), []string{tc.set}, nil, &sc)
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: %v; want an error naming %s and %q", tc.set, err, tc.key, tc.fix)
		}
	}
}

// A synthetic workload whose estimated memory passes 8 GiB is refused at
// llm.workload.synthetic.requests: Azure's mix (lognormal outputs of mean
// 211 tokens) costs 1,024 + 210 x 40 = 9,424 B a request, so 1,000,000
// requests need 9.42e9 B (8.8 GiB) and 900,000 8.48e9 B (7.9 GiB);
// one-token outputs cost 1,024 B, so 5,000,000 need 5.12e9 B.
func TestLLMMemoryBound(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		ok   bool
	}{
		// 1,024 + 210 x 8 = 2,704 B a request of 211 output tokens on
		// average: 4,000,000 need 10.8 GB, 3,000,000 8.1 GB.
		{[]string{"llm.workload.synthetic.requests=4000000"}, false},
		{[]string{"llm.workload.synthetic.requests=3000000"}, true},
		{[]string{"llm.workload.synthetic.requests=5000000", "llm.workload.synthetic.rate=1000/s", "llm.workload.synthetic.output.kind=fixed", "llm.workload.synthetic.output.mean=1", "llm.workload.synthetic.output.sigma=0"}, true},
	} {
		var sc scenarios.Scenario
		err := scenarios.Load(writeTemp(t, "name: x\nllm:\n  tp: 1\n"), tc.sets, nil, &sc)
		if tc.ok != (err == nil) {
			t.Errorf("%v: %v; want refused: %v", tc.sets, err, !tc.ok)
		}
		if err != nil {
			for _, w := range []string{"llm.workload.synthetic.requests", "over the 8.0 GiB limit", "fewer requests"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: %q lacks %q", tc.sets, err, w)
				}
			}
		}
	}
}

// BenchmarkLLMMemory measures what a run's memory grows with (go test
// -run '^$' -bench LLMMemory -benchmem ./sim): B/op, all a run
// allocates, and the heap's peak during one more run (live and unswept
// bytes, sampled every millisecond), each over the requests. Two regimes
// of llm/azure-conv's length mix on one H100 bound it: at the trace's
// own load (5/s: about 19 steps a request, batches of 11) the
// per-request records dominate; with every request alone (0.01/s) each
// step adds an inter-token latency pair, one per output token.
func BenchmarkLLMMemory(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate string
	}{{"load=azure-conv", "5/s"}, {"load=alone", "0.01/s"}} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 20000
			sc := loadLLM(b, "name: x\nllm:\n  sample_every: 1000s\n  workload:\n    synthetic:\n      requests: 20000\n      rate: "+bc.rate+"\n")
			b.ReportAllocs()
			for range b.N {
				if _, err := sim.RunLLM(*sc.LLM, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			peak := heapPeak()
			out, err := sim.RunLLM(*sc.LLM, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(peak())/n, "peak-B/request")
			b.ReportMetric(float64(out.Steps)/n, "steps/request")
		})
	}
}

// heapPeak samples the heap's live and unswept bytes every millisecond
// until the returned function is called, which gives their peak.
func heapPeak() func() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

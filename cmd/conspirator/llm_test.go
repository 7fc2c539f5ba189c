package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLLMStepCLI(t *testing.T) {
	code, out, errOut := cli(t, nil, "llm", "step", "--model", "llama-2-70b", "--gpu", "h100-80gb", "--tp", "8", "--decode-batch", "1", "--context", "1024")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"step: ", " ms, bound by ", "communication", "memory floor: ", "KV bytes per token: 327680 (40960 per GPU at TP 8)", "all_reduce_nvlink  160"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = cli(t, nil, "llm", "step", "--model", "llama-3.1-8b", "--gpu", "h100-80gb", "--prefill", "2048", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"step_ms", "bound", "compute_ms", "memory_ms", "communication_ms", "overhead_ms", "memory_floor_ms", "kv_bytes_per_token", "ops", "efficiency_source"} {
		if _, ok := got[k]; !ok {
			t.Errorf("--json lacks %s", k)
		}
	}
	if got["kv_bytes_per_token"] != float64(131072) || got["bound"] != "compute" {
		t.Errorf("--json: kv %v bound %v, want 131072 and compute", got["kv_bytes_per_token"], got["bound"])
	}
}

func TestLLMStepRefusalsCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", cfg, "--gpu", "a100-80gb", "--prefill", "10"}, "needs key hidden_size"},
		{[]string{"--model", "llama-2-70b", "--gpu", "a100-80gb", "--prefill", "10"}, "does not fit a100-80gb at TP 1"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--tp", "3", "--prefill", "10"}, "--tp 3: tensor-parallel degree 3 does not divide"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--tp", "2", "--mig", "3g.40gb", "--prefill", "10"}, "no peer-to-peer path"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--prefill", "-1"}, "--prefill -1 must be > 0"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--decode-batch", "4", "--context", "0"}, "--context 0 must be > 0"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb", "--decode-batch", "4"}, "--decode-batch needs --context"},
		{[]string{"--model", "llama-2-7b", "--gpu", "a100-80gb"}, "nothing to time"},
		{[]string{"--model", "llama-2-7b", "--gpu", "p100", "--prefill", "10"}, "no sourced peak FLOP/s"},
	} {
		code, _, errOut := cli(t, nil, append([]string{"llm", "step"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

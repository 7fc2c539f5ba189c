package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallLLM is a synthetic llm scenario that runs in a fraction of a
// second: 300 requests on one A100.
const smallLLM = `name: small-llm
llm:
  model: llama-3.1-8b
  gpu: a100-80gb
  seeds: 2
  workload:
    synthetic:
      requests: 300
      rate: 4/s
`

// run prints the llm table (TTFT, TPOT, E2E at mean, p50, p90, p99; the
// SLO's goodput and attainment; the KV cache), means over the seeds with
// their CIs, and writes the CSVs, report.md and both figures.
func TestRunPrintsLLM(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, dir, "small.yaml", smallLLM)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, nil, "run", sc, "-o", out, "--no-sensitivity")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"llm: llama-3.1-8b", "on 1 x a100-80gb, tp 1", "KV cache", "means over 2 seeds", "TTFT", "TPOT", "E2E", "mean ms", "p99 ms", " ± ", "goodput", "attainment", "preemptions"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	for _, f := range []string{"summary.json", "llm_requests.csv", "llm_samples.csv", "report.md", "plots/llm_latency_cdf.png", "plots/llm_series.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## LLM serving") || !strings.Contains(string(md), "| TTFT |") {
		t.Errorf("report.md lacks the llm section:\n%s", md)
	}
	req, _ := os.ReadFile(filepath.Join(out, "llm_requests.csv"))
	if n := strings.Count(string(req), "\n"); n != 301 {
		t.Errorf("llm_requests.csv has %d lines, want a header and the first seed's 300 requests", n)
	}
}

// llm capacity brackets the highest load that meets the SLO, each probe
// printed, and refuses an SLO on an unknown metric with exit 2.
func TestLLMCapacity(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, dir, "small.yaml", smallLLM)
	code, stdout, stderr := cli(t, nil, "llm", "capacity", sc, "--set", "llm.seeds=1", "--slo", "ttft=500ms,tpot=60ms", "--tolerance", "0.2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "TTFT <= 500ms and TPOT <= 60ms") || !strings.Contains(stdout, "\ncapacity: ") {
		t.Fatalf("no verdict:\n%s", stdout)
	}
	if strings.Count(stdout, ": meets") < 1 || strings.Count(stdout, ": misses") < 1 {
		t.Errorf("want probes on both sides of the capacity:\n%s", stdout)
	}
	for _, c := range []struct {
		slo  string
		want string
	}{
		{"ttfb=1s", `unknown metric "ttfb"`},
		{"ttft", "is not metric=value"},
		{"ttft=1GB", "--slo ttft=1GB"},
		{"quantile=2", "slo.quantile"},
	} {
		code, _, stderr := cli(t, nil, "llm", "capacity", sc, "--slo", c.slo)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("--slo %s: exit %d, stderr %q; want %d and %q", c.slo, code, stderr, exitUsage, c.want)
		}
	}
	if code, _, stderr := cli(t, nil, "llm", "capacity", "paper/cost"); code != exitUsage || !strings.Contains(stderr, "no llm section") {
		t.Errorf("paper/cost: exit %d, %q", code, stderr)
	}
}

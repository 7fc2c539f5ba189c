package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
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
		{"ttft_p90<=2s", "is a comparison; write metric=bound"},
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

// llm capacity --gpu-types/--tp/--rates finds, per rate, the fewest
// replicas of each GPU type and TP meeting the SLO and prices them. At
// 1/s one A100 replica meets the SLO with room (TTFT p90 ~0.2 s against
// 0.5 s); at 40/s, ten times what one A100 serves at this SLO, one replica
// misses it (attainment ~0) and several are needed.
func TestLLMCapacityConfigs(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, dir, "small.yaml", smallLLM)
	args := []string{"llm", "capacity", sc, "--set", "llm.seeds=1", "--slo", "ttft=500ms,tpot=60ms", "--gpu-types", "a100-80gb,h100-80gb", "--tp", "1,2", "--rates", "1/s,40/s"}
	code, stdout, stderr := cli(t, nil, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tables := configTables(t, stdout)
	if len(tables) != 2 {
		t.Fatalf("want one table per rate, got %d:\n%s", len(tables), stdout)
	}
	for rate, rows := range tables {
		if len(rows) != 4 {
			t.Fatalf("%s: want a row per GPU type and TP (4), got %d:\n%s", rate, len(rows), stdout)
		}
		last := 0.0
		for i, r := range rows {
			g, err := gpu.Lookup(r.gpu)
			if err != nil {
				t.Fatal(err)
			}
			if r.gpus != r.replicas*r.tp {
				t.Errorf("%s %s tp %d: gpus %d, want replicas %d x tp %d", rate, r.gpu, r.tp, r.gpus, r.replicas, r.tp)
			}
			if want := fmt.Sprintf("%.2f", float64(r.replicas*r.tp)*g.PricePerHour); r.cost != want {
				t.Errorf("%s %s tp %d: $/hour %s, want %d x %d x %.3f = %s", rate, r.gpu, r.tp, r.cost, r.replicas, r.tp, g.PricePerHour, want)
			}
			c, _ := strconv.ParseFloat(r.cost, 64)
			if c < last {
				t.Errorf("%s: not sorted by cost:\n%s", rate, stdout)
			}
			last = c
			if r.cheapest != (i == 0) {
				t.Errorf("%s: row %d marked %v; want the first (cheapest) marked only", rate, i, r.cheapest)
			}
		}
		if want := fmt.Sprintf("cheapest at %s: %d x %s at tp %d (GPUs: %d), $%s/hour", rate, rows[0].replicas, rows[0].gpu, rows[0].tp, rows[0].gpus, rows[0].cost); !strings.Contains(stdout, want) {
			t.Errorf("no line %q:\n%s", want, stdout)
		}
	}
	for _, r := range tables["1/s"] {
		if r.replicas != 1 {
			t.Errorf("1/s: %s tp %d needs %d replicas; one replica meets the SLO at 1/s", r.gpu, r.tp, r.replicas)
		}
	}
	if r := tables["1/s"][0]; r.gpu != "a100-80gb" || r.tp != 1 {
		t.Errorf("1/s: cheapest %s tp %d; want one a100-80gb ($5.12/hour), the cheapest GPU", r.gpu, r.tp)
	}
	for _, r := range tables["40/s"] {
		if r.gpu == "a100-80gb" && r.tp == 1 && r.replicas < 2 {
			t.Errorf("40/s: a100-80gb tp 1 with %d replicas; one A100 misses the SLO at 40/s", r.replicas)
		}
	}
	if !strings.Contains(stdout, "a100-80gb  tp 1 x 1 ") || !strings.Contains(stdout, ": misses") {
		t.Errorf("the probes are not printed:\n%s", stdout)
	}

	// A cap the load needs more than: stated, not an error.
	code, stdout, stderr = cli(t, nil, "llm", "capacity", sc, "--set", "llm.seeds=1", "--slo", "ttft=500ms,tpot=60ms", "--rates", "40/s", "--max-gpus", "1")
	if code != exitOK || !strings.Contains(stdout, "none within 1 GPUs") || !strings.Contains(stdout, "none priced meets the SLO") {
		t.Errorf("--max-gpus 1 at 40/s: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}

	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--gpu-types", "h100-90gb"}, "--gpu-types h100-90gb: unknown gpu"},
		{[]string{"--gpu-types", "b200-180gb"}, "--gpu-types b200-180gb"},
		{[]string{"--tp", "3"}, "--tp 3: tensor-parallel degree 3 does not divide"},
		{[]string{"--rates", "0/s"}, "--rates 0/s: want a rate above 0"},
		{[]string{"--rates", "5/s,-1/s"}, "--rates -1/s"},
		{[]string{"--max-gpus", "0"}, "--max-gpus 0"},
		{[]string{"--tp", "1", "--tolerance", "0.1"}, "--tolerance"},
	} {
		code, _, stderr := cli(t, nil, append([]string{"llm", "capacity", sc}, c.flags...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.flags, code, stderr, exitUsage, c.want)
		}
	}
}

type configLine struct {
	cheapest           bool
	gpu                string
	tp, replicas, gpus int
	cost               string
}

// configTables reads the configuration search's tables by rate.
func configTables(t *testing.T, out string) map[string][]configLine {
	t.Helper()
	tables := map[string][]configLine{}
	rate := ""
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "configurations of "):
			rate = strings.Fields(l)[4]
		case strings.Contains(l, "gpu") && strings.Contains(l, "$/hour"):
			in = true
		case strings.HasPrefix(l, "cheapest at "):
			in = false
		case in:
			f := strings.Fields(l)
			r := configLine{cheapest: f[0] == "*"}
			if r.cheapest {
				f = f[1:]
			}
			if len(f) < 5 || f[2] == "-" {
				t.Fatalf("row %q: want a configuration", l)
			}
			r.gpu, r.cost = f[0], f[4]
			r.tp, _ = strconv.Atoi(f[1])
			r.replicas, _ = strconv.Atoi(f[2])
			r.gpus, _ = strconv.Atoi(f[3])
			tables[rate] = append(tables[rate], r)
		}
	}
	return tables
}

// A scenario's llm.capacity section runs the configuration search
// without flags; a flag overrides its key; a bad entry is refused naming
// the key (exit 2).
func TestLLMCapacitySection(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, dir, "cap.yaml", smallLLM+"  capacity:\n    gpu_types: [a100-80gb, h100-80gb]\n    tp: [1]\n    rates: [4/s, 8/s]\n    max_gpus: 4\n")
	code, stdout, stderr := cli(t, nil, "llm", "capacity", sc)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "configurations of llama-3.1-8b at"); n != 2 {
		t.Errorf("%d tables; want one per rate of llm.capacity.rates (2):\n%s", n, stdout)
	}
	for _, w := range []string{"at 4/s", "at 8/s", "at most 4 GPUs", "h100-80gb  tp 1", "a100-80gb  tp 1"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	code, stdout, stderr = cli(t, nil, "llm", "capacity", sc, "--rates", "6/s", "--max-gpus", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "configurations of"); n != 1 || !strings.Contains(stdout, "at 6/s") || !strings.Contains(stdout, "at most 2 GPUs") || strings.Contains(stdout, "at 4/s") {
		t.Errorf("--rates 6/s --max-gpus 2 should replace the section's rates and cap:\n%s", stdout)
	}
	bad := writeFile(t, dir, "bad.yaml", smallLLM+"  capacity:\n    gpu_types: [b300]\n    rates: [0/s]\n")
	code, _, stderr = cli(t, nil, "llm", "capacity", bad)
	if code != exitUsage || !strings.Contains(stderr, "llm.capacity.gpu_types") || !strings.Contains(stderr, "llm.capacity.rates") {
		t.Errorf("bad llm.capacity: exit %d, stderr %q; want %d naming llm.capacity.gpu_types and llm.capacity.rates", code, stderr, exitUsage)
	}
}

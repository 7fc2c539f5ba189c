package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim"
)

// cli runs one command line in-process and returns its exit code and
// output, with an environment that holds only what the test gives.
func cli(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	// Results go under the test's temp directory unless the case says
	// where: a test never writes into the source tree.
	hasOut := false
	for _, kv := range env {
		hasOut = hasOut || strings.HasPrefix(kv, "CONSPIRATOR_OUT=")
	}
	if !hasOut {
		env = append(append([]string(nil), env...), "CONSPIRATOR_OUT="+filepath.Join(t.TempDir(), "results"))
	}
	code = run(args, &o, &e, env)
	return code, o.String(), e.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every bad input gets exit code 2 and a message that says what was
// wrong and where; none leaves a result directory behind.
func TestBadInputExitCodes(t *testing.T) {
	dir := t.TempDir()
	blocker := writeFile(t, dir, "afile", "not a directory\n")
	cpuOnly := writeFile(t, dir, "cpuonly.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"+
		"p1,1000,1024,0,0,,LS,Running,10,100,10\n")
	cases := []struct {
		name string
		file string // scenario text; "" = use args as given
		args []string
		want []string // substrings of stderr
	}{
		{name: "malformed yaml", file: "name: x\ndatapath: [unclosed\n",
			want: []string{"bad.yaml:", "yaml"}},
		{name: "unknown key with suggestion", file: "name: x\ndatapath:\n  host:\n    backgroud_load: 80%\n",
			want: []string{"bad.yaml:4", "datapath.host.backgroud_load", `did you mean "background_load"`}},
		{name: "wrong unit", file: "name: x\ndatapath:\n  network:\n    line_rate: 200\n",
			want: []string{"bad.yaml:4", "datapath.network.line_rate", "Gbps"}},
		{name: "out of range", file: "name: x\ndatapath:\n  host:\n    background_load: 100%\n",
			want: []string{"bad.yaml:4", "background_load", "100%"}},
		{name: "wrong type", file: "name: x\ndatapath:\n  paths: tcp\n",
			want: []string{"bad.yaml:3", "datapath.paths"}},
		{name: "unknown scenario name", args: []string{"run", "paper/e2", "--no-report"},
			want: []string{"paper/e2", `did you mean the built-in "paper/e2e"?`}},
		{name: "set on a missing key", args: []string{"run", "paper/e2e", "--set", "datapath.host.coress=4", "--no-report"},
			want: []string{"--set datapath.host.coress=4", `"cores"`}},
		{name: "unwritable output", args: []string{"run", "paper/cost", "-o", filepath.Join(blocker, "out")},
			want: []string{filepath.Join(blocker, "out"), "cannot be created"}},
		{name: "bad seed", args: []string{"run", "paper/cost", "--seed", "-3"},
			want: []string{"--seed", "non-negative integer"}},
		{name: "unknown command", args: []string{"runn"}, want: []string{`unknown command "runn"`}},
		{name: "unknown flag", args: []string{"run", "--sed", "3"}, want: []string{"unknown flag: --sed"}},
		{name: "non-MIG GPU", args: []string{"mig", "layouts", "t4"}, want: []string{"t4 does not support MIG"}},
		{name: "missing trace", args: []string{"run", "paper/gpu-hours", "--set", "cluster.trace=" + filepath.Join(dir, "none.csv"), "--no-report"},
			want: []string{"not found", "github.com/alibaba/clusterdata"}}, // the node list or the trace, whichever is read first
		{name: "trace of unknown format", args: []string{"trace", "inspect", blocker},
			want: []string{blocker, "cannot detect the trace format"}},
		{name: "unknown GPU", args: []string{"mig", "layouts", "a100-40"}, want: []string{"a100-40"}},
		{name: "trace without a usable job", args: []string{"run", "paper/heuristic-vs-optimal", "--set", "cluster.trace=" + cpuOnly, "--no-report"},
			want: []string{cpuOnly, "no usable GPU job", "1 CPU-only pods"}},
		{name: "validate checks the trace exists", args: []string{"validate", "paper/heuristic-vs-optimal", "--set", "cluster.trace=" + filepath.Join(dir, "none.csv")},
			want: []string{"cluster.trace", filepath.Join(dir, "none.csv"), "not found"}},
		{name: "name-only scenario", file: "name: x\n", want: []string{"bad.yaml", "nothing to simulate", "scenarios show paper/e2e"}},
		{name: "empty scenario", file: "\n", want: []string{"bad.yaml", "nothing to simulate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if c.file != "" {
				p := writeFile(t, dir, "bad.yaml", c.file)
				args = []string{"run", p, "-o", out, "--no-report"}
			}
			code, _, stderr := cli(t, nil, args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a result directory %s was left behind", out)
			}
		})
	}
}

// The same scenario and seed give byte-identical summary.json and
// requests.csv; another seed gives different numbers.
func TestRunDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(d, f string) []byte {
		b, err := os.ReadFile(filepath.Join(d, f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	small := []string{"--set", "datapath.clients.requests=200", "--no-report"}
	for _, d := range []string{"a", "b"} {
		if code, _, e := cli(t, nil, append([]string{"run", "-o", filepath.Join(dir, d)}, small...)...); code != 0 {
			t.Fatalf("run %s: exit %d: %s", d, code, e)
		}
	}
	if code, _, e := cli(t, nil, append([]string{"run", "-o", filepath.Join(dir, "c"), "--seed", "2"}, small...)...); code != 0 {
		t.Fatalf("run c: exit %d: %s", code, e)
	}
	for _, f := range []string{"summary.json", "requests.csv"} {
		if !bytes.Equal(read(filepath.Join(dir, "a"), f), read(filepath.Join(dir, "b"), f)) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
		if bytes.Equal(read(filepath.Join(dir, "a"), f), read(filepath.Join(dir, "c"), f)) {
			t.Errorf("%s is identical for seeds 1 and 2", f)
		}
	}
}

// The default scenario reproduces the paper's ordering and a gap in the
// 10-20% band, read from the summary.json a user gets.
func TestDefaultRunSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e2e")
	code, stdout, stderr := cli(t, nil, "run", "-o", dir, "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "conspirator vs host-rdma:") {
		t.Errorf("stdout lacks the gap line:\n%s", stdout)
	}
	var s struct {
		Version string `json:"version"`
		Seed    uint64 `json:"seed"`
		Inputs  struct {
			Name string `json:"name"`
		} `json:"inputs"`
		Paths []struct {
			Name    string `json:"name"`
			Latency struct {
				Mean float64 `json:"mean"`
			} `json:"latency_us"`
			Unstable bool `json:"unstable"`
		} `json:"paths"`
		Gap float64 `json:"conspirator_vs_host_rdma_gap_pct"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	mean := map[string]float64{}
	for _, p := range s.Paths {
		mean[p.Name] = p.Latency.Mean
		if p.Unstable {
			t.Errorf("path %s flagged unstable at the default load", p.Name)
		}
	}
	// The paper's claims are checked on the model in sim/datapath
	// (TestPaperOrderingAndGap); here, that the file carries the four
	// paths and a gap computed from their means.
	if len(mean) != 4 || !(s.Gap > 0) {
		t.Errorf("paths %v, gap %.2f%%: want four paths and conspirator ahead of host-rdma", mean, s.Gap)
	}
	if want := 100 * (mean["host-rdma"] - mean["conspirator"]) / mean["host-rdma"]; math.Abs(s.Gap-want) > 1e-9 {
		t.Errorf("gap %.6f%%, but the means give %.6f%%", s.Gap, want)
	}
	if s.Version == "" || s.Seed != 1 {
		t.Errorf("version %q seed %d", s.Version, s.Seed)
	}
}

// paper/cost computes the paper's table from its inputs: (270/231) /
// (1000/1000) = 1.169 -> +17%, and (270/150) / (1000/800) = 1.44 -> +44%.
func TestPaperCost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cost")
	code, stdout, stderr := cli(t, nil, "run", "paper/cost", "-o", dir, "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"1.17 (+17%)", "1.80 (+44%)", "1.25 (+0%)"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}

// `mig layouts --maximal` prints one legal maximal layout per line: each
// parses back and validates, none can take another instance, no line
// repeats.
func TestMIGLayouts(t *testing.T) {
	code, stdout, stderr := cli(t, nil, "mig", "layouts", "a100-40gb", "--maximal")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	spec, err := gpu.Lookup("a100-40gb")
	if err != nil {
		t.Fatal(err)
	}
	g := spec.MIG
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(g.Layouts(true)) || len(lines) < 18 {
		t.Errorf("%d lines, want %d (at least MISO's 18)", len(lines), len(g.Layouts(true)))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		lay, err := g.Parse(l)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if err := g.Validate(lay); err != nil {
			t.Errorf("line %q is not legal: %v", l, err)
		}
		if !g.IsMaximal(lay) {
			t.Errorf("line %q is not maximal", l)
		}
		if seen[l] {
			t.Errorf("line %q repeats", l)
		}
		seen[l] = true
	}
	if !seen["4g.20gb@0 3g.20gb@4"] {
		t.Error(`the classic "4g.20gb@0 3g.20gb@4" layout is missing`)
	}
}

// Command-line defaults come from CONSPIRATOR_OUT; other CONSPIRATOR_
// variables set scenario keys and a misspelt one is an error.
func TestEnvironment(t *testing.T) {
	root := t.TempDir()
	code, stdout, stderr := cli(t, []string{"CONSPIRATOR_OUT=" + root, "CONSPIRATOR_DATAPATH__HOST__BACKGROUND_LOAD=80%", "CONSPIRATOR_JOBS=1"},
		"run", "--set", "datapath.clients.requests=50", "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "background CPU load 80%") {
		t.Errorf("environment layer not applied:\n%s", stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(root, "paper-e2e-*", "summary.json")); len(m) != 1 {
		t.Errorf("CONSPIRATOR_OUT not used, or not one directory named by the inputs' digest: %v", m)
	}
	code, _, stderr = cli(t, []string{"CONSPIRATOR_DATAPAHT__HOST__CORES=4"}, "validate", "paper/e2e")
	if code != exitUsage || !strings.Contains(stderr, "CONSPIRATOR_DATAPAHT__HOST__CORES") {
		t.Errorf("misspelt variable: exit %d, stderr %s", code, stderr)
	}
}

// Whatever step of writing a result directory fails (short write, fsync,
// rename, directory sync, mkdir; first and last call of each), the error
// is returned, an earlier result at the requested name stays there whole
// or is replaced whole (never absent, never mixed), and no temporary is
// left.
func TestResultDirUnderFaults(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range []string{"summary.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "reports", "testdata", "run-datapath", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	for _, f := range atomicfs.Faults {
		count := &atomicfs.Faulty{Fault: f}
		// Over an earlier result, as below, so that the replacing steps
		// (the exchange) are counted too.
		countDir := filepath.Join(t.TempDir(), "r")
		if err := writeResultDirFS(atomicfs.OS, countDir, map[string][]byte{"summary.json": []byte("{}\n")}, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := writeResultDirFS(count, countDir, files, true, nil); err != nil {
			t.Fatal(err)
		}
		if count.Calls() == 0 {
			continue // a step this writer does not take (link)
		}
		for _, n := range []int{1, count.Calls()} {
			root := t.TempDir()
			dir := filepath.Join(root, "r")
			old := map[string][]byte{"summary.json": []byte("{\"old\":1}\n")}
			if err := writeResultDirFS(atomicfs.OS, dir, old, false, nil); err != nil {
				t.Fatal(err)
			}
			err := writeResultDirFS(&atomicfs.Faulty{Fault: f, N: n}, dir, files, true, nil)
			if !errors.Is(err, atomicfs.ErrInjected) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("%s #%d: err = %v, want the injected fault naming %s", f, n, err, dir)
			}
			if strings.Contains(err.Error(), atomicfs.TmpInfix) {
				t.Errorf("%s #%d: error names the temporary directory: %v", f, n, err)
			}
			got, rerr := os.ReadFile(filepath.Join(dir, "summary.json"))
			if rerr != nil || string(got) != string(old["summary.json"]) && string(got) != string(files["summary.json"]) {
				t.Errorf("%s #%d: summary.json is neither the old nor the new one (%v)", f, n, rerr)
			}
			if tmp, _ := atomicfs.Temps(root); len(tmp) > 0 {
				t.Errorf("%s #%d: temporaries left: %v", f, n, tmp)
			}
		}
	}
}

// --version and the version command print the same line, naming the
// release and the commit (or saying that the build was not stamped).
func TestVersion(t *testing.T) {
	code, flag, _ := cli(t, nil, "--version")
	code2, cmd, _ := cli(t, nil, "version")
	if code != 0 || code2 != 0 || flag != cmd || !strings.HasPrefix(flag, "conspirator "+sim.Version+" (") || !strings.Contains(flag, "commit") {
		t.Errorf("--version %q (exit %d), version %q (exit %d)", flag, code, cmd, code2)
	}
}

// Without -o, a built-in run as it is writes OUT/NAME; other inputs write
// OUT/NAME-DIGEST, so that they never overwrite each other; the same
// inputs (a rerun, or an unedited `scenarios show` copy) reuse their own
// directory.
func TestDefaultResultDirsNeverCollide(t *testing.T) {
	root := t.TempDir()
	env := []string{"CONSPIRATOR_OUT=" + root}
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := cli(t, env, append([]string{"run"}, append(args, "--no-report")...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		i := strings.Index(stdout, "results: ")
		if i < 0 {
			t.Fatalf("no results line in %q", stdout)
		}
		return strings.Fields(stdout[i+len("results: "):])[0]
	}
	plain := run("paper/cost")
	if plain != filepath.Join(root, "paper-cost") {
		t.Errorf("built-in as it is: %s, want %s", plain, filepath.Join(root, "paper-cost"))
	}
	seeded := run("paper/cost", "--seed", "2")
	if seeded == plain || !strings.HasPrefix(filepath.Base(seeded), "paper-cost-") {
		t.Errorf("--seed 2 wrote %s, want paper-cost-DIGEST beside %s", seeded, plain)
	}
	if again := run("paper/cost", "--seed", "2"); again != seeded {
		t.Errorf("the same inputs wrote %s, then %s", seeded, again)
	}
	_, show, _ := cli(t, nil, "scenarios", "show", "paper/cost")
	copyFile := writeFile(t, t.TempDir(), "mine.yaml", show)
	if got := run(copyFile); got != plain {
		t.Errorf("an unedited copy of the built-in wrote %s, want %s", got, plain)
	}
	edited := writeFile(t, t.TempDir(), "edited.yaml", strings.Replace(show, "seed: 1", "seed: 3", 1))
	if got := run(edited); got == plain || got == seeded {
		t.Errorf("an edited copy wrote %s, over another run's directory", got)
	}
}

// Shell completion offers the built-in scenarios for the argument and the
// scenario keys for --set (what `conspirator completion bash` calls).
func TestCompletion(t *testing.T) {
	_, out, _ := cli(t, nil, "__complete", "run", "")
	if !strings.Contains(out, "paper/e2e\n") || !strings.Contains(out, "paper/gpu-hours\n") {
		t.Errorf("scenario completion:\n%s", out)
	}
	_, out, _ = cli(t, nil, "__complete", "sweep", "paper/e2e", "--set", "datapath.host.ba")
	if !strings.Contains(out, "datapath.host.background_load=\n") || strings.Contains(out, "cluster.") {
		t.Errorf("--set completion:\n%s", out)
	}
}

// explain prints a key's meaning, type, default and source; a unique
// ending is enough; a misspelt or ambiguous key is exit 2 saying why.
func TestExplain(t *testing.T) {
	code, out, _ := cli(t, nil, "explain", "smartnic.dma_bandwidth")
	for _, want := range []string{"datapath.smartnic.dma_bandwidth\n", "type:     bandwidth", "default:  22GB/s, the value of bluefield3, the part named at datapath.smartnic.model", "source:   estimate:"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("explain: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	for _, c := range []struct{ key, want string }{
		{"datapath.smartnic.dma_bandwith", `did you mean "datapath.smartnic.dma_bandwidth"?`},
		{"count", "names 4 keys"},
	} {
		code, _, stderr := cli(t, nil, "explain", c.key)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("explain %s: exit %d, stderr %q; want exit 2 and %q", c.key, code, stderr, c.want)
		}
	}
}

// compare prints the metrics side by side and exits 2 on a directory
// without summary.json.
func TestCompareCommand(t *testing.T) {
	fx := filepath.Join("..", "..", "reports", "testdata", "run-datapath")
	code, out, stderr := cli(t, nil, "compare", fx, fx)
	if code != 0 || !strings.Contains(out, "path/conspirator/mean_latency_us") || !strings.Contains(out, "inputs: identical") {
		t.Errorf("compare: exit %d\n%s\n%s", code, out, stderr)
	}
	code, _, stderr = cli(t, nil, "compare", fx, t.TempDir())
	if code != 2 || !strings.Contains(stderr, "give run directories, each holding summary.json") {
		t.Errorf("compare of an empty directory: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(t.TempDir(), "cmp")
	code, out, stderr = cli(t, nil, "compare", fx, fx, "-o", dir)
	if code != 0 || !strings.Contains(out, "report: "+dir+" (report.md, report.html, 2 overlaid figures in plots/)") {
		t.Errorf("compare -o: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, f := range []string{"report.md", "report.html", "plots/compare_stage_breakdown.pdf"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("compare -o: %v", err)
		}
	}
}

// sensitivity prints one row per parameter, largest swing first, and
// writes the table and the tornado chart; bad factors and a scenario
// without a data path are usage errors.
func TestSensitivityCommand(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := cli(t, nil, "sensitivity", "paper/e2e", "--set", "datapath.clients.requests=100",
		"--param", "host.pageable_factor", "--param", "host.post_send", "-o", filepath.Join(out, "s"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i, j := strings.Index(stdout, "datapath.host.pageable_factor"), strings.Index(stdout, "datapath.host.post_send")
	if i < 0 || j < 0 || i > j || !strings.Contains(stdout, "derived") {
		t.Errorf("rows missing or not sorted by swing (pageable_factor moves the gain most):\n%s", stdout)
	}
	// The catalog's range, not x0.5..x2: post_send's stated 0.1 to 1 us.
	if !strings.Contains(stdout, "catalog host.post_send") || !strings.Contains(stdout, "100ns") || !strings.Contains(stdout, "1us") {
		t.Errorf("post_send not moved across its catalog range:\n%s", stdout)
	}
	// A key set by value: the clients' count, 2 and 8.
	code, stdout, stderr = cli(t, nil, "sensitivity", "paper/e2e", "--set", "datapath.clients.requests=100",
		"--param", "datapath.clients.count=2,8", "-o", filepath.Join(out, "v"))
	if code != 0 || !strings.Contains(stdout, "datapath.clients.count") || !strings.Contains(stdout, "given") {
		t.Errorf("--param KEY=LOW,HIGH: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"sensitivity.csv", "plots/sensitivity.png", "plots/sensitivity.svg", "plots/sensitivity.pdf"} {
		if st, err := os.Stat(filepath.Join(out, "s", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sensitivity", "paper/e2e", "--factors", "2,0.5"}, "0 < LOW < HIGH"},
		{[]string{"sensitivity", "paper/cost"}, "has neither a datapath nor a cluster section"},
		{[]string{"sensitivity", "paper/e2e", "--param", "host.nope"}, `unknown parameter "host.nope"`},
		{[]string{"sensitivity", "paper/e2e", "--param", "datapath.smartnic.dma_bandwith"}, "did you mean datapath.smartnic.dma_bandwidth?"},
		{[]string{"sensitivity", "paper/e2e", "--param", "datapath.clients.count"}, "has no stated plausible range; give its two ends"},
		{[]string{"sensitivity", "paper/e2e", "--param", "datapath.clients.count=4"}, "give two values, LOW,HIGH"},
		{[]string{"sensitivity", "paper/gpu-hours", "--policy", "fgd2"}, `--policy "fgd2"`},
	} {
		code, _, stderr := cli(t, nil, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

package batch

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/sim/sweep"
	"go.yaml.in/yaml/v3"
)

// job is a fixed sweep: 2 x 3 values x 2 seeds = 12 points in 4 tasks, 2
// at once. Its paths hold no temporary directory, so the files are golden.
func job() Job {
	return Job{
		Name:   "paper/e2e",
		Binary: "/opt/conspirator/bin/conspirator",
		Dir:    "/scratch/alice/e2e-sweep",
		SweepArgs: []string{"--param", "datapath.host.background_load=0%,50%",
			"--param", "datapath.clients.count=1,2,4", "--seeds", "2", "--set", "datapath.request.model=it's"},
		Shards: 4, Throttle: 2, Jobs: 1, Points: 12, Version: "1.2.3",
		Command: []string{"/opt/conspirator/bin/conspirator", "sweep", "scenario.yaml", "--emit", "slurm", "-o", "/scratch/alice/e2e-sweep"},
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// The emitted files equal the reviewed golden files, and the lines Slurm
// and Kubernetes act on say what the Job says (checked here by hand, not
// only by the golden files).
func TestEmittedFiles(t *testing.T) {
	j := job()
	script, err := SlurmScript(j)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "sweep.sbatch.golden", script)
	for _, want := range []string{
		"#SBATCH --array=0-3%2\n", // 4 shards -> indices 0..3, throttle 2
		"#SBATCH --cpus-per-task=1\n",
		"#SBATCH --output=/scratch/alice/e2e-sweep/logs/task-%A_%a.out\n",
		"#SBATCH --error=/scratch/alice/e2e-sweep/logs/task-%A_%a.err\n",
		`--resume --no-report --shard "${SLURM_ARRAY_TASK_ID}/4" -o /scratch/alice/e2e-sweep` + "\n",
	} {
		if !strings.Contains(string(script), want) {
			t.Errorf("sbatch script lacks %q", want)
		}
	}

	manifest, err := K8sManifest(j)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "k8s-job.yaml.golden", manifest)
	var m k8sJob
	if err := yaml.Unmarshal(manifest, &m); err != nil {
		t.Fatalf("the manifest is not YAML: %v", err)
	}
	c := m.Spec.Template.Spec.Containers[0]
	if m.Spec.CompletionMode != "Indexed" || m.Spec.Completions != 4 || m.Spec.Parallelism != 2 ||
		c.Env[0] != (k8sEnv{"CONSPIRATOR_SHARDS", "4"}) || slices.Contains(c.Args, "--shard") ||
		c.Args[len(c.Args)-1] != K8sMount || !strings.Contains(string(manifest), "NOT TESTED") {
		t.Errorf("manifest: %+v", m.Spec)
	}

	checkGolden(t, "README-slurm.md.golden", Readme(Slurm, j))
	j.Command = []string{"/home/alice/bin/conspirator", "sweep", "scenario.yaml", "--emit", "k8s", "-o", "/scratch/alice/e2e-sweep"}
	checkGolden(t, "README-k8s.md.golden", Readme(K8s, j))
}

// The script's command line, parsed by bash, hands the binary exactly the
// arguments of Job (quoting checked by a second parser), with the shard
// from SLURM_ARRAY_TASK_ID and the submitter's CONSPIRATOR_ variables gone.
func TestSlurmScriptRunsInBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not on PATH")
	}
	tmp := t.TempDir()
	j := job()
	j.Dir = tmp
	j.Binary = filepath.Join(tmp, "fake-conspirator")
	// The fake binary prints one argument per line, then its CONSPIRATOR_ variables.
	fake := "#!/bin/bash\nprintf '%s\\n' \"$@\"\nenv | grep '^CONSPIRATOR_' || true\n"
	if err := os.WriteFile(j.Binary, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := SlurmScript(j)
	if err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(tmp, SlurmFile)
	if err := os.WriteFile(sp, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", sp)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SLURM_ARRAY_TASK_ID=2", "CONSPIRATOR_DATAPATH__HOST__CORES=4"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := append(append([]string{"sweep", "scenario.yaml"}, j.SweepArgs...),
		"-j", "1", "--resume", "--no-report", "--shard", "2/4", "-o", tmp)
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("the binary got\n%q\nwant\n%q", got, want)
	}

	// Without SLURM_ARRAY_TASK_ID (run by hand) the script refuses.
	cmd = exec.Command("bash", sp)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "submit this script with sbatch") {
		t.Errorf("run without Slurm: %v\n%s", err, out)
	}
}

func TestThrottleAndNames(t *testing.T) {
	cases := []struct {
		shards, throttle int
		array            string // the #SBATCH --array value
		parallelism      int
	}{
		{4, 2, "0-3%2", 2},
		{4, 0, "0-3", 4}, // no limit
		{4, 4, "0-3", 4}, // a throttle >= the tasks is no limit
		{4, 9, "0-3", 4},
		{1, 1, "0-0", 1},
	}
	for _, c := range cases {
		j := job()
		j.Shards, j.Throttle = c.shards, c.throttle
		s, err := SlurmScript(j)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(s), "#SBATCH --array="+c.array+"\n") {
			t.Errorf("shards %d throttle %d: want --array=%s", c.shards, c.throttle, c.array)
		}
		k, _ := K8sManifest(j)
		var m k8sJob
		if err := yaml.Unmarshal(k, &m); err != nil || m.Spec.Parallelism != c.parallelism {
			t.Errorf("shards %d throttle %d: parallelism %d (%v), want %d", c.shards, c.throttle, m.Spec.Parallelism, err, c.parallelism)
		}
	}
	names := []struct{ in, want string }{
		{"paper/e2e", "conspirator-paper-e2e"},
		{"", "conspirator"},
		{"My Sweep!!", "conspirator-my-sweep"},
		{strings.Repeat("a", 80), "conspirator-" + strings.Repeat("a", 40)}, // 52 characters
	}
	for _, n := range names {
		if got := (Job{Name: n.in}).jobName(); got != n.want {
			t.Errorf("jobName(%q) = %q, want %q", n.in, got, n.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"datapath.clients.count=1,2,4", "datapath.clients.count=1,2,4"},
		{"0%,50%", "'0%,50%'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"a b", "'a b'"},
		{"$HOME", "'$HOME'"},
	}
	for _, c := range cases {
		if got := shellQuote(c.in); got != c.want {
			t.Errorf("shellQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Job)
		sched Scheduler
		want  string // substring of the error; "" = valid
	}{
		{"valid", func(*Job) {}, Slurm, ""},
		{"no shards", func(j *Job) { j.Shards = 0 }, Slurm, "--shards 0"},
		{"more shards than points", func(j *Job) { j.Shards = 13 }, Slurm, "only 12 points"},
		{"negative throttle", func(j *Job) { j.Throttle = -1 }, Slurm, "--throttle -1"},
		{"no workers", func(j *Job) { j.Jobs = 0 }, Slurm, "-j 0"},
		{"relative dir", func(j *Job) { j.Dir = "out/sw" }, Slurm, "absolute"},
		{"relative binary", func(j *Job) { j.Binary = "conspirator" }, K8s, "--binary"},
		{"space in a Slurm path", func(j *Job) { j.Dir = "/scratch/my sweep" }, Slurm, "#SBATCH"},
		{"percent in a Slurm path", func(j *Job) { j.Dir = "/scratch/50%" }, Slurm, "#SBATCH"},
		{"space is fine for k8s", func(j *Job) { j.Dir = "/scratch/my sweep" }, K8s, ""},
	}
	for _, c := range cases {
		j := job()
		c.edit(&j)
		err := j.Validate(c.sched)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := ParseScheduler("pbs"); err == nil || !strings.Contains(err.Error(), "slurm") {
		t.Errorf("ParseScheduler(pbs) = %v", err)
	}
}

func TestArrayList(t *testing.T) {
	cases := []struct {
		ids  []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
		{[]int{1, 3}, "1,3"},
	}
	for _, c := range cases {
		if got := ArrayList(c.ids); got != c.want {
			t.Errorf("ArrayList(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

// points is a 7-point sweep (one parameter of 7 values, one seed).
func points() []sweep.Point {
	return sweep.Expand([]sweep.Param{{Key: "x", Values: []string{"1", "2", "3", "4", "5", "6", "7"}}}, []uint64{1})
}

func fakeRun(_ context.Context, p sweep.Point) (map[string][]byte, error) {
	return map[string][]byte{"value.txt": []byte(p.Params[0].Value)}, nil
}

// MissingShards names the tasks with unfinished points. 7 points in 3
// tasks: task 0 = indices {0,3,6}, task 1 = {1,4}, task 2 = {2,5}. Task 0
// runs whole, task 2 runs and then loses index 5, task 1 never runs:
// missing = [1 2].
func TestMissingShards(t *testing.T) {
	dir := t.TempDir()
	j := job()
	j.Dir, j.Shards, j.Points = dir, 3, 7
	meta := map[string]string{"scenario": ScenarioFile}
	if _, err := Emit(Slurm, j, []byte("name: x\n"), points(), meta, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := MissingShards(dir); err != nil || !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("fresh: MissingShards = %v, %v; want [0 1 2]", got, err)
	}
	for _, shard := range []int{0, 2} {
		opts := sweep.Options{Dir: dir, Jobs: 1, Resume: true, Shard: shard, Shards: 3, Meta: meta}
		if _, err := sweep.Run(context.Background(), points(), opts, fakeRun); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(sweep.PointDir(dir, points()[5])); err != nil {
		t.Fatal(err)
	}
	if got, err := MissingShards(dir); err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("MissingShards = %v, %v; want [1 2]", got, err)
	}
	if _, err := MissingShards(t.TempDir()); err == nil || !strings.Contains(err.Error(), StateFile) {
		t.Errorf("MissingShards of an empty directory: %v, want an error naming %s", err, StateFile)
	}
}

// Prepare writes the sweep.json a real sweep.Run writes for the same points
// and meta (the second implementation), so tasks resume into it.
func TestPrepareMatchesRun(t *testing.T) {
	meta := map[string]string{"scenario": ScenarioFile, "version": "1"}
	a, b := t.TempDir(), t.TempDir()
	if err := Prepare(a, points(), meta, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(context.Background(), points(), sweep.Options{Dir: b, Jobs: 1, Meta: meta}, fakeRun); err != nil {
		t.Fatal(err)
	}
	sa, _ := os.ReadFile(filepath.Join(a, sweep.SpecFile))
	sb, _ := os.ReadFile(filepath.Join(b, sweep.SpecFile))
	if len(sa) == 0 || !bytes.Equal(sa, sb) {
		t.Errorf("Prepare's sweep.json:\n%s\nsweep.Run's:\n%s", sa, sb)
	}
	if entries, _ := os.ReadDir(filepath.Join(a, "points")); len(entries) != 0 {
		t.Errorf("Prepare ran %d points, want none", len(entries))
	}
}

// Emitting twice is idempotent; a directory of another sweep or scenario,
// or an unrelated non-empty one, is refused.
func TestEmitRefusesOtherSweeps(t *testing.T) {
	dir := t.TempDir()
	j := job()
	j.Dir, j.Shards, j.Points = dir, 3, 7
	meta := map[string]string{"scenario": ScenarioFile}
	w1, err := Emit(Slurm, j, []byte("name: x\n"), points(), meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string][]byte{}
	for _, p := range w1 {
		first[p], _ = os.ReadFile(p)
	}
	if _, err := Emit(Slurm, j, []byte("name: x\n"), points(), meta, nil); err != nil {
		t.Fatalf("emitting again: %v", err)
	}
	for p, data := range first {
		if again, _ := os.ReadFile(p); !bytes.Equal(again, data) {
			t.Errorf("%s changed when emitted again", p)
		}
	}
	if _, err := Emit(Slurm, j, []byte("name: y\n"), points(), meta, nil); err == nil || !strings.Contains(err.Error(), "different scenario.yaml") {
		t.Errorf("another scenario: %v", err)
	}
	if _, err := Emit(Slurm, j, []byte("name: x\n"), points()[:3], meta, nil); err == nil || !strings.Contains(err.Error(), "different sweep") {
		t.Errorf("other points: %v", err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	j.Dir = other
	if _, err := Emit(Slurm, j, []byte("name: x\n"), points(), meta, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("unrelated directory: %v", err)
	}
}

func TestReadStateErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"format":"conspirator-batch/1","scheduler":"slurm","shards":3,"throttle":0,"jobs":1}`, ""},
		{`{"format":"conspirator-batch/2","scheduler":"slurm","shards":3,"throttle":0,"jobs":1}`, "format"},
		{`{"format":"conspirator-batch/1","scheduler":"pbs","shards":3,"throttle":0,"jobs":1}`, "scheduler"},
		{`{"format":"conspirator-batch/1","scheduler":"slurm","shards":0,"throttle":0,"jobs":1}`, "shards 0"},
		{`{"format":"conspirator-batch/1","scheduler":"slurm","shards":3,"throttle":0,"jobs":1,"x":1}`, "unknown field"},
		{`{"format":`, "unexpected EOF"},
	}
	for _, c := range cases {
		_, err := parseState("batch.json", []byte(c.text))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"format":"conspirator-batch/1","scheduler":"slurm","shards":3,"throttle":0,"jobs":1}`))
	f.Add([]byte(`{"shards":-1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseState("batch.json", data)
		if err == nil && (s.Shards < 1 || s.Jobs < 1 || s.Throttle < 0) {
			t.Errorf("accepted %+v", s)
		}
		if err == nil {
			if s2, err := parseState("batch.json", s.encode()); err != nil || s2 != s {
				t.Errorf("round trip: %+v -> %+v, %v", s, s2, err)
			}
		}
	})
}

package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/filetree"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// treeHash lists every file under dir with its SHA-256, in path order.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	tree, err := filetree.Hashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 0, len(tree))
	for p, h := range tree {
		lines = append(lines, h+"  "+p)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A sweep of background CPU load for all four paths: -j 1 and -j 2 write
// byte-identical directories (results, aggregate, plots, report), and the
// metric-vs-parameter plot with error bars exists. Removing finished points
// and resuming reruns exactly those and restores the same bytes.
func TestSweepDeterministicAndResume(t *testing.T) {
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		return append([]string{"sweep", "paper/e2e",
			"--param", "datapath.host.background_load=0%,40%,80%", "--seeds", "2",
			"--set", "datapath.clients.requests=100", "-o", out}, extra...)
	}
	a, b := filepath.Join(dir, "j1"), filepath.Join(dir, "j2")
	if code, _, e := cli(t, nil, args(a, "-j", "1")...); code != 0 {
		t.Fatalf("-j 1: exit %d: %s", code, e)
	}
	if code, _, e := cli(t, nil, args(b, "-j", "2")...); code != 0 {
		t.Fatalf("-j 2: exit %d: %s", code, e)
	}
	ha, hb := treeHash(t, a), treeHash(t, b)
	if ha != hb {
		t.Errorf("-j 1 and -j 2 differ:\n%s\n---\n%s", ha, hb)
	}
	if !strings.Contains(ha, "plots/latency.mean_vs_datapath.host.background_load.png") {
		t.Errorf("no latency-vs-load plot in:\n%s", ha)
	}
	// Without --resume, a finished sweep directory is not overwritten.
	if code, _, e := cli(t, nil, args(a, "-j", "1")...); code != exitFailed && code != exitUsage {
		t.Errorf("rerun without --resume: exit %d, want a refusal: %s", code, e)
	}
	// Lose two points (as a killed sweep would), then resume.
	pts, err := filepath.Glob(filepath.Join(a, "points", "p00[12]-s1-*"))
	if err != nil || len(pts) != 2 {
		t.Fatalf("points to remove: %v %v", pts, err)
	}
	for _, p := range pts {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, e := cli(t, nil, args(a, "-j", "1", "--resume")...)
	if code != 0 {
		t.Fatalf("--resume: exit %d: %s", code, e)
	}
	if !strings.Contains(stdout, "2 ran, 4 already done") {
		t.Errorf("resume output %q, want 2 ran and 4 already done", stdout)
	}
	if h := treeHash(t, a); h != hb {
		t.Errorf("resumed sweep differs from an uninterrupted one")
	}
}

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "paper/e2e", "-o", filepath.Join(dir, "a")}, "--param"},
		{[]string{"sweep", "paper/e2e", "--param", "datapath.host.background_load", "-o", filepath.Join(dir, "b")}, "key=v1,v2"},
		{[]string{"sweep", "paper/e2e", "--param", "datapath.host.background_load=10%,200%", "-o", filepath.Join(dir, "c")}, "200%"},
		{[]string{"sweep", "paper/e2e", "--param", "datapath.host.nope=1,2", "-o", filepath.Join(dir, "d")}, "nope"},
		{[]string{"sweep", "paper/e2e", "--param", "seed=1,2", "--shard", "3/2", "-o", filepath.Join(dir, "e")}, "--shard"},
		{[]string{"sweep", "paper/e2e", "--param", "seed=1,2", "--seeds", "0", "-o", filepath.Join(dir, "f")}, "--seeds"},
	} {
		code, _, stderr := cli(t, nil, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, stderr, c.want)
		}
	}
}

// A scenario's own sweep list runs when no --param is given (the points
// are its cartesian product), --param replaces it, and a malformed entry
// is a configuration error naming it.
func TestSweepScenarioList(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	write := func(sweep string) {
		t.Helper()
		body := "name: listed\ndatapath:\n  paths: [tcp]\n  clients: {requests: 50}\nsweep:\n" + sweep
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("  - datapath.host.background_load=0%,40%\n  - datapath.request.batch=1,2,4\n")
	out := filepath.Join(dir, "own")
	code, stdout, e := cli(t, nil, "sweep", file, "-j", "1", "-o", out, "--no-report")
	if code != 0 || !strings.Contains(stdout, "6 points in this shard, 6 ran") {
		t.Fatalf("own list: exit %d, %q, %s; want the 2 x 3 points", code, stdout, e)
	}
	code, stdout, e = cli(t, nil, "sweep", file, "--param", "datapath.host.background_load=0%,20%,60%", "-j", "1", "-o", filepath.Join(dir, "given"), "--no-report")
	if code != 0 || !strings.Contains(stdout, "3 points in this shard, 3 ran") {
		t.Errorf("--param: exit %d, %q, %s; want its 3 points instead of the list", code, stdout, e)
	}
	write("  - datapath.host.background_load\n")
	if code, _, e := cli(t, nil, "sweep", file, "-o", filepath.Join(dir, "bad")); code != exitUsage || !strings.Contains(e, "sweep") || !strings.Contains(e, "key=v1,v2") {
		t.Errorf("malformed list: exit %d, %s; want exit 2 naming the sweep entry and the form", code, e)
	}
}

// A sweep's identity is what it computes: after an interruption, a resume
// over an edited scenario file, or with a CONSPIRATOR_ variable that
// changes a key, is refused with exit 2, naming the key with both values;
// with the inputs restored it finishes. A point computed from other inputs
// (copied in from another sweep, manifest and all) is refused by the
// aggregate, naming the point.
func TestResumeRefusesOtherInputs(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	text := func(think string) string {
		return "name: think\ndatapath:\n  clients:\n    requests: 100\n    think_time: " + think + "\n"
	}
	writeFile(t, dir, "s.yaml", text("1ms"))
	args := func(out string, extra ...string) []string {
		return append([]string{"sweep", scen, "--param", "datapath.host.background_load=0%,80%", "-j", "1", "-o", out}, extra...)
	}
	out := filepath.Join(dir, "sw")
	if code, _, e := cli(t, nil, args(out)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, e)
	}
	spec, err := sweep.ReadSpec(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range spec.Points {
		if len(p.Inputs) != 64 {
			t.Fatalf("point %s has no inputs digest in sweep.json: %q", p.ID, p.Inputs)
		}
	}
	// The interruption: one point lost.
	os.RemoveAll(sweep.PointDir(out, spec.Points[1]))

	writeFile(t, dir, "s.yaml", text("5ms"))
	code, _, stderr := cli(t, nil, args(out, "--resume")...)
	if code != exitUsage || !strings.Contains(stderr, `datapath.clients.think_time (stored "1ms", now "5ms")`) {
		t.Errorf("resume over an edited file: exit %d, stderr:\n%s", code, stderr)
	}
	writeFile(t, dir, "s.yaml", text("1ms"))
	code, _, stderr = cli(t, []string{"CONSPIRATOR_DATAPATH__CLIENTS__THINK_TIME=5ms"}, args(out, "--resume")...)
	if code != exitUsage || !strings.Contains(stderr, "datapath.clients.think_time") {
		t.Errorf("resume with an environment variable: exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, e := cli(t, nil, args(out, "--resume")...); code != 0 {
		t.Fatalf("resume with the inputs restored: exit %d: %s", code, e)
	}

	// A point of another sweep (5 ms think time) under this sweep's ID.
	other := filepath.Join(dir, "other")
	writeFile(t, dir, "s.yaml", text("5ms"))
	if code, _, e := cli(t, nil, args(other)...); code != 0 {
		t.Fatalf("other sweep: exit %d: %s", code, e)
	}
	p := spec.Points[0]
	os.RemoveAll(sweep.PointDir(out, p))
	if err := os.Rename(sweep.PointDir(other, p), sweep.PointDir(out, p)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, nil, "report", out)
	if code == 0 || !strings.Contains(stderr, p.ID) || !strings.Contains(stderr, "other inputs") {
		t.Errorf("report over a point of other inputs: exit %d, stderr:\n%s", code, stderr)
	}
}

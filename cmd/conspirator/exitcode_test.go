package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/dirlock"
)

// Every command keeps the documented exit codes: 0 on success, 2 for a
// mistake in how it was called or configured (a refused resume and an
// unknown sub-command included), 1 for a run that failed (here: the
// output directory held by another process). A command added without a
// case here fails the test.
func TestExitCodesPerCommand(t *testing.T) {
	dir := t.TempDir()
	held := filepath.Join(dir, "held")
	lock, err := dirlock.Exclusive(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	run1, run2 := filepath.Join(dir, "run1"), filepath.Join(dir, "run2")
	for _, r := range []string{run1, run2} {
		if code, _, e := cli(t, nil, "run", "paper/cost", "-o", r); code != 0 {
			t.Fatalf("setup run: exit %d: %s", code, e)
		}
	}
	type tc struct {
		args []string
		want int
	}
	small := []string{"--set", "datapath.clients.requests=60", "--set", "datapath.warmup_requests=10"}
	sweepArgs := func(out string, extra ...string) []string {
		return append(append([]string{"sweep", "paper/e2e", "--param", "datapath.host.background_load=0%", "-o", out}, small...), extra...)
	}
	cases := map[string][]tc{
		"run": {
			{[]string{"run", "paper/cost", "-o", filepath.Join(dir, "r")}, 0},
			{[]string{"run", "paper/cost", "--set", "cost.bogus=1"}, 2},
			{[]string{"run", "paper/cost", "-o", held}, 1},
		},
		"validate": {
			{[]string{"validate", "paper/e2e"}, 0},
			{[]string{"validate", "paper/e2e", "--set", "datapath.host.background_load=100%"}, 2},
		},
		"sweep": {
			{sweepArgs(filepath.Join(dir, "sw")), 0},
			{sweepArgs(filepath.Join(dir, "sw")), 2},                             // finished points without --resume
			{sweepArgs(filepath.Join(dir, "sw"), "--seeds", "2", "--resume"), 2}, // a refused resume: other seeds
			{sweepArgs(held), 1},
		},
		"report": {
			{[]string{"report", run1}, 0},
			{[]string{"report", dir}, 2},
			{[]string{"report", held}, 2}, // not a result directory: refused before the lock
		},
		"calibrate": {
			{[]string{"calibrate", "--import", filepath.Join("..", "..", "realhw", "perftest", "testdata", "ib_write_lat.txt"), "-o", filepath.Join(dir, "cal")}, 0},
			{[]string{"calibrate", "--backend", "quantum"}, 2},
			{[]string{"calibrate", "--import", filepath.Join("..", "..", "realhw", "perftest", "testdata", "ib_write_lat.txt"), "-o", held}, 1},
		},
		"version":     {{[]string{"version"}, 0}, {[]string{"version", "x"}, 2}},
		"scenarios":   {{[]string{"scenarios", "list"}, 0}, {[]string{"scenarios", "show", "paper/e3e"}, 2}, {[]string{"scenarios", "lst"}, 2}},
		"explain":     {{[]string{"explain", "datapath.host.cores"}, 0}, {[]string{"explain", "datapath.host.coress"}, 2}},
		"mig":         {{[]string{"mig", "profiles", "a100-40gb"}, 0}, {[]string{"mig", "z9000"}, 2}},
		"trace":       {{[]string{"trace", "inspect", "nothere.csv"}, 2}, {[]string{"trace", "x"}, 2}},
		"compare":     {{[]string{"compare", run1, run2}, 0}, {[]string{"compare", run1}, 2}},
		"sensitivity": {{[]string{"sensitivity", "paper/e2e", "--param", "datapath.host.coress"}, 2}, {append([]string{"sensitivity", "paper/e2e", "--param", "datapath.host.pageable_factor", "-o", held}, small...), 1}},
		"reproduce":   {{[]string{"reproduce", "--only", "r4-cost", "-o", filepath.Join(dir, "rep")}, 0}, {[]string{"reproduce", "--only", "r0"}, 2}, {[]string{"reproduce", "--only", "r4-cost", "-o", held}, 1}},
		"completion":  {{[]string{"completion", "bash"}, 0}, {[]string{"completion", "tcsh"}, 2}},
		"llm":         {{[]string{"llm", "step", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--prefill", "128"}, 0}, {[]string{"llm", "step", "--model", "llama-2-70b", "--gpu", "a100-80gb", "--prefill", "128"}, 2}, {[]string{"llm", "stp"}, 2}},
		"help":        {{[]string{"help", "run"}, 0}},
	}
	root := newRoot(io.Discard, io.Discard, nil)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if _, ok := cases[c.Name()]; !ok {
			t.Errorf("command %q has no exit-code case", c.Name())
		}
	}
	for name, list := range cases {
		for _, c := range list {
			code, _, stderr := cli(t, nil, c.args...)
			if code != c.want {
				t.Errorf("%s: conspirator %s: exit %d, want %d; stderr:\n%s", name, strings.Join(c.args, " "), code, c.want, stderr)
			}
			if c.want == 1 && !strings.Contains(stderr, "is writing "+held) {
				t.Errorf("%s: the busy directory's message does not name it:\n%s", name, stderr)
			}
		}
	}
}

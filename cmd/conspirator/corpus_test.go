package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// badInput is one case of testdata/bad_inputs.yaml (see its header).
type badInput struct {
	Name     string            `yaml:"name"`
	Class    string            `yaml:"class"`
	Scenario string            `yaml:"scenario"`
	Files    map[string]string `yaml:"files"`
	FIFOs    []string          `yaml:"fifos"`
	Env      []string          `yaml:"env"`
	Args     []string          `yaml:"args"`
	Commands []string          `yaml:"commands"`
	Exit     *int              `yaml:"exit"`
	Want     []string          `yaml:"want"`
}

func readCorpus(t *testing.T) []badInput {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bad_inputs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	var cases []badInput
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("testdata/bad_inputs.yaml: %v", err)
	}
	names := map[string]bool{}
	for _, c := range cases {
		if c.Name == "" || c.Class == "" || len(c.Want) == 0 || names[c.Name] {
			t.Fatalf("corpus case %q: needs a unique name, a class and at least one wanted substring", c.Name)
		}
		names[c.Name] = true
	}
	return cases
}

// Every case of the corpus of bad inputs gives its exit code and a message
// holding its substrings (what, where, what would be right) through every
// command it lists; validate and run agree on each scenario case; nothing
// is written; nothing panics. The log ends with the count per class.
func TestBadInputCorpus(t *testing.T) {
	cases := readCorpus(t)
	type tally struct{ located, other, crash int }
	counts := map[string]*tally{}
	for _, c := range cases {
		if counts[c.Class] == nil {
			counts[c.Class] = &tally{}
		}
		cmds := c.Commands
		if len(cmds) == 0 {
			cmds = []string{"validate", "run"}
		}
		for _, cmd := range cmds {
			t.Run(c.Name+"/"+cmd, func(t *testing.T) {
				dir := t.TempDir()
				subst := func(s string) string {
					if strings.Contains(s, "$OPENB") {
						s = strings.ReplaceAll(s, "$OPENB", sharedTraces(t))
					}
					s = strings.ReplaceAll(s, "$SCENARIO", filepath.Join(dir, "bad.yaml"))
					return strings.ReplaceAll(s, "$DIR", dir)
				}
				if c.Scenario != "" {
					writeFile(t, dir, "bad.yaml", c.Scenario)
				}
				for name, text := range c.Files {
					p := filepath.Join(dir, filepath.FromSlash(name))
					os.MkdirAll(filepath.Dir(p), 0o755)
					writeFile(t, filepath.Dir(p), filepath.Base(p), subst(text))
				}
				for _, name := range c.FIFOs {
					if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
						t.Skipf("mkfifo: %v", err)
					}
				}
				var args []string
				for _, a := range c.Args {
					args = append(args, subst(a))
				}
				out := filepath.Join(dir, "out")
				switch cmd {
				case "validate":
					args = append([]string{"validate"}, args...)
				case "run":
					args = append(append([]string{"run"}, args...), "--no-report", "--no-sensitivity", "-o", out)
				case "sweep":
					args = append(append([]string{"sweep"}, args...), "-o", out)
				case "raw":
				default:
					t.Fatalf("unknown command %q in the corpus", cmd)
				}
				var env []string
				for _, e := range c.Env {
					env = append(env, subst(e))
				}
				code, _, stderr := cli(t, env, args...)
				want := 2
				if c.Exit != nil {
					want = *c.Exit
				}
				ok := code == want
				if code != want {
					t.Errorf("conspirator %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, want, stderr)
				}
				for _, w := range c.Want {
					if w = subst(w); !strings.Contains(stderr, w) {
						ok = false
						t.Errorf("conspirator %s: stderr lacks %q:\n%s", strings.Join(args, " "), w, stderr)
					}
				}
				crashed := strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic")
				if crashed {
					t.Errorf("a crash, not a message:\n%s", stderr)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("%s was written", out)
				}
				switch {
				case crashed:
					counts[c.Class].crash++
				case ok:
					counts[c.Class].located++
				default:
					counts[c.Class].other++
				}
			})
		}
	}
	classes := make([]string, 0, len(counts))
	for k := range counts {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %8s %8s %6s\n", "class", "as asked", "other", "crash")
	for _, k := range classes {
		fmt.Fprintf(&b, "%-24s %8d %8d %6d\n", k, counts[k].located, counts[k].other, counts[k].crash)
	}
	t.Logf("bad inputs by class (exit code and located message as the corpus asks / anything else / crash):\n%s", b.String())
}

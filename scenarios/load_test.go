package scenarios

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/internal/golden"
)

// decodeString loads YAML text with the given layers into a tScenario.
func decodeString(t *testing.T, yaml string, env, sets []string) (*tScenario, *ConfigError) {
	t.Helper()
	var s tScenario
	err := Decode(Input{File: "s.yaml", Data: []byte(yaml), Env: env, Overrides: sets}, &s)
	if err == nil {
		return &s, nil
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error is %T, want *ConfigError: %v", err, err)
	}
	return &s, ce
}

// Each case is one kind of mistake; want lists the problems as
// "line|path|message fragment", in the order Error() prints them.
func TestProblems(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  []string
		sets []string
		want []string
	}{
		{
			name: "malformed YAML names the line",
			yaml: "name: a\ndatapath:\n  paths: [tcp\n  requests: 3\n",
			want: []string{"3||invalid YAML: did not find expected ',' or ']'"},
		},
		{
			name: "unknown key with suggestion and the valid keys",
			yaml: "name: a\nsede: 4\n",
			want: []string{`2|sede|did you mean "seed"?`},
		},
		{
			name: "misspelt nested key",
			yaml: "datapath:\n  host:\n    backgroud_load: 80%\n",
			want: []string{`3|datapath.host.backgroud_load|did you mean "background_load"?); valid keys here: background_load, cores`},
		},
		{
			name: "key at the wrong level points to where it belongs",
			yaml: "cores: 4\n",
			want: []string{`1|cores|exists at datapath.host.cores`},
		},
		{
			name: "wrong unit lists the accepted units",
			yaml: "datapath:\n  host:\n    background_load: 0.8\n",
			want: []string{`3|datapath.host.background_load|missing unit (a bare number is ambiguous); write e.g. "80%"; accepted units: %`},
		},
		{
			name: "out of range from Validate, at the key's line",
			yaml: "datapath:\n  paths: [tcp]\n  requests: 0\n  host:\n    cores: -2\n",
			want: []string{"3|datapath.requests|at least 1, got 0", "5|datapath.host.cores|at least 1, got -2"},
		},
		{
			name: "fraction above 100%",
			yaml: "datapath:\n  host:\n    background_load: 120%\n",
			want: []string{"3|datapath.host.background_load|above 100%"},
		},
		{
			name: "string where a list is expected",
			yaml: "datapath:\n  paths: tcp\n",
			want: []string{`2|datapath.paths|expected a list, got "tcp"`},
		},
		{
			name: "list where a section is expected",
			yaml: "datapath: [1, 2]\n",
			want: []string{"1|datapath|expected a mapping of keys, got a list"},
		},
		{
			name: "float where an integer is expected, negative seed",
			yaml: "seed: -1\ndatapath:\n  requests: 2.5\n",
			want: []string{"1|seed|expected a non-negative integer, got the number -1", "3|datapath.requests|expected an integer, got the number 2.5"},
		},
		{
			name: "duplicate key",
			yaml: "name: a\nname: b\n",
			want: []string{"2|name|duplicate key (first at line 1)"},
		},
		{
			name: "a second document",
			yaml: "name: a\n---\nname: b\n",
			want: []string{"2||one YAML document"}, // the line of the second ---
		},
		{
			name: "top level not a mapping",
			yaml: "- a\n- b\n",
			want: []string{"1||a scenario is a mapping"},
		},
		{
			name: "every problem at once, syntax and checks, sorted by line",
			yaml: "nmae: x\ndatapath:\n  requests: many\n  host:\n    background_load: 50\ncluster:\n  gpus:\n    - model: A100\n      count: 0\n",
			want: []string{
				`1|nmae|did you mean "name"?`,
				`3|datapath.requests|expected an integer, got "many"`,
				"5|datapath.host.background_load|missing unit",
				"9|cluster.gpus[0].count|at least 1",
			},
		},
		{
			name: "validation lists all items, at each item's line",
			yaml: "cluster:\n  gpus:\n    - model: A100\n      count: 0\n    - count: 2\n",
			want: []string{"4|cluster.gpus[0].count|at least 1", "5|cluster.gpus[1].model|name a GPU model"},
		},
		{
			name: "--set on an unknown key suggests the nearest",
			sets: []string{"datapath.host.cors=4"},
			want: []string{`0|datapath.host.cors|did you mean "cores"?`},
		},
		{
			name: "--set value parsed strictly, blamed on the --set",
			sets: []string{"datapath.host.background_load=80"},
			want: []string{"0|datapath.host.background_load|missing unit"},
		},
		{
			name: "--set without =",
			sets: []string{"seed"},
			want: []string{"0||expected key=value"},
		},
		{
			name: "--set below a quantity",
			sets: []string{"datapath.host.background_load.x=1"},
			want: []string{"0|datapath.host.background_load|is a fraction such as"},
		},
		{
			name: "--set list index out of range",
			yaml: "datapath:\n  paths: [tcp]\n",
			sets: []string{"datapath.paths[3]=smartnic"},
			want: []string{"0|datapath.paths[3]|index 3 out of range: the file gives datapath.paths 1 items"},
		},
		{
			name: "misspelt environment variable",
			env:  []string{"CONSPIRATOR_DATAPATH__HOST__COARS=4", "PATH=/bin", "CONSPIRATORX=1"},
			want: []string{`0|datapath.host.coars|did you mean "cores"?`},
		},
		{
			name: "environment value with a wrong type",
			env:  []string{"CONSPIRATOR_SEED=abc"},
			want: []string{`0|seed|expected a non-negative integer, got "abc"`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ce := decodeString(t, c.yaml, c.env, c.sets)
			if ce == nil {
				t.Fatalf("no error, want %v", c.want)
			}
			ps := ce.sorted()
			if len(ps) != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(c.want), ce)
			}
			for i, w := range c.want {
				parts := strings.SplitN(w, "|", 3)
				p := ps[i]
				if parts[0] != "" && parts[0] != strconv.Itoa(p.Line) {
					t.Errorf("problem %d line = %d, want %s (%s)", i, p.Line, parts[0], p)
				}
				if p.Path != parts[1] {
					t.Errorf("problem %d path = %q, want %q (%s)", i, p.Path, parts[1], p)
				}
				if !strings.Contains(p.Msg, parts[2]) {
					t.Errorf("problem %d message %q does not contain %q", i, p.Msg, parts[2])
				}
			}
			// Error() prints one line per problem, each naming the file or layer.
			lines := strings.Split(ce.Error(), "\n")
			if len(lines) != len(ps) {
				t.Errorf("Error() has %d lines for %d problems", len(lines), len(ps))
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "s.yaml") && !strings.HasPrefix(l, "--set ") && !strings.HasPrefix(l, "env ") {
					t.Errorf("line %q does not start with its origin", l)
				}
			}
		})
	}
}

// The layers, later wins: defaults < file < environment < --set.
func TestLayers(t *testing.T) {
	yaml := "name: layered\nseed: 5\ndatapath:\n  paths: [tcp, smartnic]\n  host:\n    cores: 16\n    background_load: 20%\n"
	s, ce := decodeString(t, yaml,
		[]string{"CONSPIRATOR_DATAPATH__HOST__BACKGROUND_LOAD=80%", "CONSPIRATOR_SEED=6", "conspirator_name=ignored-lowercase-prefix"},
		[]string{"seed=7", "datapath.paths=[gpudirect]", "datapath.paths[0]=host_rdma"})
	if ce != nil {
		t.Fatal(ce)
	}
	// seed: file 5, env 6, --set 7 -> 7.
	if s.Seed != 7 {
		t.Errorf("seed = %d, want 7 (--set beats env beats file)", s.Seed)
	}
	// background_load: file 20%, env 80% -> 0.8.
	if s.DataPath.Host.BackgroundLoad != 0.8 {
		t.Errorf("background_load = %v, want 80%% from the environment", s.DataPath.Host.BackgroundLoad)
	}
	// cores: file 16, nothing later.
	if s.DataPath.Host.Cores != 16 {
		t.Errorf("cores = %d, want 16 from the file", s.DataPath.Host.Cores)
	}
	// requests: only the default, 10000.
	if s.DataPath.Requests != 10000 {
		t.Errorf("requests = %d, want the default 10000", s.DataPath.Requests)
	}
	// paths: file [tcp, smartnic], --set replaces with [gpudirect], then item 0 -> host_rdma.
	if !reflect.DeepEqual(s.DataPath.Paths, []string{"host_rdma"}) {
		t.Errorf("paths = %v, want [host_rdma]", s.DataPath.Paths)
	}
	if s.Name != "layered" || s.Cluster != nil {
		t.Errorf("name = %q, cluster = %v; want layered and no cluster section", s.Name, s.Cluster)
	}
}

// Defaults alone: the top-level seed default applies, absent sections stay
// nil, and a section created only by --set gets its defaults.
func TestDefaultsAndSectionsFromOverrides(t *testing.T) {
	s, ce := decodeString(t, "", nil, nil)
	if ce != nil {
		t.Fatal(ce)
	}
	if s.Seed != 1 || s.DataPath != nil {
		t.Errorf("empty file: seed %d datapath %v, want 1 and nil", s.Seed, s.DataPath)
	}
	s, ce = decodeString(t, "", []string{"CONSPIRATOR_DATAPATH__HOST__CORES=4"}, []string{"cluster.gpus=[{model: A100-40GB}]"})
	if ce != nil {
		t.Fatal(ce)
	}
	if s.DataPath == nil || s.DataPath.Host.Cores != 4 || s.DataPath.Requests != 10000 || len(s.DataPath.Paths) != 4 {
		t.Errorf("datapath from env = %+v, want cores 4 with defaults (10000 requests, 4 paths)", s.DataPath)
	}
	if s.Cluster == nil || len(s.Cluster.GPUs) != 1 || s.Cluster.GPUs[0].Count != 1 || len(s.Cluster.Policies) != 3 {
		t.Errorf("cluster from --set = %+v, want one A100 group with count default 1", s.Cluster)
	}
	// "datapath: ~" switches a section off even if the default would be present.
	s, ce = decodeString(t, "datapath:\n  requests: 5\n", nil, []string{"datapath=~"})
	if ce != nil || s.DataPath != nil {
		t.Errorf("datapath=~ gave %v, %v; want no section", s.DataPath, ce)
	}
}

// An override through a YAML alias must not change the other users of the
// anchor, and merge keys are honoured with explicit keys winning.
func TestAliasesAndMerges(t *testing.T) {
	type node struct {
		Cores int            `yaml:"cores"`
		Load  units.Fraction `yaml:"load"`
	}
	type cfg struct {
		A node `yaml:"a"`
		B node `yaml:"b"`
		C node `yaml:"c"`
	}
	yaml := "a: &base\n  cores: 8\n  load: 10%\nb: *base\nc:\n  <<: *base\n  cores: 2\n"
	var c cfg
	if err := Decode(Input{File: "m.yaml", Data: []byte(yaml), Overrides: []string{"b.cores=99"}}, &c); err != nil {
		t.Fatal(err)
	}
	want := cfg{A: node{8, 0.1}, B: node{99, 0.1}, C: node{2, 0.1}}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
}

// Map keys keep their case and dots (MIG profiles), addressable by
// brackets in --set and case-insensitively from the environment.
func TestMapKeys(t *testing.T) {
	type profile struct {
		Count int `yaml:"count" default:"1"`
	}
	type cfg struct {
		MIG map[string]profile `yaml:"mig"`
	}
	var c cfg
	err := Decode(Input{
		File:      "mig.yaml",
		Data:      []byte("mig:\n  1g.10gb: {count: 3}\n  3g.40gb: {}\n"),
		Env:       []string{"CONSPIRATOR_MIG__3G.40GB__COUNT=2"},
		Overrides: []string{"mig[1g.10gb].count=4", "mig[7g.80gb].count=1"},
	}, &c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]profile{"1g.10gb": {4}, "3g.40gb": {2}, "7g.80gb": {1}}
	if !reflect.DeepEqual(c.MIG, want) {
		t.Errorf("got %v, want %v", c.MIG, want)
	}
	if got := EnvName("datapath.host.background_load"); got != "CONSPIRATOR_DATAPATH__HOST__BACKGROUND_LOAD" {
		t.Errorf("EnvName = %q", got)
	}
}

func TestDecodeRejectsNonPointer(t *testing.T) {
	var s tScenario
	if err := Decode(Input{}, s); err == nil {
		t.Error("Decode into a non-pointer succeeded")
	}
}

func TestBuiltins(t *testing.T) {
	names := List()
	want := []string{"paper/cost", "paper/e2e"}
	for _, w := range want {
		found := false
		for _, n := range names {
			found = found || n == w
		}
		if !found {
			t.Errorf("List() = %v, missing %s", names, w)
		}
	}
	// Every built-in loads cleanly into the real schema: they are the
	// examples users copy.
	for _, n := range names {
		var s Scenario
		if err := Load(n, nil, nil, &s); err != nil {
			t.Errorf("built-in %s: %v", n, err)
		}
	}
	var real Scenario
	if err := Load("paper/e2e", []string{"datapath.host.background_load=80%"}, nil, &real); err != nil {
		t.Fatal(err)
	}
	// Values from the file (80 cores, seed 1) and the --set (80%).
	if real.DataPath.Host.BackgroundLoad != 0.8 || real.DataPath.Host.Cores != 80 || real.Seed != 1 {
		t.Errorf("paper/e2e = %+v %+v", real, real.DataPath.Host)
	}
	var s tScenario
	_, err := Show("paper/e2")
	if err == nil || !strings.Contains(err.Error(), `did you mean "paper/e2e"?`) || !strings.Contains(err.Error(), "paper/cost") {
		t.Errorf("Show(unknown) error = %v, want the nearest name and the list", err)
	}
	err = Load("paper/e2", nil, nil, &s)
	if err == nil || !strings.Contains(err.Error(), `did you mean the built-in "paper/e2e"?`) {
		t.Errorf("Load(unknown) error = %v", err)
	}
	// A file path works and its name is used in problems.
	dir := t.TempDir()
	p := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(p, []byte("name: mine\nseeed: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Load(p, nil, nil, &s)
	if err == nil || !strings.HasPrefix(err.Error(), p+":2: seeed:") {
		t.Errorf("Load(file) error = %v, want it to start with %s:2: seeed:", err, p)
	}
}

// The generated key reference must match the config structs.
func TestSchemaDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSchemaMarkdown(&buf, &Scenario{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "docs", "scenario-keys.md")
	if *golden.Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; generate it with: go test ./scenarios -run TestSchemaDoc -update", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is out of date with the config structs; regenerate it with: go test ./scenarios -run TestSchemaDoc -update", path)
	}
}

func TestSchema(t *testing.T) {
	keys := Schema(&tScenario{})
	byPath := map[string]KeyDoc{}
	for _, k := range keys {
		byPath[k.Path] = k
	}
	bl := byPath["datapath.host.background_load"]
	if bl.Type != "fraction" || bl.Default != "0%" || bl.Doc == "" {
		t.Errorf("background_load doc = %+v", bl)
	}
	if g := byPath["cluster.gpus[].count"]; g.Type != "integer" || g.Default != "1" {
		t.Errorf("gpus[].count doc = %+v", g)
	}
	if d := byPath["datapath"]; d.Type != "section (optional)" {
		t.Errorf("datapath doc = %+v", d)
	}
	// Every default in the schema parses: a broken default tag would
	// otherwise only show up when a user omits that key.
	var s tScenario
	err := Decode(Input{Data: []byte("datapath: {}\ncluster: {gpus: [{model: x}]}\n")}, &s)
	if err != nil {
		t.Errorf("defaults do not decode: %v", err)
	}
}

// go-yaml's syntax errors carry lines that this package corrects for
// parser errors. Each expected line is counted by hand in the text: where
// the mistake is, or where go-yaml notices it (the start of the enclosing
// list, the end of input), never a line outside the file.
func TestYAMLErrorLines(t *testing.T) {
	cases := []struct {
		yaml string
		line int
	}{
		{"name: a\n  b: c\n", 2},          // scanner: mapping value in a plain scalar
		{"a: 1\nb: [1, 2\nc: 3\n", 2},     // parser: unclosed flow list starts at line 2
		{"a: 1\nb: {x: 1\n", 2},           // parser: unclosed flow map at line 2
		{"a:\n  - 1\n  x: 2\n", 2},        // parser: key after a list item; go-yaml names the list's start
		{"a: 1\n\tb: 2\n", 2},             // scanner: tab indentation
		{"x: [1\n", 2},                    // parser: noticed at the end of input (line 2)
		{"a: 'unterminated\n\nb: 2\n", 4}, // scanner: noticed at the end of input (line 4)
	}
	for _, c := range cases {
		_, ce := decodeString(t, c.yaml, nil, nil)
		if ce == nil || len(ce.Problems) != 1 {
			t.Errorf("%q: got %v, want one syntax problem", c.yaml, ce)
			continue
		}
		if p := ce.Problems[0]; p.Line != c.line || !strings.HasPrefix(p.Msg, "invalid YAML") {
			t.Errorf("%q: got %s, want line %d", c.yaml, p, c.line)
		}
	}
}

func TestParsePath(t *testing.T) {
	segs, err := parsePath("cluster.gpus[0].mig[1g.10gb].count")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range segs {
		got = append(got, s.name)
	}
	if strings.Join(got, "|") != "cluster|gpus|0|mig|1g.10gb|count" || !segs[2].isIndex || segs[4].isIndex {
		t.Errorf("segments %+v", segs)
	}
	for _, bad := range []string{"", "a..b", "a.", "a[1", ".a"} {
		if _, err := parsePath(bad); err == nil {
			t.Errorf("parsePath(%q) succeeded", bad)
		}
	}
}

// `--set key=` (and "key:" with no value in a file) clears a text value;
// a number or a duration given nothing is still an error.
func TestEmptyValueClearsText(t *testing.T) {
	var sc Scenario
	if err := Load("paper/gpu-hours", []string{"cluster.nodes=", "cluster.gpus=[{model: a100-40gb, count: 8}]"}, nil, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Cluster == nil || sc.Cluster.Nodes != "" {
		t.Fatalf("cluster.nodes = %+v, want cleared", sc.Cluster)
	}
	var bad Scenario
	if err := Load("paper/e2e", []string{"datapath.host.cores="}, nil, &bad); err == nil || !strings.Contains(err.Error(), "datapath.host.cores") {
		t.Errorf("empty integer: %v, want an error naming the key", err)
	}
}

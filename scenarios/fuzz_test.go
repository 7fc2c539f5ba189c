package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// fuzzConfig exercises every kind of field the loader supports.
type fuzzConfig struct {
	tScenario `yaml:"scenario"`
	D         units.Duration             `yaml:"d" default:"1us"`
	B         units.Bandwidth            `yaml:"b"`
	Size      units.Bytes                `yaml:"size"`
	Money     units.Money                `yaml:"money"`
	Rate      *units.Rate                `yaml:"rate"`
	F         float64                    `yaml:"f"`
	On        bool                       `yaml:"on"`
	Small     int8                       `yaml:"small"`
	MIG       map[string]tGPUGroup       `yaml:"mig"`
	Loads     []units.Fraction           `yaml:"loads"`
	Nested    map[string][]units.Power   `yaml:"nested"`
	Deep      *fuzzConfig                `yaml:"deep"`
	Bands     map[string]units.Bandwidth `yaml:"bands"`
}

// FuzzLoad feeds arbitrary YAML, one --set and one environment entry to
// the loader: it must never panic, every failure must be a *ConfigError
// whose problems each name a file or layer, and a success must satisfy
// the sections' own validation.
func FuzzLoad(f *testing.F) {
	for _, n := range List() {
		data, _ := Show(n)
		f.Add(string(data), "datapath.requests=5", "CONSPIRATOR_SEED=3")
	}
	f.Add("a: &a [*a]\n", "x=1", "")
	f.Add("a: &a {b: 1}\nc: *a\nd: {<<: *a}\n", "c.b=2", "CONSPIRATOR_A__B=1")
	f.Add("scenario: {name: x}\nmig: {1g.10gb: {model: A100, count: 2}}\n", "mig[1g.10gb].count=3", "CONSPIRATOR_MIG__1G.10GB__COUNT=4")
	f.Add("d: 1.3us\nb: 200Gbps\nsize: 2MiB\nmoney: $4.10\nrate: 1.5k/s\nloads: [80%, 1%]\nnested: {x: [150W]}\n", "loads[1]=2%", "CONSPIRATOR_F=.inf")
	f.Add("deep: {deep: {deep: {small: 300}}}\n", "deep.deep.on=yes", "CONSPIRATOR_DEEP__DEEP__SMALL=-129")
	f.Fuzz(func(t *testing.T, data, set, env string) {
		if len(data) > 4096 {
			return
		}
		var c fuzzConfig
		err := Decode(Input{File: "f.yaml", Data: []byte(data), Overrides: []string{set}, Env: []string{env}}, &c)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error is not a non-empty *ConfigError: %#v", err)
			}
			for _, p := range ce.Problems {
				if p.File == "" || p.Msg == "" {
					t.Fatalf("problem without origin or message: %+v", p)
				}
			}
			return
		}
		if c.DataPath != nil {
			if err := c.DataPath.Validate(); err != nil {
				t.Fatalf("loaded a data-path section that fails validation: %v", err)
			}
		}
	})
}

// A "billion laughs" document expands to 10^9 nodes through aliases; the
// node budget stops it with a problem instead of exhausting memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	var d struct {
		L0 []string `yaml:"l0"`
		L1 deepT1   `yaml:"l1"`
		L2 deepT2   `yaml:"l2"`
		L3 deepT3   `yaml:"l3"`
		L4 deepT4   `yaml:"l4"`
		L5 deepT5   `yaml:"l5"`
		L6 deepT6   `yaml:"l6"`
		L7 deepT7   `yaml:"l7"`
		L8 deepT8   `yaml:"l8"`
		L9 deepT9   `yaml:"l9"`
	}
	err := Decode(Input{File: "bomb.yaml", Data: []byte(b.String())}, &d)
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("alias bomb: err = %v, want the node budget problem", err)
	}
}

type (
	deepT1 [][]string
	deepT2 [][][]string
	deepT3 [][][][]string
	deepT4 [][][][][]string
	deepT5 [][][][][][]string
	deepT6 [][][][][][][]string
	deepT7 [][][][][][][][]string
	deepT8 [][][][][][][][][]string
	deepT9 [][][][][][][][][][]string
)

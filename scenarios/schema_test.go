package scenarios

import (
	"bytes"
	"strings"
	"testing"
)

// Schema copies the source tag verbatim; the real datapath section names
// catalog keys (sim/datapath/config.go) and leaves switches unsourced.
func TestSchemaSource(t *testing.T) {
	byPath := map[string]KeyDoc{}
	for _, k := range Schema(&Scenario{}) {
		byPath[k.Path] = k
	}
	cases := []struct{ path, want string }{
		{"datapath.host.memcpy_issue", "hw:host.memcpy_issue"},
		{"datapath.network.latency", "hw:nic.connectx6.one_way_latency"},
		{"datapath.record_requests", ""},
		{"seed", ""},
	}
	for _, c := range cases {
		k, ok := byPath[c.path]
		if !ok {
			t.Errorf("no key %s in the schema", c.path)
			continue
		}
		if k.Source != c.want {
			t.Errorf("%s: Source = %q, want %q", c.path, k.Source, c.want)
		}
	}
}

type sourced struct {
	Launch  float64 `yaml:"launch" doc:"kernel launch" source:"hw:host.kernel_launch"`
	Clients int     `yaml:"clients" doc:"clients" source:"choice: four | more"`
	Plain   bool    `yaml:"plain" doc:"a switch"`
}

type badSource struct {
	Section struct {
		X float64 `yaml:"x" doc:"x" source:"hw:host.no_such_key"`
	} `yaml:"section" doc:"a section"`
}

// The markdown table resolves a catalog key to its grade and citation, as
// hw.Provenance records host.kernel_launch (hw/catalog.go), escapes a
// literal citation and leaves an unsourced key's cell empty; a tag naming
// no catalog key is an error that names the scenario key.
func TestSchemaMarkdownSource(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSchemaMarkdown(&buf, &sourced{}); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| `launch` | number |  |  | kernel launch | measured: reframe kernel_latency.py, A100 async launch (hw host.kernel_launch) |\n",
		"| `clients` | integer |  |  | clients | choice: four \\| more |\n",
		"| `plain` | boolean |  |  | a switch |  |\n",
	} {
		if !strings.Contains(buf.String(), row) {
			t.Errorf("markdown lacks row %q:\n%s", row, buf.String())
		}
	}
	err := WriteSchemaMarkdown(&bytes.Buffer{}, &badSource{})
	if err == nil || !strings.Contains(err.Error(), "section.x") || !strings.Contains(err.Error(), "host.no_such_key") {
		t.Errorf("bad source tag: error = %v, want one naming section.x and host.no_such_key", err)
	}
}

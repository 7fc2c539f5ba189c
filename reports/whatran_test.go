package reports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// A report opens with what was run: the headline beside the paper's
// figure, and exactly the inputs that differ from the built-in scenario
// (here one --set), or that there are none.
func TestWriteWhatRan(t *testing.T) {
	load := func(sets ...string) map[string]any {
		var sc scenarios.Scenario
		if err := scenarios.Load("paper/e2e", sets, nil, &sc); err != nil {
			t.Fatal(err)
		}
		m, err := sim.InputsMap(&sc)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	gap := Num(15.6)
	seed := int64(1)
	r := Result{Scenario: "paper/e2e", Seed: &seed, Version: "v", Gap: &gap, Inputs: load("datapath.host.background_load=80%")}
	var md strings.Builder
	writeWhatRan(&md, r)
	got := md.String()
	for _, want := range []string{"**The conspirator path's mean end-to-end time is 15.6% below host-rdma's (the paper: 15%).**",
		"seed 1", "- `datapath.host.background_load` = \"80%\" (built-in: \"0%\")"} {
		if !strings.Contains(got, want) {
			t.Errorf("opening lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n- "); n != 1 {
		t.Errorf("%d inputs listed, want exactly the one set:\n%s", n, got)
	}
	md.Reset()
	r.Inputs = load()
	writeWhatRan(&md, r)
	if !strings.Contains(md.String(), "the built-in scenario `paper/e2e` as it is") {
		t.Errorf("an unchanged run:\n%s", md.String())
	}
}

package builtin

import (
	"testing"

	_ "github.com/conspirator-sim/conspirator/internal/golden" // registers -update
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Every built-in policy is registered, builds from its defaults, and
// declares the capabilities its package documents: naive-share, exclusive
// and fgd run GPUs whole or shared by fractions (no MIG), fgd alone needs
// the target workload, first-fit and best-fit partition MIG unless told
// mig=false.
func TestBuiltinPolicies(t *testing.T) {
	want := map[string]snapshot.Capabilities{
		"exclusive": {UsesMIG: false}, "naive-share": {UsesMIG: false}, "fgd": {UsesMIG: false},
		"first-fit": {UsesMIG: true}, "best-fit": {UsesMIG: true}, "conspirator": {UsesMIG: true}, "optimal": {UsesMIG: true},
	}
	names := snapshot.Names()
	if len(names) != len(want) {
		t.Errorf("registered %v, want the %d built-ins", names, len(want))
	}
	for name, w := range want {
		p, err := snapshot.New(name, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c := snapshot.CapabilitiesOf(p)
		if c.UsesMIG != w.UsesMIG || (c.Workload != nil) != (name == "fgd") {
			t.Errorf("%s: capabilities %+v, want UsesMIG %v and a workload only for fgd", name, c, w.UsesMIG)
		}
	}
	p, err := snapshot.New("best-fit", map[string]string{"mig": "false"})
	if err != nil || snapshot.CapabilitiesOf(p).UsesMIG {
		t.Errorf("best-fit mig=false: %v, %+v", err, p)
	}
}

package datapath

import (
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// A client's expected issue window (requests x think time, or requests /
// rate) must end within a tenth of the horizon, 315,576,000 s: with 1,000
// requests the largest think time is 315,576 s and the smallest rate
// 1000/315576000 = 3.169e-06/s.
func TestClientsWithinTheHorizon(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*ClientsConfig)
		want string // "": accepted
	}{
		{"think time at the bound", func(c *ClientsConfig) { c.ThinkTime = units.Duration(315576 * engine.Second) }, ""},
		{"think time past it", func(c *ClientsConfig) { c.ThinkTime = units.Duration(315577 * engine.Second) }, "clients.think_time"},
		{"think time of the issue", func(c *ClientsConfig) { c.ThinkTime = units.Duration(9223372036 * engine.Second) }, "use at most 3.156e+05 s"},
		{"rate at the bound", func(c *ClientsConfig) { c.Mode, c.Rate = ModeOpen, units.Rate(1000.0/315576000) }, ""},
		{"rate of the issue", func(c *ClientsConfig) { c.Mode, c.Rate = ModeOpen, 1e-9 }, "use at least 3.169e-06/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults().Clients
			c.Requests = 1000
			tc.set(&c)
			var p problems
			c.checkHorizon(&p)
			got := ""
			if len(p) > 0 {
				got = p[0].Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
		})
	}
}

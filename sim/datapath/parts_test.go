package datapath

import (
	"math"
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// A config whose part-set keys are all unset resolves to Defaults(): the
// default tags of the other keys and the default parts give one config,
// and each part key's default is its part's catalog value.
func TestResolvePartsGivesDefaults(t *testing.T) {
	c := Defaults()
	c.Host.Cores, c.Host.Clock, c.Host.PinnedH2D, c.Host.Price, c.Host.Power = 0, 0, 0, 0, 0
	c.Network.LineRate, c.Network.Efficiency, c.Network.Latency, c.Network.PerMessage = 0, 0, 0, 0
	c.SmartNIC.ArmCores, c.SmartNIC.ArmSpeed, c.SmartNIC.LineRate, c.SmartNIC.DMABandwidth = 0, 0, 0, 0
	c.SmartNIC.DMAPerOp, c.SmartNIC.Price, c.SmartNIC.Power = 0, 0, 0
	c.Host.PageableD2HFactor = 0
	if err := c.ResolveParts(func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Defaults()) {
		t.Errorf("resolved %+v\nwant     %+v", c, Defaults())
	}
	// A key that defaults to another takes that key's value when unset
	// (the scenario's, not the catalog's), and keeps its own when set.
	c.Host.PageableFactor, c.Host.PageableD2HFactor = 0.25, 0
	if err := c.ResolveParts(func(string) bool { return false }); err != nil || c.Host.PageableD2HFactor != 0.25 {
		t.Errorf("unset pageable_d2h_factor resolved to %v (%v), want pageable_factor's 25%%", c.Host.PageableD2HFactor, err)
	}
	c.Host.PageableD2HFactor = 0.2
	if err := c.ResolveParts(func(k string) bool { return k == "host.pageable_d2h_factor" }); err != nil || c.Host.PageableD2HFactor != 0.2 || len(c.Overrides) != 0 {
		t.Errorf("set pageable_d2h_factor resolved to %v, overrides %v (%v), want its own 20%% and no override", c.Host.PageableD2HFactor, c.Overrides, err)
	}
	if from, ok := DefaultFrom("host.pageable_d2h_factor"); !ok || from != "host.pageable_factor" {
		t.Errorf("DefaultFrom(host.pageable_d2h_factor) = %q %v", from, ok)
	}
	// Every part key names a key of the section and a part key that
	// exists; PartDefault gives the catalog's printed value.
	for _, p := range partParams {
		if _, _, ok := PartDefault(p.key); !ok {
			t.Errorf("%s: no default part value", p.key)
		}
	}
	if part, v, ok := PartDefault("host.cores"); !ok || part != "xeon-8380-2s" || v != "80" {
		t.Errorf("PartDefault(host.cores) = %s %s %v", part, v, ok)
	}
}

// The result's copy back is priced at the D2H factor, and only it: with
// pageable_d2h_factor 10% instead of 40%, host-rdma's sync+d2h stage grows
// by 16,000 B / (25 GB/s x 10%) - 16,000 B / (25 GB/s x 40%) = 6.4 - 1.6
// = 4.8 us (one request, unloaded host: no queueing, no stretch), and its
// copy-h2d stage (pageable_factor) does not move.
func TestResultCopyUsesD2HFactor(t *testing.T) {
	cfg := Defaults()
	cfg.Paths = []string{PathHostRDMA}
	cfg.Clients.Count, cfg.Clients.Requests, cfg.WarmupRequests = 1, 20, 0
	run := func(f float64) PathResult {
		c := cfg
		c.Host.PageableD2HFactor = units.Ratio(f)
		res, err := Run(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		return *res.Path(PathHostRDMA)
	}
	same, slow := run(0.4), run(0.1)
	if same.Stages["sync+d2h"] == 0 {
		t.Fatal("no sync+d2h stage")
	}
	if d := slow.Stages["sync+d2h"] - same.Stages["sync+d2h"]; math.Abs(d-4.8) > 1e-6 {
		t.Errorf("sync+d2h grew by %.6f us, want 4.8", d)
	}
	if same.Stages["copy-h2d"] != slow.Stages["copy-h2d"] {
		t.Errorf("copy-h2d moved with the D2H factor: %v -> %v us", same.Stages["copy-h2d"], slow.Stages["copy-h2d"])
	}
}

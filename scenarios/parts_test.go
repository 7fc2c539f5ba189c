package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Choosing a part sets its parameters, through the real loader on the
// built-in paper/e2e: expectations from hw's catalog (xeon-8380: 1 socket,
// 40 cores; connectx7: 400 Gb/s; bluefield2: 8 Arm cores, 15.1 GB/s DMA,
// 75 W). A key set beside its part is an override listed in Overrides; one
// that exceeds the part is an error naming both keys.
func TestPartsSetTheirParameters(t *testing.T) {
	load := func(t *testing.T, sets ...string) (*Scenario, error) {
		t.Helper()
		var sc Scenario
		err := Load("paper/e2e", sets, nil, &sc)
		return &sc, err
	}
	sc, err := load(t)
	if err != nil {
		t.Fatal(err)
	}
	def := datapath.Defaults()
	def.Overrides = nil
	got := *sc.DataPath
	if !reflect.DeepEqual(got.Host, def.Host) || got.Network != def.Network || got.SmartNIC != def.SmartNIC || len(got.Overrides) != 0 {
		t.Errorf("paper/e2e does not resolve to the defaults:\n host %+v\n want %+v\n overrides %v", got.Host, def.Host, got.Overrides)
	}

	sc, err = load(t, "datapath.host.cpu=xeon-8380", "datapath.network.nic=connectx7", "datapath.smartnic.model=bluefield2")
	if err != nil {
		t.Fatal(err)
	}
	dp := sc.DataPath
	if dp.Host.Cores != 40 || dp.Network.LineRate != units.Bandwidth(400e9/8) || dp.SmartNIC.ArmCores != 8 ||
		dp.SmartNIC.DMABandwidth != units.Bandwidth(15.1e9) || dp.SmartNIC.Power != 75 || len(dp.Overrides) != 0 {
		t.Errorf("parts did not set their parameters: cores %d, line rate %v, arm cores %d, dma %v, power %v, overrides %v",
			dp.Host.Cores, dp.Network.LineRate, dp.SmartNIC.ArmCores, dp.SmartNIC.DMABandwidth, dp.SmartNIC.Power, dp.Overrides)
	}

	sc, err = load(t, "datapath.host.cores=64")
	if err != nil {
		t.Fatal(err)
	}
	want := datapath.PartOverride{Key: "datapath.host.cores", Part: "xeon-8380-2s", PartValue: "80", Value: "64"}
	if sc.DataPath.Host.Cores != 64 || len(sc.DataPath.Overrides) != 1 || sc.DataPath.Overrides[0] != want {
		t.Errorf("override: cores %d, overrides %+v; want 64 and %+v", sc.DataPath.Host.Cores, sc.DataPath.Overrides, want)
	}

	for _, c := range []struct {
		sets []string
		want []string
	}{
		{[]string{"datapath.host.cpu=xeon-8380", "datapath.host.cores=64"},
			[]string{"datapath.host.cores", "64 is more than xeon-8380 (datapath.host.cpu) has: 40"}},
		{[]string{"datapath.smartnic.model=bluefield2", "datapath.smartnic.line_rate=200Gbps"},
			[]string{"datapath.smartnic.line_rate", "bluefield2 (datapath.smartnic.model) has: 12.5GB/s"}},
		{[]string{"datapath.host.cpu=xeon-8389"},
			[]string{"datapath.host.cpu", `unknown host CPU "xeon-8389"`, `did you mean "xeon-8380"`, "known: xeon-8380, xeon-8380-2s"}},
		{[]string{"datapath.network.nic=cx7"},
			[]string{"datapath.network.nic", `unknown RDMA NIC "cx7"`, "known: connectx6, connectx7"}},
	} {
		_, err := load(t, c.sets...)
		if err == nil {
			t.Errorf("%v: accepted", c.sets)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error lacks %q:\n%v", c.sets, w, err)
			}
		}
		// Only the bad key is reported, not its consequences.
		if n := strings.Count(strings.TrimSpace(err.Error()), "\n") + 1; n != 1 {
			t.Errorf("%v: %d problems reported, want 1:\n%v", c.sets, n, err)
		}
	}
}

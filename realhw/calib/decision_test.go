package calib

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/scenarios"
)

func parseSec(t *testing.T, s string) float64 {
	t.Helper()
	d, err := units.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d.Time().Seconds()
}

// The measurement runs and gives sane numbers: every mean positive and
// below 10 ms (the heuristic is a greedy pass over tens of jobs: tens of
// microseconds on a current core), p99 >= mean (with 6 samples the
// nearest-rank p99 is the maximum, never below the mean), the sample count
// is snapshots x rounds. The proposal comes from the smallest size with at
// least 2 GPUs (5 on 2), equal to its mean on a host and to mean x
// arm_speed when measured on the SoC.
func TestMeasureDecision(t *testing.T) {
	for _, on := range []string{OnHost, OnSoC} {
		f, err := MeasureDecision(DecisionOptions{Sizes: [][2]int{{10, 4}, {5, 2}, {3, 1}}, Snapshots: 2, Rounds: 3, MeasuredOn: on, ArmSpeed: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Sizes) != 3 || f.Policy != "conspirator" || f.MeasuredOn != on || f.Machine.GOARCH == "" {
			t.Fatalf("%s: %+v", on, f)
		}
		for _, s := range f.Sizes {
			mean, p99 := parseSec(t, s.Mean), parseSec(t, s.P99)
			if !(mean > 0 && mean < 10e-3) || p99 < mean || s.Samples != 6 {
				t.Errorf("%s: size %d/%d: mean %s p99 %s samples %d", on, s.Jobs, s.GPUs, s.Mean, s.P99, s.Samples)
			}
		}
		want := parseSec(t, f.Sizes[1].Mean)
		if on == OnSoC {
			want *= 0.5
		}
		got := parseSec(t, f.HostDecisionTime)
		if f.ProposedFrom != "jobs=5 gpus=2" || !f.Applied || math.Abs(got-want) > 1e-3*want+1e-9 {
			t.Errorf("%s: proposed %s from %q (applied %v), want %v from jobs=5 gpus=2", on, f.HostDecisionTime, f.ProposedFrom, f.Applied, want)
		}
	}
	// Only a 1-GPU size: nothing to propose, said why.
	f, err := MeasureDecision(DecisionOptions{Sizes: [][2]int{{3, 1}}, Snapshots: 1, Rounds: 1})
	if err != nil || f.Applied || f.Reason == "" {
		t.Errorf("1-GPU only: applied %v reason %q err %v; want not applied with a reason", f.Applied, f.Reason, err)
	}
	for _, bad := range []DecisionOptions{{Rounds: -1}, {MeasuredOn: "gpu"}, {ArmSpeed: -1}, {Sizes: [][2]int{{5, 0}}}} {
		if _, err := MeasureDecision(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// A profile with a decision block round-trips through YAML, and its
// override is proposed under the scenario key the data-path model reads.
func TestDecisionProfileRoundTrip(t *testing.T) {
	f, err := MeasureDecision(DecisionOptions{Snapshots: 2, Rounds: 2, MeasuredOn: OnHost})
	if err != nil {
		t.Fatal(err)
	}
	p := &Profile{Version: ProfileVersion, Provenance: Provenance{Tool: "test", Samples: map[string]int{}}, Decision: f}
	p.fillScenario()
	if p.Scenario["datapath.host.decision_time"] != f.HostDecisionTime {
		t.Fatalf("scenario overrides %v; want datapath.host.decision_time = %s", p.Scenario, f.HostDecisionTime)
	}
	var b bytes.Buffer
	if err := p.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	q, err := ReadProfile(&b, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Decision, p.Decision) || !reflect.DeepEqual(q.Scenario, p.Scenario) {
		t.Errorf("round trip:\n got %+v\nwant %+v", q.Decision, p.Decision)
	}
	bad := bytes.Replace(b.Bytes(), []byte("mean: "), []byte("mean: x"), 1)
	if _, err := ReadProfile(bytes.NewReader(bad), "bad.yaml"); err == nil {
		t.Error("an unparsable decision mean was accepted")
	}
}

// The proposed key is a key of the scenario schema: paper/e2e loads with
// it set, and the value arrives in the data-path config.
func TestDecisionOverrideKeyExists(t *testing.T) {
	var sc scenarios.Scenario
	if err := scenarios.Load("paper/e2e", []string{"datapath.host.decision_time=5us"}, nil, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.DataPath == nil || sc.DataPath.Host.DecisionTime.String() != "5us" {
		t.Errorf("decision_time after --set: %+v", sc.DataPath)
	}
}

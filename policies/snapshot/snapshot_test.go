package snapshot

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/hw/mig"
)

// a100 is the A100-40GB MIG geometry from the NVIDIA MIG user guide (design.md
// "MIG facts"): 7 compute, 8 memory slices.
func a100() GPUModel {
	return GPUModel{Name: "A100-40GB", MIG: &mig.Geometry{Model: "A100-40GB", ComputeSlices: 7, MemorySlices: 8, Profiles: []MIGProfile{
		{Name: "1g.5gb", Compute: 1, MemSlices: 1, Starts: []int{0, 1, 2, 3, 4, 5, 6}},
		{Name: "1g.10gb", Compute: 1, MemSlices: 2, Starts: []int{0, 2, 4, 6}},
		{Name: "2g.10gb", Compute: 2, MemSlices: 2, Starts: []int{0, 2, 4}},
		{Name: "3g.20gb", Compute: 3, MemSlices: 4, Starts: []int{0, 4}},
		{Name: "4g.20gb", Compute: 4, MemSlices: 4, Starts: []int{0}},
		{Name: "7g.40gb", Compute: 7, MemSlices: 8, Starts: []int{0}},
	}}}
}

func v100() GPUModel { return GPUModel{Name: "V100"} }

func TestCheckLayout(t *testing.T) {
	m := a100()
	cases := []struct {
		name string
		in   []Instance
		want string // substring of the error; "" = legal
	}{
		{"empty", nil, ""},
		// 4g uses slices 0-3, 3g 4-7: 7 compute, all 8 memory slices.
		{"4g+3g", []Instance{{Profile: "4g.20gb", Start: 0}, {Profile: "3g.20gb", Start: 4}}, ""},
		// seven 1g.5gb at 0..6: 7 compute slices, slice 7 unused.
		{"7x1g", []Instance{{Profile: "1g.5gb", Start: 0}, {Profile: "1g.5gb", Start: 1}, {Profile: "1g.5gb", Start: 2}, {Profile: "1g.5gb", Start: 3}, {Profile: "1g.5gb", Start: 4}, {Profile: "1g.5gb", Start: 5}, {Profile: "1g.5gb", Start: 6}}, ""},
		// 3x2g (slices 0-5) + 1g.10gb at 6 (6-7): 7 compute.
		{"3x2g+1g10", []Instance{{Profile: "2g.10gb", Start: 0}, {Profile: "2g.10gb", Start: 2}, {Profile: "2g.10gb", Start: 4}, {Profile: "1g.10gb", Start: 6}}, ""},
		{"overlap", []Instance{{Profile: "4g.20gb", Start: 0}, {Profile: "2g.10gb", Start: 2}}, "overlaps instance 1 (4g.20gb@0) in memory slice 2"},
		{"bad start", []Instance{{Profile: "3g.20gb", Start: 2}}, "start 2 is not a legal start for 3g.20gb"},
		{"unknown profile", []Instance{{Profile: "5g.25gb", Start: 0}}, `no MIG profile "5g.25gb"`},
		// 2g@0,2g@2 and 3g@4 use 8 memory slices but 2+2+3 = 7 compute: legal;
		// adding nothing else. A compute overflow needs a model with fewer
		// compute slices: see "compute" below.
		{"2g+2g+3g", []Instance{{Profile: "2g.10gb", Start: 0}, {Profile: "2g.10gb", Start: 2}, {Profile: "3g.20gb", Start: 4}}, ""},
	}
	for _, c := range cases {
		err := CheckLayout(&m, c.in)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	small := a100()
	small.MIG.ComputeSlices = 6 // 4g + 3g = 7 > 6
	if err := CheckLayout(&small, []Instance{{Profile: "4g.20gb", Start: 0}, {Profile: "3g.20gb", Start: 4}}); err == nil || !strings.Contains(err.Error(), "compute slices in use to 7, more than the 6") {
		t.Errorf("compute overflow: err = %v", err)
	}
}

func testSnapshot() *Snapshot {
	return &Snapshot{
		GPUs: []GPU{
			{ID: 10, Model: a100(), Instances: []Instance{{Profile: "3g.20gb", Start: 0}}},
			{ID: 20, Model: v100()},
		},
		Jobs: []Job{
			{ID: 1, Tenant: "a", Options: []Option{{Profile: "3g.20gb"}, {Profile: "2g.10gb"}}, MigrationCost: 5,
				Current: &Placement{JobID: 1, GPU: 10, Option: 0, Profile: "3g.20gb", Start: 0}},
			{ID: 2, Tenant: "b", Options: []Option{{Profile: "4g.20gb"}, {Fraction: 0.5}}},
			{ID: 3, Tenant: "b", Options: []Option{{Fraction: 0.5, GPUType: "V100"}, {Profile: "1g.5gb", GPUType: "A100-40GB"}}},
			{ID: 4, Tenant: "c", Options: []Option{{Fraction: 0.25}}},
		},
	}
}

func TestCheckDecision(t *testing.T) {
	s := testSnapshot()
	if err := CheckSnapshot(s); err != nil {
		t.Fatalf("test snapshot invalid: %v", err)
	}
	cases := []struct {
		name string
		d    Decision
		want string
	}{
		{"all pending", Decision{Unscheduled: []int{1, 2, 3, 4}}, ""},
		// job 1 keeps 3g@0; job 2 takes 4g... no: 4g needs slices 0-3, taken.
		// So job 2 shares the V100 with job 3 (same tenant b, 0.5+0.5 = 1).
		{"valid", Decision{Placements: []Placement{
			{JobID: 1, GPU: 10, Option: 0, Profile: "3g.20gb", Start: 0},
			{JobID: 2, GPU: 20, Option: 1, Fraction: 0.5},
			{JobID: 3, GPU: 20, Option: 0, Fraction: 0.5},
		}, Unscheduled: []int{4}}, ""},
		{"missing job", Decision{Unscheduled: []int{1, 2, 3}}, "job 4 is neither placed"},
		{"twice", Decision{Unscheduled: []int{1, 2, 3, 4, 4}}, "already appears"},
		{"unknown job", Decision{Unscheduled: []int{1, 2, 3, 4, 9}}, "job 9 is not in the snapshot"},
		{"unknown GPU", Decision{Placements: []Placement{{JobID: 4, GPU: 99, Fraction: 0.25}}, Unscheduled: []int{1, 2, 3}}, "GPU 99 is not"},
		{"bad option index", Decision{Placements: []Placement{{JobID: 4, GPU: 20, Option: 3}}, Unscheduled: []int{1, 2, 3}}, "option 3"},
		{"fraction on MIG", Decision{Placements: []Placement{{JobID: 4, GPU: 10, Fraction: 0.25}}, Unscheduled: []int{1, 2, 3}}, "does not fit GPU 10"},
		{"type constraint", Decision{Placements: []Placement{{JobID: 3, GPU: 10, Option: 0, Fraction: 0.5}}, Unscheduled: []int{1, 2, 4}}, "does not fit"},
		{"profile mismatch", Decision{Placements: []Placement{{JobID: 1, GPU: 10, Option: 0, Profile: "2g.10gb"}}, Unscheduled: []int{2, 3, 4}}, "differs from option"},
		// 3g@0 (0-3) and 4g@0 (0-3) overlap.
		{"MIG overlap", Decision{Placements: []Placement{
			{JobID: 1, GPU: 10, Option: 0, Profile: "3g.20gb", Start: 0},
			{JobID: 2, GPU: 10, Option: 0, Profile: "4g.20gb", Start: 0},
		}, Unscheduled: []int{3, 4}}, "overlaps instance 1"},
		// two jobs in one MIG instance are two instances at the same place.
		{"shared instance", Decision{Placements: []Placement{
			{JobID: 1, GPU: 10, Option: 1, Profile: "2g.10gb", Start: 0},
			{JobID: 3, GPU: 10, Option: 1, Profile: "1g.5gb", Start: 0},
		}, Unscheduled: []int{2, 4}}, "overlaps instance 1"},
		// tenants b and c on one V100.
		{"co-tenancy", Decision{Placements: []Placement{
			{JobID: 3, GPU: 20, Option: 0, Fraction: 0.5},
			{JobID: 4, GPU: 20, Option: 0, Fraction: 0.25},
		}, Unscheduled: []int{1, 2}}, "tenants \"b\" and \"c\""},
		{"wrong fraction", Decision{Placements: []Placement{{JobID: 4, GPU: 20, Option: 0, Fraction: 0.5}}, Unscheduled: []int{1, 2, 3}}, "want profile"},
		{"bound above cost", Decision{Unscheduled: []int{1, 2, 3, 4}, Cost: 1, Bound: 2}, "lower bound"},
	}
	for _, c := range cases {
		err := CheckDecision(s, c.d)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestSharedInstances: where the snapshot shares instances
// (ShareInstances), jobs of one tenant may share a MIG instance while
// their options' instance shares sum to at most 1 (0 = the whole
// instance); without it the same decision is an overlap.
func TestSharedInstances(t *testing.T) {
	s := &Snapshot{GPUs: []GPU{{ID: 10, Model: a100()}}, Jobs: []Job{
		{ID: 1, Tenant: "a", Options: []Option{{Profile: "3g.20gb", Fraction: 0.5}}},
		{ID: 2, Tenant: "a", Options: []Option{{Profile: "3g.20gb", Fraction: 0.5}}},
		{ID: 3, Tenant: "a", Options: []Option{{Profile: "3g.20gb", Fraction: 0.25}}},
		{ID: 4, Tenant: "b", Options: []Option{{Profile: "3g.20gb", Fraction: 0.25}}},
		{ID: 5, Tenant: "a", Options: []Option{{Profile: "3g.20gb"}}},
	}}
	at := func(ids ...int) Decision {
		var d Decision
		for _, id := range []int{1, 2, 3, 4, 5} {
			if slices.Contains(ids, id) {
				d.Placements = append(d.Placements, Placement{JobID: id, GPU: 10, Profile: "3g.20gb", Start: 0})
			} else {
				d.Unscheduled = append(d.Unscheduled, id)
			}
		}
		return d
	}
	for _, c := range []struct {
		name  string
		share bool
		d     Decision
		want  string
	}{
		{"two halves", true, at(1, 2), ""},
		{"two halves, not shared", false, at(1, 2), "overlaps instance 1"},
		{"over full", true, at(1, 2, 3), "shares summing to 1.25 > 1"},
		{"two tenants", true, at(3, 4), `tenants "a" and "b"`},
		{"whole instance and a half", true, at(1, 5), "shares summing to 1.5 > 1"},
		{"one whole", true, at(5), ""},
		// two shared instances in one layout: 3g@0 and 3g@4.
		{"two instances", true, Decision{Placements: []Placement{
			{JobID: 1, GPU: 10, Profile: "3g.20gb", Start: 0}, {JobID: 2, GPU: 10, Profile: "3g.20gb", Start: 0},
			{JobID: 4, GPU: 10, Profile: "3g.20gb", Start: 4}}, Unscheduled: []int{3, 5}}, ""},
	} {
		s.ShareInstances = c.share
		err := CheckDecision(s, c.d)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	s.Jobs[0].Options[0].Fraction = 1.5
	if err := CheckSnapshot(s); err == nil || !strings.Contains(err.Error(), "instance share 1.5") {
		t.Errorf("MIG option share 1.5: %v", err)
	}
}

func TestOverfullFraction(t *testing.T) {
	s := &Snapshot{GPUs: []GPU{{ID: 1, Model: v100()}}, Jobs: []Job{
		{ID: 1, Tenant: "a", Options: []Option{{Fraction: 0.6}}},
		{ID: 2, Tenant: "a", Options: []Option{{Fraction: 0.5}}},
		{ID: 3, Tenant: "a", Options: []Option{{Fraction: 1.0 / 3}}},
	}}
	// 0.6 + 0.5 = 1.1 > 1.
	d := Decision{Placements: []Placement{{JobID: 1, GPU: 1, Fraction: 0.6}, {JobID: 2, GPU: 1, Fraction: 0.5}}, Unscheduled: []int{3}}
	if err := CheckDecision(s, d); err == nil || !strings.Contains(err.Error(), "summing to 1.1") {
		t.Errorf("0.6+0.5: err = %v", err)
	}
	// 1/3 three times sums to 1 up to rounding: must fit.
	s.Jobs[0].Options[0].Fraction, s.Jobs[1].Options[0].Fraction = 1.0/3, 1.0/3
	d = Decision{Placements: []Placement{{JobID: 1, GPU: 1, Fraction: 1.0 / 3}, {JobID: 2, GPU: 1, Fraction: 1.0 / 3}, {JobID: 3, GPU: 1, Fraction: 1.0 / 3}}}
	if err := CheckDecision(s, d); err != nil {
		t.Errorf("3 x 1/3: %v", err)
	}
}

func TestCheckSnapshot(t *testing.T) {
	bad := testSnapshot()
	bad.GPUs[0].Instances = nil // job 1 runs on an instance that is not listed
	if err := CheckSnapshot(bad); err == nil || !strings.Contains(err.Error(), "not in that GPU's Instances") {
		t.Errorf("missing instance: %v", err)
	}
	bad = testSnapshot()
	bad.Jobs[3].ID = 1
	if err := CheckSnapshot(bad); err == nil || !strings.Contains(err.Error(), "duplicate job ID 1") {
		t.Errorf("duplicate job: %v", err)
	}
	bad = testSnapshot()
	bad.Jobs[3].Options = nil
	if err := CheckSnapshot(bad); err == nil || !strings.Contains(err.Error(), "no resource options") {
		t.Errorf("no options: %v", err)
	}
}

func TestMigrationsAndUsage(t *testing.T) {
	s := testSnapshot()
	s.Jobs[3].Current = &Placement{JobID: 4, GPU: 20, Fraction: 0.25}
	s.Jobs[3].MigrationCost = 2
	// job 1 moves 3g@0 -> 3g@4 (cost 5), job 4 stays on GPU 20: 1 migration, cost 5.
	d := Decision{Placements: []Placement{
		{JobID: 1, GPU: 10, Option: 0, Profile: "3g.20gb", Start: 4},
		{JobID: 4, GPU: 20, Option: 0, Fraction: 0.25},
	}, Unscheduled: []int{2, 3}}
	if n, c := Migrations(s, &d); n != 1 || c != 5 {
		t.Errorf("Migrations = %d, %v; want 1, 5", n, c)
	}
	if got := d.GPUsUsed(); got != 2 {
		t.Errorf("GPUsUsed = %d, want 2", got)
	}
	// preempting job 4 too: 2 migrations, cost 7.
	d.Placements = d.Placements[:1]
	d.Unscheduled = append(d.Unscheduled, 4)
	if n, c := Migrations(s, &d); n != 2 || c != 7 {
		t.Errorf("Migrations after preemption = %d, %v; want 2, 7", n, c)
	}
	if got := d.Layout(10); len(got) != 1 || got[0] != (Instance{Profile: "3g.20gb", Start: 4}) {
		t.Errorf("Layout(10) = %v", got)
	}
}

type fixed struct{ name string }

func (f fixed) Name() string                           { return f.name }
func (f fixed) Schedule(s *Snapshot) (Decision, error) { return Decision{}, nil }

// registerForTest registers a test policy and removes it when the test
// ends, so that the test can run again in the same process (-count=N).
func registerForTest(t *testing.T, name string, f Factory) error {
	t.Helper()
	err := Register(name, f)
	t.Cleanup(func() {
		regMu.Lock()
		delete(registry, name)
		regMu.Unlock()
	})
	return err
}

func TestRegistryAndArgs(t *testing.T) {
	err := registerForTest(t, "test-fixed", func(raw map[string]string) (Policy, error) {
		a := NewArgs(raw)
		_ = a.Float("weight", 1, 0, 10)
		_ = a.Duration("limit", time.Second, 0, time.Minute)
		_ = a.Choice("mode", "x", "x", "y")
		_ = a.Bool("flag", false)
		_ = a.Int("n", 1, 1, 5)
		if err := a.Err(); err != nil {
			return nil, err
		}
		return fixed{"test-fixed"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New("test-fixed", map[string]string{"weight": "2.5", "limit": "3s", "mode": "y", "flag": "true", "n": "5"}); err != nil {
		t.Errorf("good args: %v", err)
	}
	for args, want := range map[string]map[string]string{
		"want a number in [0, 10]":   {"weight": "11"},
		"want a duration":            {"limit": "2h"},
		"want one of x, y":           {"mode": "z"},
		"want true or false":         {"flag": "maybe"},
		"want an integer in [1, 5]":  {"n": "0"},
		"unknown argument(s) wieght": {"wieght": "1"},
	} {
		if _, err := New("test-fixed", want); err == nil || !strings.Contains(err.Error(), args) {
			t.Errorf("%v: err = %v, want %q", want, err, args)
		}
	}
	if _, err := New("no-such", nil); err == nil || !strings.Contains(err.Error(), "test-fixed") {
		t.Errorf("unknown policy: %v", err)
	}
	// A variant builds its base policy with its own arguments.
	if p, err := New("test-fixed/heavy", map[string]string{"weight": "2"}); err != nil || p.Name() != "test-fixed" {
		t.Errorf("variant: %v, %v", p, err)
	}
	if _, err := New("test-fixed/heavy", map[string]string{"weight": "11"}); err == nil || !strings.Contains(err.Error(), `"test-fixed/heavy"`) {
		t.Errorf("variant with a bad argument: %v, want the entry named", err)
	}
	for _, bad := range []string{"test-fixed/", "test-fixed/a/b", "no-such/x"} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

type migFixed struct {
	fixed
	mig bool
}

func (m migFixed) UsesMIG() bool { return m.mig }

type workloadFixed struct {
	fixed
	got []WorkloadClass
}

func (w *workloadFixed) SetWorkload(c []WorkloadClass) { w.got = c }

// Registration checks a policy once and returns what is wrong; the
// optional capabilities are read by CapabilitiesOf, with the documented
// default (a policy that does not say partitions MIG GPUs).
func TestRegisterChecksAndCapabilities(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Factory
		want string
	}{
		{"", func(map[string]string) (Policy, error) { return fixed{""}, nil }, "needs a name"},
		{"needs-args", func(raw map[string]string) (Policy, error) {
			if raw["k"] == "" {
				return nil, errors.New("k missing")
			}
			return fixed{"needs-args"}, nil
		}, "fails without arguments"},
		{"misnamed", func(map[string]string) (Policy, error) { return fixed{"other"}, nil }, `calls itself "other"`},
	} {
		if err := Register(c.name, c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q): %v, want %q", c.name, err, c.want)
		}
	}
	ok := func(map[string]string) (Policy, error) { return fixed{"twice"}, nil }
	if err := registerForTest(t, "twice", ok); err != nil {
		t.Fatal(err)
	}
	if err := Register("twice", ok); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("second registration: %v", err)
	}
	if c := CapabilitiesOf(fixed{"x"}); !c.UsesMIG || c.Workload != nil {
		t.Errorf("plain policy: %+v, want UsesMIG true and no workload", c)
	}
	if c := CapabilitiesOf(sharerFixed{fixed{"x"}}); !c.SharesInstances || CapabilitiesOf(fixed{"x"}).SharesInstances {
		t.Errorf("InstanceSharer not read: %+v", c)
	}
	if c := CapabilitiesOf(migFixed{fixed{"x"}, false}); c.UsesMIG {
		t.Errorf("MIGUser false: %+v", c)
	}
	w := &workloadFixed{fixed: fixed{"x"}}
	c := CapabilitiesOf(w)
	if c.Workload == nil {
		t.Fatal("WorkloadAware not seen")
	}
	c.Workload.SetWorkload([]WorkloadClass{{Demand: 0.5, Weight: 1}})
	if len(w.got) != 1 {
		t.Errorf("SetWorkload not reached through the capability: %+v", w.got)
	}
}

// TestServerRules: the jobs on a server fit its CPU and memory (0 = not
// modelled), the tasks of a gang share one server unless GangSpan, and a
// GPU names a listed server.
func TestServerRules(t *testing.T) {
	whole := []Option{{Fraction: 1}}
	base := func() *Snapshot {
		return &Snapshot{
			Servers: []Server{{ID: 1, CPUMilli: 2000, MemoryMiB: 4096}, {ID: 2}},
			GPUs:    []GPU{{ID: 10, Model: v100(), Server: 1}, {ID: 11, Model: v100(), Server: 1}, {ID: 20, Model: v100(), Server: 2}},
			Jobs: []Job{
				{ID: 1, Tenant: "a", Options: whole, Gang: 1, CPUMilli: 1000, MemoryMiB: 2048},
				{ID: 2, Tenant: "a", Options: whole, Gang: 1, CPUMilli: 1000, MemoryMiB: 2048},
				{ID: 3, Tenant: "a", Options: whole, CPUMilli: 1},
			},
		}
	}
	at := func(gpus ...int) Decision {
		var d Decision
		for k, g := range gpus {
			if g < 0 {
				d.Unscheduled = append(d.Unscheduled, k+1)
				continue
			}
			d.Placements = append(d.Placements, Placement{JobID: k + 1, GPU: g, Fraction: 1})
		}
		return d
	}
	cases := []struct {
		name string
		edit func(*Snapshot)
		d    Decision
		want string // substring of the error; "" = valid
	}{
		{"gang on server 1, job 3 on server 2 (not modelled)", nil, at(10, 11, 20), ""},
		{"job 2 pending (a gang in part), job 3 on server 1: 1001 milli-CPU", nil, at(10, -1, 11), ""},
		{"all three on server 1", func(s *Snapshot) { s.GPUs[2].Server = 1 }, at(10, 11, 20), "2001 milli-CPU of its 2000"},
		{"memory", func(s *Snapshot) { s.Servers[0].MemoryMiB = 4095 }, at(10, 11, 20), "4096 MiB of its 4095 MiB"},
		{"1 milli-CPU held by a pod", func(s *Snapshot) { s.Servers[0].HeldCPUMilli = 1 }, at(10, 11, 20), "2000 milli-CPU of its 2000 (1 held)"},
		{"gang across servers", nil, at(10, 20, 11), "a gang's tasks share one server"},
		{"gang across servers, GangSpan", func(s *Snapshot) { s.GangSpan = true }, at(10, 20, 11), ""},
		{"part of a gang placed", nil, at(10, -1, 20), ""},
	}
	for _, c := range cases {
		s := base()
		if c.edit != nil {
			c.edit(s)
		}
		err := CheckDecision(s, c.d)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err = %v; want %q", c.name, err, c.want)
		}
	}
	s := base()
	s.GPUs[0].Server = 7
	if err := CheckSnapshot(s); err == nil || !strings.Contains(err.Error(), "server 7 is not in Servers") {
		t.Errorf("GPU on an unknown server: %v", err)
	}
	s = base()
	s.Jobs[2].CPUMilli = -1
	if err := CheckSnapshot(s); err == nil || !strings.Contains(err.Error(), "want >= 0") {
		t.Errorf("negative CPU: %v", err)
	}
}

type sharerFixed struct{ fixed }

func (sharerFixed) SharesInstances() bool { return true }

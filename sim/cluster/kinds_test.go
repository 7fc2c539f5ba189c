package cluster

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/workloads"
)

func service(id string, arrivalS, durS float64, milli int) workloads.Job {
	j := job(id, arrivalS, durS, milli)
	j.QoS = "LS"
	return j
}

func rel(t *testing.T, name string) float64 {
	t.Helper()
	s, err := gpu.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s.RelSpeed["resnet50"]
}

// A service's options, derived by hand with reference a100-40gb (relative
// speed 0.941, 40 GiB): a 40% share needs the capacity 0.4 x 0.941 and
// 16 GiB. On an a100-80gb (1.0, 80 GiB) whole: max(0.3764/1, 16/80) =
// 0.3764; on a t4 (0.1515, 16 GiB): 0.3764/0.1515 = 2.48 of it: no option.
// A 10% share on the t4: max(0.0941/0.1515, 4/16) = 0.621. Every option
// runs at speed 1. In MIG mode on the a100-80gb: the smallest profile
// whose slices give 0.3764 and hold 16 GiB.
func TestServiceOptionsByHand(t *testing.T) {
	c := small(nil, "a100-80gb", 1, "conspirator")
	c.GPUs = append(c.GPUs, GPUGroup{Model: "t4", Count: 1})
	c.ReferenceGPU = "a100-40gb"
	types, _, _, _, err := buildCluster(c, nil, nil, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := newPlanner(c, types, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := service("big", 0, 100, 400)
	p, err := pl.plan(0, &big)
	if err != nil {
		t.Fatal(err)
	}
	if !p.service || len(p.optsWhole) != 1 || p.optsWhole[0].GPUType != "a100-80gb" {
		t.Fatalf("40%% service: whole options %+v, want one, on the a100-80gb", p.optsWhole)
	}
	want := 0.4 * rel(t, "a100-40gb") / rel(t, "a100-80gb")
	if o := p.optsWhole[0]; math.Abs(o.Fraction-want) > 1e-12 || o.Speed != 1 {
		t.Errorf("40%% service on the a100-80gb: fraction %v speed %v, want %v and 1", o.Fraction, o.Speed, want)
	}
	spec, _ := gpu.Lookup("a100-80gb")
	var wantProfile string
	for _, pr := range spec.MIG.Profiles {
		if gpu.SpeedFraction(spec, pr.Compute, "resnet50")*rel(t, "a100-80gb") >= 0.4*rel(t, "a100-40gb") && float64(pr.MemoryBytes) >= 0.4*40*float64(gpu.GiB) {
			wantProfile = pr.Name
			break
		}
	}
	if len(p.optsMIG) == 0 || p.optsMIG[0].Profile != wantProfile || p.optsMIG[0].Speed != 1 {
		t.Errorf("40%% service in MIG mode: options %+v, want the smallest %s first, at speed 1", p.optsMIG, wantProfile)
	}
	small10 := service("small", 0, 100, 100)
	p, _ = pl.plan(1, &small10)
	var onT4 float64
	for _, o := range p.optsWhole {
		if o.GPUType == "t4" {
			onT4 = o.Fraction
		}
	}
	if want := max(0.1*rel(t, "a100-40gb")/rel(t, "t4"), 4.0/16); math.Abs(onT4-want) > 1e-12 {
		t.Errorf("10%% service on the t4: fraction %v, want %v", onT4, want)
	}
	// Memory binds on a faster GPU with the same memory: half of an
	// a100-80gb (40 GiB) on an h100-80gb (2.09x as fast) needs the
	// capacity 0.5/2.09 = 0.24 of it but 40 of its 80 GiB: 0.5.
	h := small(nil, "h100-80gb", 1, "naive-share")
	h.ReferenceGPU = "a100-80gb"
	htypes, _, _, _, _ := buildCluster(h, nil, nil, 1, nil)
	hpl, _ := newPlanner(h, htypes, nil)
	half := service("half", 0, 100, 500)
	if p, _ := hpl.plan(0, &half); len(p.optsWhole) != 1 || p.optsWhole[0].Fraction != 0.5 {
		t.Errorf("50%% of an a100-80gb on an h100-80gb: %+v, want the fraction 0.5 (memory)", p.optsWhole)
	}
	// The same job as a batch job keeps the trace's share on every type,
	// at the type's speed.
	c.JobKind = JobKindAllBatch
	pl, _ = newPlanner(c, types, nil)
	p, _ = pl.plan(0, &big)
	if p.service || len(p.optsWhole) != 2 || p.optsWhole[1].Fraction != 0.4 || math.Abs(p.optsWhole[1].Speed-rel(t, "t4")/rel(t, "a100-40gb")) > 1e-12 {
		t.Errorf("batch: options %+v, want 0.4 of either type at its speed", p.optsWhole)
	}
}

// A service holds its placement for its duration whatever GPU it gets and
// whoever shares it; a batch job's work runs at its GPU's speed and slows
// under time-sharing. On one t4 (reference a100-40gb, first-fit): the
// batch job (the trace's 10% of whichever GPU, at speed 0.1515/0.941) and
// the service (10% of an A100: 0.621 of the t4) share the GPU; the
// service ends at exactly 1000 s, the batch job at
// 100 / 0.161 / (1 - 0.343 x 0.621), slowed by the service's share.
func TestServiceHoldsItsTime(t *testing.T) {
	b := job("b", 0, 100, 100)
	b.QoS = "BE"
	c := small([]workloads.Job{service("s", 0, 1000, 100), b}, "t4", 1, "first-fit")
	c.ReferenceGPU = "a100-40gb"
	r := mustRun(t, c)
	p := r.Policies[0]
	byID := map[string]JobRecord{}
	for _, j := range p.Jobs {
		byID[j.ID] = j
	}
	if s := byID["s"]; s.JCTS != 1000 || s.Kind != KindService {
		t.Errorf("service: JCT %v kind %q, want 1000 and service", s.JCTS, s.Kind)
	}
	speed := rel(t, "t4") / rel(t, "a100-40gb")
	fS := max(0.1*rel(t, "a100-40gb")/rel(t, "t4"), 4.0/16)
	want := 100 / speed / (1 - c.TimeshareSlowdown*fS)
	if bj := byID["b"]; math.Abs(bj.JCTS-want) > 1e-6 || bj.Kind != KindBatch {
		t.Errorf("batch: JCT %v kind %q, want %v and batch", bj.JCTS, bj.Kind, want)
	}
	if len(p.ByKind) != 2 || p.ByKind[0].Kind != KindBatch || p.ByKind[1].Kind != KindService || p.ByKind[1].JCT.Mean != 1000 {
		t.Errorf("by kind: %+v", p.ByKind)
	}
	// all-service: b is a service too, needing 0.621 of the t4 as s
	// does; the two do not fit together, so b waits for s's 1000 s and
	// then holds its 100 s.
	c.JobKind = JobKindAllService
	for _, j := range mustRun(t, c).Policies[0].Jobs {
		if j.Kind != KindService || (j.ID == "b" && j.JCTS != 1100) {
			t.Errorf("all-service: %s kind %q JCT %v; want services, b at 1100 s", j.ID, j.Kind, j.JCTS)
		}
	}
}

// A service that needs more than a whole GPU of every type it may use
// never runs, is counted unscheduled under its kind and named with its
// row, and is not dropped.
func TestOversizeServiceReported(t *testing.T) {
	s := service("huge", 0, 100, 1000)
	s.Row = 7
	c := small([]workloads.Job{s, service("fits", 0, 100, 100)}, "t4", 2, "naive-share")
	c.ReferenceGPU = "a100-40gb"
	p := mustRun(t, c).Policies[0]
	if p.Unscheduled != 1 || len(p.ByKind) != 1 || p.ByKind[0].Unscheduled != 1 || !strings.Contains(p.ByKind[0].FirstUnscheduled, "huge (row 7)") {
		t.Errorf("unscheduled %v, by kind %+v; want the 100%% service named with its row", p.Unscheduled, p.ByKind)
	}
}

// A censored job (still running when the trace ended) holds its place for
// the time the trace recorded, wherever and whenever it runs: a batch one
// on a GPU three times as fast as its reference would have run a third as
// long, but holds 1000 s; one that waits for the GPU holds its 500 s
// after. Neither has a JCT; both count as censored; their GPU time counts.
func TestCensoredHoldTheirRecordedTime(t *testing.T) {
	a := job("a", 0, 1000, 1000)
	a.Censored, a.QoS = true, "BE"
	w := job("waits", 10, 500, 1000)
	w.Censored, w.QoS = true, "BE"
	c := small([]workloads.Job{a, w}, "a100-80gb", 1, "exclusive")
	c.ReferenceGPU = "v100"
	p := mustRun(t, c).Policies[0]
	if p.Censored != 2 || p.JCT.Mean != 0 || math.Abs(p.GPUHours-1500.0/3600) > 1e-12 {
		t.Errorf("censored %v, JCT %v, GPU-hours %v s; want 2, none, 1500 s", p.Censored, p.JCT.Mean, p.GPUHours*3600)
	}
	for _, j := range p.Jobs {
		if !j.Censored || j.JCTS != -1 {
			t.Errorf("%s: censored %v JCT %v; want censored without JCT", j.ID, j.Censored, j.JCTS)
		}
	}
	if len(p.ByKind) != 1 || p.ByKind[0].Censored != 2 || p.ByKind[0].Completed != 0 || p.Unscheduled != 0 {
		t.Errorf("by kind %+v, unscheduled %v", p.ByKind, p.Unscheduled)
	}
}

// The top-10 share and the replays without the longest jobs, by hand: 12
// exclusive jobs of 1..12 hours on many GPUs hold 78 GPU-hours; the ten
// longest (3..12 h) hold 75 of them. Without the longest 2, naive-share
// and exclusive hold the same (no sharing: every job wants a whole GPU).
func TestTailByHand(t *testing.T) {
	var jobs []workloads.Job
	for k := 1; k <= 12; k++ {
		jobs = append(jobs, job(string(rune('a'+k)), 0, float64(k)*3600, 1000))
	}
	c := small(jobs, "v100", 20, "naive-share", "exclusive")
	c.Baseline = "naive-share"
	c.LeaveOutLongest = []string{"2", "50%"}
	r := mustRun(t, c)
	for _, p := range r.Policies {
		if math.Abs(p.Top10Share-75.0/78) > 1e-12 {
			t.Errorf("%s: top-10 share %v, want 75/78", p.Name, p.Top10Share)
		}
		if len(p.LeftOut) != 2 || p.LeftOut[0].Jobs != 2 || math.Abs(p.LeftOut[0].GPUHours-55) > 1e-9 ||
			p.LeftOut[1].Jobs != 6 || math.Abs(p.LeftOut[1].GPUHours-21) > 1e-9 {
			t.Errorf("%s: left out %+v; want 2 jobs (55 GPU-h left) and 6 (21)", p.Name, p.LeftOut)
		}
	}
	if ex, _ := r.Policy("exclusive"); ex.LeftOut[0].VsBaseline == nil || ex.LeftOut[0].VsBaseline.Pct != 0 {
		t.Errorf("exclusive vs naive-share without the longest: %+v, want 0%%", ex.LeftOut[0].VsBaseline)
	}
}

// by-qos reads LS, Guaranteed and Burstable as services, BE and a job
// without a QoS as batch.
func TestByQoS(t *testing.T) {
	c := Defaults()
	for qos, want := range map[string]bool{"LS": true, "Guaranteed": true, "Burstable": true, "BE": false, "": false} {
		if got := c.isService(&workloads.Job{QoS: qos}); got != want {
			t.Errorf("qos %q: service %v, want %v", qos, got, want)
		}
	}
}

package cluster

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/workloads"
)

// Twelve one-GPU jobs arrive at t = 0, 1, ..., 11 s and each runs 1000 s
// on its own V100 (12 GPUs, exclusive), so nothing finishes before the last
// arrival. The 12 GPUs form two servers (8 and 4 GPUs, DefaultGPUsPerServer),
// of two classes. Hand-derived calls: arrival k sees k+1 jobs; the snapshot
// shows the busy servers plus one empty server of each class while a task
// is pending, so always both: 12 GPUs. Jobs 0-7 fill server 0, jobs 8-11
// server 1. The completion of job k (in order) leaves 11-k jobs and no
// pending task, and is a call while jobs remain: 11 calls with 11, 10, ...,
// 1 jobs, on both servers (12 GPUs) until job 7 leaves server 0 empty,
// then on server 1 alone (4 GPUs: 4, 3, 2, 1 jobs). The last completion
// calls nobody. 23 calls; 5 of them with >= 10 jobs (arrivals 10, 11, 12;
// completions 11, 10). A policy's session counts the GPUs in use instead
// (it holds them all): k at arrival k+1, as many as the jobs after a
// completion; the 10-19 bucket's mean is (9+10+11+11+10)/5 = 10.2.
func TestTimingRecordsEveryCall(t *testing.T) {
	var jobs []workloads.Job
	for k := range 12 {
		jobs = append(jobs, job(fmt.Sprint("j", k), float64(k), 1000, 1000))
	}
	for _, snap := range []bool{true, false} {
		c := small(jobs, "v100", 12, "exclusive", "first-fit")
		c.snapshotCalls = snap
		r := mustRun(t, c)
		var want []Call
		for k := range 12 {
			want = append(want, Call{Jobs: k + 1, GPUs: 12})
			if !snap {
				want[k].GPUs = k
			}
		}
		for k := 11; k >= 1; k-- {
			g := 12
			if !snap {
				g = k
			} else if k <= 4 {
				g = 4
			}
			want = append(want, Call{Jobs: k, GPUs: g})
		}
		wantMean := 12.0
		if !snap {
			wantMean = 10.2
		}
		for _, tm := range r.Timing {
			var got []Call
			for _, call := range tm.Calls {
				if !(call.US >= 0) { // 0 where the clock is coarser than a call
					t.Errorf("%s: call %+v has a negative or NaN time", tm.Name, call)
				}
				got = append(got, Call{Jobs: call.Jobs, GPUs: call.GPUs})
			}
			if !slices.Equal(got, want) {
				t.Errorf("snapshot calls %v, %s: calls %v, want %v", snap, tm.Name, got, want)
			}
			if tm.Decisions != 23 || tm.LargeCalls != 5 || tm.CallsDropped != 0 {
				t.Errorf("%s: %d decisions, %d large, %d dropped; want 23, 5, 0", tm.Name, tm.Decisions, tm.LargeCalls, tm.CallsDropped)
			}
			// Buckets: 1 job: 2 calls; 2-4: 6; 5-9: 10; 10-19: 5.
			var buckets []string
			for _, b := range tm.BySize {
				buckets = append(buckets, fmt.Sprintf("%d-%d:%d", b.MinJobs, b.MaxJobs, b.Calls))
			}
			if w := "1-1:2 2-4:6 5-9:10 10-19:5"; strings.Join(buckets, " ") != w {
				t.Errorf("%s: buckets %v, want %s", tm.Name, buckets, w)
			}
			// The 10-19 bucket holds exactly the large calls.
			if b := tm.BySize[3]; b.DecisionUS != tm.LargeUS || math.Abs(b.MeanGPUs-wantMean) > 1e-9 {
				t.Errorf("%s: 10-19 bucket %+v, large %+v; want mean GPUs %v", tm.Name, b, tm.LargeUS, wantMean)
			}
		}
		if !snap {
			continue
		}
		csv := DecisionsCSV(r)
		lines := strings.Split(strings.TrimSuffix(string(csv), "\n"), "\n")
		if lines[0] != "policy,jobs,gpus,decision_us" || len(lines) != 1+2*23 {
			t.Fatalf("decisions.csv: header %q, %d lines; want 47", lines[0], len(lines))
		}
		if !strings.HasPrefix(lines[1], "exclusive,1,12,") || !strings.HasPrefix(lines[24], "first-fit,1,12,") || !strings.HasPrefix(lines[12], "exclusive,12,12,") {
			t.Errorf("decisions.csv rows 1, 12, 24: %q %q %q", lines[1], lines[12], lines[24])
		}
		// The deterministic summary does not carry any of it.
		js, _ := r.JSON()
		if bytes.Contains(js, []byte("by_size")) || bytes.Contains(js, []byte("large")) {
			t.Error("timing leaked into the deterministic JSON")
		}
	}
}

// sizeBucket maps snapshot sizes to SizeBuckets: 0 -> 0, 1 -> 1, 4 -> 2
// (2-4), 5 -> 3, 19 -> 4 (10-19), 20 -> 5, 1000 -> 7 (100+).
func TestSizeBucket(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 4: 2, 5: 3, 19: 4, 20: 5, 99: 6, 1000: 7} {
		if got := sizeBucket(n); got != want {
			t.Errorf("sizeBucket(%d) = %d, want %d", n, got, want)
		}
	}
}

package reports

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// occupancyBins by hand: over [0, 10] in 5 bins of 2 s, job 7 holds 4
// slots from 1 to 5 s, job 9 holds 2 from 3 s to the end: the bins' time
// averages are job 7: 2, 4, 2, 0, 0 (half of bin 0, all of 1, half of 2),
// job 9: 0, 1, 2, 2, 2.
func TestOccupancyBinsByHand(t *testing.T) {
	o := Occupancy{Policy: "p", T: []float64{1, 3, 5}, Job: []int{7, 9, 7}, Slots: []float64{4, 2, 0}}
	jobs, avg := occupancyBins(o, 10, 5)
	want := map[int][]float64{7: {2, 4, 2, 0, 0}, 9: {0, 1, 2, 2, 2}}
	if len(jobs) != 2 || jobs[0] != 7 || jobs[1] != 9 {
		t.Fatalf("jobs %v, want [7 9]", jobs)
	}
	for k, j := range jobs {
		for b, v := range want[j] {
			if math.Abs(avg[k][b]-v) > 1e-12 {
				t.Errorf("job %d bin %d: %v, want %v", j, b, avg[k][b], v)
			}
		}
	}
}

// A bad occupancy file names its line.
func TestReadOccupancyErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"policy,time_s,job\n", `no "slots" column`},
		{"policy,time_s,job,slots\natp,1,2,x\n", "occ.csv:2: column slots"},
		{"policy,time_s,job,slots\natp,1,2.5,3\n", "occ.csv:2: column job: 2.5 is not a job index"},
		{"policy,time_s,job,slots\natp,5,1,3\natp,4,1,0\n", "occ.csv:3: time_s 4 is before"},
	} {
		p := filepath.Join(t.TempDir(), "occ.csv")
		if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadOccupancy(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.want)
		}
	}
}

// A pool policy that aggregated no job (no slot held: every spanning job
// on its host ring by ina.use, or static without a partition for any) is
// said to be the host ring's row; one that held slots, or none, is not.
func TestTrainingTableSaysWhenNoJobAggregated(t *testing.T) {
	tr := &TrainingResult{Device: "tofino-atp", Slots: 20000, Policies: []TrainingPolicy{
		{Name: "none"},
		{Name: "atp", HostRingJobs: 48},
		{Name: "static"},
		{Name: "esa", HostRingJobs: 40, MeanSlots: 12},
	}}
	var md strings.Builder
	writeTrainingTable(&md, tr)
	out := md.String()
	for _, p := range []string{"atp", "static"} {
		if !strings.Contains(out, "**"+p+" aggregated no job in the network**") {
			t.Errorf("%s, no slot held, not said:\n%s", p, out)
		}
	}
	for _, p := range []string{"none", "esa"} {
		if strings.Contains(out, "**"+p+" aggregated no job") {
			t.Errorf("%s said to aggregate no job:\n%s", p, out)
		}
	}
}

package cluster

import (
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// A job is refused when its arrival plus its duration stretched by the
// largest time-share slowdown, 1/(1-s), passes the horizon (3,155,760,000
// s): with s = 0.5 the stretch is 2, so 1.5e9 s from 0 ends at 3e9 (kept)
// and 1.6e9 s at 3.2e9 (refused, naming file:row).
func TestCheckHorizonStretchesBySlowdown(t *testing.T) {
	for _, c := range []struct {
		name     string
		slowdown float64
		arrival  float64
		duration float64
		want     string // "": kept
	}{
		{"kept at stretch 2", 0.5, 0, 1.5e9, ""},
		{"refused at stretch 2", 0.5, 0, 1.6e9, "t.csv:7: job \"j\" arriving at 0 s runs 1600000000 s, 3200000000 s when time-sharing slows it by up to 2x"},
		{"kept without interference", 0, 0, 3.1e9, ""},
		{"arrival counts", 0, 1e9, 2.2e9, "past the simulator's horizon of 100 years"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Trace: "t.csv", TimeshareSlowdown: c.slowdown}
			jobs := []workloads.Job{{ID: "j", Row: 7, Arrival: engine.Seconds(c.arrival), Duration: engine.Seconds(c.duration), NumGPU: 1, GPUMilli: 1000}}
			err := checkHorizon(cfg, jobs)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error = %v, want containing %q", err, c.want)
			}
		})
	}
}

// A leave_out_longest count of the run's jobs or more is refused; one
// fewer, and any share below 100%, are kept.
func TestCheckLeaveOut(t *testing.T) {
	for _, c := range []struct {
		entries []string
		want    string
	}{
		{[]string{"2"}, ""},
		{[]string{"99%"}, ""},
		{[]string{"1", "3"}, "cluster.leave_out_longest[1]: 3 leaves out every one of the run's 3 jobs; use at most 2"},
		{[]string{"1000000000"}, "use at most 2"},
	} {
		err := checkLeaveOut(Config{LeaveOutLongest: c.entries}, 3)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.entries, err, c.want)
		}
	}
}

package cluster

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// checkHorizon refuses a job that, alone, would end past the simulator's
// horizon (engine.Horizon) once time-sharing a GPU slows it the most
// cluster.timeshare_slowdown allows: its arrival plus its duration
// stretched by 1/(1-slowdown). The sum of every duration, the bound of a
// run that ran its jobs one after another, would refuse the openb trace
// itself (its GPU jobs hold 1.03e10 s, 3.3 horizons, but run side by
// side); queueing past the horizon stops the run with an
// *engine.HorizonError instead (exit 2, no result). It names the file
// and row, or the job's index for jobs given in the scenario.
func checkHorizon(cfg Config, jobs []workloads.Job) error {
	stretch := 1 / (1 - cfg.TimeshareSlowdown)
	if !(stretch >= 1) {
		return nil // reported by Validate
	}
	for k, j := range jobs {
		end := j.Arrival.Seconds() + j.Duration.Seconds()*stretch
		if end <= engine.HorizonSeconds {
			continue
		}
		where := fmt.Sprintf("cluster jobs[%d]", k)
		if j.Row > 0 && cfg.Trace != "" {
			where = fmt.Sprintf("cluster.trace %s:%d", cfg.Trace, j.Row)
		}
		return &InputError{fmt.Errorf("%s: job %q arriving at %.0f s runs %.0f s, %.0f s when time-sharing slows it by up to %.3gx (cluster.timeshare_slowdown %g): it would end at %.4g s, past the simulator's horizon of %s (%.4g s); shorten the job or lower cluster.timeshare_slowdown",
			where, j.ID, j.Arrival.Seconds(), j.Duration.Seconds(), j.Duration.Seconds()*stretch, stretch, cfg.TimeshareSlowdown, end, engine.HorizonText, engine.HorizonSeconds)}
	}
	return nil
}

// maxPause bounds the pauses a replay adds to a job, each time it
// happens (mig_reconfig_time, migration_time, batch_window): a day is
// 700 times the 2-minute upper end of a checkpoint-copy-restore and keeps
// a job's pauses far within the horizon.
const maxPause = 24 * engine.Hour

// maxNetLatency bounds gang_comm.net_latency: a second is 10^5 times a
// RoCE hop (1.3 us).
const maxNetLatency = engine.Second

// validateTimes reports, at their keys, the durations of c that a replay
// adds again and again, beyond their bounds.
func (c Config) validateTimes(add func(key, format string, a ...any)) {
	for _, d := range []struct {
		key string
		v   engine.Time
	}{{"mig_reconfig_time", c.MIGReconfigTime.Time()}, {"migration_time", c.MigrationTime.Time()}, {"batch_window", c.BatchWindow.Time()}} {
		if d.v > maxPause {
			add(d.key, "%v is above %v; it is paid again at every reconfiguration, migration or decision", d.v, maxPause)
		}
	}
	// Synthetic arrivals: the expected last one, jobs / rate, within a
	// tenth of the horizon (the draws' spread and the jobs' durations
	// stay far inside; a run that still crosses it stops at the horizon).
	if r, n := float64(c.Synthetic.Rate), float64(c.Synthetic.Jobs); r > 0 && n > 0 && n/r > engine.HorizonSeconds/10 {
		add("synthetic.rate", "%g/s: %.0f jobs arrive over %.4g s, past a tenth of the simulator's horizon of %s (%.4g s); use at least %.4g/s",
			r, n, n/r, engine.HorizonText, engine.HorizonSeconds, n/(engine.HorizonSeconds/10))
	}
	if c.GangComm.Model != "none" && c.GangComm.NetLatency.Time() > maxNetLatency {
		add("gang_comm.net_latency", "%v is above %v; a step of a ring across servers takes microseconds", c.GangComm.NetLatency, maxNetLatency)
	}
}

// checkLeaveOut refuses a leave_out_longest count that leaves no job of
// the n the run replays (a share always keeps some: it is below 100%).
func checkLeaveOut(cfg Config, n int) error {
	for i, e := range cfg.LeaveOutLongest {
		lo, err := parseLeaveOut(e)
		if err != nil {
			continue // reported by Validate
		}
		if lo.share == 0 && lo.count >= n {
			return &InputError{fmt.Errorf("cluster.leave_out_longest[%d]: %s leaves out every one of the run's %d jobs; use at most %d, or a share such as 1%%", i, e, n, n-1)}
		}
	}
	return nil
}

package scenarios

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
)

// horizonNote is the paragraph of docs/scenario-keys.md on the bounds that
// keep every run within the simulator's horizon (issue 40; the reasons
// are in docs/decisions/engine.md).
var horizonNote = fmt.Sprintf(`Times, and the counts that multiply them, are bounded so that every run ends within the simulator's
horizon of %s (%.0f s; engine.Horizon, about a third of the int64-nanosecond clock's 292 years),
each checked by validate and by run, naming the key or the data file's row: a trace row's arrival and
duration, each and their sum, within it, and the duration stretched by the largest time-share slowdown,
1/(1 - cluster.timeshare_slowdown), after the arrival too; datapath.clients.requests times think_time
(closed loop) or over rate (open loop) within a tenth of it; training.cluster.net_latency,
training.ina.chunk_rtt and cluster.gang_comm.net_latency at most 1 s; cluster.mig_reconfig_time,
migration_time and batch_window at most a day; a job's iterations (job lists,
training.jobs.synthetic.max_iterations) at most 10^9, and at its model's compute time on
training.cluster.gpu within the horizon after its arrival (synthetic jobs and a list's jobs: one after
another after the last arrival); training.ina.slots and window at most 2^24 (memory). A run that still
passes the horizon (jobs queued one after another) stops there: exit 2, the message names the horizon,
nothing is written.

`, engine.HorizonText, engine.HorizonSeconds)

package cluster

import (
	"bytes"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// sessionPolicies are the built-in policies that keep a session, with an
// ablation of the heuristic that runs whole GPUs.
var sessionPolicies = []string{"exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator", "conspirator/whole"}

// loadedOpenB is a window of the openb trace on a sample of its servers
// (CPU, memory, gangs on one server, CPU-only pods) with arrivals
// compressed so that capacity binds: jobs queue, gangs are retried on
// server after server, and the heuristic consolidates.
func loadedOpenB(t *testing.T) Config {
	c := openb(t)
	c.Window = Window{Skip: 1000, Jobs: 1500, Compress: 30}
	c.NodeFraction = 0.01
	c.Policies = sessionPolicies
	c.PolicyArgs = map[string]map[string]string{"conspirator/whole": {"mig": "false"}}
	return c
}

// Second implementation: a policy's session, kept up to date by the
// simulator's events, decides exactly as the policy's snapshot call on a
// view rebuilt at every call. The whole results (GPU-hours, every job's
// record, the active-GPU series) are byte-identical on a loaded openb
// window, for every built-in policy that keeps a session.
func TestSessionMatchesSnapshotCalls(t *testing.T) {
	c := loadedOpenB(t)
	var out [2][]byte
	for k, snap := range []bool{false, true} {
		c.snapshotCalls = snap
		r, err := Run(c, 3, Env{Import: testEnv.Import})
		if err != nil {
			t.Fatal(err)
		}
		if out[k], err = r.JSON(); err != nil {
			t.Fatal(err)
		}
		if snap {
			continue
		}
		queued := 0.0
		for _, p := range r.Policies {
			queued = max(queued, p.QueuedPct)
		}
		if queued < 5 {
			t.Errorf("at most %.1f%% of jobs queued under any policy: the window is not loaded enough to test anything", queued)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("results differ between sessions and snapshot calls (%d and %d bytes)", len(out[0]), len(out[1]))
	}
}

// The same, call by call: with verify_decisions every session call is
// checked against the snapshot call on the same state (the simulator
// fails the run at the first difference) and against CheckDecision.
func TestSessionVerifiedEveryCall(t *testing.T) {
	c := loadedOpenB(t)
	c.Window.Jobs = 600
	c.VerifyDecisions = true
	for _, name := range sessionPolicies {
		p, err := snapshot.New(name, c.PolicyArgs[name])
		if err != nil {
			t.Fatal(err)
		}
		if snapshot.CapabilitiesOf(p).Incremental == nil {
			t.Errorf("%s keeps no session", name)
		}
	}
	if _, err := Run(c, 5, Env{Import: testEnv.Import}); err != nil {
		t.Fatal(err)
	}
}

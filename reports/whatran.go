package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// The opening of a run's report says what was run (issue 34): the
// headline in one sentence beside the paper's figure, the inputs that
// differ from the built-in scenario of that name (file edits, environment
// and --set alike: they all change the resolved inputs), and the version,
// commit and seed. A reader of an 80%-load run's page sees 80% there.

// headline is the result in one sentence with the paper's figure ("" when
// the result has none).
func headline(r Result) string {
	var s []string
	if r.Gap != nil && !math.IsNaN(float64(*r.Gap)) {
		s = append(s, fmt.Sprintf("the conspirator path's mean end-to-end time is %.1f%% below host-rdma's (the paper: 15%%)", float64(*r.Gap)))
	}
	for _, p := range r.Paths {
		if p.Unstable && (p.Name == "conspirator" || p.Name == "host-rdma") {
			s = append(s, fmt.Sprintf("path %s is unstable (offered load above its capacity), so the gap between means is not defined", p.Name))
		}
	}
	for _, q := range r.Policies {
		if q.Name == "conspirator" && q.VsBaseline != nil {
			ci := ""
			if v := float64(q.VsBaseline.CI95); !math.IsNaN(v) && v > 0 {
				ci = fmt.Sprintf(" ± %.1f", v)
			}
			h := fmt.Sprintf("the conspirator policy uses %+.1f%%%s GPU-hours against %s (the paper: -33%% against naive sharing)", float64(q.VsBaseline.Pct), ci, q.VsBaseline.Baseline)
			if c := FewSeedsCaveat(q.Seeds); c != "" && ci != "" {
				h += " " + c
			}
			s = append(s, h)
		}
	}
	if t := r.Training; t != nil {
		if h := TrainingHeadline(t.Baseline, trainingSpeedups(t)); h != "" {
			i := slices.IndexFunc(t.Policies, func(p TrainingPolicy) bool { return p.Name == "esa" })
			if i >= 0 && t.Policies[i].Speedup != nil {
				if n := float64(t.Policies[i].HostRingJobs); n > 0 {
					h += fmt.Sprintf(", with %s of %d jobs keeping their host all-reduce under esa (ina.use %s)", fmtSig(n), t.Jobs, t.Use)
				}
			}
			if c := FewSeedsCaveat(t.Policies[0].Seeds); c != "" {
				h += " " + c
			}
			s = append(s, h)
		}
	}
	if len(s) == 0 {
		return ""
	}
	out := strings.Join(s, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

// inputsDiffer lists the resolved inputs of r that differ from the
// built-in scenario r.Scenario as it is: "key: value (built-in: value)".
// ok is false when r.Scenario is no built-in (a scenario of the user's
// own), or its inputs are not in the result.
func inputsDiffer(r Result) (diffs []string, ok bool) {
	if r.Scenario == "" || r.Inputs == nil || !slices.Contains(scenarios.List(), r.Scenario) {
		return nil, false
	}
	var base scenarios.Scenario
	if err := scenarios.Load(r.Scenario, nil, nil, &base); err != nil {
		return nil, false
	}
	// Both through JSON, as summary.json stores its inputs.
	m, err := sim.InputsMap(&base)
	if err != nil {
		return nil, false
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	var baseInputs map[string]any
	if err := json.Unmarshal(b, &baseInputs); err != nil {
		return nil, false
	}
	want, got := map[string]string{}, map[string]string{}
	flatten("", baseInputs, want)
	flatten("", r.Inputs, got)
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		w, wok := want[k]
		g, gok := got[k]
		if wok && gok && w == g {
			continue
		}
		if !wok {
			w = "absent"
		}
		if !gok {
			g = "absent"
		}
		diffs = append(diffs, fmt.Sprintf("`%s` = %s (built-in: %s)", k, g, w))
	}
	return diffs, true
}

// writeWhatRan opens a run's report.
func writeWhatRan(md *strings.Builder, r Result) {
	if h := headline(r); h != "" {
		fmt.Fprintf(md, "**%s**\n\n", h)
	}
	fmt.Fprintf(md, "Run: %s.\n\n", provenance(r))
	diffs, ok := inputsDiffer(r)
	switch {
	case !ok:
		md.WriteString("Inputs: not a built-in scenario, or one of another version; every resolved input is in `summary.json` (`inputs`).\n")
	case len(diffs) == 0:
		fmt.Fprintf(md, "Inputs: the built-in scenario `%s` as it is.\n", r.Scenario)
	default:
		fmt.Fprintf(md, "Inputs that differ from the built-in `%s` (file edits, environment, `--set`, `--seed`):\n\n", r.Scenario)
		const most = 20
		for _, d := range diffs[:min(most, len(diffs))] {
			fmt.Fprintf(md, "- %s\n", d)
		}
		if len(diffs) > most {
			fmt.Fprintf(md, "- and %d more (all in `summary.json`, `inputs`)\n", len(diffs)-most)
		}
	}
}

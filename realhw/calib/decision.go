package calib

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Where a decision time was measured (DecisionFit.MeasuredOn).
const (
	OnHost = "host" // a host CPU core: the model's unit
	OnSoC  = "soc"  // a SmartNIC Arm core (calibrate run on the BlueField)
)

// DecisionOptions configure MeasureDecision. Zero fields take defaults.
type DecisionOptions struct {
	// Sizes are the snapshot sizes, (jobs, GPUs); default 5 on 2, 10 on
	// 4, 20 on 8.
	Sizes [][2]int
	// Snapshots per size (cluster.SyntheticSnapshot seeds 1..n; default
	// 8) and timed rounds over them (default 20), after one untimed round.
	Snapshots, Rounds int
	// MeasuredOn is OnHost or OnSoC; empty picks OnSoC on arm64 (the
	// BlueField's cores are the arm64 machine this tool is meant to run
	// on) and OnHost elsewhere.
	MeasuredOn string
	// ArmSpeed is the Arm core's speed relative to a host core used to
	// convert a SoC measurement into the model's host-core time; 0 takes
	// datapath.smartnic.arm_speed's default.
	ArmSpeed float64
}

// DecisionFit is the Conspirator heuristic's wall-clock decision time on
// the measured machine, over a fixed set of deterministic snapshots, and
// the data-path override it implies.
//
// The data-path model charges datapath.host.decision_time on a host core
// on the tcp and host-rdma paths and decision_time / arm_speed on the
// SmartNIC's Arm cores on the conspirator path (soc-decide stage:
// SmartNIC.Compute(poll + decision + post) runs hostWork / ArmSpeed). So
// a host measurement T proposes decision_time = T, and a measurement on the
// SoC itself proposes T x arm_speed, which the model divides back to T on
// the SoC (with a different arm_speed override the SoC time scales with
// it: rescale decision_time too).
type DecisionFit struct {
	Policy     string         `yaml:"policy"`
	MeasuredOn string         `yaml:"measured_on"` // host or soc
	Machine    Machine        `yaml:"machine"`
	Snapshots  int            `yaml:"snapshots"` // per size
	Rounds     int            `yaml:"rounds"`
	Sizes      []DecisionSize `yaml:"sizes"`
	// Proposed holds the size the override comes from and the override:
	// the mean at the smallest measured size with at least as many GPUs as
	// the data-path scenario's default server (2), converted to host-core
	// time by Rule.
	ProposedFrom     string  `yaml:"proposed_from"`
	ArmSpeed         float64 `yaml:"arm_speed,omitempty"` // used by Rule when measured_on is soc
	Rule             string  `yaml:"rule"`
	HostDecisionTime string  `yaml:"host_decision_time"` // datapath.host.decision_time
	Applied          bool    `yaml:"applied"`
	Reason           string  `yaml:"reason,omitempty"`
}

// DecisionSize is the decision time over the snapshots of one size.
type DecisionSize struct {
	Jobs    int    `yaml:"jobs"`
	GPUs    int    `yaml:"gpus"`
	Mean    string `yaml:"mean"` // duration, e.g. "16.2us"
	P99     string `yaml:"p99"`
	Samples int    `yaml:"samples"`
	meanS   float64
}

// MeasureDecision times the "conspirator" policy's Schedule, with its
// default arguments, on cluster.SyntheticSnapshot snapshots of each size:
// one untimed round over all snapshots (warm caches and allocator), then
// Rounds timed rounds. With the defaults it makes 480 timed calls of
// 10-50 us on a current x86 core: well under a second.
func MeasureDecision(o DecisionOptions) (*DecisionFit, error) {
	if len(o.Sizes) == 0 {
		o.Sizes = [][2]int{{5, 2}, {10, 4}, {20, 8}}
	}
	if o.Snapshots == 0 {
		o.Snapshots = 8
	}
	if o.Rounds == 0 {
		o.Rounds = 20
	}
	if o.MeasuredOn == "" {
		o.MeasuredOn = OnHost
		if runtime.GOARCH == "arm64" {
			o.MeasuredOn = OnSoC
		}
	}
	if o.ArmSpeed == 0 {
		o.ArmSpeed = float64(datapath.Defaults().SmartNIC.ArmSpeed)
	}
	switch {
	case o.Snapshots < 1 || o.Rounds < 1:
		return nil, fmt.Errorf("calib: decision measurement needs snapshots >= 1 and rounds >= 1, got %d and %d", o.Snapshots, o.Rounds)
	case o.MeasuredOn != OnHost && o.MeasuredOn != OnSoC:
		return nil, fmt.Errorf("calib: decision measured_on %q; use %q or %q", o.MeasuredOn, OnHost, OnSoC)
	case !(o.ArmSpeed > 0) || math.IsInf(o.ArmSpeed, 0):
		return nil, fmt.Errorf("calib: arm speed %v; want a finite ratio > 0, e.g. 0.62", o.ArmSpeed)
	}
	pol, err := snapshot.New("conspirator", nil)
	if err != nil {
		return nil, err
	}
	m, _ := CollectMachine()
	f := &DecisionFit{Policy: pol.Name(), MeasuredOn: o.MeasuredOn, Machine: m, Snapshots: o.Snapshots, Rounds: o.Rounds}
	for _, size := range o.Sizes {
		snaps := make([]*snapshot.Snapshot, o.Snapshots)
		for k := range snaps {
			if snaps[k], err = cluster.SyntheticSnapshot(uint64(k+1), size[0], size[1]); err != nil {
				return nil, fmt.Errorf("calib: decision snapshot: %w", err)
			}
			if _, err := pol.Schedule(snaps[k]); err != nil { // untimed round
				return nil, fmt.Errorf("calib: %s on a %d-job snapshot: %w", pol.Name(), size[0], err)
			}
		}
		sec := make([]float64, 0, o.Rounds*o.Snapshots)
		for range o.Rounds {
			for _, s := range snaps {
				begin := time.Now()
				_, err := pol.Schedule(s)
				sec = append(sec, time.Since(begin).Seconds())
				if err != nil {
					return nil, err
				}
			}
		}
		mean := 0.0
		for _, v := range sec {
			mean += v
		}
		mean /= float64(len(sec))
		slices.Sort(sec)
		p99 := sec[max(0, int(math.Ceil(0.99*float64(len(sec))))-1)] // nearest rank
		z := DecisionSize{Jobs: size[0], GPUs: size[1], Mean: durationOf(mean), P99: durationOf(p99), Samples: len(sec)}
		d, _ := units.ParseDuration(z.Mean)
		z.meanS = d.Time().Seconds() // as written, so that a profile read back proposes the same
		f.Sizes = append(f.Sizes, z)
	}
	f.propose(o.ArmSpeed)
	return f, nil
}

// serverGPUs is the data-path scenario's default number of GPUs: the
// decision the SoC makes per request chooses among them.
const serverGPUs = 2

// propose picks the size and converts its mean into host-core time.
func (f *DecisionFit) propose(armSpeed float64) {
	pick := -1
	for i, s := range f.Sizes {
		if s.GPUs >= serverGPUs && (pick < 0 || s.GPUs < f.Sizes[pick].GPUs || (s.GPUs == f.Sizes[pick].GPUs && s.Jobs < f.Sizes[pick].Jobs)) {
			pick = i
		}
	}
	if pick < 0 {
		f.Reason = fmt.Sprintf("no measured size has at least %d GPUs (the data-path server's)", serverGPUs)
		return
	}
	s := f.Sizes[pick]
	f.ProposedFrom = fmt.Sprintf("jobs=%d gpus=%d", s.Jobs, s.GPUs)
	t := s.meanS
	if f.MeasuredOn == OnSoC {
		f.ArmSpeed = round(armSpeed, 4)
		f.Rule = "measured on the SoC: decision_time = mean x arm_speed (the model divides by arm_speed on the SoC)"
		t *= armSpeed
	} else {
		f.Rule = "measured on a host core: decision_time = mean (the model divides by arm_speed on the SoC)"
	}
	if !(t > 0) {
		f.Reason = "the measured mean is not positive (clock too coarse?)"
		return
	}
	f.HostDecisionTime = durationOf(t)
	f.Applied = true
}

// durationOf writes seconds as a scenario duration, to the nanosecond.
func durationOf(sec float64) string {
	return units.Duration(engine.Seconds(round(sec, 4))).String()
}

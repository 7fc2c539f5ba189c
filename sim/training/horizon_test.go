package training

import (
	"errors"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// A job whose iterations at its model's compute time end past the horizon
// after its arrival is refused naming its row; so is a list whose jobs'
// compute, one after another after the last arrival, would. The compute
// time is the catalog's, read here, so the expectations are derived from
// it: n iterations end at arrival + n*c.
func TestCheckJobsHorizon(t *testing.T) {
	cfg := Defaults()
	m, err := train.Lookup("bert-large")
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.ComputeSeconds(cfg.Cluster.GPU)
	if err != nil || !(c > 0) {
		t.Fatalf("compute time %v, %v", c, err)
	}
	// A billion iterations (MaxIterations) take 1e9*c s, far within the
	// horizon alone; 1e9*c s after an arrival of horizon - 1e9*c/2 s they
	// end past it; ceil(H/(1e9*c)) such jobs one after another pass it.
	many := make([]train.Job, int(engine.HorizonSeconds/(1e9*c))+1)
	for i := range many {
		many[i] = train.Job{Model: "bert-large", Iterations: MaxIterations, Row: i + 2}
	}
	late := engine.Seconds(engine.HorizonSeconds - 1e9*c/2)
	for _, tc := range []struct {
		name string
		jobs []train.Job
		row  int
		want string
	}{
		{"a billion iterations within", []train.Job{{Model: "bert-large", Iterations: MaxIterations, Row: 2}}, 0, ""},
		{"late arrival pushes it past", []train.Job{{Model: "bert-large", Iterations: MaxIterations, Arrival: late, Row: 2}}, 2, "past the simulator's horizon"},
		{"iterations past the bound", []train.Job{{Model: "bert-large", Iterations: MaxIterations + 1, Row: 4}}, 4, "are above 1000000000"},
		{"within alone, not one after another", many, 0, "one after another"},
		{"all but one of them fit", many[1:], 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJobs(cfg, tc.jobs, "l.csv")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *trace.RowError
			if !errors.As(err, &re) || re.Row != tc.row || re.File != "l.csv" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want a RowError at l.csv row %d containing %q", err, tc.row, tc.want)
			}
		})
	}
}

// Latencies above a second, slots above 2^24 and synthetic iterations
// above 10^9 are refused at their keys.
func TestValidateTimeAndMemoryBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"net latency", func(c *Config) { c.Cluster.NetLatency = 2e9 }, "cluster.net_latency"},
		{"chunk rtt", func(c *Config) { c.INA.ChunkRTT = 2e9 }, "ina.chunk_rtt"},
		{"slots", func(c *Config) { c.INA.Slots = MaxSlots + 1 }, "ina.slots"},
		{"window", func(c *Config) { c.INA.Window = MaxSlots + 1 }, "ina.window"},
		{"max iterations", func(c *Config) { c.Jobs.Synthetic.MaxIterations = MaxIterations + 1 }, "jobs.synthetic.max_iterations"},
		{"iterations past the horizon", func(c *Config) {
			c.Jobs.Synthetic.Jobs, c.Jobs.Synthetic.MaxIterations = 1000, MaxIterations
		}, "past the simulator's horizon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			if err := c.Validate(); err != nil {
				t.Fatalf("the defaults are refused: %v", err)
			}
			tc.set(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want containing %q", err, tc.want)
			}
		})
	}
}

// A chunk and a pool each in range may together exceed the device's
// memory: refused at ina.slot_bytes, naming both and the most slots
// that fit. A chunk alone, with the device's pool, takes the memory's
// slots of that chunk (tofino-switchml: 8,192 slots of 256 B, 2 MiB, so
// 1,024 slots of 2 KiB), as the resolved device shows.
func TestSlotBytesWithSlotsWithinMemory(t *testing.T) {
	c := Defaults()
	c.INA.SlotBytes, c.INA.Slots = 2048, 1025
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "ina.slot_bytes") || !strings.Contains(err.Error(), "at most 1024 slots") {
		t.Fatalf("error = %v, want ina.slot_bytes refused with at most 1024 slots", err)
	}
	c.INA.Slots = 1024
	if err := c.Validate(); err != nil {
		t.Fatalf("1,024 slots of 2 KiB fill the memory exactly, refused: %v", err)
	}
	c.INA.Slots = FromDevice
	d, err := c.device()
	if err != nil {
		t.Fatal(err)
	}
	if d.Slots != 1024 || d.SlotBytes != 2048 {
		t.Errorf("device with 2 KiB chunks: %d slots of %v B, want 1024 of 2048", d.Slots, d.SlotBytes)
	}
	// A smaller chunk keeps the device's registers: 8,192 slots.
	c.INA.SlotBytes = 128
	if d, _ := c.device(); d.Slots != 8192 {
		t.Errorf("device with 128 B chunks: %d slots, want the device's 8192", d.Slots)
	}
	// More slots of the device's own chunk, however it is spelled, are
	// the what-if ina.slots allows.
	c.INA.SlotBytes, c.INA.Slots = 256, 100000
	if err := c.Validate(); err != nil {
		t.Errorf("100,000 slots of the device's 256 B refused: %v", err)
	}
}

// The horizon bound times the jobs at the configured precision: 12
// ResNet-50 jobs of 10^9 iterations end past the 100-year horizon at
// TF32 (0.273 s an iteration on an A100, 3.27e9 s against 3.16e9) and
// within it under mixed precision (0.104 s, 1.24e9 s), so amp is not
// refused by TF32's bound.
func TestHorizonBoundAtThePrecision(t *testing.T) {
	c := Defaults()
	c.Jobs.Source = SourceSynthetic
	c.Jobs.Synthetic.Jobs, c.Jobs.Synthetic.MinIterations, c.Jobs.Synthetic.MaxIterations = 12, 1, MaxIterations
	c.Jobs.Synthetic.Models, c.Jobs.Synthetic.ModelWeights = []string{"resnet50"}, nil
	c.Cluster.GPU = "a100-80gb"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "past the simulator's horizon") {
		t.Fatalf("TF32: error = %v, want past the horizon", err)
	}
	c.Cluster.Precision = "amp"
	if err := c.Validate(); err != nil && strings.Contains(err.Error(), "past the simulator's horizon") {
		t.Fatalf("amp refused by the horizon bound: %v", err)
	}
}

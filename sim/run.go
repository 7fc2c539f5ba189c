package sim

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Summary is summary.json: the public, documented result of one run (see
// the README's "Result files" section). Everything in it is a function of
// the resolved scenario and the seed, so the same inputs give the same
// bytes; wall-clock measurements go to timing.json instead.
type Summary struct {
	Version  string              `json:"version"`
	Scenario string              `json:"scenario"`
	Seed     uint64              `json:"seed"`
	Inputs   *scenarios.Scenario `json:"inputs"`
	// Paths is the data-path result, one entry per simulated path.
	Paths []datapath.PathResult `json:"paths,omitempty"`
	// Gap is the end-to-end gain of the conspirator path over host-rdma in
	// percent, 100 * (host-rdma - conspirator) / host-rdma mean latency (the
	// paper's 15%); absent unless both paths ran.
	Gap *float64 `json:"conspirator_vs_host_rdma_gap_pct,omitempty"`
	// Cost is the cost and power table of the control-plane processors.
	Cost []datapath.CostLine `json:"cost,omitempty"`
}

// Output is everything one run produces, as file name -> content, ready to
// be written atomically into a result directory.
type Output struct {
	Summary Summary
	Files   map[string][]byte
}

// Run simulates a validated scenario. It does no I/O: the caller writes
// the files.
func Run(sc *scenarios.Scenario) (*Output, error) {
	sum := Summary{Version: Version, Scenario: sc.Name, Seed: sc.Seed, Inputs: sc}
	files := map[string][]byte{}
	if sc.DataPath != nil {
		res, err := datapath.Run(*sc.DataPath, sc.Seed)
		if err != nil {
			return nil, fmt.Errorf("datapath: %w", err)
		}
		sum.Paths = res.Paths
		if g, err := datapath.Gap(res); err == nil {
			sum.Gap = &g
		}
		var csv bytes.Buffer
		if err := res.WriteCSV(&csv); err != nil {
			return nil, fmt.Errorf("datapath: writing requests.csv: %w", err)
		}
		files["requests.csv"] = csv.Bytes()
	}
	if rows := costRows(sc); len(rows) > 0 {
		table, err := datapath.CostTable(rows)
		if err != nil {
			return nil, fmt.Errorf("cost: %w", err)
		}
		sum.Cost = table
	}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding summary.json: %w", err)
	}
	files["summary.json"] = append(js, '\n')
	return &Output{Summary: sum, Files: files}, nil
}

// costRows picks the processors of the cost table: the scenario's own rows
// where it lists them (paper/cost gives the paper's inputs), else the
// same-work comparison of the simulated host CPU and SmartNIC.
func costRows(sc *scenarios.Scenario) []datapath.CostRow {
	if sc.Cost != nil && len(sc.Cost.Processors) > 0 {
		rows := make([]datapath.CostRow, len(sc.Cost.Processors))
		for i, p := range sc.Cost.Processors {
			rows[i] = datapath.CostRow{Name: p.Name, PriceUSD: float64(p.Price), PowerW: float64(p.Power), Throughput: p.Throughput}
		}
		return rows
	}
	if sc.DataPath != nil {
		return datapath.SameWorkCostRows(*sc.DataPath)
	}
	return nil
}

// Package sim assembles and runs a validated scenario: it wires the data-path
// simulation (sim/datapath) and the cluster-scheduling simulation
// (sim/cluster) from a scenarios.Scenario and turns their results into the
// files of a result directory.
package sim

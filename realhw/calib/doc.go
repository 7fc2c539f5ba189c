// Package calib provides calibration for realhw: it fits each stage's
// latency as a fixed cost plus bytes over a bandwidth, CPU cycles per byte
// and the slowdown per unit of background load from measurements (the host
// backend's runs, perftest and nvbandwidth output, a generic CSV), writes
// them with their provenance to a YAML calibration profile that flags poor
// fits instead of applying them, times the Conspirator heuristic's
// scheduling decision on fixed snapshots (the data path's decision_time),
// and validates the simulator against the machine: it fits sim/datapath's
// loopback path and its background model from calibration runs and
// compares it with real runs at loads the fit never saw (FitHost,
// Validate).
package calib

// Package reports provides the turning of stored results into summaries,
// files (JSON, CSV) and pictures (gonum plot), and a report page: Render
// re-draws every figure, report.md and report.html (the same page, self-
// contained) of a run or sweep directory from the files in it alone.
//
// The package does not import the simulations: it decodes the result files
// into its own small structs (Result, RequestRow, ...), so a directory
// written by any version of the simulator, or by hand, can be rendered.
//
// Files it reads in a run directory (or in each point of a sweep):
//
//	summary.json       data path {"paths": [...], "cost": [...]} and/or cluster {"policies": [...]}
//	requests.csv      path,id,start_us,<stage columns, in pipeline order>,latency_us
//	active_gpus.csv   policy,time_s,active_gpus   (a step function per policy)
//	jobs.csv          policy,job_id,...,queue_s,jct_s   (extra columns ignored)
//	decisions.csv     policy,jobs,gpus,decision_us
//
// Only summary.json is required; each figure whose input is missing is left out.
// Files it writes: plots/*.png and plots/*.svg, report.md, summary.csv,
// and for sweeps aggregate.json and aggregate.csv.
package reports

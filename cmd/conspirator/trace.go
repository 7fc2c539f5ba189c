package main

import (
	"errors"
	"strings"

	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/spf13/cobra"
)

func (a *app) traceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Inspect cluster job traces",
	}
	var opt trace.Options
	inspect := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Import a trace and print rows read, used and rejected, and its statistics",
		Long: `Import a job trace and print how many rows were read, used and rejected
(with the first reasons), and the trace's statistics: jobs, span, GPU demand
distribution, arrival rate, run-time percentiles.

Formats: ` + strings.Join(trace.Formats(), ", ") + `. The format is detected
from the file name and header unless --format is given. See
workloads/trace/FORMATS.md for each format's columns and rules.`,
		Example: `  conspirator trace inspect ../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv
  conspirator trace inspect jobs.csv --format generic --strict`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			res, err := trace.ImportFile(args[0], opt)
			if missing := trace.NotFound("trace inspect", args[0], opt.Format, err, "give the path of your copy"); missing != nil {
				return usageError{missing} // as run says it: where the path led and where the data comes from
			}
			var fe *trace.FormatError
			if errors.As(err, &fe) {
				return usagef("%v; give it with --format", err)
			}
			if err != nil {
				return usageError{err} // the input file is wrong, not the run
			}
			return trace.Inspect(res).WriteText(a.stdout)
		},
	}
	f := inspect.Flags()
	f.StringVar(&opt.Format, "format", "", "trace format (default: detect); one of "+strings.Join(trace.Formats(), ", "))
	f.BoolVar(&opt.Strict, "strict", false, "stop at the first bad row with file:row:column instead of skipping and counting it")
	f.BoolVar(&opt.ArrivalOnly, "arrival-only", false, "import without run times (required for the openb multigpu files)")
	f.IntVar(&opt.MaxGPUsPerJob, "max-gpus-per-job", 0, "reject jobs wider than this many GPUs (default 8)")
	c.AddCommand(inspect)
	return c
}

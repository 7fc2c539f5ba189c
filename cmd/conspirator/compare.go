package main

import (
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/spf13/cobra"
)

func (a *app) compareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare DIR DIR...",
		Short: "Put runs side by side: every shared metric, its difference to the first run, whether it exceeds the CIs, and the inputs that differ",
		Long: `Compare run directories (each holding summary.json): every metric any
of them reports (data-path latencies and throughput, cost ratios, cluster
GPU-hours and JCT, allocation ratios), the difference of each run to the
first in percent, and whether that difference exceeds the two runs' 95%
confidence intervals where both have one ("n/a" where not: a single run's
percentiles and GPU-hours carry no CI; compare sweeps over seeds for those).
Then the resolved inputs that differ between the runs, and the metrics
some runs lack (an older version, another scenario). Figures are not
overlaid yet.`,
		Example: `  conspirator run paper/e2e -o base
  conspirator run paper/e2e --set datapath.smartnic.model=bluefield2 -o bf2
  conspirator compare base bf2`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			var runs []reports.Run
			for _, d := range args {
				r, err := reports.ReadRun(d)
				if err != nil {
					return usageError{err}
				}
				runs = append(runs, r)
			}
			return reports.Compare(runs).WriteText(a.stdout)
		},
	}
}

package main

import (
	"fmt"
	"path/filepath"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/spf13/cobra"
)

func (a *app) compareCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "compare DIR DIR...",
		Short: "Put runs or sweeps side by side: every shared metric, its difference to the first, whether it exceeds the CIs, the inputs that differ, and overlaid figures",
		Long: `Compare run directories (each holding summary.json) or sweep directories
(each holding sweep.json): every metric any of them reports (data-path
latencies and throughput, cost ratios, cluster GPU-hours and JCT,
allocation ratios; for a sweep, every metric of every parameter
combination, its mean over seeds), the difference of each to the first
in percent (in percentage points, "pp", for a metric that is itself a
percentage: a gap, a saving, an allocation ratio), and whether that difference exceeds the two sides' 95%
confidence intervals where both have one ("n/a" where not: a single
run's percentiles and GPU-hours carry no CI; compare sweeps over seeds
for those). Then the resolved inputs that differ, the metrics some lack
(an older version, another scenario: "cannot compare"), and the versions
and commits where they differ.

With -o DIR it also writes DIR/report.md and DIR/report.html with the
table and overlaid figures in DIR/plots (PNG, SVG, PDF): the latency CDF
of each data path (one line per run; needs requests.csv), the stage
breakdown of every path and run, and GPU-hours per policy and run with
their CIs; for sweeps that vary the same one parameter, every plotted
metric against it, a panel per path, policy or gap and a line per sweep
with its 95% CI (report.md says why where sweeps cannot be overlaid).
Each run keeps one colour in every figure.`,
		Example: `  conspirator run paper/e2e -o base
  conspirator run paper/e2e --set datapath.smartnic.model=bluefield2 -o bf2
  conspirator compare base bf2 -o base-vs-bf2
  conspirator compare sweep-a sweep-b`,
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
			c := reports.Compare(runs)
			if err := c.WriteText(a.stdout); err != nil {
				return err
			}
			if outDir == "" {
				return nil
			}
			if err := reports.WriteComparison(atomicfs.OS, outDir, c); err != nil {
				return err
			}
			figs, _ := filepath.Glob(filepath.Join(outDir, reports.PlotsDir, "*.png"))
			if len(figs) == 0 {
				fmt.Fprintf(a.stdout, "\nreport: %s (report.md, report.html; no overlaid figures: report.md says why)\n", outDir)
			} else {
				fmt.Fprintf(a.stdout, "\nreport: %s (report.md, report.html, %d overlaid figures in plots/)\n", outDir, len(figs))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "also write report.md, report.html and overlaid figures into this directory")
	return cmd
}

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim/batch"
	"github.com/conspirator-sim/conspirator/sim/sweep"
	"github.com/spf13/cobra"
)

func (a *app) reportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR [SHARD_DIR...]",
		Short: "Re-render plots, report.md and report.html from stored results; merge sweep shards",
		Long: `Re-render every figure, the aggregate tables, report.md and
report.html of a result directory (a run or a sweep) from the result files stored in it; nothing is
simulated again. With SHARD_DIRs, first merge the shard directories of a
sweep run with --shard (on several machines) into DIR, which then equals an
unsharded run. A sweep with missing points is reported with the command
that finishes it.`,
		Example: `  conspirator report results/paper-e2e
  conspirator report out/sweep out/shard-0 out/shard-1 out/shard-2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := args[0]
			if len(args) > 1 {
				if err := sweep.Merge(dir, args[1:]...); err != nil {
					return fmt.Errorf("merging shards into %s: %w", dir, err)
				}
				fmt.Fprintf(a.stdout, "merged %d shard directories into %s\n", len(args)-1, dir)
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usagef("%s is not a result directory (give the directory that holds summary.json or sweep.json)", dir)
			}
			if _, err := os.Stat(filepath.Join(dir, "sweep.json")); err == nil {
				if err := sweep.Merge(dir, dir); err != nil {
					// Missing points: say how to finish the sweep.
					hint := fmt.Sprintf("finish it with 'conspirator sweep ... -o %s --resume'", dir)
					if ids, berr := batch.MissingShards(dir); berr == nil && len(ids) > 0 {
						hint = fmt.Sprintf("rerun the unfinished tasks with 'sbatch --array=%s %s'", batch.ArrayList(ids), filepath.Join(dir, "sweep.sbatch"))
					}
					return fmt.Errorf("%w; %s", err, hint)
				}
			}
			if err := reports.Render(dir); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "report: %s\n", filepath.Join(dir, "report.md"))
			return nil
		},
	}
}

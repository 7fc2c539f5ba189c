package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
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
			dir := filepath.Clean(args[0])
			if len(args) == 1 {
				if err := checkResultDir(dir); err != nil {
					return err
				}
			}
			lock, err := lockDir(dir)
			if err != nil {
				return err
			}
			defer lock.Release()
			if len(args) > 1 {
				if err := sweep.Merge(dir, args[1:]...); err != nil {
					return fmt.Errorf("merging shards into %s: %w", dir, err)
				}
				fmt.Fprintf(a.stdout, "merged %d shard directories into %s\n", len(args)-1, dir)
			}
			if err := checkResultDir(dir); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dir, "sweep.json")); err == nil {
				if err := sweep.Merge(dir, dir); err != nil {
					// Missing points: say how to finish the sweep.
					hint := fmt.Sprintf("finish it with 'conspirator sweep ... -o %s --resume'", dir)
					if ids, berr := batch.MissingShards(dir); berr == nil && len(ids) > 0 {
						hint = fmt.Sprintf("rerun the unfinished tasks with 'sbatch --array=%s %s'", batch.ArrayList(ids), filepath.Join(dir, batch.SlurmFile))
						if st, serr := batch.ReadState(dir); serr == nil && st.Scheduler == batch.K8s {
							hint = fmt.Sprintf("the indices %s of the Kubernetes Job have unfinished points: copy the volume back into %s when the Job is done, or rerun those indices (the emit command again prints how; %s)",
								batch.ArrayList(ids), dir, filepath.Join(dir, batch.ReadmeFile))
						}
					}
					return fmt.Errorf("%w; %s", err, hint)
				}
			}
			if err := renderAtomically(dir, "conspirator report"); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "report: %s\n", filepath.Join(dir, "report.md"))
			return nil
		},
	}
}

// checkResultDir refuses, as a usage error, a DIR that is not a run or a
// sweep directory.
func checkResultDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usagef("%s is not a result directory (give the directory that holds summary.json or sweep.json)", dir)
	}
	for _, f := range []string{reports.ResultFile, sweep.SpecFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil
		}
	}
	return usagef("%s holds neither %s (a run) nor %s (a sweep): give a directory that conspirator run or sweep wrote", dir, reports.ResultFile, sweep.SpecFile)
}

// renderAtomically re-renders the report of dir (a run or a sweep) as one
// atomic step: into a copy of dir made of hard links, which then takes
// dir's place (atomicfs.Rewrite). A kill at any moment leaves the old
// report or the new one, never one's figures beside the other's page.
// The caller holds dir's lock.
func renderAtomically(dir, by string) error {
	return atomicfs.Rewrite(atomicfs.OS, dir, func(tmp string) error {
		return reports.RenderFSBy(atomicfs.OS, tmp, by)
	})
}

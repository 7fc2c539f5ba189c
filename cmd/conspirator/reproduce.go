package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/conspirator-sim/conspirator/internal/progress"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/reproduce"
	"github.com/spf13/cobra"
)

func (a *app) reproduceCmd() *cobra.Command {
	var quick bool
	var only []string
	var outDir string
	c := &cobra.Command{
		Use:   "reproduce",
		Short: "Run every built-in scenario behind a published result and write one table of ours against theirs",
		Long: `Run the built-in scenarios behind every published result this project
measures itself against and write one results table: reproduce.md and
reproduce.json in the output directory. The rows:

` + rowList() + `

Each row gives the claim, where it is published, the published figure,
ours (mean ± 95% CI over the seeds named), a verdict of a word or two, the
command that gives it alone, and its wall time. The rows run the built-in
scenarios as they are: CONSPIRATOR_ variables are not read. Run it from
the repository root: the cluster rows read ../shared/traces; where that is
absent they are reported as skipped, with the missing file, and the other
rows still run.

--quick runs the rows that take longest with fewer seeds (each says so in
the table) so that the whole set fits in a few minutes on two cores; the
docs test runs it and compares every figure with docs/results-quick.json.
The full run (under a minute on two cores) writes the figures the docs
quote: docs/results.json.

Exit status: 0 when every row that ran gave its figures (skipped rows
included), 1 when a row failed, 2 for a usage error (an unknown --only).`,
		Example: `  conspirator reproduce
  conspirator reproduce --quick
  conspirator reproduce --only r2-gap,r3-gap-grows -o out/r2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			for _, o := range only {
				for _, n := range strings.Split(o, ",") {
					if n = strings.TrimSpace(n); n != "" {
						if _, ok := reproduce.Find(n); !ok {
							return usagef("--only %s: no such row; the rows are: %s", n, strings.Join(reproduce.Names(), ", "))
						}
						names = append(names, n)
					}
				}
			}
			dir := outDir
			if dir == "" {
				dir = filepath.Join(a.outRoot(), map[bool]string{true: "reproduce-quick", false: "reproduce"}[quick])
			}
			lock, err := claimDir(dir)
			if err != nil {
				return err
			}
			defer lock.Release()
			total := len(names)
			if total == 0 {
				total = len(reproduce.Rows)
			}
			tell := reproduceProgress(a.stderr, isTerminal(a.stderr), total)
			rep, err := reproduce.Run(&reproduce.Runner{}, reproduce.Options{Quick: quick, Only: names, Progress: tell})
			if err != nil {
				var unknown *reproduce.UnknownRowError
				if errors.As(err, &unknown) {
					return usageError{err}
				}
				return err
			}
			js, err := reports.ReproduceJSONBytes(rep)
			if err != nil {
				return err
			}
			files := map[string][]byte{reports.ReproduceJSON: js, reports.ReproduceMD: reports.ReproduceMarkdown(rep)}
			fig, err := mainJobFigure()
			if err != nil {
				return fmt.Errorf("the main job's figure: %w", err)
			}
			for name, b := range fig {
				files[name] = b
			}
			if err := writeResultDir(dir, files, false); err != nil {
				return err
			}
			printReproduce(a, rep)
			fmt.Fprintf(a.stdout, "\nresults: %s (%s, %s, figures/: the main job's stage breakdown)\n", dir, reports.ReproduceMD, reports.ReproduceJSON)
			if n := rep.Failed(); n > 0 {
				return fmt.Errorf("%d of %d rows failed (see %s)", n, len(rep.Rows), filepath.Join(dir, reports.ReproduceMD))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&quick, "quick", false, "run the longest rows with fewer seeds (said per row): a few minutes on two cores")
	c.Flags().StringSliceVar(&only, "only", nil, "run only these rows (comma-separated or repeated): "+strings.Join(reproduce.Names(), ", "))
	c.Flags().StringVarP(&outDir, "output", "o", "", "result directory (default $CONSPIRATOR_OUT/reproduce, or reproduce-quick with --quick)")
	c.RegisterFlagCompletionFunc("only", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return reproduce.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

// MainJobFigures are the figures of the main job (paper/e2e, seed 1) that
// reproduce writes for the README: where a request's time goes on each
// path.
var MainJobFigures = []string{"stage_breakdown.png", "stage_breakdown.svg"}

// mainJobFigure runs the main job and renders its report in a temporary
// directory, returning MainJobFigures as figures/e2e_NAME.
func mainJobFigure() (map[string][]byte, error) {
	sc, err := reproduce.LoadBuiltin(DefaultScenario, nil)
	if err != nil {
		return nil, err
	}
	out, err := sim.Run(sc)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "conspirator-reproduce-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "e2e")
	if err := writeResultDir(dir, out.Files, true); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, name := range MainJobFigures {
		b, err := os.ReadFile(filepath.Join(dir, "plots", name))
		if err != nil {
			return nil, err
		}
		files["figures/e2e_"+name] = b
	}
	return files, nil
}

// rowList is the rows for --help: name and claim.
func rowList() string {
	var b strings.Builder
	for _, r := range reproduce.Rows {
		fmt.Fprintf(&b, "  %-15s %s\n", r.Name, r.Claim)
	}
	return strings.TrimRight(b.String(), "\n")
}

// reproduceProgress is a progress bar over the rows on a terminal, one
// line per finished row elsewhere (a dozen rows: a log stays short).
func reproduceProgress(w interface{ Write([]byte) (int, error) }, terminal bool, total int) func(done, total int, name string) {
	if !terminal {
		return func(done, total int, name string) {
			fmt.Fprintf(w, "reproduce: %d/%d rows done (%s)\n", done, total, name)
		}
	}
	bar := progress.NewBar(w, "reproduce", "rows", total, time.Now)
	return func(done, _ int, name string) {
		bar.Set(float64(done), name)
		if done == total {
			bar.Exit()
		}
	}
}

// printReproduce prints the rows as a plain table: name, ours, verdict,
// wall time; then any skipped or failed row with its message.
func printReproduce(a *app, rep *reproduce.Report) {
	tw := tabwriter.NewWriter(a.stdout, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tpublished\tours\tverdict\twall")
	for _, r := range rep.Rows {
		ours, verdict := r.Ours, r.Verdict
		if r.Status != reproduce.StatusRan {
			ours, verdict = "-", r.Status
		}
		wall := fmt.Sprintf("%.1f s", r.WallS)
		if r.SharedWith != "" {
			wall = "runs of " + r.SharedWith
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Paper, ours, verdict, wall)
	}
	tw.Flush()
	for _, r := range rep.Rows {
		if r.Reduced != "" && r.Status == reproduce.StatusRan {
			fmt.Fprintf(a.stdout, "%s: quick run, %s\n", r.Name, r.Reduced)
		}
	}
	for _, r := range rep.Rows {
		if r.Status != reproduce.StatusRan {
			fmt.Fprintf(a.stdout, "%s %s: %s\n", r.Name, r.Status, r.Message)
		}
	}
}

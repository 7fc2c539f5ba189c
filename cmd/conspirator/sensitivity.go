package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/spf13/cobra"
)

func (a *app) sensitivityCmd() *cobra.Command {
	var (
		f       scenarioFlags
		params  []string
		factors string
		outDir  string
	)
	c := &cobra.Command{
		Use:   "sensitivity [SCENARIO]",
		Short: "Show which parameters the data-path headline rests on: each scaled down and up, a table and a tornado chart",
		Long: `Rerun a data-path scenario with each parameter scaled by a low and a high
factor (default 0.5 and 2, fractions capped at 100%), one at a time, same
seed, and report the headline, the conspirator path's mean latency gain
over host-rdma in percent, at each end. Rows are sorted by how far the
headline moves, and each names the grade of the parameter's default
(estimate, anecdotal, ...), so the unsourced numbers a result rests on
stand out. Writes sensitivity.csv and plots/sensitivity.{png,svg,pdf}.`,
		Example: `  conspirator sensitivity paper/e2e
  conspirator sensitivity paper/e2e --set datapath.host.background_load=80% --factors 0.8,1.25
  conspirator sensitivity paper/e2e --param smartnic.dma_bandwidth --param host.pageable_factor`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := DefaultScenario
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := a.load(name, f)
			if err != nil {
				return err
			}
			if sc.DataPath == nil {
				return usagef("scenario %s has no datapath section: sensitivity varies data-path parameters (try paper/e2e)", name)
			}
			lo, hi, err := parseFactors(factors)
			if err != nil {
				return err
			}
			if len(params) == 0 {
				params = datapath.SensitivityParams()
			}
			base, err := datapath.Sensitivity(*sc.DataPath, params[0], []float64{1}, sc.Seed)
			if err != nil {
				return usageError{err}
			}
			grades := keyGrades()
			var rows []reports.SensitivityRow
			for _, p := range params {
				pts, err := datapath.Sensitivity(*sc.DataPath, p, []float64{lo, hi}, sc.Seed)
				if err != nil {
					return usageError{err}
				}
				rows = append(rows, reports.SensitivityRow{Param: "datapath." + p, Grade: grades["datapath."+p],
					LowValue: pts[0].Value, Low: pts[0].GapPct, HighValue: pts[1].Value, High: pts[1].GapPct})
			}
			slices.SortStableFunc(rows, func(x, y reports.SensitivityRow) int {
				return cmp.Or(cmp.Compare(y.Swing(), x.Swing()), strings.Compare(x.Param, y.Param))
			})
			fmt.Fprintf(a.stdout, "scenario %s, seed %d: conspirator vs host-rdma gain %.1f%% as it is; each parameter x%g and x%g\n\n", sc.Name, sc.Seed, base[0].GapPct, lo, hi)
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "parameter\tgrade\tlow\tgain %\thigh\tgain %\tswing\t")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%.1f\t%.1f\t\n", r.Param, r.Grade, r.LowValue, r.Low, r.HighValue, r.High, r.Swing())
			}
			tw.Flush()
			if outDir == "" {
				outDir = filepath.Join(a.outRoot(), strings.ReplaceAll(sc.Name, "/", "-")+"-sensitivity")
			}
			files := map[string][]byte{reports.SensitivityFile: reports.SensitivityCSV("gain_pct", base[0].GapPct, rows)}
			err = atomicfs.WriteDir(atomicfs.OS, outDir, files, looksLikeResult(outDir), func(tmp string) error {
				return reports.WriteTornado(atomicfs.OS, tmp, "conspirator vs host-rdma mean latency gain (%)", fmt.Sprintf("x%g", lo), fmt.Sprintf("x%g", hi), base[0].GapPct, rows)
			})
			if err != nil {
				return fmt.Errorf("writing %s: %w", outDir, err)
			}
			fmt.Fprintf(a.stdout, "\nresults: %s (%s, plots/sensitivity.png)\n", outDir, reports.SensitivityFile)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringArrayVar(&params, "param", nil, "data-path parameter to vary, e.g. smartnic.dma_bandwidth (repeatable; default: all of "+strings.Join(datapath.SensitivityParams(), ", ")+")")
	c.Flags().StringVar(&factors, "factors", "0.5,2", "low and high scale factors, LOW,HIGH")
	c.Flags().StringVarP(&outDir, "output", "o", "", "output directory (default $CONSPIRATOR_OUT/NAME-sensitivity)")
	return c
}

// parseFactors reads "LOW,HIGH": two positive numbers, LOW < HIGH.
func parseFactors(s string) (lo, hi float64, err error) {
	a, b, ok := strings.Cut(s, ",")
	if ok {
		lo, err = strconv.ParseFloat(strings.TrimSpace(a), 64)
		if err == nil {
			hi, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
		}
	}
	if !ok || err != nil || !(lo > 0) || !(hi > lo) {
		return 0, 0, usagef("--factors %q: want LOW,HIGH with 0 < LOW < HIGH, e.g. 0.5,2", s)
	}
	return lo, hi, nil
}

// keyGrades maps each scenario key to the grade of its default's source
// ("estimate", "vendor", ...; "" when unsourced).
func keyGrades() map[string]string {
	out := map[string]string{}
	for _, k := range scenarios.Schema(&scenarios.Scenario{}) {
		if k.Source == "" {
			continue
		}
		if txt, err := scenarios.SourceText(k.Source); err == nil {
			grade, _, _ := strings.Cut(txt, ":")
			out[k.Path] = grade
		}
	}
	return out
}

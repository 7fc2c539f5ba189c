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
	"github.com/conspirator-sim/conspirator/internal/suggest"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/spf13/cobra"
)

func (a *app) sensitivityCmd() *cobra.Command {
	var (
		f       scenarioFlags
		params  []string
		factors string
		policy  string
		outDir  string
	)
	c := &cobra.Command{
		Use:   "sensitivity [SCENARIO]",
		Short: "Show which parameters a headline rests on: each moved across its plausible range, a table and a tornado chart",
		Long: `Rerun a scenario with each parameter moved to the low and the high end of
its plausible range, one at a time, same seed, and report the headline at
each end, sorted by how far it moves. Each row names the grade of the
parameter's default (estimate, anecdotal, ...) and where its range comes
from, so the unsourced numbers a result rests on stand out.

The headline: for a data-path scenario, the conspirator path's mean
latency gain over host-rdma in percent; for a cluster scenario, the
GPU-hours of --policy (default conspirator) against the scenario's
baseline in percent (negative: a saving), with its 95% CI over seeds,
against which the swings can be judged.

The parameters: by default, for a data-path scenario every numeric
data-path key whose default is graded estimate or anecdotal (and a few
derived ones known to matter); for a cluster scenario every cluster key
with a stated plausible range. The range of a data-path parameter is the
one the hardware catalog states for the scenario's parts, as factors of
the catalog value applied to the scenario's own; where the catalog states
none, and whenever --factors is given, LOW and HIGH factors. --param KEY
picks parameters (repeatable); --param KEY=LOW,HIGH sets the two ends as
scenario values (units allowed) for any key.

Writes sensitivity.csv and plots/sensitivity.{png,svg,pdf}.`,
		Example: `  conspirator sensitivity paper/e2e
  conspirator sensitivity paper/e2e --set datapath.host.background_load=80% --factors 0.8,1.25
  conspirator sensitivity paper/e2e --param smartnic.dma_bandwidth --param datapath.clients.count=2,8
  conspirator sensitivity paper/gpu-hours --set cluster.seeds=3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := DefaultScenario
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := a.load(name, f)
			if err != nil {
				return err
			}
			if outDir == "" {
				outDir = filepath.Join(a.outRoot(), strings.ReplaceAll(sc.Name, "/", "-")+"-sensitivity")
			}
			lock, err := claimDir(outDir)
			if err != nil {
				return err
			}
			defer lock.Release()
			lo, hi, err := parseFactors(factors)
			if err != nil {
				return err
			}
			h, err := newHeadline(sc, policy)
			if err != nil {
				return err
			}
			ps, err := sensitivityParams(sc, h, params, lo, hi, cmd.Flags().Changed("factors"))
			if err != nil {
				return err
			}
			base, baseCI, err := h.eval(sc)
			if err != nil {
				return err
			}
			rows, err := a.sensitivityRows(name, f, sc, h, ps)
			if err != nil {
				return err
			}
			noise := ""
			if baseCI > 0 {
				noise = fmt.Sprintf(" ± %.1f (95%% CI over seeds: smaller swings are within it)", baseCI)
			}
			seeds := 1
			if sc.Cluster != nil {
				seeds = max(seeds, sc.Cluster.Seeds)
			}
			if sc.Training != nil {
				seeds = max(seeds, sc.Training.Seeds)
			}
			fmt.Fprintf(a.stdout, "scenario %s, %s: %s %.1f%%%s as it is; each parameter at the low and the high end of its range\n\n", sc.Name, reports.SeedsText(sc.Seed, seeds), h.label, base, noise)
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "parameter\tgrade\trange\tlow\t%\thigh\t%\tswing\t")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%s\t%.1f\t%.1f\t\n", r.Param, r.Grade, r.Range, r.LowValue, r.Low, r.HighValue, r.High, r.Swing())
			}
			tw.Flush()
			files := map[string][]byte{reports.SensitivityFile: reports.SensitivityCSV(h.column, base, rows)}
			err = writeResultDirFS(atomicfs.OS, outDir, files, false, func(tmp string) error {
				return reports.WriteTornado(atomicfs.OS, tmp, h.label+" (%)", "low end", "high end", base, rows)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "\nresults: %s (%s, plots/sensitivity.png)\n", outDir, reports.SensitivityFile)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringArrayVar(&params, "param", nil, "a parameter to vary: KEY (its catalog or stated range) or KEY=LOW,HIGH (repeatable; default: every unsourced parameter, see above)")
	c.Flags().StringVar(&factors, "factors", "0.5,2", "low and high scale factors, LOW,HIGH, for data-path parameters without a stated range (given: for every data-path parameter)")
	c.Flags().StringVar(&policy, "policy", "conspirator", "cluster scenarios: the policy whose GPU-hours against the baseline are the headline")
	c.Flags().StringVarP(&outDir, "output", "o", "", "output directory (default $CONSPIRATOR_OUT/NAME-sensitivity)")
	return c
}

// sensitivityRows moves each parameter to both ends of its range and
// reads the headline there; rows come sorted by swing, largest first.
func (a *app) sensitivityRows(name string, f scenarioFlags, sc *scenarios.Scenario, h headline, ps []sensParam) ([]reports.SensitivityRow, error) {
	grades := keyGrades()
	var rows []reports.SensitivityRow
	for _, p := range ps {
		row := reports.SensitivityRow{Param: p.key, Grade: grades[p.key], Range: p.from}
		if p.knob != "" {
			pts, err := datapath.Sensitivity(*sc.DataPath, p.knob, []float64{p.lo, p.hi}, sc.Seed)
			if err != nil {
				return nil, fmt.Errorf("sensitivity: %w", err)
			}
			row.LowValue, row.Low, row.HighValue, row.High = pts[0].Value, pts[0].GapPct, pts[1].Value, pts[1].GapPct
		} else {
			for i, v := range []string{p.low, p.high} {
				scv, err := a.loadLate(name, f, "sensitivity", []string{p.key + "=" + v})
				if err != nil {
					return nil, fmt.Errorf("sensitivity: %s=%s: %w", p.key, v, err)
				}
				m, _, err := h.eval(scv)
				if err != nil {
					return nil, fmt.Errorf("sensitivity: %s=%s: %w", p.key, v, err)
				}
				if i == 0 {
					row.LowValue, row.Low = v, m
				} else {
					row.HighValue, row.High = v, m
				}
			}
		}
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(x, y reports.SensitivityRow) int {
		return cmp.Or(cmp.Compare(y.Swing(), x.Swing()), strings.Compare(x.Param, y.Param))
	})
	return rows, nil
}

// headline is the number sensitivity watches: how to read it off a run.
type headline struct {
	label, column string
	// eval runs sc and returns the headline and its 95% CI half-width (0
	// where the run has none).
	eval func(sc *scenarios.Scenario) (float64, float64, error)
}

// newHeadline picks the headline of a scenario: the GPU-hours saving for a
// cluster scenario, the data-path gain otherwise.
func newHeadline(sc *scenarios.Scenario, policy string) (headline, error) {
	switch {
	case sc.Cluster != nil:
		if !slices.Contains(sc.Cluster.Policies, policy) {
			return headline{}, usagef("--policy %q: scenario %s runs %s", policy, sc.Name, strings.Join(sc.Cluster.Policies, ", "))
		}
		base := sc.Cluster.Baseline
		if base == "" || base == policy {
			// Suggest a baseline the scenario runs; else how to add one.
			hint := fmt.Sprintf("add one: --set 'cluster.policies=[%s, naive-share]' --set cluster.baseline=naive-share", strings.Join(sc.Cluster.Policies, ", "))
			for _, p := range sc.Cluster.Policies {
				if p != policy {
					hint = fmt.Sprintf("set one of the policies it runs (%s), e.g. --set cluster.baseline=%s", strings.Join(sc.Cluster.Policies, ", "), p)
					break
				}
			}
			return headline{}, usagef("scenario %s has no cluster.baseline other than %s to measure GPU-hours against; %s", sc.Name, policy, hint)
		}
		return headline{
			label:  fmt.Sprintf("%s GPU-hours vs %s", policy, base),
			column: "gpu_hours_vs_baseline_pct",
			eval: func(sc *scenarios.Scenario) (float64, float64, error) {
				only := *sc
				only.DataPath, only.Allocation, only.Cost = nil, nil, nil
				out, err := sim.Run(&only)
				if err != nil {
					return 0, 0, err
				}
				for _, p := range out.Summary.Policies {
					if p.Name == policy && p.VsBaseline != nil {
						ci := 0.0
						if p.VsBaseline.CI95 != nil {
							ci = *p.VsBaseline.CI95
						}
						return p.VsBaseline.Pct, ci, nil
					}
				}
				return 0, 0, fmt.Errorf("no GPU-hours of %s against %s in the run", policy, base)
			},
		}, nil
	case sc.DataPath != nil:
		return headline{
			label:  "conspirator vs host-rdma mean latency gain",
			column: "gain_pct",
			eval: func(sc *scenarios.Scenario) (float64, float64, error) {
				if sc.DataPath == nil {
					return 0, 0, fmt.Errorf("the scenario lost its datapath section")
				}
				gap, _, err := datapath.GapRun(*sc.DataPath, sc.Seed)
				return gap, 0, err
			},
		}, nil
	}
	return headline{}, usagef("scenario %s has neither a datapath nor a cluster section: sensitivity needs a headline (try paper/e2e or paper/gpu-hours)", sc.Name)
}

// sensParam is one parameter to move: a data-path knob scaled by factors
// (knob set), or a key set to two values through --set.
type sensParam struct {
	key       string
	from      string // where the range comes from
	knob      string // datapath.Sensitivity's name, for a scaled knob
	lo, hi    float64
	low, high string // scenario values, for a key set by value
}

// sensitivityParams resolves the parameters: those asked for, or every
// unsourced one of the headline's section.
func sensitivityParams(sc *scenarios.Scenario, h headline, asked []string, lo, hi float64, forceFactors bool) ([]sensParam, error) {
	docs := map[string]scenarios.KeyDoc{}
	var known []string
	for _, k := range scenarios.Schema(&scenarios.Scenario{}) {
		if k.Type != "section" && !strings.ContainsAny(k.Path, "[<") {
			docs[k.Path] = k
			known = append(known, k.Path)
		}
	}
	knobs := datapath.SensitivityParams()
	isKnob := func(p string) bool { return slices.Contains(knobs, p) }
	clusterRun := sc.Cluster != nil
	byValues := func(key, values, from string) (sensParam, error) {
		l, h, ok := strings.Cut(values, ",")
		if !ok || strings.TrimSpace(l) == "" || strings.TrimSpace(h) == "" {
			return sensParam{}, usagef("--param %s=%s: give two values, LOW,HIGH", key, values)
		}
		return sensParam{key: key, low: strings.TrimSpace(l), high: strings.TrimSpace(h), from: from}, nil
	}
	// A data-path knob's range: the catalog's for the scenario's parts,
	// else the key's own plausible tag, else the factors.
	knobParam := func(p string) sensParam {
		sp := sensParam{key: "datapath." + p, knob: p, lo: lo, hi: hi, from: fmt.Sprintf("x%g..x%g", lo, hi)}
		if forceFactors {
			return sp
		}
		if l, h, key, ok := datapath.Range(*sc.DataPath, p); ok {
			sp.lo, sp.hi, sp.from = l, h, "catalog "+key
		} else if tag := docs[sp.key].Plausible; tag != "" {
			if bv, err := byValues(sp.key, tag, "stated"); err == nil {
				return bv
			}
		}
		return sp
	}
	if len(asked) == 0 {
		var out []sensParam
		if clusterRun {
			for _, k := range known {
				if d := docs[k]; strings.HasPrefix(k, "cluster.") && d.Plausible != "" {
					p, err := byValues(k, d.Plausible, "stated")
					if err != nil {
						return nil, fmt.Errorf("key %s: plausible tag %q: %w", k, d.Plausible, err)
					}
					out = append(out, p)
				}
			}
			return out, nil
		}
		for _, p := range knobs {
			out = append(out, knobParam(p))
		}
		return out, nil
	}
	var out []sensParam
	for _, a := range asked {
		key, values, hasValues := strings.Cut(a, "=")
		key = strings.TrimSpace(key)
		full := key
		if _, ok := docs[full]; !ok && isKnob(key) {
			full = "datapath." + key
		}
		if _, ok := docs[full]; !ok {
			msg := fmt.Sprintf("--param %q: unknown parameter %q", a, key)
			if n := suggest.Nearest(key, append(append([]string{}, known...), knobs...)); n != "" {
				msg += fmt.Sprintf("; did you mean %s?", n)
			}
			return nil, usagef("%s (every key: conspirator scenarios schema)", msg)
		}
		switch rel, isDP := strings.CutPrefix(full, "datapath."); {
		case hasValues:
			p, err := byValues(full, values, "given")
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		case isDP && isKnob(rel) && !clusterRun:
			out = append(out, knobParam(rel))
		case docs[full].Plausible != "":
			p, err := byValues(full, docs[full].Plausible, "stated")
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		default:
			return nil, usagef("--param %q: %s has no stated plausible range; give its two ends, e.g. --param %s=LOW,HIGH", a, full, full)
		}
	}
	return out, nil
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

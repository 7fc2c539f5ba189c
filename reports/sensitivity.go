package reports

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SensitivityRow is one parameter of a sensitivity analysis: the headline
// metric with the parameter at its low and its high value.
type SensitivityRow struct {
	Param     string // scenario key
	Grade     string // of its default: vendor, measured, ..., estimate
	LowValue  string
	Low       float64
	HighValue string
	High      float64
	// Range says where the two ends come from: "catalog KEY" (the
	// plausible range the hw catalog states) or "x0.5..x2" (factors).
	Range string
}

// Swing is how far the metric moves over the parameter's range.
func (r SensitivityRow) Swing() float64 {
	if r.High > r.Low {
		return r.High - r.Low
	}
	return r.Low - r.High
}

// SensitivityCSV is sensitivity.csv: one row per parameter, in the given
// order, with the baseline metric in every row.
func SensitivityCSV(metric string, base float64, rows []SensitivityRow) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "param,grade,range,low_value,%s_low,high_value,%s_high,swing,%s_base\n", metric, metric, metric)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.Param, r.Grade, r.Range, r.LowValue, g(r.Low), r.HighValue, g(r.High), g(r.Swing()), g(base))
	}
	return b.Bytes()
}

// WriteTornado draws the tornado chart of a sensitivity analysis into
// dir/plots: one horizontal bar per parameter from its low-value to its
// high-value metric (two bars side by side), largest swing on top, and
// the baseline as a line named in the legend.
// lowLabel and highLabel say what the two ends are ("low end"); a
// narrow legend column names the two colours (the image has no title: it
// is the caption's job).
func WriteTornado(fsys atomicfs.FS, dir, metricLabel, lowLabel, highLabel string, base float64, rows []SensitivityRow) error {
	plots, err := mkPlotsDir(fsys, dir)
	if err != nil {
		return err
	}
	p := newPlot(metricLabel, "", true)
	leg := newLegend()
	n := len(rows)
	names := make([]string, n)
	lo, hi := base, base
	for i, r := range rows {
		// Largest swing on top: row i is drawn at y = n-1-i.
		y := float64(n - 1 - i)
		names[n-1-i] = strings.TrimPrefix(r.Param, "datapath.") + " [" + r.Grade + "]"
		a, b := min(r.Low, r.High), max(r.Low, r.High)
		lo, hi = min(lo, a), max(hi, b)
		// The two ends side by side, not one over the other: where both
		// move the headline the same way, the longer bar hid the shorter.
		for k, v := range []float64{r.Low, r.High} {
			dy := []float64{0.17, -0.17}[k]
			l, err := plotter.NewLine(plotter.XYs{{X: base, Y: y + dy}, {X: v, Y: y + dy}})
			if err != nil {
				return err
			}
			l.LineStyle.Width = vg.Points(6)
			l.LineStyle.Color = colour(k)
			p.Add(l)
			if i == 0 {
				leg.add([]string{lowLabel, highLabel}[k], l)
			}
		}
	}
	bl, err := plotter.NewLine(plotter.XYs{{X: base, Y: -0.6}, {X: base, Y: float64(n) - 0.4}})
	if err != nil {
		return err
	}
	bl.LineStyle.Color = color.Black
	p.Add(bl)
	leg.add(fmt.Sprintf("as run: %s", fmtSig(base)), bl)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.NominalY(names...)
	pad := 0.05 * (hi - lo)
	p.X.Min, p.X.Max = lo-pad, hi+pad
	// The parameter names take a third of the width: the figure is wider
	// than the others so the bars keep theirs.
	f := &figure{name: "sensitivity", panels: []*plot.Plot{p}, legend: leg, w: figW + 8*vg.Centimeter, h: vg.Points(float64(70 + 20*n))}
	_, err = f.save(fsys, plots)
	return err
}

// SensitivityFile is the table's name in a sensitivity directory and in a
// run directory whose run computed it; SensitivityNoteFile says instead
// why a run did not.
const (
	SensitivityFile     = "sensitivity.csv"
	SensitivityNoteFile = "sensitivity.txt"
)

// ReadSensitivity reads sensitivity.csv (SensitivityCSV's layout): the
// rows in file order, the metric's name and its baseline value.
func ReadSensitivity(path string) (rows []SensitivityRow, metric string, base float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", 0, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, "", 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != 9 || recs[0][0] != "param" || !strings.HasSuffix(recs[0][8], "_base") {
		return nil, "", 0, fmt.Errorf("%s: not a sensitivity table (want the header param,grade,range,low_value,..., METRIC_base)", path)
	}
	metric = strings.TrimSuffix(recs[0][8], "_base")
	for i, r := range recs[1:] {
		num := func(j int) float64 {
			v, perr := strconv.ParseFloat(r[j], 64)
			if perr != nil && err == nil {
				err = fmt.Errorf("%s: row %d, column %s: %q is not a number", path, i+2, recs[0][j], r[j])
			}
			return v
		}
		rows = append(rows, SensitivityRow{Param: r[0], Grade: r[1], Range: r[2], LowValue: r[3], Low: num(4), HighValue: r[5], High: num(6)})
		base = num(8)
	}
	return rows, metric, base, err
}

// writeRestsOn lists, under a run's tables, the three parameters its
// headline moves most with (sensitivity.csv, computed by the run), or
// why the run has none.
func writeRestsOn(md *strings.Builder, dir string) error {
	rows, metric, base, err := ReadSensitivity(filepath.Join(dir, SensitivityFile))
	if errors.Is(err, fs.ErrNotExist) {
		note, nerr := os.ReadFile(filepath.Join(dir, SensitivityNoteFile))
		if nerr == nil {
			fmt.Fprintf(md, "\n## What the headline rests on\n\nSensitivity %s\n", strings.TrimSpace(string(note)))
		}
		return nil
	}
	if err != nil {
		return err
	}
	md.WriteString("\n## What the headline rests on\n\n")
	what := map[string]string{"gain_pct": "The conspirator-vs-host-rdma gain", "gpu_hours_vs_baseline_pct": "The conspirator policy's GPU-hours against the baseline"}[metric]
	if what == "" {
		what = "The headline (" + metric + ")"
	}
	fmt.Fprintf(md, "%s, %.1f%% as run, moves most with these parameters, each moved alone across its plausible range (same seed; every parameter in `%s`, `conspirator sensitivity` draws the tornado chart):\n\n", what, base, SensitivityFile)
	md.WriteString("| parameter | grade of its default | range from | low end | % | high end | % | swing (points) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows[:min(3, len(rows))] {
		fmt.Fprintf(md, "| `%s` | %s | %s | %s | %.1f | %s | %.1f | %.1f |\n", r.Param, r.Grade, r.Range, r.LowValue, r.Low, r.HighValue, r.High, r.Swing())
	}
	return nil
}

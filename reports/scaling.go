package reports

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// ScalePoint is one run of a scaling benchmark: its size and what it cost.
type ScalePoint struct {
	Jobs, GPUs int
	Seconds    float64
	PeakMB     float64
}

// benchLine matches BenchmarkScale's lines:
// BenchmarkScale/jobs=N/gpus=G[-P]  iters  ns/op ... X peak-heap-MB
var benchLine = regexp.MustCompile(`^BenchmarkScale/jobs=(\d+)/gpus=(\d+)(?:-\d+)?\s+(\d+)\s+([0-9.e+]+) ns/op(.*)$`)

// ParseScaleBench reads the lines of `go test -bench Scale` output (other
// lines are passed over) into points. A benchmark line without its
// peak-heap-MB metric is an error naming the line.
func ParseScaleBench(r io.Reader) ([]ScalePoint, error) {
	var out []ScalePoint
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		var p ScalePoint
		p.Jobs, _ = strconv.Atoi(m[1])
		p.GPUs, _ = strconv.Atoi(m[2])
		ns, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: ns/op %q: %w", n, m[4], err)
		}
		p.Seconds = ns / 1e9
		f := strings.Fields(m[5])
		for k := 0; k+1 < len(f); k++ {
			if f[k+1] == "peak-heap-MB" {
				p.PeakMB, err = strconv.ParseFloat(f[k], 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: peak-heap-MB %q: %w", n, f[k], err)
				}
			}
		}
		if !(p.PeakMB > 0) {
			return nil, fmt.Errorf("line %d: no peak-heap-MB metric; want the output of BenchmarkScale (sim/scale_bench_test.go)", n)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no BenchmarkScale lines; run go test -cpu 1 -run '^$' -bench Scale -benchtime 1x ./sim/")
	}
	return out, nil
}

// ScaleSeries is the points of one axis: the jobs at a fixed cluster, or
// the GPUs at a fixed number of jobs, with the log-log slopes of time and
// memory against that size (NaN with fewer than two sizes).
type ScaleSeries struct {
	Axis        string // "jobs" or "GPUs"
	Fixed       string // what the other axis is held at
	Points      []ScalePoint
	TimeSlope   float64
	MemorySlope float64
}

// ScaleAxes splits points into the jobs axis (the smallest cluster, every
// job count) and the GPU axis (the largest job count, every cluster), each
// sorted by its size, and fits the slopes: the exponent b of cost ~ size^b,
// by least squares on log10 of both.
func ScaleAxes(pts []ScalePoint) []ScaleSeries {
	minG, maxJ := math.MaxInt, 0
	for _, p := range pts {
		minG, maxJ = min(minG, p.GPUs), max(maxJ, p.Jobs)
	}
	jobs := ScaleSeries{Axis: "jobs", Fixed: fmt.Sprintf("%d GPUs", minG)}
	gpus := ScaleSeries{Axis: "GPUs", Fixed: fmt.Sprintf("%d jobs", maxJ)}
	for _, p := range pts {
		if p.GPUs == minG {
			jobs.Points = append(jobs.Points, p)
		}
		if p.Jobs == maxJ {
			gpus.Points = append(gpus.Points, p)
		}
	}
	slices.SortFunc(jobs.Points, func(a, b ScalePoint) int { return a.Jobs - b.Jobs })
	slices.SortFunc(gpus.Points, func(a, b ScalePoint) int { return a.GPUs - b.GPUs })
	out := []ScaleSeries{jobs, gpus}
	for k := range out {
		s := &out[k]
		x, t, m := make([]float64, len(s.Points)), make([]float64, len(s.Points)), make([]float64, len(s.Points))
		for i, p := range s.Points {
			x[i] = math.Log10(float64(p.Jobs))
			if s.Axis == "GPUs" {
				x[i] = math.Log10(float64(p.GPUs))
			}
			t[i], m[i] = math.Log10(p.Seconds), math.Log10(p.PeakMB)
		}
		s.TimeSlope, s.MemorySlope = slope(x, t), slope(x, m)
	}
	return out
}

// slope is the least-squares slope of y on x; NaN without two distinct x.
func slope(x, y []float64) float64 {
	if len(x) < 2 || slices.Min(x) == slices.Max(x) {
		return math.NaN()
	}
	_, b := stat.LinearRegression(x, y, nil, false)
	return b
}

// WriteScaling writes dir/scale.csv (every point), the log-log figure
// dir/scale.{png,svg,pdf} (time and peak memory against jobs and against
// GPUs, each line labelled with its fitted slope) and returns a text
// summary of the slopes.
func WriteScaling(fsys atomicfs.FS, dir string, pts []ScalePoint) (string, error) {
	axes := ScaleAxes(pts)
	var csv strings.Builder
	csv.WriteString("jobs,gpus,seconds,peak_heap_mb\n")
	for _, p := range pts {
		fmt.Fprintf(&csv, "%d,%d,%s,%s\n", p.Jobs, p.GPUs, strconv.FormatFloat(p.Seconds, 'g', 6, 64), strconv.FormatFloat(p.PeakMB, 'g', 6, 64))
	}
	if err := atomicfs.WriteFile(fsys, dir+"/scale.csv", []byte(csv.String())); err != nil {
		return "", err
	}
	fig := &figure{name: "scale", caption: "Replay cost against jobs and against GPUs, log-log, with the fitted slopes", legend: newLegend(), w: 8 * vg.Inch, h: 3.4 * vg.Inch}
	var sum strings.Builder
	for pi, panel := range []struct {
		y, title string
		value    func(ScalePoint) float64
	}{{"wall time (s)", "wall time", func(p ScalePoint) float64 { return p.Seconds }},
		{"peak heap (MB)", "peak heap", func(p ScalePoint) float64 { return p.PeakMB }}} {
		p := newPlot("jobs, or GPUs", panel.y, true)
		setLog(&p.X)
		setLog(&p.Y)
		var slopes []string
		for si, s := range axes {
			if len(s.Points) == 0 {
				continue
			}
			xy := make(plotter.XYs, len(s.Points))
			for i, pt := range s.Points {
				xy[i].X = float64(pt.Jobs)
				if s.Axis == "GPUs" {
					xy[i].X = float64(pt.GPUs)
				}
				xy[i].Y = panel.value(pt)
			}
			l, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return "", fmt.Errorf("scaling figure: %w", err)
			}
			l.LineStyle = lineStyle(si)
			sc.Color = colour(si)
			p.Add(l, sc)
			if pi == 0 {
				fig.legend.add(fmt.Sprintf("against %s (%s)", s.Axis, s.Fixed), l, sc)
			}
			b := s.TimeSlope
			if pi == 1 {
				b = s.MemorySlope
			}
			slopes = append(slopes, fmt.Sprintf("%.2f (%s)", b, s.Axis))
			fmt.Fprintf(&sum, "%s against %s (%s): slope %.2f\n", panel.title, s.Axis, s.Fixed, b)
		}
		panelTitle(p, panel.title+": slope "+strings.Join(slopes, ", "))
		fig.panels = append(fig.panels, p)
	}
	if _, err := fig.save(fsys, dir); err != nil {
		return "", err
	}
	return sum.String(), nil
}

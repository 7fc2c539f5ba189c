package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"codeberg.org/go-pdf/fpdf"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Figure size and resolution: 16 x 9 cm at 150 dpi is readable on a screen
// and in a paper column; the sans-serif font sizes below are in points.
const (
	figW = 16 * vg.Centimeter
	figH = 9 * vg.Centimeter
	dpi  = 150
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette is colour-blind safe (Okabe-Ito, its yellow replaced by Paul
// Tol's wine, readable on white), in a fixed order so a path or policy
// keeps its colour across figures when listed in the same order.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{136, 34, 85, 255},   // wine (Tol): Okabe-Ito's yellow is unreadable as a line on white
	color.RGBA{0, 0, 0, 255},       // black
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// stageColour gives stacked segments distinct colours when there are more
// of them than the palette has: hues evenly spaced around the circle, with
// alternating lightness so neighbours in the stack stay apart.
func stageColour(i, n int) color.Color {
	if n <= len(palette) {
		return colour(i)
	}
	h := float64(i) / float64(n) * 360
	l := 0.45
	if i%2 == 1 {
		l = 0.68
	}
	return hsl(h, 0.65, l)
}

// hsl converts hue (degrees), saturation and lightness in [0,1] to RGB.
func hsl(h, s, l float64) color.Color {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to8 := func(v float64) uint8 { return uint8(math.Round(255 * (v + m))) }
	return color.RGBA{R: to8(r), G: to8(g), B: to8(b), A: 255}
}

// dashes give each line a second cue besides colour.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: colour(i), Width: vg.Points(1.6), Dashes: dashes[i%len(dashes)]}
}

// newPlot makes a plot with axis labels (with units) and readable
// sans-serif text; vertical grid lines only where x is a numeric scale. It
// has no title: a figure's title is its caption in the report, outside the
// image, where a paper puts it too; only the panels of a multi-panel
// figure get a heading (panelTitle).
func newPlot(xLabel, yLabel string, vgrid bool) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.X.Padding, p.Y.Padding = vg.Points(4), vg.Points(4)
	// Round values written as such (250, 25000; gonum's default writes
	// "250.00"); a log or nominal axis sets its own.
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{most: 6}, linearTicks{most: 6}
	g := plotter.NewGrid()
	if !vgrid {
		g.Vertical.Color = nil
	}
	p.Add(g)
	return p
}

// panelTitle heads one panel of a multi-panel figure.
func panelTitle(p *plot.Plot, title string) {
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
}

// legend collects entries drawn in a column right of the plot, so it never
// covers data.
type legend struct {
	plot.Legend
	n     int
	names []string // entry texts, to size the legend column
}

func newLegend() *legend {
	l := &legend{Legend: plot.NewLegend()}
	l.TextStyle.Font = font.From(sans, 10)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	return l
}

func (l *legend) add(name string, thumbs ...plot.Thumbnailer) {
	l.Add(name, thumbs...)
	l.n++
	l.names = append(l.names, name)
}

// width is the legend column's width: the widest entry plus the swatch.
func (l *legend) width() vg.Length {
	var w vg.Length
	for _, n := range l.names {
		if tw := l.TextStyle.Width(n); tw > w {
			w = tw
		}
	}
	return w + l.ThumbnailWidth + 5*l.TextStyle.Width(" ")
}

// figure is what gets saved: one or more panels side by side and an
// optional legend column.
type figure struct {
	name    string // file name without extension
	caption string
	panels  []*plot.Plot
	legend  *legend
	w, h    vg.Length
	// cols lays the panels out in rows of cols (row-major; 0: one row).
	cols int
}

func (f *figure) draw(c draw.Canvas) {
	// A small margin keeps the title and tick labels off the image edge.
	c = draw.Crop(c, vg.Points(3), -vg.Points(3), vg.Points(3), -vg.Points(5))
	dc := c
	if f.legend != nil && f.legend.n > 0 {
		lw := f.legend.width()
		dc = draw.Crop(c, 0, -lw, 0, 0)
		lc := draw.Crop(c, c.Max.X-c.Min.X-lw+vg.Points(4), 0, 0, -vg.Points(28))
		f.legend.Draw(lc)
	}
	if len(f.panels) == 1 {
		drawPanel(f.panels[0], dc)
		return
	}
	cols := f.cols
	if cols <= 0 {
		cols = len(f.panels)
	}
	rows := (len(f.panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i, p := range f.panels {
		grid[i/cols] = append(grid[i/cols], p)
	}
	for len(grid[rows-1]) < cols {
		grid[rows-1] = append(grid[rows-1], nil) // an empty tile
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(18), PadY: vg.Points(6), PadRight: vg.Points(4), PadTop: vg.Points(2)}
	cs := plot.Align(grid, tiles, dc)
	for i, p := range f.panels {
		drawPanel(p, cs[i/cols][i%cols])
	}
}

// drawPanel draws p into c, placing the labels of log-scale axes itself.
// gonum reserves room for an axis label centred on the data value
// (min+max)/2, which on a log axis sits near the far end, so the label's
// box seems to overflow and the data area shrinks by half the label's
// length. The label is drawn centred on the data area, so that room is
// never used; here the label is taken out of the layout and drawn by hand.
func drawPanel(p *plot.Plot, c draw.Canvas) {
	_, xlog := p.X.Scale.(plot.LogScale)
	_, ylog := p.Y.Scale.(plot.LogScale)
	xl, yl := p.X.Label, p.Y.Label
	inner := c
	if ylog && yl.Text != "" {
		p.Y.Label.Text = ""
		inner = draw.Crop(inner, yl.TextStyle.Height(yl.Text)+yl.Padding+vg.Points(4), 0, 0, 0)
	}
	if xlog && xl.Text != "" {
		p.X.Label.Text = ""
		inner = draw.Crop(inner, 0, 0, xl.TextStyle.Height(xl.Text)+xl.Padding, 0)
	}
	p.Draw(inner)
	da := p.DataCanvas(inner)
	p.X.Label, p.Y.Label = xl, yl // drawn once per format: leave p as found
	if ylog && yl.Text != "" {
		sty := yl.TextStyle
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Min.X, Y: (da.Min.Y + da.Max.Y) / 2}, yl.Text)
	}
	if xlog && xl.Text != "" {
		sty := xl.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		c.FillText(sty, vg.Point{X: (da.Min.X + da.Max.X) / 2, Y: c.Min.Y + sty.FontExtents().Descent}, xl.Text)
	}
}

func init() {
	// A PDF's info dictionary carries creation and modification dates,
	// the wall clock unless set, and fpdf orders some of its catalogue by
	// map iteration unless asked to sort. Outputs must be byte-identical
	// for the same inputs, so the dates are pinned to the Unix epoch (what
	// reproducible builds use without SOURCE_DATE_EPOCH) and the catalogue
	// sorted. vgpdf gives no access to its document, hence the defaults.
	epoch := time.Unix(0, 0).UTC()
	fpdf.SetDefaultCreationDate(epoch)
	fpdf.SetDefaultModificationDate(epoch)
	fpdf.SetDefaultCatalogSort(true)
}

// save writes dir/name.png, name.svg and name.pdf atomically and returns
// the PNG's base name. The encoders are deterministic for the same figure:
// no timestamps, no random ids (Render's tests check byte equality).
func (f *figure) save(fsys atomicfs.FS, dir string) (base string, err error) {
	// gonum/plot panics on data it cannot draw (a non-positive value on a
	// log axis); a figure that cannot be drawn is an error of that figure,
	// never a crash that loses the run's other results.
	defer func() {
		if r := recover(); r != nil {
			base, err = "", fmt.Errorf("plot %s: cannot draw: %v", f.name, r)
		}
	}()
	w, h := f.w, f.h
	if w == 0 {
		w, h = figW, figH
	}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(png))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: png}).WriteTo(&pb); err != nil {
		return "", fmt.Errorf("plot %s: encode png: %w", f.name, err)
	}
	svg := vgsvg.New(w, h)
	f.draw(draw.New(svg))
	var sb bytes.Buffer
	if _, err := svg.WriteTo(&sb); err != nil {
		return "", fmt.Errorf("plot %s: encode svg: %w", f.name, err)
	}
	pdf := vgpdf.New(w, h)
	f.draw(draw.New(pdf))
	var fb bytes.Buffer
	if _, err := pdf.WriteTo(&fb); err != nil {
		return "", fmt.Errorf("plot %s: encode pdf: %w", f.name, err)
	}
	base = f.name + ".png"
	for _, out := range []struct {
		name string
		data []byte
	}{{base, pb.Bytes()}, {f.name + ".svg", sb.Bytes()}, {f.name + ".pdf", fb.Bytes()}} {
		if err := atomicfs.WriteFile(fsys, filepath.Join(dir, out.name), out.data); err != nil {
			return "", err
		}
	}
	return base, nil
}

// saveFigures saves each figure into plots and puts it into the report
// page md: the image, then its caption (the figure's title, which the
// image leaves out) with links to the vector versions a paper would
// include.
func saveFigures(fsys atomicfs.FS, plots string, md *strings.Builder, figs []*figure) error {
	for _, f := range figs {
		png, err := f.save(fsys, plots)
		if err != nil {
			return err
		}
		fmt.Fprintf(md, "\n![%s](%s/%s)\n\n*%s* ([SVG](%s/%s.svg), [PDF](%s/%s.pdf))\n", f.name, PlotsDir, png, f.caption, PlotsDir, f.name, PlotsDir, f.name)
	}
	return nil
}

// useLogScale says whether positive data spanning more than a factor of 30
// reads better on a log axis.
func useLogScale(vals ...[]float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range vals {
		for _, v := range vs {
			if math.IsNaN(v) {
				continue
			}
			if v <= 0 {
				return false
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi > 30*lo
}

func setLog(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
}

// logTicks marks powers of ten (and 2x, 5x when fewer than two powers fall
// in range) with labels, other integer multiples without. Unlike
// plot.LogTicks it emits no tick outside [min, max]: gonum reserves room
// for every tick label, so out-of-range ticks shrink the plot area.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max >= min) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	powers := 0
	for e := lo; e <= hi; e++ {
		if v := math.Pow10(e); v >= min && v <= max {
			powers++
		}
	}
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		for m := 1; m < 10; m++ {
			v := float64(m) * math.Pow10(e)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || powers < 2 && (m == 2 || m == 5) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes one scheme on every log axis: 0.01 to 999 plainly,
// larger values with an SI suffix (1k, 10k, 2M: an axis from 10 to 1e6
// read "10, 100, 1000, 1e4, 1e5" in two notations), smaller ones as 2e-3.
func tickLabel(v float64) string {
	if v >= 0.01 && v < 1000 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if v >= 1000 {
		for _, u := range []struct {
			div    float64
			suffix string
		}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
			if v >= u.div {
				return strconv.FormatFloat(math.Round(v/u.div*10)/10, 'g', -1, 64) + u.suffix
			}
		}
	}
	e := int(math.Floor(math.Log10(v)))
	m := v / math.Pow10(e)
	return strconv.FormatFloat(math.Round(m*10)/10, 'g', -1, 64) + "e" + strconv.Itoa(e)
}

// linearTicks labels round values (1, 2 or 5 times a power of ten) in
// [min, max], at most most of them (0: 10), written without trailing
// zeros: gonum's default ticker labels two values with a fixed two
// decimals ("2500.00").
type linearTicks struct{ most int }

func (t linearTicks) Ticks(min, max float64) []plot.Tick {
	most := float64(t.most)
	if most <= 0 {
		most = 10
	}
	if !(max > min) || math.IsInf(max-min, 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	span := max - min
	step := math.Pow10(int(math.Floor(math.Log10(span))))
	// The power of ten at or below the span gives 1 to 10 steps; 2 and
	// 5 of it keep a wide span (78,000: steps of 20,000, not 10,000)
	// within most labels.
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2, 5} {
		if span/(step*m) <= most {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(min/step - 1e-9); i*step <= max*(1+1e-12)+1e-300; i++ {
		v := i * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 10, 64)})
		if h := v + step/2; h < max {
			ticks = append(ticks, plot.Tick{Value: h}) // an unlabelled minor tick
		}
	}
	return ticks
}

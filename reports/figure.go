package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// Figure size and resolution: 16 x 9 cm at 150 dpi is readable on a screen
// and in a paper column; the sans-serif font sizes below are in points.
const (
	figW = 16 * vg.Centimeter
	figH = 9 * vg.Centimeter
	dpi  = 150
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette is colour-blind safe (Okabe-Ito), in a fixed order so a path or
// policy keeps its colour across figures when listed in the same order.
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{240, 228, 66, 255},  // yellow
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

// newPlot makes a plot with title, axis labels (with units) and readable
// sans-serif text.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.X.Padding, p.Y.Padding = vg.Points(4), vg.Points(4)
	p.Add(plotter.NewGrid())
	return p
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
	return w + l.ThumbnailWidth + 3*l.TextStyle.Width(" ")
}

// figure is what gets saved: one or more panels side by side and an
// optional legend column.
type figure struct {
	name    string // file name without extension
	caption string
	panels  []*plot.Plot
	legend  *legend
	w, h    vg.Length
}

func (f *figure) draw(c draw.Canvas) {
	dc := c
	if f.legend != nil && f.legend.n > 0 {
		lw := f.legend.width()
		dc = draw.Crop(c, 0, -lw, 0, 0)
		lc := draw.Crop(c, c.Max.X-c.Min.X-lw+vg.Points(4), 0, 0, -vg.Points(28))
		f.legend.Draw(lc)
	}
	if len(f.panels) == 1 {
		f.panels[0].Draw(dc)
		return
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(f.panels), PadX: vg.Points(18), PadRight: vg.Points(4), PadTop: vg.Points(2)}
	cs := plot.Align([][]*plot.Plot{f.panels}, tiles, dc)
	for i, p := range f.panels {
		p.Draw(cs[0][i])
	}
}

// save writes dir/name.png and dir/name.svg atomically and returns the
// PNG's base name. Both encoders are deterministic for the same figure:
// no timestamps, no random ids (Render's tests check byte equality).
func (f *figure) save(dir string) (string, error) {
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
	base := f.name + ".png"
	if err := sweep.WriteFileAtomic(filepath.Join(dir, base), pb.Bytes()); err != nil {
		return "", err
	}
	if err := sweep.WriteFileAtomic(filepath.Join(dir, f.name+".svg"), sb.Bytes()); err != nil {
		return "", err
	}
	return base, nil
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
	a.Tick.Marker = plot.LogTicks{Prec: -1}
}

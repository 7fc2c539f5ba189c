package reports

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A map's one labelled contour (issue 38): gonum's plotter.Contour draws
// unlabelled lines and gives no access to them, so the reference level
// (the paper's 15%) is traced here by marching squares over the cell
// centres, its pieces joined into paths, the pieces that only ring a cell
// or two left out, and the longest labelled.

// edgeKey names the crossing on one edge of the grid: the edge from node
// (i, j) to (i+1, j) (vert false) or to (i, j+1) (vert true).
type edgeKey struct {
	i, j int
	vert bool
}

// contourPaths traces level through z (z[i][j] at x = i, y = j; NaN
// nodes end a path) and returns its pieces as polylines in index
// coordinates, in a deterministic order (by where each starts in a scan).
func contourPaths(z [][]float64, level float64) [][]vg.Point {
	nx := len(z)
	if nx < 2 || len(z[0]) < 2 {
		return nil
	}
	ny := len(z[0])
	above := func(i, j int) bool { return z[i][j] > level }
	at := map[edgeKey]vg.Point{}
	cross := func(e edgeKey) vg.Point {
		if p, ok := at[e]; ok {
			return p
		}
		i2, j2 := e.i+1, e.j
		if e.vert {
			i2, j2 = e.i, e.j+1
		}
		a, b := z[e.i][e.j], z[i2][j2]
		t := 0.5
		if b != a {
			t = (level - a) / (b - a)
		}
		p := vg.Point{X: vg.Length(float64(e.i) + t*float64(i2-e.i)), Y: vg.Length(float64(e.j) + t*float64(j2-e.j))}
		at[e] = p
		return p
	}
	next := map[edgeKey][]edgeKey{}
	var order []edgeKey
	link := func(a, b edgeKey) {
		for _, e := range []edgeKey{a, b} {
			if _, ok := next[e]; !ok {
				order = append(order, e)
			}
		}
		next[a] = append(next[a], b)
		next[b] = append(next[b], a)
		cross(a)
		cross(b)
	}
	for j := 0; j+1 < ny; j++ {
		for i := 0; i+1 < nx; i++ {
			v := []float64{z[i][j], z[i+1][j], z[i+1][j+1], z[i][j+1]}
			if math.IsNaN(v[0]) || math.IsNaN(v[1]) || math.IsNaN(v[2]) || math.IsNaN(v[3]) {
				continue
			}
			// Corners a b c d anticlockwise from (i, j); the edge after
			// each corner: bottom, right, top, left.
			up := []bool{above(i, j), above(i+1, j), above(i+1, j+1), above(i, j+1)}
			edges := []edgeKey{{i, j, false}, {i + 1, j, true}, {i, j + 1, false}, {i, j, true}}
			var crossed []int
			for k := range 4 {
				if up[k] != up[(k+1)%4] {
					crossed = append(crossed, k)
				}
			}
			switch len(crossed) {
			case 2:
				link(edges[crossed[0]], edges[crossed[1]])
			case 4:
				// A saddle: the centre's side decides which corners the
				// lines cut off (those on the other side), each between
				// the two edges that meet at it.
				centre := (v[0]+v[1]+v[2]+v[3])/4 > level
				for k := range 4 {
					if up[k] != centre {
						link(edges[(k+3)%4], edges[k])
					}
				}
			}
		}
	}
	// Walk the chains: the open ones from an end first, then the loops.
	used := map[[2]edgeKey]bool{}
	seg := func(a, b edgeKey) [2]edgeKey {
		if a.i < b.i || a.i == b.i && (a.j < b.j || a.j == b.j && !a.vert) {
			return [2]edgeKey{a, b}
		}
		return [2]edgeKey{b, a}
	}
	walk := func(start edgeKey) []vg.Point {
		path := []vg.Point{at[start]}
		cur := start
		for {
			moved := false
			for _, n := range next[cur] {
				if s := seg(cur, n); !used[s] {
					used[s] = true
					path = append(path, at[n])
					cur, moved = n, true
					break
				}
			}
			if !moved {
				return path
			}
		}
	}
	var paths [][]vg.Point
	for _, pass := range []bool{true, false} {
		for _, e := range order {
			if pass && len(next[e]) != 1 {
				continue
			}
			if p := walk(e); len(p) > 1 {
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// smallPiece says whether a contour piece stays within two cells both
// ways: it rings or cuts off one or two cells, which one seed's noise
// moves across the level, and would be read as a feature.
func smallPiece(p []vg.Point) bool {
	minX, maxX, minY, maxY := p[0].X, p[0].X, p[0].Y, p[0].Y
	for _, q := range p {
		minX, maxX = min(minX, q.X), max(maxX, q.X)
		minY, maxY = min(minY, q.Y), max(maxY, q.Y)
	}
	return maxX-minX < 2 && maxY-minY < 2
}

// labelledContour draws paths (index coordinates) as thick black lines,
// label on a white box at the middle of the longest.
type labelledContour struct {
	paths [][]vg.Point
	label string
	// avoid are points (index coordinates) the label must not cover: the
	// scenario's own point.
	avoid []plotter.XY
}

func (lc labelledContour) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(2.2)}
	var longest []vg.Point
	longestLen := -1.0
	for _, p := range lc.paths {
		pts := make([]vg.Point, len(p))
		l := 0.0
		for k, q := range p {
			pts[k] = vg.Point{X: trX(float64(q.X)), Y: trY(float64(q.Y))}
			if k > 0 {
				l += math.Hypot(float64(pts[k].X-pts[k-1].X), float64(pts[k].Y-pts[k-1].Y))
			}
		}
		c.StrokeLines(sty, c.ClipLinesXY(pts)...)
		if l > longestLen {
			longest, longestLen = pts, l
		}
	}
	if lc.label == "" || longest == nil {
		return
	}
	ts := draw.TextStyle{Color: color.Black, Font: font.From(sans, 9), XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	w, h := ts.Width(lc.label), ts.Height(lc.label)
	pad := vg.Points(2)
	// The label's box at fraction f along the longest piece, kept inside
	// the data area.
	boxAt := func(f float64) vg.Point {
		at, run := longest[len(longest)-1], 0.0
		for k := 1; k < len(longest); k++ {
			d := math.Hypot(float64(longest[k].X-longest[k-1].X), float64(longest[k].Y-longest[k-1].Y))
			if d > 0 && run+d >= f*longestLen {
				t := vg.Length((f*longestLen - run) / d)
				at = vg.Point{X: longest[k-1].X + t*(longest[k].X-longest[k-1].X), Y: longest[k-1].Y + t*(longest[k].Y-longest[k-1].Y)}
				break
			}
			run += d
		}
		at.X = max(c.Min.X+w/2+pad, min(c.Max.X-w/2-pad, at.X))
		at.Y = max(c.Min.Y+h/2+pad, min(c.Max.Y-h/2-pad, at.Y))
		return at
	}
	// Half way, or the nearest place along it (in steps of a tenth) that
	// keeps clear of the points to avoid.
	at := boxAt(0.5)
	for _, f := range []float64{0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9} {
		p := boxAt(f)
		clear := true
		for _, a := range lc.avoid {
			if math.IsNaN(a.X) || math.IsNaN(a.Y) {
				continue
			}
			ax, ay := trX(a.X), trY(a.Y)
			if vg.Length(math.Abs(float64(ax-p.X))) < w/2+pad+vg.Points(9) && vg.Length(math.Abs(float64(ay-p.Y))) < h/2+pad+vg.Points(9) {
				clear = false
			}
		}
		if clear {
			at = p
			break
		}
	}
	box := []vg.Point{{X: at.X - w/2 - pad, Y: at.Y - h/2 - pad}, {X: at.X - w/2 - pad, Y: at.Y + h/2 + pad}, {X: at.X + w/2 + pad, Y: at.Y + h/2 + pad}, {X: at.X + w/2 + pad, Y: at.Y - h/2 - pad}}
	c.FillPolygon(color.White, box)
	c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}, append(box, box[0]))
	c.FillText(ts, at, lc.label)
}

package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MaxSeries bounds the number of lines of one Curve.
const MaxSeries = 10

// axisLabelChars is the number of characters of an axis label kept.
const axisLabelChars = 80

// legendEntry is one item of a legend row: a line sample and/or a glyph, then
// the name.
type legendEntry struct {
	name  string
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

const legendSample = 28 // px length of a legend line sample

// legendRows splits entries into rows that fit in width pixels.
func legendRows(entries []legendEntry, width float64) [][]legendEntry {
	sty := textStyle(10, false, axisBlack, draw.XLeft, draw.YCenter)
	var rows [][]legendEntry
	var row []legendEntry
	used := 0.0
	for _, e := range entries {
		w := legendSample + 6 + toPx(sty.Width(e.name)) + 24
		if len(row) > 0 && used+w > width {
			rows = append(rows, row)
			row, used = nil, 0
		}
		row = append(row, e)
		used += w
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

const legendRowHeight = 22

// drawLegend draws the legend rows centred at the top of c and returns the
// canvas below them.
func drawLegend(c draw.Canvas, rows [][]legendEntry) draw.Canvas {
	sty := textStyle(10, false, axisBlack, draw.XLeft, draw.YCenter)
	y := c.Max.Y - px(legendRowHeight/2)
	for _, row := range rows {
		var total vg.Length
		for _, e := range row {
			total += px(legendSample+6) + sty.Width(e.name) + px(24)
		}
		total -= px(24)
		x := (c.Min.X+c.Max.X)/2 - total/2
		for _, e := range row {
			if e.line.Color != nil {
				c.StrokeLine2(e.line, x, y, x+px(legendSample), y)
			}
			if e.glyph.Shape != nil {
				c.DrawGlyphNoClip(e.glyph, vg.Point{X: x + px(legendSample/2), Y: y})
			}
			x += px(legendSample + 6)
			c.FillText(sty, vg.Point{X: x, Y: y}, e.name)
			x += sty.Width(e.name) + px(24)
		}
		y -= px(legendRowHeight)
	}
	c.Max.Y -= px(float64(legendRowHeight * len(rows)))
	return c
}

// allIntegers reports whether every value is a whole number.
func allIntegers(v []float64) bool {
	for _, x := range v {
		if x != math.Trunc(x) {
			return false
		}
	}
	return true
}

// Curve draws one line per series against xs, with a legend under the title
// (series in name order, Tableau colours). Every series must have one value
// per x; NaN marks a missing value (the line skips it), other values must
// be finite and each series needs one. Integer xs (rounds) get integer ticks.
// Points are marked when there are at most 60 of them. At most MaxSeries
// series.
func Curve(path string, xs []float64, series map[string][]float64, xlabel, ylabel, title string) error {
	wrap := func(err error) error { return fmt.Errorf("plot: curve %s: %w", path, err) }
	if err := checkNonEmptyFinite("xs", xs); err != nil {
		return wrap(err)
	}
	if len(series) == 0 {
		return wrap(errors.New("no series"))
	}
	if len(series) > MaxSeries {
		return wrap(fmt.Errorf("%d series: at most %d", len(series), MaxSeries))
	}
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	slices.Sort(names)
	var all []float64
	for _, name := range names {
		ys := series[name]
		if len(ys) != len(xs) {
			return wrap(fmt.Errorf("series %q has %d values for %d xs", name, len(ys), len(xs)))
		}
		var present []float64
		for _, v := range ys {
			if !math.IsNaN(v) {
				present = append(present, v)
			}
		}
		if len(present) == 0 {
			return wrap(fmt.Errorf("series %q has no value", name))
		}
		if err := checkFinite(fmt.Sprintf("series %q", name), present); err != nil {
			return wrap(err)
		}
		all = append(all, present...)
	}

	p := newGridPlot(xlabel, ylabel)
	marks := len(xs) <= 60
	var entries []legendEntry
	for i, name := range names {
		pts := make(plotter.XYs, 0, len(xs))
		for j, x := range xs {
			if y := series[name][j]; !math.IsNaN(y) {
				pts = append(pts, plotter.XY{X: x, Y: y})
			}
		}
		clr := seriesColors[i%len(seriesColors)]
		e := legendEntry{name: truncate(name, 48)}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return wrap(err)
		}
		line.Color = clr
		line.Width = vg.Points(1.8)
		p.Add(line)
		e.line = line.LineStyle
		if marks {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return wrap(err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(2.8), Shape: glyphShapes[i%len(glyphShapes)]}
			p.Add(sc)
			e.glyph = sc.GlyphStyle
		}
		entries = append(entries, e)
	}
	p.X.Min, p.X.Max = padRange(minMaxOf(xs))
	if allIntegers(xs) {
		p.X.Tick.Marker = intTicks{}
	}
	lo, hi := minMax(all)
	p.Y.Min, p.Y.Max = padRange(lo, hi, 0.06)

	const wPx, plotH = 960, 560
	rows := legendRows(entries, wPx-80)
	hPx := int(headerHeight(title, "", float64(wPx))) + legendRowHeight*len(rows) + plotH
	return render(path, wPx, hPx, func(c draw.Canvas) error {
		c = drawHeader(c, title, "")
		c = drawLegend(c, rows)
		p.Draw(inset(c, 16, 32, 12, 8))
		return nil
	})
}

// glyphShapes vary the point marks of different series, so lines stay
// distinguishable without colour.
var glyphShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{},
	draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{},
}

// minMaxOf returns the range of v with the padding fraction of x axes.
func minMaxOf(v []float64) (lo, hi, frac float64) {
	lo, hi = minMax(v)
	return lo, hi, 0.03
}

// MaxScatterLabels is the number of points Scatter labels: all of them when
// there are at most this many, otherwise the ones furthest from the diagonal
// (or from the centre of the cloud without a diagonal).
const MaxScatterLabels = 20

// pointLabels writes the labels of points beside them, in priority order,
// trying right, left, above and below each point and leaving out a label
// that would cover a point, overlap a label already placed or leave the
// frame.
type pointLabels struct {
	pts    plotter.XYs
	labels []string
	all    plotter.XYs // every point of the plot, as obstacles
	radius vg.Length   // glyph radius of the points
}

// Plot implements gonum's plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, trY := plt.Transforms(&c)
	sty := textStyle(8.5, false, textGray, draw.XLeft, draw.YBottom)
	h := sty.Height("Ag")
	gap := px(5)
	placed := make([]vg.Rectangle, 0, len(l.all)+len(l.pts))
	for _, pt := range l.all {
		x, y := trX(pt.X), trY(pt.Y)
		placed = append(placed, vg.Rectangle{
			Min: vg.Point{X: x - l.radius, Y: y - l.radius},
			Max: vg.Point{X: x + l.radius, Y: y + l.radius},
		})
	}
	for i, pt := range l.pts {
		x, y := trX(pt.X), trY(pt.Y)
		w := sty.Width(l.labels[i])
		// Candidate boxes by their bottom-left corner.
		for _, at := range []vg.Point{
			{X: x + gap, Y: y - h/2 + px(1.5)}, // lower-case text sits visually low
			{X: x - gap - w, Y: y - h/2 + px(1.5)},
			{X: x - w/2, Y: y + gap},
			{X: x - w/2, Y: y - gap - h},
		} {
			r := vg.Rectangle{Min: at, Max: vg.Point{X: at.X + w, Y: at.Y + h}}
			if !inside(r, c.Rectangle) || overlapsAny(r, placed) {
				continue
			}
			placed = append(placed, r)
			c.FillText(sty, at, l.labels[i])
			break
		}
	}
}

func inside(r, frame vg.Rectangle) bool {
	return r.Min.X >= frame.Min.X && r.Max.X <= frame.Max.X && r.Min.Y >= frame.Min.Y && r.Max.Y <= frame.Max.Y
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}

// Scatter draws the points (x[i], y[i]). labels may be nil; otherwise it
// must have one entry per point, and up to MaxScatterLabels of them are
// written beside their points (all of them for small sets, else those
// furthest from the diagonal, or from the mean point without one); a label
// that would overlap another is left out. With
// diagonal the plot is square, both axes share one range, the line y = x is
// drawn and a note counts the points below, on and above it (for error
// against error, points below the line favour the y quantity).
func Scatter(path string, x, y []float64, labels []string, xlabel, ylabel, title string, diagonal bool) error {
	wrap := func(err error) error { return fmt.Errorf("plot: scatter %s: %w", path, err) }
	if err := checkNonEmptyFinite("x", x); err != nil {
		return wrap(err)
	}
	if len(y) != len(x) {
		return wrap(fmt.Errorf("%d y values for %d x values", len(y), len(x)))
	}
	if err := checkFinite("y", y); err != nil {
		return wrap(err)
	}
	if labels != nil && len(labels) != len(x) {
		return wrap(fmt.Errorf("%d labels for %d points", len(labels), len(x)))
	}
	n := len(x)
	pts := make(plotter.XYs, n)
	for i := range x {
		pts[i] = plotter.XY{X: x[i], Y: y[i]}
	}

	p := newGridPlot(xlabel, ylabel)

	xlo, xhi := minMax(x)
	ylo, yhi := minMax(y)
	var note string
	if diagonal {
		lo, hi := padRange(math.Min(xlo, ylo), math.Max(xhi, yhi), 0.05)
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
		diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		if err != nil {
			return wrap(err)
		}
		diag.LineStyle = draw.LineStyle{Color: color.Gray{Y: 0x88}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(4)}}
		p.Add(diag)
		var below, on, above int
		for i := range x {
			switch {
			case y[i] < x[i]:
				below++
			case y[i] > x[i]:
				above++
			default:
				on++
			}
		}
		note = fmt.Sprintf("%d points: %d below the line y = x, %d on it, %d above", n, below, on, above)
	} else {
		p.X.Min, p.X.Max = padRange(xlo, xhi, 0.05)
		p.Y.Min, p.Y.Max = padRange(ylo, yhi, 0.05)
	}

	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return wrap(err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: seriesColors[0], Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	p.Add(sc)
	if labels != nil {
		idx := labelledPoints(x, y, diagonal)
		lp := &pointLabels{all: pts, radius: sc.GlyphStyle.Radius}
		for _, i := range idx {
			if labels[i] == "" {
				continue
			}
			lp.pts = append(lp.pts, pts[i])
			lp.labels = append(lp.labels, truncate(labels[i], 24))
		}
		p.Add(lp)
		if len(idx) < n {
			if note != "" {
				note += "\n"
			}
			from := "mean point"
			if diagonal {
				from = "diagonal"
			}
			note += fmt.Sprintf("labels on up to %d points furthest from the %s, where they fit", len(idx), from)
		}
	}

	wPx, plotH := 960, 560
	if diagonal {
		wPx, plotH = 840, 760
	}
	hPx := int(headerHeight(title, note, float64(wPx))) + plotH
	return render(path, wPx, hPx, func(c draw.Canvas) error {
		c = drawHeader(c, title, note)
		c = inset(c, 16, 32, 12, 8)
		if diagonal {
			// Make the data area square: the axes share one range.
			dc := p.DataCanvas(c)
			w, h := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
			if w > h {
				c.Min.X += (w - h) / 2
				c.Max.X -= (w - h) / 2
			} else {
				c.Min.Y += (h - w) / 2
				c.Max.Y -= (h - w) / 2
			}
		}
		p.Draw(c)
		return nil
	})
}

// labelledPoints returns the indices of the points to label.
func labelledPoints(x, y []float64, diagonal bool) []int {
	n := len(x)
	if n <= MaxScatterLabels {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	dist := make([]float64, n)
	if diagonal {
		for i := range x {
			dist[i] = math.Abs(y[i] - x[i])
		}
	} else {
		var mx, my float64
		for i := range x {
			mx += x[i]
			my += y[i]
		}
		mx, my = mx/float64(n), my/float64(n)
		xlo, xhi := minMax(x)
		ylo, yhi := minMax(y)
		sx, sy := math.Max(xhi-xlo, 1e-300), math.Max(yhi-ylo, 1e-300)
		for i := range x {
			dist[i] = math.Hypot((x[i]-mx)/sx, (y[i]-my)/sy)
		}
	}
	return topIndices(dist, MaxScatterLabels)
}

// newGridPlot is a plot with both axes labelled (shortened to fit) and a
// light grid, the frame of the curve and scatter figures.
func newGridPlot(xlabel, ylabel string) *gplot.Plot {
	p := newPlot()
	p.X.Label.Text = truncate(xlabel, axisLabelChars)
	p.Y.Label.Text = truncate(ylabel, axisLabelChars)
	grid := plotter.NewGrid()
	grid.Vertical.Color = gridGray
	grid.Horizontal.Color = gridGray
	p.Add(grid)
	return p
}

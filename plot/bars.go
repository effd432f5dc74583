package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/rfmkit/rfm/kernel"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const (
	// DefaultTopFeatures is the number of bars FeatureBars draws when topK ≤ 0.
	DefaultTopFeatures = 20
	// MaxBars bounds the bars of one FeatureBars chart.
	MaxBars = 60
	// DefaultTopVectors is the number of panels Eigenvectors draws when topK ≤ 0.
	DefaultTopVectors = 4
	// MaxVectors bounds the panels of one Eigenvectors figure.
	MaxVectors = 12
	// EigenvectorEntries is the number of entries shown per eigenvector
	// panel when the dimension is larger.
	EigenvectorEntries = 12
)

// Characters of a feature name kept on the axis of a bar chart and of an
// eigenvector panel.
const (
	barNameChars   = 36
	panelNameChars = 26
)

// hbars draws horizontal bars from x = 0 to x = vals[i] at y = i, optionally
// with the value printed at the end of each bar.
type hbars struct {
	vals   []float64
	colors []color.Color
	labels bool
}

// DataRange implements gonum's plot.DataRanger.
func (b *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := minMax(b.vals)
	return math.Min(lo, 0), math.Max(hi, 0), -0.5, float64(len(b.vals)) - 0.5
}

// Plot implements gonum's plot.Plotter.
func (b *hbars) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, trY := plt.Transforms(&c)
	x0 := trX(0)
	const half = 0.36 // bar thickness / 2 in row units
	label := textStyle(9, false, textGray, draw.XLeft, draw.YCenter)
	for i, v := range b.vals {
		y0, y1 := trY(float64(i)-half), trY(float64(i)+half)
		x1 := trX(v)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		if clipped := c.ClipPolygonXY(pts); len(clipped) > 0 {
			c.FillPolygon(b.colors[i], clipped)
		}
		if !b.labels {
			continue
		}
		sty := label
		at := vg.Point{X: x1 + px(4), Y: trY(float64(i)) + px(1.5)} // digits sit visually low
		if v < 0 {
			sty.XAlign = draw.XRight
			at.X = x1 - px(4)
		}
		c.FillText(sty, at, formatValue(v))
	}
	zero := draw.LineStyle{Color: axisBlack, Width: vg.Points(0.8)}
	c.StrokeLine2(zero, x0, c.Min.Y, x0, c.Max.Y)
}

// barColors colours bars by sign: red for positive and blue for negative
// values when signed, or when any value is negative; otherwise one neutral
// colour.
func barColors(vals []float64, signed bool) []color.Color {
	signed = signed || slices.ContainsFunc(vals, func(v float64) bool { return v < 0 })
	out := make([]color.Color, len(vals))
	for i, v := range vals {
		switch {
		case !signed:
			out[i] = barNeutral
		case v < 0:
			out[i] = barNegative
		default:
			out[i] = barPositive
		}
	}
	return out
}

// barPlot builds a plot of horizontal bars; vals[0] and names[0] are drawn
// at the top, coloured by sign when signed (or when some value is
// negative). widthPx is the width of the canvas the plot will be drawn on;
// it is used to leave room beside the bars for the printed values.
func barPlot(names []string, vals []float64, signed bool, xlabel string, widthPx float64, nameChars int) *gplot.Plot {
	n := len(vals)
	// Bar i of the plotter sits at y = i, so reverse to put vals[0] on top.
	rv := make([]float64, n)
	ticks := make([]gplot.Tick, n)
	for i := range vals {
		rv[n-1-i] = vals[i]
		ticks[n-1-i] = gplot.Tick{Value: float64(n - 1 - i), Label: truncate(names[i], nameChars)}
	}
	p := newPlot()
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = gridGray
	p.Add(grid)
	bars := &hbars{vals: rv, colors: barColors(rv, signed), labels: true}
	p.Add(bars)

	lo, hi := minMax(rv)
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if hi == lo {
		hi = 1
	}
	// Room for the value labels: the data area is the canvas minus the
	// names; a label of L px on a side needs L/D of the total range T, so
	// T = R / (1 - sides·L/D) for a bar range R.
	var nameW, labelW float64
	for _, t := range ticks {
		nameW = math.Max(nameW, toPx(p.Y.Tick.Label.Width(t.Label)))
	}
	lsty := textStyle(9, false, textGray, draw.XLeft, draw.YCenter)
	for _, v := range rv {
		labelW = math.Max(labelW, toPx(lsty.Width(formatValue(v))))
	}
	labelW += 10
	dataW := math.Max(widthPx-nameW-30, 100)
	sides := 0.0
	if hi > 0 {
		sides++
	}
	if lo < 0 {
		sides++
	}
	frac := math.Min(sides*labelW/dataW, 0.6)
	room := (hi - lo) / (1 - frac) * labelW / dataW
	if hi > 0 {
		hi += room
	}
	if lo < 0 {
		lo -= room
	}
	p.X.Min, p.X.Max = lo, hi
	p.X.Label.Text = xlabel
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = gplot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Width = 0
	p.Y.Padding = 0
	p.X.Padding = 0
	return p
}

// topIndices returns the indices of the k largest keys, largest first; ties
// keep the original order.
func topIndices(keys []float64, k int) []int { return Ranking(keys)[:k] }

// Ranking returns the indices of keys from the largest key to the
// smallest; ties keep the original order (the order of FeatureBars).
func Ranking(keys []float64) []int {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return 0
	})
	return idx
}

// FeatureBars draws a horizontal bar chart of the topK features with the
// largest values (typically diag(M)), the largest at the top, each bar
// labelled with its value. names may be nil (features are then called
// x1..xd); otherwise it must have one name per value. topK ≤ 0 selects
// DefaultTopFeatures; topK is capped at the number of values and at MaxBars.
// xlabel names the quantity (e.g. "diag(M)"; "" means "value").
// The figure is 8 in wide and grows in height with the number of bars, so
// names never overlap.
func FeatureBars(path string, names []string, values []float64, topK int, xlabel, title string) error {
	if err := checkNonEmptyFinite("values", values); err != nil {
		return fmt.Errorf("plot: feature bars %s: %w", path, err)
	}
	names, err := featureNames(names, len(values))
	if err != nil {
		return fmt.Errorf("plot: feature bars %s: %w", path, err)
	}
	d := len(values)
	k := topK
	if k <= 0 {
		k = DefaultTopFeatures
	}
	k = min(k, d, MaxBars)
	idx := topIndices(values, k)
	top := make([]float64, k)
	topNames := make([]string, k)
	for i, j := range idx {
		top[i], topNames[i] = values[j], names[j]
	}
	if xlabel == "" {
		xlabel = "value"
	}
	note := fmt.Sprintf("top %d of %d features by %s, largest at the top", k, d, xlabel)
	if k == d {
		note = fmt.Sprintf("all %d features, sorted by %s", d, xlabel)
	}
	const wPx = 960
	p := barPlot(topNames, top, false, xlabel, wPx-44, barNameChars)

	hPx := int(headerHeight(title, note, float64(wPx))) + 80 + 26*k
	hPx = max(hPx, 360)
	return render(path, wPx, hPx, func(c draw.Canvas) error {
		c = drawHeader(c, title, note)
		p.Draw(inset(c, 16, 28, 12, 4))
		return nil
	})
}

// Eigenvectors draws the topK eigenvectors vecs[0..topK-1] (ordered by
// eigenvalue, largest first) as a grid of horizontal bar panels, one panel
// per vector, titled with its eigenvalue. When the dimension d exceeds
// EigenvectorEntries each panel shows the EigenvectorEntries entries of
// largest magnitude, largest at the top; otherwise all entries in feature
// order. Eigenvectors are defined up to sign, so each vector is flipped so
// that its largest-magnitude entry is positive; positive entries are red,
// negative ones blue.
//
// names may be nil (x1..xd); eigenvalues may be nil, otherwise it must have
// one value per vector. topK ≤ 0 selects DefaultTopVectors; topK is capped
// at len(vecs) and MaxVectors.
func Eigenvectors(path string, names []string, vecs [][]float64, eigenvalues []float64, topK int, title string) error {
	wrap := func(err error) error { return fmt.Errorf("plot: eigenvectors %s: %w", path, err) }
	if len(vecs) == 0 {
		return wrap(errors.New("no eigenvectors"))
	}
	d := len(vecs[0])
	if d == 0 {
		return wrap(errors.New("eigenvectors have dimension 0"))
	}
	for i, v := range vecs {
		if len(v) != d {
			return wrap(fmt.Errorf("vector %d has %d entries, vector 0 has %d", i, len(v), d))
		}
		if err := checkFinite(fmt.Sprintf("vecs[%d]", i), v); err != nil {
			return wrap(err)
		}
	}
	if eigenvalues != nil {
		if len(eigenvalues) != len(vecs) {
			return wrap(fmt.Errorf("%d eigenvalues for %d vectors", len(eigenvalues), len(vecs)))
		}
		if err := checkFinite("eigenvalues", eigenvalues); err != nil {
			return wrap(err)
		}
	}
	names, err := featureNames(names, d)
	if err != nil {
		return wrap(err)
	}
	k := topK
	if k <= 0 {
		k = DefaultTopVectors
	}
	k = min(k, len(vecs), MaxVectors)
	m := min(d, EigenvectorEntries)
	const panelW = 620

	plots := make([]*gplot.Plot, k)
	for i := range k {
		v := Oriented(vecs[i])
		var idx []int
		if m < d {
			abs := make([]float64, d)
			for j, x := range v {
				abs[j] = math.Abs(x)
			}
			idx = topIndices(abs, m)
		} else {
			idx = make([]int, d)
			for j := range idx {
				idx[j] = j
			}
		}
		vals := make([]float64, m)
		labs := make([]string, m)
		for r, j := range idx {
			vals[r], labs[r] = v[j], names[j]
		}
		p := barPlot(labs, vals, true, "component", panelW-40, panelNameChars)
		p.Title.Text = fmt.Sprintf("v%d", i+1)
		if eigenvalues != nil {
			p.Title.Text += "   λ = " + formatValue(eigenvalues[i])
		}
		plots[i] = p
	}

	var note string
	if m < d {
		note = fmt.Sprintf("each panel: the %d largest |entries| of %d; sign fixed so the largest entry is positive", m, d)
	} else {
		note = fmt.Sprintf("all %d entries per vector; sign fixed so the largest entry is positive", d)
	}

	cols := gridCols(k)
	rows := (k + cols - 1) / cols
	panelH := 110 + 26*m
	wPx := cols*panelW + 40
	hPx := int(headerHeight(title, note, float64(wPx))) + rows*panelH + 20
	return render(path, wPx, hPx, func(c draw.Canvas) error {
		c = drawHeader(c, title, note)
		c = inset(c, 12, 24, 8, 0)
		grid := make([][]*gplot.Plot, rows)
		for r := range rows {
			grid[r] = make([]*gplot.Plot, cols)
			for cc := range cols {
				if i := r*cols + cc; i < k {
					grid[r][cc] = plots[i]
				}
			}
		}
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: px(40), PadY: px(24), PadTop: px(6)}
		canvases := gplot.Align(grid, tiles, c)
		for r := range rows {
			for cc := range cols {
				if grid[r][cc] != nil {
					grid[r][cc].Draw(canvases[r][cc])
				}
			}
		}
		return nil
	})
}

// Oriented returns a copy of v flipped so that its largest-magnitude entry
// is positive: the sign convention of Eigenvectors, for callers that draw
// the same vectors elsewhere (as images) and want them to agree.
func Oriented(v []float64) []float64 { return kernel.Oriented(slices.Clone(v)) }

// gridCols chooses the number of columns for n panels.
func gridCols(n int) int {
	switch {
	case n <= 3:
		return n
	case n == 4:
		return 2
	default:
		return 3
	}
}

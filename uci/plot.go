package uci

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// writePlot draws the per-data-set test error of RFM against that of the
// Laplace kernel (one point per data set, with the y = x diagonal: points
// below it are data sets where RFM is better) and writes it atomically as
// a PNG.
func writePlot(path string, rep *Report) error {
	var better, worse, tie plotter.XYs
	hi := 1.0
	for _, r := range rep.Results {
		if r.Status != StatusOK {
			continue
		}
		pt := plotter.XY{X: 100 - r.LaplaceAccuracy, Y: 100 - r.TestAccuracy}
		hi = math.Max(hi, math.Max(pt.X, pt.Y))
		switch {
		case pt.Y < pt.X-1e-9:
			better = append(better, pt)
		case pt.Y > pt.X+1e-9:
			worse = append(worse, pt)
		default:
			tie = append(tie, pt)
		}
	}
	hi = math.Ceil(hi/5)*5 + 2
	p := plot.New()
	p.Title.Text = fmt.Sprintf("UCI (%s protocol, %d data sets): test error per data set", rep.Protocol, len(better)+len(worse)+len(tie))
	p.X.Label.Text = "Laplace kernel test error (%)"
	p.Y.Label.Text = "RFM test error (%)"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, hi, 0, hi
	step := 10.0
	if hi <= 30 {
		step = 5
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = stepTicks(step), stepTicks(step)
	p.Add(plotter.NewGrid())
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: hi, Y: hi}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 110}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("y = x", diag)
	groups := []struct {
		xy    plotter.XYs
		label string
		col   color.Color
		shape draw.GlyphDrawer
	}{
		{better, "RFM better", color.RGBA{R: 31, G: 119, B: 180, A: 255}, draw.CircleGlyph{}},
		{worse, "Laplace better", color.RGBA{R: 214, G: 39, B: 40, A: 255}, draw.TriangleGlyph{}},
		{tie, "equal", color.RGBA{R: 100, G: 100, B: 100, A: 255}, draw.SquareGlyph{}},
	}
	for _, g := range groups {
		if len(g.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(g.xy)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: g.col, Radius: vg.Points(3), Shape: g.shape}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s (%d)", g.label, len(g.xy)), sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), -vg.Points(8)
	wt, err := p.WriterTo(7*vg.Inch, 7*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// stepTicks labels the axis every step units.
type stepTicks float64

// Ticks implements plot.Ticker.
func (s stepTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := math.Ceil(lo/float64(s)) * float64(s); v <= hi; v += float64(s) {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return ts
}

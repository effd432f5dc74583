package plot

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	xfont "golang.org/x/image/font"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// dpi is the resolution of every figure. Layout is computed in device
// pixels (dots) so that images can be placed on exact pixel boundaries.
const dpi = 120

// maxSide bounds the width and height of a figure in pixels; larger requests
// are input errors (a 1e6-feature bar chart is not a figure).
const maxSide = 16000

// px converts a length in device pixels to a vg length.
func px(n float64) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// toPx converts a vg length to device pixels.
func toPx(l vg.Length) float64 { return float64(l / vg.Inch * dpi) }

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}

	textGray  = color.Gray{Y: 0x55}
	gridGray  = color.Gray{Y: 0xdd}
	axisBlack = color.Black

	// Bar colours: one neutral colour when every value is non-negative,
	// otherwise red for positive and blue for negative entries, matching the
	// diverging heat-map colours.
	barNeutral  = rgb(0x4c, 0x72, 0xb0)
	barPositive = rgb(0xd6, 0x60, 0x4d)
	barNegative = rgb(0x43, 0x93, 0xc3)

	// seriesColors is the Tableau-10 palette, for lines and points.
	seriesColors = []color.Color{
		rgb(0x1f, 0x77, 0xb4), rgb(0xff, 0x7f, 0x0e), rgb(0x2c, 0xa0, 0x2c),
		rgb(0xd6, 0x27, 0x28), rgb(0x94, 0x67, 0xbd), rgb(0x8c, 0x56, 0x4b),
		rgb(0xe3, 0x77, 0xc2), rgb(0x7f, 0x7f, 0x7f), rgb(0xbc, 0xbd, 0x22),
		rgb(0x17, 0xbe, 0xcf),
	}
)

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// textStyle returns a plain-text style in the sans-serif face.
func textStyle(size float64, bold bool, clr color.Color, xa draw.XAlignment, ya draw.YAlignment) draw.TextStyle {
	f := sans
	if bold {
		f = sansBold
	}
	return draw.TextStyle{
		Color:   clr,
		Font:    font.From(f, font.Points(size)),
		XAlign:  xa,
		YAlign:  ya,
		Handler: gplot.DefaultTextHandler,
	}
}

// newPlot returns a gonum plot with the package's fonts and no title.
func newPlot() *gplot.Plot {
	p := gplot.New()
	p.Title.TextStyle.Font = font.From(sansBold, 12)
	p.Title.Padding = vg.Points(6)
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 12)
		ax.Tick.Label.Font = font.From(sans, 10)
		ax.Label.Padding = vg.Points(4)
		ax.Tick.Marker = niceTicks{}
	}
	p.Legend.TextStyle.Font = font.From(sans, 10)
	return p
}

// checkPath rejects paths that cannot name a PNG file.
func checkPath(path string) error {
	if path == "" {
		return errors.New("plot: empty output path")
	}
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("plot: output path %q: want a file name ending in .png", path)
	}
	return nil
}

// render creates a white wPx×hPx canvas, lets body draw on it and writes the
// result to path as a PNG, atomically. Panics raised while drawing (gonum/plot
// panics on some degenerate ranges) are returned as errors.
func render(path string, wPx, hPx int, body func(c draw.Canvas) error) (err error) {
	if err := checkPath(path); err != nil {
		return err
	}
	if wPx <= 0 || hPx <= 0 || wPx > maxSide || hPx > maxSide {
		return fmt.Errorf("plot: %s: figure size %d×%d px out of range (1..%d)", path, wPx, hPx, maxSide)
	}
	cv := vgimg.NewWith(
		vgimg.UseWH(px(float64(wPx)), px(float64(hPx))),
		vgimg.UseDPI(dpi),
		vgimg.UseBackgroundColor(color.White),
	)
	if err := drawSafely(draw.New(cv), body); err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	return writeAtomic(path, vgimg.PngCanvas{Canvas: cv})
}

// drawSafely runs body and turns a panic into an error.
func drawSafely(c draw.Canvas, body func(c draw.Canvas) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing failed: %v", r)
		}
	}()
	return body(c)
}

// writeAtomic writes the PNG with the project's one atomic writer: a
// temporary file in the destination directory renamed over path.
func writeAtomic(path string, png vgimg.PngCanvas) error {
	err := atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		if _, err := png.WriteTo(w); err != nil {
			return fmt.Errorf("encode png: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// Header font sizes in points.
const (
	titleSize = 15
	noteSize  = 10
)

// header returns the title and note styles and texts for a figure width in
// pixels: fonts shrink (down to 60%) so that long texts fit, and what still
// does not fit is cut with an ellipsis.
func header(title, note string, widthPx float64) (ts draw.TextStyle, t string, ns draw.TextStyle, n string) {
	avail := widthPx - 24
	fit := func(sty draw.TextStyle, txt string) (draw.TextStyle, string) {
		lines := strings.Split(txt, "\n")
		widest := 0.0
		for _, l := range lines {
			widest = max(widest, toPx(sty.Width(l)))
		}
		if widest > avail {
			sty.Font.Size = max(sty.Font.Size*vg.Length(avail/widest), sty.Font.Size*0.6)
		}
		for i, l := range lines {
			w := toPx(sty.Width(l))
			if w <= avail {
				continue
			}
			r := []rune(l)
			r = r[:max(2, min(len(r), int(float64(len(r))*avail/w)+1))] // proportional first guess
			for l = string(r) + "…"; toPx(sty.Width(l)) > avail && len(r) > 2; l = string(r) + "…" {
				r = r[:len(r)-1]
			}
			lines[i] = l
		}
		return sty, strings.Join(lines, "\n")
	}
	ts, t = fit(textStyle(titleSize, true, axisBlack, draw.XCenter, draw.YTop), title)
	ns, n = fit(textStyle(noteSize, false, textGray, draw.XCenter, draw.YTop), note)
	return ts, t, ns, n
}

// headerHeight returns the height in pixels taken by a figure title and an
// optional note (which may span several lines), including padding.
func headerHeight(title, note string, widthPx float64) float64 {
	ts, title, ns, note := header(title, note, widthPx)
	h := 12.0
	if title != "" {
		h += toPx(ts.Height(title)) + 6
	}
	if note != "" {
		h += toPx(ns.Height(note)) + 6
	}
	return h
}

// drawHeader draws the title and the note centred at the top of c and
// returns the canvas below them.
func drawHeader(c draw.Canvas, title, note string) draw.Canvas {
	ts, title, ns, note := header(title, note, toPx(c.Max.X-c.Min.X))
	y := c.Max.Y - px(12)
	x := (c.Min.X + c.Max.X) / 2
	if title != "" {
		c.FillText(ts, vg.Point{X: x, Y: y}, title)
		y -= ts.Height(title) + px(6)
	}
	if note != "" {
		c.FillText(ns, vg.Point{X: x, Y: y}, note)
		y -= ns.Height(note) + px(6)
	}
	c.Max.Y = y
	return c
}

// inset shrinks c by the given margins in pixels.
func inset(c draw.Canvas, left, right, bottom, top float64) draw.Canvas {
	return draw.Crop(c, px(left), -px(right), px(bottom), -px(top))
}

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

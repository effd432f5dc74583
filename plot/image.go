package plot

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const (
	// MaxImageSide bounds the height and width of an image argument.
	MaxImageSide = 4096
	// MaxGridImages bounds the number of images of one ImageGrid.
	MaxGridImages = 25
)

// Colour maps, sampled once: 256 steps of a perceptually uniform
// diverging blue–red map and of a sequential black-body map.
var (
	paletteOnce           sync.Once
	divergingPal, seqPal  []color.Color
	imageBorder           = draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.5)}
	colorbarTick          = draw.LineStyle{Color: axisBlack, Width: vg.Points(0.5)}
	colorbarLabelSize     = 9.0
	panelLabelSize        = 11.0
	colorbarGap, barWidth = 12, 16
)

func palettes() (div, seq []color.Color) {
	paletteOnce.Do(func() {
		divergingPal = moreland.SmoothBlueRed().Palette(256).Colors()
		seqPal = moreland.BlackBody().Palette(256).Colors()
	})
	return divergingPal, seqPal
}

// colorScale maps values in [lo, hi] to a palette.
type colorScale struct {
	lo, hi float64
	pal    []color.Color
}

// newColorScale chooses the colour scale for a set of values: a diverging
// map on [-m, m] (m the largest magnitude) when some value is negative,
// beyond round-off of the largest magnitude; otherwise a sequential map on
// [min, max].
func newColorScale(vals []float64) colorScale {
	div, seq := palettes()
	lo, hi := minMax(vals)
	m := math.Max(math.Abs(lo), math.Abs(hi))
	if lo < 0 && -lo > 1e-12*m {
		return colorScale{lo: -m, hi: m, pal: div}
	}
	if hi-lo <= 1e-12*m {
		lo, hi = padRange(lo, hi, 0)
	}
	return colorScale{lo: lo, hi: hi, pal: seq}
}

func (s colorScale) color(v float64) color.Color {
	t := (v - s.lo) / (s.hi - s.lo)
	i := int(math.Round(t * float64(len(s.pal)-1)))
	return s.pal[max(0, min(len(s.pal)-1, i))]
}

// heatImage renders an h×w grid (row-major, row 0 at the top, entry
// (y, x) at vals[(y*w+x)*stride+offset]) as an RGBA image upscaled by s
// with nearest-neighbour pixels.
func heatImage(vals []float64, h, w, stride, offset, s int, sc colorScale) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w*s, h*s))
	for y := range h {
		for x := range w {
			c := color.RGBAModel.Convert(sc.color(vals[(y*w+x)*stride+offset])).(color.RGBA)
			for dy := range s {
				row := (y*s + dy) * img.Stride
				for dx := range s {
					o := row + (x*s+dx)*4
					img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = c.R, c.G, c.B, c.A
				}
			}
		}
	}
	return img
}

// rectPx returns the vg rectangle of a pixel rectangle given by its
// bottom-left corner and size.
func rectPx(x, y, w, h int) vg.Rectangle {
	return vg.Rectangle{
		Min: vg.Point{X: px(float64(x)), Y: px(float64(y))},
		Max: vg.Point{X: px(float64(x + w)), Y: px(float64(y + h))},
	}
}

// strokeRect outlines a pixel rectangle.
func strokeRect(c draw.Canvas, r vg.Rectangle) {
	c.StrokeLines(imageBorder, []vg.Point{
		r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min,
	})
}

// colorbarTicks returns the labelled ticks of a colour scale.
func colorbarTicks(sc colorScale) []gplot.Tick {
	var out []gplot.Tick
	for _, t := range (niceTicks{}).Ticks(sc.lo, sc.hi) {
		if t.Label != "" && t.Value >= sc.lo && t.Value <= sc.hi {
			out = append(out, t)
		}
	}
	return out
}

// colorbarWidth is the horizontal space in pixels taken by a colour bar of
// scale sc, from the gap after the image to the end of its labels.
func colorbarWidth(sc colorScale) int {
	sty := textStyle(colorbarLabelSize, false, axisBlack, draw.XLeft, draw.YCenter)
	var w float64
	for _, t := range colorbarTicks(sc) {
		w = math.Max(w, toPx(sty.Width(t.Label)))
	}
	return colorbarGap + barWidth + 6 + int(math.Ceil(w))
}

// drawColorbar draws a vertical colour bar with its bottom-left corner at
// (x, y) and labels on its right.
func drawColorbar(c draw.Canvas, x, y, h int, sc colorScale) {
	img := image.NewRGBA(image.Rect(0, 0, barWidth, h))
	for r := range h {
		v := sc.hi - (float64(r)+0.5)/float64(h)*(sc.hi-sc.lo)
		col := color.RGBAModel.Convert(sc.color(v)).(color.RGBA)
		for cc := range barWidth {
			img.SetRGBA(cc, r, col)
		}
	}
	rect := rectPx(x, y, barWidth, h)
	c.DrawImage(rect, img)
	strokeRect(c, rect)
	sty := textStyle(colorbarLabelSize, false, axisBlack, draw.XLeft, draw.YCenter)
	for _, t := range colorbarTicks(sc) {
		ty := px(float64(y) + (t.Value-sc.lo)/(sc.hi-sc.lo)*float64(h))
		c.StrokeLine2(colorbarTick, rect.Max.X, ty, rect.Max.X+px(4), ty)
		c.FillText(sty, vg.Point{X: rect.Max.X + px(6), Y: ty}, t.Label)
	}
}

// upscale returns the integer factor that makes an h×w image about target
// pixels wide without making it taller than maxH (unless it already is).
func upscale(h, w, target, maxH int) int {
	s := max(1, (target+w-1)/w)
	if h*s > maxH {
		s = max(1, maxH/h)
	}
	return s
}

// checkImage validates image dimensions against a value count.
func checkImage(n, h, w, c int) error {
	if h <= 0 || w <= 0 {
		return fmt.Errorf("image size %d×%d: height and width must be positive", h, w)
	}
	if h > MaxImageSide || w > MaxImageSide {
		return fmt.Errorf("image size %d×%d: larger than %d pixels per side", h, w, MaxImageSide)
	}
	if n != h*w*c {
		return fmt.Errorf("%d values for a %d×%d×%d image (want %d)", n, h, w, c, h*w*c)
	}
	return nil
}

// panelLabelHeight is the height in pixels of the label row above images.
func panelLabelHeight() int {
	return int(math.Ceil(toPx(textStyle(panelLabelSize, false, axisBlack, draw.XCenter, draw.YBottom).Height("Ag")))) + 8
}

// Image draws values as an h×w heat map with a colour bar. Signed values
// (some negative) use a diverging blue–white–red map centred on zero;
// non-negative ones (diag(M)) a sequential black-body map from min to max.
// Row 0 is at the top. For c = 1 values is row-major h×w; for c = 3 it is
// interleaved h×w×c (pixel (y, x) channel k at (y*w+x)*3+k) and each channel
// is drawn as its own panel (R, G, B from left to right) on one common
// colour scale, which keeps the sign information a per-pixel norm would
// lose. Small images are upscaled with square pixels so that a single panel
// is at least 420 px wide.
func Image(path string, values []float64, h, w, c int, title string) error {
	wrap := func(err error) error { return fmt.Errorf("plot: image %s: %w", path, err) }
	if c != 1 && c != 3 {
		return wrap(fmt.Errorf("%d channels: want 1 or 3", c))
	}
	if err := checkImage(len(values), h, w, c); err != nil {
		return wrap(err)
	}
	if err := checkFinite("values", values); err != nil {
		return wrap(err)
	}
	sc := newColorScale(values)
	target := 420
	if c == 3 {
		target = 300
	}
	s := upscale(h, w, target, 900)
	iw, ih := w*s, h*s
	const gap = 24
	labels := []string{""}
	note := ""
	if c == 3 {
		labels = []string{"channel 1 (R)", "channel 2 (G)", "channel 3 (B)"}
		note = "one panel per channel, common colour scale"
	}
	labelH := 0
	if c == 3 {
		labelH = panelLabelHeight()
	}
	cbW := colorbarWidth(sc)
	contentW := c*iw + (c-1)*gap + cbW
	wPx := max(contentW+48, 480)
	headH := int(math.Ceil(headerHeight(title, note, float64(wPx))))
	hPx := headH + labelH + ih + 32
	return render(path, wPx, hPx, func(cv draw.Canvas) error {
		drawHeader(cv, title, note)
		x0 := (wPx - contentW) / 2
		y0 := 24 // bottom margin
		for k := range c {
			x := x0 + k*(iw+gap)
			rect := rectPx(x, y0, iw, ih)
			cv.DrawImage(rect, heatImage(values, h, w, c, k, s, sc))
			strokeRect(cv, rect)
			if labels[k] != "" {
				sty := textStyle(panelLabelSize, false, axisBlack, draw.XCenter, draw.YBottom)
				cv.FillText(sty, vg.Point{X: px(float64(x) + float64(iw)/2), Y: px(float64(y0 + ih + 4))}, labels[k])
			}
		}
		drawColorbar(cv, x0+c*iw+(c-1)*gap+colorbarGap, y0, ih, sc)
		return nil
	})
}

// ImageGrid draws several h×w single-channel images side by side (up to
// five per row), each with its own colour scale and colour bar (diverging
// for signed images, sequential for non-negative ones, as in Image) and its
// title above it. titles may be nil; otherwise it must have one entry per
// image. At most MaxGridImages images.
func ImageGrid(path string, images [][]float64, h, w int, titles []string, title string) error {
	wrap := func(err error) error { return fmt.Errorf("plot: image grid %s: %w", path, err) }
	n := len(images)
	if n == 0 {
		return wrap(errors.New("no images"))
	}
	if n > MaxGridImages {
		return wrap(fmt.Errorf("%d images: at most %d per grid", n, MaxGridImages))
	}
	if titles != nil && len(titles) != n {
		return wrap(fmt.Errorf("%d titles for %d images", len(titles), n))
	}
	scales := make([]colorScale, n)
	for i, im := range images {
		if err := checkImage(len(im), h, w, 1); err != nil {
			return wrap(fmt.Errorf("image %d: %w", i, err))
		}
		if err := checkFinite(fmt.Sprintf("images[%d]", i), im); err != nil {
			return wrap(err)
		}
		scales[i] = newColorScale(im)
	}
	cols := n
	if n > 5 {
		rows := (n + 4) / 5
		cols = (n + rows - 1) / rows
	}
	rows := (n + cols - 1) / cols
	s := upscale(h, w, 224, 480)
	iw, ih := w*s, h*s
	cbW := 0
	for _, sc := range scales {
		cbW = max(cbW, colorbarWidth(sc))
	}
	const gapX, gapY = 28, 16
	cellW := iw + cbW
	labelH := panelLabelHeight()
	cellH := labelH + ih
	contentW := cols*cellW + (cols-1)*gapX
	wPx := max(contentW+48, 480)
	headH := int(math.Ceil(headerHeight(title, "", float64(wPx))))
	hPx := headH + rows*cellH + (rows-1)*gapY + 24
	labelSty := textStyle(panelLabelSize, false, axisBlack, draw.XCenter, draw.YBottom)
	maxLabel := max(8, int(float64(iw)/toPx(labelSty.Width("n"))))
	return render(path, wPx, hPx, func(cv draw.Canvas) error {
		drawHeader(cv, title, "")
		x0 := (wPx - contentW) / 2
		top := hPx - headH
		for i, im := range images {
			r, cc := i/cols, i%cols
			x := x0 + cc*(cellW+gapX)
			y := top - r*(cellH+gapY) - cellH // bottom of the image
			rect := rectPx(x, y, iw, ih)
			cv.DrawImage(rect, heatImage(im, h, w, 1, 0, s, scales[i]))
			strokeRect(cv, rect)
			label := fmt.Sprintf("image %d", i+1)
			if titles != nil {
				label = titles[i]
			}
			cv.FillText(labelSty, vg.Point{X: px(float64(x) + float64(iw)/2), Y: px(float64(y + ih + 4))}, truncate(label, maxLabel))
			drawColorbar(cv, x+iw+colorbarGap, y, ih, scales[i])
		}
		return nil
	})
}

// ImageShape is the height, width and channels (1 grey, 3 RGB) of inputs
// that are the pixels of an image, row by row.
type ImageShape struct{ H, W, C int }

// Pixels is the number of inputs the shape covers: H·W·C.
func (s ImageShape) Pixels() int { return s.H * s.W * s.C }

package memory

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// Heatmap draws a table of counts (rows × columns, NaN: not measured) as
// a PNG at path, written atomically: each cell shaded from white (0) to
// dark blue (full), its value printed in it, the row and column labels at
// the sides and the title above (thesis figure 2-5's width × depth
// tables).
func Heatmap(ctx context.Context, path, title, rowName, colName string, rowLabels, colLabels []string, values [][]float64, full float64) error {
	if len(values) != len(rowLabels) || len(values) == 0 {
		return fmt.Errorf("memory: heatmap %s: %d rows of values for %d labels", path, len(values), len(rowLabels))
	}
	for r, row := range values {
		if len(row) != len(colLabels) {
			return fmt.Errorf("memory: heatmap %s: row %d has %d values for %d columns", path, r+1, len(row), len(colLabels))
		}
	}
	const cell, left, top, pad = 70, 110, 60, 20
	w := max(left+cell*len(colLabels)+pad, 7*len(title)+20)
	h := top + cell*len(rowLabels) + pad + 20
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	text := func(s string, x, y int, c color.Color) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	center := func(s string, cx, cy int, c color.Color) { text(s, cx-7*len(s)/2, cy+4, c) }
	center(title, w/2, 15, color.Black)
	center(colName, left+cell*len(colLabels)/2, 35, color.Black)
	text(rowName, 5, top-8, color.Black)
	for j, l := range colLabels {
		center(l, left+j*cell+cell/2, top-10, color.Black)
	}
	for r, row := range values {
		center(rowLabels[r], left/2, top+r*cell+cell/2, color.Black)
		for j, v := range row {
			frac := 0.0
			label := "-"
			if !math.IsNaN(v) {
				frac = min(1, v/full)
				label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			c := color.RGBA{uint8(255 - 225*frac), uint8(255 - 170*frac), uint8(255 - 75*frac), 255}
			for y := top + r*cell + 1; y < top+(r+1)*cell; y++ {
				for x := left + j*cell + 1; x < left+(j+1)*cell; x++ {
					img.SetRGBA(x, y, c)
				}
			}
			ink := color.Color(color.Black)
			if frac > 0.55 {
				ink = color.White
			}
			center(label, left+j*cell+cell/2, top+r*cell+cell/2, ink)
		}
	}
	return atomicfile.Write(ctx, path, func(w io.Writer) error { return png.Encode(w, img) })
}

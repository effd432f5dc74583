package memory

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/nn"
)

// Basins is a grid of starting points in the plane, each labelled by the
// example its iteration reached (thesis figure 2-3).
type Basins struct {
	G              int     // points per side
	X0, X1, Y0, Y1 float64 // the grid's box
	// Label of the point at column i, row j (row 0 at Y0): the example
	// reached (for cycles: any member; LabelCycle maps it), LabelSpurious
	// or LabelNotConverged.
	Label []int
}

// Labels of grid points that reached no example.
const (
	LabelSpurious     = -1
	LabelNotConverged = -2
)

// BasinGrid iterates f^P from a g×g grid over the examples' bounding box
// widened by margin (a fraction of its size on each side). The set must
// be 2-D.
func BasinGrid(ctx context.Context, net *nn.Network, s *Set, g int, margin float64, it IterateOptions, matchTol float64) (*Basins, error) {
	if s.D != 2 {
		return nil, fmt.Errorf("memory: basins of attraction are drawn for 2-D examples, these have %d values", s.D)
	}
	if g < 2 || g > 1000 {
		return nil, fmt.Errorf("memory: a basin grid of %d points per side (2 to 1000)", g)
	}
	b := &Basins{G: g, X0: math.Inf(1), X1: math.Inf(-1), Y0: math.Inf(1), Y1: math.Inf(-1)}
	for i := 0; i < s.N; i++ {
		p := s.Example(i)
		b.X0, b.X1 = min(b.X0, p[0]), max(b.X1, p[0])
		b.Y0, b.Y1 = min(b.Y0, p[1]), max(b.Y1, p[1])
	}
	span := max(b.X1-b.X0, b.Y1-b.Y0, 1e-9)
	b.X0, b.X1 = b.X0-margin*span, b.X1+margin*span
	b.Y0, b.Y1 = b.Y0-margin*span, b.Y1+margin*span
	starts := make([]float64, 0, 2*g*g)
	for j := 0; j < g; j++ {
		for i := 0; i < g; i++ {
			starts = append(starts, b.at(i, j)...)
		}
	}
	lim, steps, conv, err := Iterate(ctx, net, starts, g*g, it)
	if err != nil {
		return nil, err
	}
	src := make([]int, g*g)
	for i := range src {
		src[i] = -1
	}
	out, _ := Classify(s, lim, steps, conv, src, matchTol)
	b.Label = make([]int, g*g)
	for k, o := range out {
		switch {
		case !o.Converged:
			b.Label[k] = LabelNotConverged
		default:
			b.Label[k] = o.Limit // −1 = LabelSpurious
		}
	}
	return b, nil
}

// at is the grid point of column i, row j.
func (b *Basins) at(i, j int) []float64 {
	fx := float64(i) / float64(b.G-1)
	fy := float64(j) / float64(b.G-1)
	return []float64{b.X0 + fx*(b.X1-b.X0), b.Y0 + fy*(b.Y1-b.Y0)}
}

// Counts returns how many grid points reached each label: examples by
// index, then the spurious and the unconverged.
func (b *Basins) Counts(n int) (perExample []int, spurious, notConverged int) {
	perExample = make([]int, n)
	for _, l := range b.Label {
		switch {
		case l >= 0:
			perExample[l]++
		case l == LabelSpurious:
			spurious++
		default:
			notConverged++
		}
	}
	return perExample, spurious, notConverged
}

// palette are the basin colours (Tableau 10, lightened for the fill).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

func light(c color.RGBA) color.RGBA {
	mix := func(v uint8) uint8 { return uint8((int(v) + 2*255) / 3) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}

// BasinFigure draws the basins as a PNG at path (written atomically):
// each grid point a cell coloured by the cycle its iteration reached
// (white: a spurious attractor, grey: no convergence), the examples as
// dark stars, and the vector field x → f(x) − x as arrows (direction and
// relative length) on an arrows × arrows grid.
func BasinFigure(ctx context.Context, path string, net *nn.Network, s *Set, b *Basins, arrows int) error {
	if b == nil || len(b.Label) != b.G*b.G {
		return errors.New("memory: no basin grid to draw")
	}
	const size = 720
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	toPx := func(x, y float64) (int, int) {
		return int((x - b.X0) / (b.X1 - b.X0) * (size - 1)), int((b.Y1 - y) / (b.Y1 - b.Y0) * (size - 1))
	}
	cell := float64(size) / float64(b.G)
	for j := 0; j < b.G; j++ {
		for i := 0; i < b.G; i++ {
			var c color.RGBA
			switch l := b.Label[j*b.G+i]; {
			case l >= 0:
				c = light(palette[s.CycleOf(l)%len(palette)])
			case l == LabelSpurious:
				c = color.RGBA{255, 255, 255, 255}
			default:
				c = color.RGBA{150, 150, 150, 255}
			}
			x0, x1 := int(float64(i)*cell), int(float64(i+1)*cell)
			y1, y0 := size-int(float64(j)*cell), size-int(float64(j+1)*cell)
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	if arrows >= 2 {
		ab := &Basins{G: arrows, X0: b.X0, X1: b.X1, Y0: b.Y0, Y1: b.Y1}
		pts := make([]float64, 0, 2*arrows*arrows)
		for j := 0; j < arrows; j++ {
			for i := 0; i < arrows; i++ {
				pts = append(pts, ab.at(i, j)...)
			}
		}
		fx := net.Predict(pts, arrows*arrows)
		longest := 0.0
		for k := 0; k < arrows*arrows; k++ {
			longest = max(longest, math.Hypot(fx[2*k]-pts[2*k], fx[2*k+1]-pts[2*k+1]))
		}
		maxLen := 0.8 * float64(size) / float64(arrows)
		dark := color.RGBA{40, 40, 40, 255}
		for k := 0; k < arrows*arrows && longest > 0; k++ {
			dx, dy := fx[2*k]-pts[2*k], fx[2*k+1]-pts[2*k+1]
			l := math.Hypot(dx, dy)
			if l == 0 || math.IsNaN(l) {
				continue
			}
			// length grows with |f(x) − x| but stays visible: √ of the ratio
			scale := maxLen * math.Sqrt(l/longest) / l
			x0, y0 := toPx(pts[2*k], pts[2*k+1])
			ex, ey := float64(x0)+dx*scale, float64(y0)-dy*scale
			line(img, float64(x0), float64(y0), ex, ey, dark)
			ang := math.Atan2(ey-float64(y0), ex-float64(x0))
			for _, da := range []float64{2.6, -2.6} {
				line(img, ex, ey, ex+5*math.Cos(ang+da), ey+5*math.Sin(ang+da), dark)
			}
		}
	}
	for i := 0; i < s.N; i++ {
		p := s.Example(i)
		x, y := toPx(p[0], p[1])
		star(img, float64(x), float64(y), 11, palette[s.CycleOf(i)%len(palette)])
	}
	return atomicfile.Write(ctx, path, func(w io.Writer) error { return png.Encode(w, img) })
}

// line draws a segment one pixel wide.
func line(img *image.RGBA, x0, y0, x1, y1 float64, c color.RGBA) {
	n := int(max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for k := 0; k <= n; k++ {
		t := float64(k) / float64(n)
		img.SetRGBA(int(math.Round(x0+t*(x1-x0))), int(math.Round(y0+t*(y1-y0))), c)
	}
}

// star draws a filled five-pointed star of radius r with a black outline.
func star(img *image.RGBA, cx, cy, r float64, c color.RGBA) {
	var vx, vy [10]float64
	for k := 0; k < 10; k++ {
		rad := r
		if k%2 == 1 {
			rad = 0.45 * r
		}
		a := -math.Pi/2 + float64(k)*math.Pi/5
		vx[k], vy[k] = cx+rad*math.Cos(a), cy+rad*math.Sin(a)
	}
	for y := int(cy - r); y <= int(cy+r); y++ {
		for x := int(cx - r); x <= int(cx+r); x++ {
			if inPolygon(float64(x), float64(y), vx[:], vy[:]) {
				img.SetRGBA(x, y, c)
			}
		}
	}
	for k := 0; k < 10; k++ {
		line(img, vx[k], vy[k], vx[(k+1)%10], vy[(k+1)%10], color.RGBA{0, 0, 0, 255})
	}
}

func inPolygon(x, y float64, vx, vy []float64) bool {
	in := false
	for i, j := 0, len(vx)-1; i < len(vx); j, i = i, i+1 {
		if (vy[i] > y) != (vy[j] > y) && x < (vx[j]-vx[i])*(y-vy[i])/(vy[j]-vy[i])+vx[i] {
			in = !in
		}
	}
	return in
}

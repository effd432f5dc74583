package plot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// roundOffFloor is the relative size below which an eigenvalue of a PSD
// matrix is round-off: values below λmax·roundOffFloor are drawn at that
// floor on a log axis (about 5 float64 epsilons).
const roundOffFloor = 1e-15

// logDecades is the span (in decades) beyond which Spectrum switches to a
// log y axis.
const logDecades = 3

// Spectrum draws the eigenvalues of M sorted in descending order against
// their rank. When the eigenvalues at or above 1e-15·λmax span more than
// three decades the y axis is logarithmic; eigenvalues below that floor
// (zero, negative or tiny: round-off of a PSD matrix) are then drawn at the
// floor, in grey, and counted in a note under the title. On a linear axis
// negative values are drawn at 0, also in grey with a note. The note also
// gives the share of the trace held by the top 1, 5 and 10 eigenvalues.
// Points are marked when there are at most 100 eigenvalues.
func Spectrum(path string, eigenvalues []float64, title string) error {
	if err := checkNonEmptyFinite("eigenvalues", eigenvalues); err != nil {
		return fmt.Errorf("plot: spectrum %s: %w", path, err)
	}
	ev := slices.Clone(eigenvalues)
	slices.SortFunc(ev, func(a, b float64) int { return cmp.Compare(b, a) })
	d := len(ev)
	top := ev[0]

	floor := top * roundOffFloor
	smallest := math.Inf(1) // smallest eigenvalue at or above the floor
	clamped := 0
	for _, v := range ev {
		if top > 0 && v >= floor {
			smallest = math.Min(smallest, v)
		} else {
			clamped++
		}
	}
	logY := top > 0 && top/smallest > math.Pow(10, logDecades)

	var notes []string
	shown := make([]float64, d)
	isClamped := make([]bool, d)
	negative := 0 // drawn at 0 on a linear axis
	for i, v := range ev {
		switch {
		case logY && v < floor:
			shown[i], isClamped[i] = floor, true
		case !logY && v < 0:
			shown[i], isClamped[i] = 0, true
			negative++
		default:
			shown[i] = v
		}
	}
	// A PSD matrix has no negative eigenvalues beyond round-off; say so when
	// these are clearly negative rather than calling them round-off.
	bottom := ev[d-1]
	why := "zero up to round-off"
	if bottom < -1e-10*math.Abs(top) || top <= 0 && bottom < 0 {
		why = "the most negative is " + formatValue(bottom)
	}
	if logY && clamped > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d eigenvalues below %s·λmax (%s) drawn at that floor, in grey",
			clamped, d, strconv.FormatFloat(roundOffFloor, 'g', -1, 64), why))
	} else if !logY && negative > 0 {
		if why == "zero up to round-off" {
			why = "round-off"
		}
		notes = append(notes, fmt.Sprintf("%d of %d eigenvalues negative (%s), drawn at 0 in grey", negative, d, why))
	}
	if share := traceShares(ev); share != "" {
		notes = append(notes, share)
	}
	note := strings.Join(notes, "\n")

	p := newPlot()
	p.X.Label.Text = "rank (eigenvalues sorted, largest first)"
	p.Y.Label.Text = "eigenvalue"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = gridGray
	p.Add(grid)

	// A log axis plots log10 of the values on a linear scale with
	// power-of-ten ticks (gonum's LogScale misplaces the axis label).
	if logY {
		for i, v := range shown {
			shown[i] = math.Log10(v)
		}
	}
	pts := make(plotter.XYs, d)
	for i, v := range shown {
		pts[i] = plotter.XY{X: float64(i + 1), Y: v}
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot: spectrum %s: %w", path, err)
	}
	line.Color = seriesColors[0]
	line.Width = vg.Points(1.5)
	p.Add(line)
	if d <= 100 {
		var normal, grey plotter.XYs
		for i, pt := range pts {
			if isClamped[i] {
				grey = append(grey, pt)
			} else {
				normal = append(normal, pt)
			}
		}
		for _, set := range []struct {
			pts plotter.XYs
			sty draw.GlyphStyle
		}{
			{normal, draw.GlyphStyle{Color: seriesColors[0], Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}},
			{grey, draw.GlyphStyle{Color: textGray, Radius: vg.Points(2.5), Shape: draw.RingGlyph{}}},
		} {
			if len(set.pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(set.pts)
			if err != nil {
				return fmt.Errorf("plot: spectrum %s: %w", path, err)
			}
			sc.GlyphStyle = set.sty
			p.Add(sc)
		}
	}

	p.X.Min, p.X.Max = 0.5, float64(d)+0.5
	p.X.Tick.Marker = intTicks{}
	if logY {
		lo, hi := minMax(shown)
		p.Y.Min, p.Y.Max = math.Floor(lo), math.Ceil(hi)
		if p.Y.Max-hi < 0.1 {
			p.Y.Max += 0.3 // keep the top point off the frame
		}
		if lo-p.Y.Min < 0.1 {
			p.Y.Min -= 0.3
		}
		p.Y.Tick.Marker = log10Ticks{}
		p.Y.Label.Text = "eigenvalue (log scale)"
	} else {
		lo, hi := minMax(shown)
		lo, hi = padRange(math.Min(lo, 0), hi, 0.05)
		p.Y.Min, p.Y.Max = math.Max(lo, 0), hi
		if p.Y.Min >= p.Y.Max {
			p.Y.Min = lo
		}
	}

	const wPx = 960
	hPx := int(headerHeight(title, note, float64(wPx))) + 560
	return render(path, wPx, hPx, func(c draw.Canvas) error {
		c = drawHeader(c, title, note)
		p.Draw(inset(c, 16, 32, 12, 4))
		return nil
	})
}

// traceShares describes how much of the trace (sum of the positive parts of
// the descending eigenvalues ev) the top 1, 5 and 10 eigenvalues hold.
func traceShares(ev []float64) string {
	var total float64
	for _, v := range ev {
		total += math.Max(v, 0)
	}
	if total <= 0 {
		return ""
	}
	var parts []string
	var cum float64
	for i, v := range ev {
		cum += math.Max(v, 0)
		if n := i + 1; n == 1 || n == 5 || n == 10 {
			if n == len(ev) && n > 1 {
				break
			}
			parts = append(parts, fmt.Sprintf("top %d: %.1f%%", n, 100*cum/total))
		}
	}
	return "share of the trace held by the " + strings.Join(parts, ", ")
}

// intTicks labels integer positions only (ranks, rounds): every integer on
// short ranges, otherwise the integer ticks of gonum's default.
type intTicks struct{}

// Ticks implements gonum's plot.Ticker.
func (intTicks) Ticks(lo, hi float64) []gplot.Tick {
	a, b := math.Ceil(lo), math.Floor(hi)
	if b < a {
		return nil
	}
	if b-a <= 12 {
		var ts []gplot.Tick
		for v := a; v <= b; v++ {
			ts = append(ts, gplot.Tick{Value: v + 0, Label: strconv.FormatFloat(v+0, 'f', -1, 64)}) // +0 turns -0 into 0
		}
		return ts
	}
	var ts []gplot.Tick
	for _, t := range (niceTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			ts = append(ts, t)
		}
	}
	return ts
}

// niceTicks labels a linear axis every 1, 2, 2.5 or 5 times a power of ten,
// aiming at about six labels, all with the same number of decimals, with
// one unlabelled minor tick between labels.
type niceTicks struct{}

// Ticks implements gonum's plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if math.Abs(step/math.Pow(10, math.Floor(math.Log10(step)+1e-9))-2.5) < 1e-9 {
		decimals++
	}
	fc, prec := byte('f'), decimals
	if a := math.Max(math.Abs(lo), math.Abs(hi)); a >= 1e6 || step < 1e-4 {
		fc, prec = 'g', 4
	}
	var ts []gplot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for i := 0; ; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, fc, prec, 64)})
		if mv := v + step/2; mv <= hi {
			ts = append(ts, gplot.Tick{Value: mv})
		}
	}
	if mv := first - step/2; mv >= lo {
		ts = append(ts, gplot.Tick{Value: mv})
	}
	return ts
}

// log10Ticks marks an axis of log10 values with powers of ten, labelling
// at most about eight of them, with minor ticks at 2..9 when few decades
// are shown.
type log10Ticks struct{}

// Ticks implements gonum's plot.Ticker.
func (log10Ticks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) {
		return nil
	}
	e0, e1 := int(math.Ceil(lo)), int(math.Floor(hi))
	step := max(1, (e1-e0+8)/8)
	var ts []gplot.Tick
	for e := e0 - 1; e <= e1; e++ {
		if e >= e0 {
			t := gplot.Tick{Value: float64(e)}
			if (e-e0)%step == 0 {
				t.Label = powerLabel(e)
			}
			ts = append(ts, t)
		}
		if e1-e0 <= 6 {
			for m := 2.0; m <= 9; m++ {
				if v := float64(e) + math.Log10(m); v >= lo && v <= hi {
					ts = append(ts, gplot.Tick{Value: v})
				}
			}
		}
	}
	return ts
}

// powerLabel writes 10^e compactly: 0.01, 0.1, 1, 10, 100, else 1e-5.
func powerLabel(e int) string {
	if e >= -2 && e <= 3 {
		return strconv.FormatFloat(math.Pow(10, float64(e)), 'f', -1, 64)
	}
	return "1e" + strconv.Itoa(e)
}

package complete

import (
	"math"
	"math/rand/v2"
	"testing"
)

// empiricalNTK builds the network of Eq. 3.3 with d hidden layers of width
// k (weights N(0, 1), C = c/√k with c = ‖φ‖⁻¹, two output rows) and
// returns, for the unit columns z (n of them, p each), the Gram matrices
// of the gradients of f_Z(W)[i, j] over all weights: same (row 0 with
// row 0) and cross (row 0 with row 1).
func empiricalNTK(r *rand.Rand, act Activation, depth, k int, z [][]float64) (same, cross [][]float64) {
	p, n := len(z[0]), len(z)
	a := act.Slope
	c := math.Sqrt(2 / (1 + a*a))
	sc := c / math.Sqrt(float64(k))
	phi := func(x float64) float64 {
		if x > 0 {
			return x
		}
		return a * x
	}
	dphi := func(x float64) float64 {
		if x > 0 {
			return 1
		}
		return a
	}
	normal := func(rows, cols int) []float64 {
		w := make([]float64, rows*cols)
		for t := range w {
			w[t] = r.NormFloat64()
		}
		return w
	}
	ws := [][]float64{normal(k, p)}
	for l := 1; l < depth; l++ {
		ws = append(ws, normal(k, k))
	}
	out := normal(2, k)
	// Forward: inputs of each layer and pre-activations, per column.
	type pass struct {
		in, h [][]float64 // per hidden layer
		last  []float64   // a_d
	}
	passes := make([]pass, n)
	for j := 0; j < n; j++ {
		x := z[j]
		var ps pass
		for l := 0; l < depth; l++ {
			cols := len(x)
			h := make([]float64, k)
			for q := 0; q < k; q++ {
				var s float64
				row := ws[l][q*cols : (q+1)*cols]
				for t, v := range x {
					s += row[t] * v
				}
				h[q] = s
			}
			ps.in = append(ps.in, x)
			ps.h = append(ps.h, h)
			nx := make([]float64, k)
			for q := range h {
				nx[q] = sc * phi(h[q])
			}
			x = nx
		}
		ps.last = x
		passes[j] = ps
	}
	// Backward for output row i: δ_l = ∂f/∂h_l.
	deltas := func(i, j int) [][]float64 {
		ps := passes[j]
		ds := make([][]float64, depth)
		g := out[i*k : (i+1)*k] // ∂f/∂a_d
		for l := depth - 1; l >= 0; l-- {
			d := make([]float64, k)
			for q := range d {
				d[q] = g[q] * sc * dphi(ps.h[l][q])
			}
			ds[l] = d
			if l > 0 {
				ng := make([]float64, k)
				for q := 0; q < k; q++ {
					row := ws[l][q*k : (q+1)*k]
					for t := range ng {
						ng[t] += d[q] * row[t]
					}
				}
				g = ng
			}
		}
		return ds
	}
	dot := func(a, b []float64) float64 {
		var s float64
		for t := range a {
			s += a[t] * b[t]
		}
		return s
	}
	d0 := make([][][]float64, n)
	d1 := make([][][]float64, n)
	for j := 0; j < n; j++ {
		d0[j], d1[j] = deltas(0, j), deltas(1, j)
	}
	same = make([][]float64, n)
	cross = make([][]float64, n)
	for j := 0; j < n; j++ {
		same[j] = make([]float64, n)
		cross[j] = make([]float64, n)
		for jj := 0; jj < n; jj++ {
			s := dot(passes[j].last, passes[jj].last) // the output row's own weights
			var x float64
			for l := 0; l < depth; l++ {
				in := dot(passes[j].in[l], passes[jj].in[l])
				s += dot(d0[j][l], d0[jj][l]) * in
				x += dot(d0[j][l], d1[jj][l]) * in
			}
			same[j][jj], cross[j][jj] = s, x
		}
	}
	return same, cross
}

// Theorem 5 against the finite-width empirical NTK of the network it
// describes: the relative error of the same-row kernel and the size of the
// cross-row kernel shrink with the width (about as 1/√k), and are small at
// width 3 000.
func TestTheorem5AgainstWideNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds networks of width 3 000")
	}
	r := rand.New(rand.NewPCG(5, 6))
	p, n := 6, 5
	z := make([][]float64, n)
	for j := range z {
		z[j] = make([]float64, p)
		var s float64
		for t := range z[j] {
			z[j][t] = r.NormFloat64()
			s += z[j][t] * z[j][t]
		}
		for t := range z[j] {
			z[j][t] /= math.Sqrt(s)
		}
	}
	cases := []struct {
		act   Activation
		depth int
	}{{Activation{Name: "relu"}, 1}, {Activation{Name: "relu"}, 2}, {Activation{Name: "leaky-relu", Slope: 0.3}, 2}}
	widths := []int{150, 3000}
	const seeds = 3
	for _, c := range cases {
		kappa, _ := c.act.Kappa(c.depth)
		var errs, crosses []float64
		for _, k := range widths {
			var e, x float64
			for s := 0; s < seeds; s++ {
				same, cross := empiricalNTK(r, c.act, c.depth, k, z)
				var num, den, cr float64
				for j := 0; j < n; j++ {
					for jj := 0; jj < n; jj++ {
						var xi float64
						for t := 0; t < p; t++ {
							xi += z[j][t] * z[jj][t]
						}
						want := kappa(xi)
						num += (same[j][jj] - want) * (same[j][jj] - want)
						den += want * want
						cr += cross[j][jj] * cross[j][jj]
					}
				}
				e += math.Sqrt(num/den) / seeds
				x += math.Sqrt(cr/den) / seeds
			}
			errs = append(errs, e)
			crosses = append(crosses, x)
		}
		t.Logf("%s depth %d: relative error %.4f → %.4f, cross-row %.4f → %.4f (widths %v)", c.act, c.depth, errs[0], errs[1], crosses[0], crosses[1], widths)
		if !(errs[1] < 0.5*errs[0] && errs[1] < 0.06) {
			t.Errorf("%s depth %d: relative error %.4f at width %d, %.4f at %d: not shrinking to the closed form", c.act, c.depth, errs[0], widths[0], errs[1], widths[1])
		}
		if !(crosses[1] < 0.5*crosses[0] && crosses[1] < 0.06) {
			t.Errorf("%s depth %d: cross-row kernel %.4f at width %d, %.4f at %d: not vanishing", c.act, c.depth, crosses[0], widths[0], crosses[1], widths[1])
		}
	}
}

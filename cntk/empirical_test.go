package cntk

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// convNet is a finite-width instance of the architecture with s = 1 and
// 3×3 filters: conv → act → stride 2 → upsample → conv → act → conv to one
// channel, circular padding, NTK parameterisation, written independently of
// the kernel's recursion.
type convNet struct {
	h, w, c0, n int
	slope       float64
	w1, w2, w3  []float64 // [o][ci][co], o over the 3×3 window
}

const q = 3

func newConvNet(h, w, c0, n int, slope float64, rng *rand.Rand) *convNet {
	draw := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	return &convNet{h: h, w: w, c0: c0, n: n, slope: slope,
		w1: draw(q * q * c0 * n), w2: draw(q * q * n * n), w3: draw(q * q * n)}
}

func (m *convNet) phi(u float64) float64 {
	if u < 0 {
		u *= m.slope
	}
	return u / math.Sqrt((1+m.slope*m.slope)/2)
}

func (m *convNet) dphi(u float64) float64 {
	d := 1.0
	if u < 0 {
		d = m.slope
	}
	return d / math.Sqrt((1+m.slope*m.slope)/2)
}

// shift returns the index of (i+oi, j+oj) on an h×w torus.
func shift(i, j, oi, oj, h, w int) int { return mod(i+oi, h)*w + mod(j+oj, w) }

// convScale is the weights' scale of a convolution from cin channels,
// 1/√(cin q²).
func convScale(cin int) float64 { return 1 / math.Sqrt(float64(cin*q*q)) }

// eachTap calls f for every weight of a q×q convolution from cin to cout
// channels, in the order of wt: its offset (oi, oj), its channels and its
// scaled value.
func eachTap(wt []float64, cin, cout int, f func(oi, oj, ci, co int, wv float64)) {
	s := convScale(cin)
	for o := range q * q {
		for ci := range cin {
			for co := range cout {
				f(o/q-1, o%q-1, ci, co, wt[(o*cin+ci)*cout+co]*s)
			}
		}
	}
}

// maps returns k zero maps of h×w pixels.
func maps(k, h, w int) [][]float64 {
	out := make([][]float64, k)
	for i := range out {
		out[i] = make([]float64, h*w)
	}
	return out
}

// conv: out[co][y] = Σ_o Σ_ci W[o][ci][co] a[ci][y+o] / √(cin q²).
func convFwd(a [][]float64, wt []float64, cin, cout, h, w int) [][]float64 {
	out := maps(cout, h, w)
	eachTap(wt, cin, cout, func(oi, oj, ci, co int, wv float64) {
		for i := range h {
			for j := range w {
				out[co][i*w+j] += wv * a[ci][shift(i, j, oi, oj, h, w)]
			}
		}
	})
	return out
}

// convBack returns the gradient of Σ δ·out with respect to W (appended to
// grad) and to the input a.
func convBack(a, delta [][]float64, wt []float64, cin, cout, h, w int, grad []float64) ([]float64, [][]float64) {
	s := convScale(cin)
	da := maps(cin, h, w)
	eachTap(wt, cin, cout, func(oi, oj, ci, co int, wv float64) {
		g := 0.0
		for i := range h {
			for j := range w {
				y := shift(i, j, oi, oj, h, w)
				d := delta[co][i*w+j]
				g += d * a[ci][y]
				da[ci][y] += wv * d
			}
		}
		grad = append(grad, g*s)
	})
	return grad, da
}

// gradients returns ∂f(x)/∂W for every output pixel x.
func (m *convNet) gradients(z [][]float64) [][]float64 {
	h, w, n := m.h, m.w, m.n
	h2, w2 := h/2, w/2
	h1 := convFwd(z, m.w1, m.c0, n, h, w)
	d1 := make([][]float64, n) // activation, then stride 2
	for c := range n {
		d1[c] = make([]float64, h2*w2)
		for i := range h2 {
			for j := range w2 {
				d1[c][i*w2+j] = m.phi(h1[c][(2*i)*w+2*j])
			}
		}
	}
	u := make([][]float64, n) // nearest-neighbour upsampling
	for c := range n {
		u[c] = make([]float64, h*w)
		for i := range h {
			for j := range w {
				u[c][i*w+j] = d1[c][(i/2)*w2+j/2]
			}
		}
	}
	hh2 := convFwd(u, m.w2, n, n, h, w)
	g2 := make([][]float64, n)
	for c := range n {
		g2[c] = make([]float64, h*w)
		for y := range h * w {
			g2[c][y] = m.phi(hh2[c][y])
		}
	}
	var out [][]float64
	for x := range h * w {
		delta := [][]float64{make([]float64, h*w)}
		delta[0][x] = 1
		grad, dg2 := convBack(g2, delta, m.w3, n, 1, h, w, nil)
		for c := range n {
			for y := range h * w {
				dg2[c][y] *= m.dphi(hh2[c][y])
			}
		}
		grad, du := convBack(u, dg2, m.w2, n, n, h, w, grad)
		dh1 := make([][]float64, n)
		for c := range n {
			dh1[c] = make([]float64, h*w)
			for i := range h {
				for j := range w {
					// upsampling's adjoint sums the 2×2 block; only even
					// positions of the first layer are kept.
					dh1[c][(2*(i/2))*w+2*(j/2)] += du[c][i*w+j]
				}
			}
			for y := range h * w {
				dh1[c][y] *= m.dphi(h1[c][y])
			}
		}
		grad, _ = convBack(z, dh1, m.w1, m.c0, n, h, w, grad)
		out = append(out, grad)
	}
	return out
}

// The CNTK is the infinite-width limit of the empirical NTK of the network
// it describes: the relative error shrinks with the width.
func TestCNTKMatchesEmpiricalNTK(t *testing.T) {
	const h, w = 4, 4
	for _, slope := range []float64{0, 0.3} {
		prior := Prior{Kind: PriorUniform, Channels: 3, Seed: 7}
		want, err := Direct(context.Background(), Arch{S: 1, Slope: slope}, prior, h, w)
		if err != nil {
			t.Fatal(err)
		}
		zf, c0, err := prior.Features(h, w)
		if err != nil {
			t.Fatal(err)
		}
		z := make([][]float64, c0)
		for c := range c0 {
			z[c] = zf[c*h*w : (c+1)*h*w]
		}
		norm := 0.0
		for _, v := range want {
			norm += v * v
		}
		widths := []int{16, 64, 256}
		if slope != 0 {
			widths = []int{16, 256}
		}
		var errs []float64
		for _, n := range widths {
			e := 0.0
			const seeds = 3
			for seed := range uint64(seeds) {
				net := newConvNet(h, w, c0, n, slope, rand.New(rand.NewPCG(seed, uint64(n))))
				g := net.gradients(z)
				d := 0.0
				for x := range h * w {
					for y := range h * w {
						k := 0.0
						for i, v := range g[x] {
							k += v * g[y][i]
						}
						diff := k - want[x*h*w+y]
						d += diff * diff
					}
				}
				e += math.Sqrt(d/norm) / seeds
			}
			errs = append(errs, e)
			t.Logf("slope %g, width %d: mean relative Frobenius error %.4f", slope, n, e)
		}
		last := errs[len(errs)-1]
		if !(last < errs[0]/2.5) {
			t.Errorf("slope %g: error %.4f at width %d does not shrink from %.4f at width %d", slope, last, widths[len(widths)-1], errs[0], widths[0])
		}
		if last > 0.15 {
			t.Errorf("slope %g: error %.4f at width %d: the CNTK is not the network's limit", slope, last, widths[len(widths)-1])
		}
	}
}

package cntk

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// tensor holds a function T(x, x') of two positions on an h×w grid that is
// invariant under shifting both positions by multiples of (rh, rw): row r of
// data (r a position in the rh×rw corner block, row-major) holds T(r, y) for
// every y. With rh = h and rw = w it is the full (hw)×(hw) matrix.
type tensor struct {
	h, w, rh, rw int
	data         []float64
}

func newTensor(h, w, rh, rw int) *tensor {
	return &tensor{h: h, w: w, rh: rh, rw: rw, data: make([]float64, rh*rw*h*w)}
}

func mod(a, n int) int {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}

// at returns T((xi, xj), (yi, yj)) for any integer positions (circular).
func (t *tensor) at(xi, xj, yi, yj int) float64 {
	xi, xj = mod(xi, t.h), mod(xj, t.w)
	ri, rj := xi%t.rh, xj%t.rw
	yi = mod(yi-(xi-ri), t.h)
	yj = mod(yj-(xj-rj), t.w)
	return t.data[(ri*t.rw+rj)*t.h*t.w+yi*t.w+yj]
}

// rows runs fn over the tensor's rows on all cores.
func parallel(ctx context.Context, n int, fn func(r int)) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for r := range n {
		next <- r
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				if ctx.Err() != nil {
					return
				}
				fn(r)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// conv returns (1/q²) Σ_o in(x+o, x'+o) over the q×q window o.
func conv(ctx context.Context, in *tensor, q int) (*tensor, error) {
	out := newTensor(in.h, in.w, in.rh, in.rw)
	h, w := in.h, in.w
	hw := h * w
	half := q / 2
	scale := 1 / float64(q*q)
	err := parallel(ctx, in.rh*in.rw, func(r int) {
		ri, rj := r/in.rw, r%in.rw
		dst := out.data[r*hw : (r+1)*hw]
		for oi := -half; oi <= half; oi++ {
			xi := mod(ri+oi, h)
			si := xi % in.rh
			bi := xi - si
			for oj := -half; oj <= half; oj++ {
				xj := mod(rj+oj, w)
				sj := xj % in.rw
				bj := xj - sj
				src := in.data[(si*in.rw+sj)*hw : (si*in.rw+sj+1)*hw]
				// T(x+o, y+o) with x+o in block (bi, bj): source column y+o−b.
				ci := mod(oi-bi, h)
				cj := mod(oj-bj, w)
				for yi := range h {
					row := src[mod(yi+ci, h)*w : mod(yi+ci, h)*w+w]
					d := dst[yi*w : yi*w+w]
					n := w - cj
					for yj, v := range row[cj:] {
						d[yj] += v
					}
					for yj, v := range row[:cj] {
						d[n+yj] += v
					}
				}
			}
		}
		for i := range dst {
			dst[i] *= scale
		}
	})
	return out, err
}

// diag returns T(x, x) for every position x.
func (t *tensor) diag() []float64 {
	d := make([]float64, t.h*t.w)
	for i := range t.h {
		for j := range t.w {
			d[i*t.w+j] = t.at(i, j, i, j)
		}
	}
	return d
}

// activate maps the pre-activation covariance sigma and NTK theta to those
// of the activation's output.
func activate(ctx context.Context, a Arch, sigma, theta *tensor) (*tensor, *tensor, error) {
	g := newTensor(sigma.h, sigma.w, sigma.rh, sigma.rw)
	th := newTensor(sigma.h, sigma.w, sigma.rh, sigma.rw)
	dg := sigma.diag()
	hw := sigma.h * sigma.w
	err := parallel(ctx, sigma.rh*sigma.rw, func(r int) {
		ri, rj := r/sigma.rw, r%sigma.rw
		dr := dg[ri*sigma.w+rj]
		for y := range hw {
			s := sigma.data[r*hw+y]
			nrm := math.Sqrt(dr * dg[y])
			rho := 0.0
			if nrm > 0 {
				rho = s / nrm
			}
			v, d := a.dual(rho)
			g.data[r*hw+y] = nrm * v
			th.data[r*hw+y] = theta.data[r*hw+y] * d
		}
	})
	return g, th, err
}

// down keeps the even positions (the stride-2 part of a strided convolution).
func down(t *tensor) *tensor {
	rh, rw := max(1, t.rh/2), max(1, t.rw/2)
	if t.rh == t.h { // full tensors stay full
		rh, rw = t.h/2, t.w/2
	}
	out := newTensor(t.h/2, t.w/2, rh, rw)
	hw := out.h * out.w
	for ri := range rh {
		for rj := range rw {
			for yi := range out.h {
				for yj := range out.w {
					out.data[(ri*rw+rj)*hw+yi*out.w+yj] = t.at(2*ri, 2*rj, 2*yi, 2*yj)
				}
			}
		}
	}
	return out
}

// up is nearest-neighbour upsampling by 2: T'(x, y) = T(⌊x/2⌋, ⌊y/2⌋).
func up(t *tensor) *tensor {
	rh, rw := 2*t.rh, 2*t.rw
	if t.rh == t.h {
		rh, rw = 2*t.h, 2*t.w
	}
	out := newTensor(2*t.h, 2*t.w, rh, rw)
	hw := out.h * out.w
	for ri := range rh {
		for rj := range rw {
			for yi := range out.h {
				for yj := range out.w {
					out.data[(ri*rw+rj)*hw+yi*out.w+yj] = t.at(ri/2, rj/2, yi/2, yj/2)
				}
			}
		}
	}
	return out
}

// Features returns the prior's channels on an h×w grid, channel-major
// (c × h × w), for priors with finitely many channels: the seeded uniform
// draw (Channels > 0), the identity, the meshgrid and the one-hot.
func (p Prior) Features(h, w int) (z []float64, c int, err error) {
	if err := p.Validate(); err != nil {
		return nil, 0, err
	}
	n := h * w
	switch {
	case p.Kind == PriorMeshgrid:
		z = make([]float64, 2*n)
		for i := range h {
			for j := range w {
				z[i*w+j] = float64(i+1) / float64(h)
				z[n+i*w+j] = float64(j+1) / float64(w)
			}
		}
		return z, 2, nil
	case p.Kind == PriorIdentity:
		z = make([]float64, n)
		for i := range min(h, w) {
			z[i*w+i] = 1
		}
		return z, 1, nil
	case p.Kind == PriorOneHot:
		z = make([]float64, n*n)
		for i := range n {
			z[i*n+i] = 1
		}
		return z, n, nil
	case p.Channels > 0:
		lo, hi := p.bounds()
		rng := rand.New(rand.NewPCG(p.Seed, 0x636e746b))
		z = make([]float64, p.Channels*n)
		for i := range z {
			z[i] = lo + (hi-lo)*rng.Float64()
		}
		return z, p.Channels, nil
	}
	return nil, 0, fmt.Errorf("cntk: the infinite-channel uniform prior has no finite features")
}

// gram returns the prior's Gram (1/c) Σ_c Z_c(x) Z_c(x') as a tensor: with
// period 1 when the prior is stationary and full is false, else full.
func (p Prior) gram(h, w int, full bool) (*tensor, error) {
	if p.Stationary() && !full {
		c1, c2 := p.twoValues()
		t := newTensor(h, w, 1, 1)
		for i := range t.data {
			t.data[i] = c2
		}
		t.data[0] = c1
		return t, nil
	}
	n := h * w
	t := newTensor(h, w, h, w)
	if p.Stationary() {
		c1, c2 := p.twoValues()
		for i := range t.data {
			t.data[i] = c2
		}
		for i := range n {
			t.data[i*n+i] = c1
		}
		return t, nil
	}
	z, c, err := p.Features(h, w)
	if err != nil {
		return nil, err
	}
	for x := range n {
		for y := range n {
			s := 0.0
			for k := range c {
				s += z[k*n+x] * z[k*n+y]
			}
			t.data[x*n+y] = s / float64(c)
		}
	}
	return t, nil
}

// compute runs the layer recursion on an h×w grid and returns the output's
// NTK tensor. full keeps every row (the direct kernel); otherwise rows are
// kept per period, which needs a stationary prior.
func compute(ctx context.Context, a Arch, p Prior, h, w int, full bool) (*tensor, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := a.CheckSize(h, w); err != nil {
		return nil, err
	}
	q := a.filter()
	g, err := p.gram(h, w, full)
	if err != nil {
		return nil, err
	}
	th := newTensor(g.h, g.w, g.rh, g.rw) // no trainable layer before the first
	layer := func() error {               // conv → activation
		sigma, err := conv(ctx, g, q)
		if err != nil {
			return err
		}
		tc, err := conv(ctx, th, q)
		if err != nil {
			return err
		}
		for i := range tc.data {
			tc.data[i] += sigma.data[i]
		}
		g, th, err = activate(ctx, a, sigma, tc)
		return err
	}
	for range a.S {
		if err := layer(); err != nil {
			return nil, err
		}
		g, th = down(g), down(th)
	}
	for range a.S {
		g, th = up(g), up(th)
		if err := layer(); err != nil {
			return nil, err
		}
	}
	sigma, err := conv(ctx, g, q)
	if err != nil {
		return nil, err
	}
	out, err := conv(ctx, th, q)
	if err != nil {
		return nil, err
	}
	for i := range out.data {
		out.data[i] += sigma.data[i]
	}
	return out, nil
}

// MaxDirectPixels bounds the direct kernel: (hw)² float64 per tensor, a few
// tensors alive (4096 pixels: 134 MB each).
const MaxDirectPixels = 4096

// Direct computes the CNTK of an h×w image by the layer recursion on every
// pair of pixels, without using any translation structure: the n×n matrix
// (n = hw, pixels row-major). Any prior; at most MaxDirectPixels pixels.
func Direct(ctx context.Context, a Arch, p Prior, h, w int) ([]float64, error) {
	if h*w > MaxDirectPixels {
		return nil, fmt.Errorf("cntk: the direct kernel of a %d×%d image needs %d MB a tensor: at most %d pixels (use the expansion)", w, h, h*w*h*w*8>>20, MaxDirectPixels)
	}
	t, err := compute(ctx, a, p, h, w, true)
	if err != nil {
		return nil, err
	}
	return t.data, nil
}

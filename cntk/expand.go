package cntk

import (
	"context"
	"fmt"
	"math"
)

// Kernel is the exact CNTK of an H×W image, stored by the expansion theorem:
// for each position r modulo P (P² of them) the window of offsets
// d ∈ [−(P−1), P−1]² around it; every other pair holds Far.
type Kernel struct {
	Arch  Arch
	Prior Prior
	H, W  int
	P     int
	Far   float64 // the value of every pair at offset ≥ P in some coordinate
	// win[r*span*span + (di+P−1)*span + dj+P−1] = K(r, r+d) − Far, span = 2P−1.
	win   []float64
	span  int
	reach int // offsets up to reach in each coordinate are in the window
	poly  *polyphase
	// dense, if set, is the whole n×n kernel (DirectKernel) and win is unused.
	dense []float64
}

// DirectKernel wraps the direct kernel (Direct) of an h×w image for the
// priors the expansion does not cover (meshgrid, drawn channels); at most
// MaxDirectPixels pixels.
func DirectKernel(ctx context.Context, a Arch, p Prior, h, w int) (*Kernel, error) {
	d, err := Direct(ctx, a, p, h, w)
	if err != nil {
		return nil, err
	}
	return &Kernel{Arch: a, Prior: p, H: h, W: w, P: a.Period(), dense: d}, nil
}

// NewKernel is Expand for stationary priors and DirectKernel otherwise.
func NewKernel(ctx context.Context, a Arch, p Prior, h, w int) (*Kernel, error) {
	if p.Stationary() {
		return Expand(ctx, a, p, h, w)
	}
	return DirectKernel(ctx, a, p, h, w)
}

// Expand computes the CNTK of a 2^(s+1)×2^(s+1) image by the recursion and
// expands it to h×w (SI appendix L). The prior must be stationary (uniform
// with infinitely many channels, or one-hot).
func Expand(ctx context.Context, a Arch, p Prior, h, w int) (*Kernel, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !p.Stationary() {
		return nil, fmt.Errorf("cntk: the %s prior%s is not stationary: the expansion needs the uniform (infinite channels) or one-hot prior", p.Kind, channelsNote(p))
	}
	if err := a.CheckSize(h, w); err != nil {
		return nil, err
	}
	P := a.Period()
	small, err := compute(ctx, a, p, 2*P, 2*P, false)
	if err != nil {
		return nil, err
	}
	k := &Kernel{Arch: a, Prior: p, H: h, W: w, P: P, span: 2*P - 1, reach: P - 1, poly: new(polyphase)}
	k.Far = small.at(0, 0, P, P) // offset P: never linked through the bottleneck
	k.win = make([]float64, P*P*k.span*k.span)
	for ri := range P {
		for rj := range P {
			base := (ri*P + rj) * k.span * k.span
			for di := -(P - 1); di < P; di++ {
				for dj := -(P - 1); dj < P; dj++ {
					k.win[base+(di+P-1)*k.span+dj+P-1] = small.at(ri, rj, ri+di, rj+dj) - k.Far
				}
			}
		}
	}
	return k, nil
}

func channelsNote(p Prior) string {
	if p.Kind == PriorUniform && p.Channels > 0 {
		return fmt.Sprintf(" with %d drawn channels", p.Channels)
	}
	return ""
}

// Bytes is the memory of the expanded kernel's windows.
func (k *Kernel) Bytes() int64 { return int64(len(k.win)+len(k.dense)) * 8 }

// wrap maps an offset to the circular range [−n/2, n/2).
func wrap(d, n int) int {
	d = mod(d, n)
	if d >= n-n/2 {
		d -= n
	}
	return d
}

// At returns K(x, y) for pixels x = (xi, xj) and y = (yi, yj).
func (k *Kernel) At(xi, xj, yi, yj int) float64 {
	if k.dense != nil {
		n := k.H * k.W
		return k.dense[(mod(xi, k.H)*k.W+mod(xj, k.W))*n+mod(yi, k.H)*k.W+mod(yj, k.W)]
	}
	di, dj := wrap(yi-xi, k.H), wrap(yj-xj, k.W)
	if di < -k.reach || di > k.reach || dj < -k.reach || dj > k.reach {
		return k.Far
	}
	r := mod(xi, k.P)*k.P + mod(xj, k.P)
	return k.Far + k.win[r*k.span*k.span+(di+k.reach)*k.span+dj+k.reach]
}

// Row returns K(x, ·) over the image, row-major.
func (k *Kernel) Row(xi, xj int) []float64 {
	out := make([]float64, k.H*k.W)
	for i := range k.H {
		for j := range k.W {
			out[i*k.W+j] = k.At(xi, xj, i, j)
		}
	}
	return out
}

// apply sets out = K v for nrhs vectors over the whole grid, interleaved
// (pixel-major: v[pix*nrhs+c]).
func (k *Kernel) apply(ctx context.Context, v, out []float64, nrhs int) error {
	if k.poly != nil && k.usePolyphase() {
		return k.applyPolyphase(ctx, v, out, nrhs)
	}
	return k.applyWindow(ctx, v, out, nrhs)
}

// applyWindow is apply by the window loop: each output pixel sums its
// (2·reach+1)² neighbours.
func (k *Kernel) applyWindow(ctx context.Context, v, out []float64, nrhs int) error {
	h, w, P, span, reach := k.H, k.W, k.P, k.span, k.reach
	if k.dense != nil {
		n := h * w
		return parallel(ctx, n, func(x int) {
			row := k.dense[x*n : (x+1)*n]
			for c := range nrhs {
				s := 0.0
				for y, kv := range row {
					s += kv * v[y*nrhs+c]
				}
				out[x*nrhs+c] = s
			}
		})
	}
	// v circularly padded by reach on every side.
	ph, pw := h+2*reach, w+2*reach
	pad := make([]float64, ph*pw*nrhs)
	for i := range ph {
		si := mod(i-reach, h)
		for j := range pw {
			sj := mod(j-reach, w)
			copy(pad[(i*pw+j)*nrhs:(i*pw+j+1)*nrhs], v[(si*w+sj)*nrhs:(si*w+sj+1)*nrhs])
		}
	}
	sums := make([]float64, nrhs)
	for i := range h * w {
		for c := range nrhs {
			sums[c] += v[i*nrhs+c]
		}
	}
	return parallel(ctx, h, func(i int) {
		acc := make([]float64, nrhs)
		for j := range w {
			r := (i%P)*P + j%P
			win := k.win[r*span*span : (r+1)*span*span]
			copy(acc, sums)
			for c := range acc {
				acc[c] *= k.Far
			}
			for a := range span {
				wr := win[a*span : (a+1)*span]
				pr := pad[((i+a)*pw+j)*nrhs : ((i+a)*pw+j+span)*nrhs]
				if nrhs == 1 {
					s := 0.0
					for b, kv := range wr {
						s += kv * pr[b]
					}
					acc[0] += s
					continue
				}
				for b, kv := range wr {
					for c := range nrhs {
						acc[c] += kv * pr[b*nrhs+c]
					}
				}
			}
			copy(out[(i*w+j)*nrhs:(i*w+j+1)*nrhs], acc)
		}
	})
}

// CoordKind names a plain kernel on pixel coordinates.
type CoordKind int

// The coordinate kernels of the benchmark's baseline.
const (
	CoordLaplace  CoordKind = iota // exp(−‖x − y‖/σ)
	CoordGaussian                  // exp(−‖x − y‖²/(2σ²))
)

// CoordKernel is a plain translation-invariant kernel on the pixel
// coordinates of an h×w image (circular distances), cut to zero beyond
// 5σ (Laplace: e^−5) or 4σ (Gaussian: e^−8) in either coordinate.
func CoordKernel(kind CoordKind, sigma float64, h, w int) (*Kernel, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("cntk: bandwidth %g: want a positive number of pixels", sigma)
	}
	cut := 5.0
	if kind == CoordGaussian {
		cut = 4
	}
	reach := int(math.Ceil(cut * sigma))
	if 2*reach+1 > min(h, w) {
		return nil, fmt.Errorf("cntk: bandwidth %g px reaches %d px: too wide for a %d×%d image", sigma, reach, w, h)
	}
	span := 2*reach + 1
	k := &Kernel{H: h, W: w, P: 1, span: span, reach: reach, win: make([]float64, span*span)}
	for a := range span {
		for b := range span {
			d2 := float64((a-reach)*(a-reach) + (b-reach)*(b-reach))
			if kind == CoordGaussian {
				k.win[a*span+b] = math.Exp(-d2 / (2 * sigma * sigma))
			} else {
				k.win[a*span+b] = math.Exp(-math.Sqrt(d2) / sigma)
			}
		}
	}
	return k, nil
}

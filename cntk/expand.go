package cntk

import (
	"context"
	"fmt"
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
	win  []float64
	span int
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
// with infinitely many channels, or identity).
func Expand(ctx context.Context, a Arch, p Prior, h, w int) (*Kernel, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !p.Stationary() {
		return nil, fmt.Errorf("cntk: the %s prior%s is not stationary: the expansion needs the uniform (infinite channels) or identity prior", p.Kind, channelsNote(p))
	}
	if err := a.CheckSize(h, w); err != nil {
		return nil, err
	}
	P := a.Period()
	small, err := compute(ctx, a, p, 2*P, 2*P, false)
	if err != nil {
		return nil, err
	}
	k := &Kernel{Arch: a, Prior: p, H: h, W: w, P: P, span: 2*P - 1}
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
	if di <= -k.P || di >= k.P || dj <= -k.P || dj >= k.P {
		return k.Far
	}
	r := mod(xi, k.P)*k.P + mod(xj, k.P)
	return k.Far + k.win[r*k.span*k.span+(di+k.P-1)*k.span+dj+k.P-1]
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
	h, w, P, span := k.H, k.W, k.P, k.span
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
	// v circularly padded by P−1 on every side.
	ph, pw := h+2*(P-1), w+2*(P-1)
	pad := make([]float64, ph*pw*nrhs)
	for i := range ph {
		si := mod(i-(P-1), h)
		for j := range pw {
			sj := mod(j-(P-1), w)
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

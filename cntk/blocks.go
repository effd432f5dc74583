package cntk

import (
	"context"
	"sync"

	"github.com/rfmkit/rfm/internal/linalg"
)

// maxBlockBytes bounds the polyphase blocks (9·P⁴ float64: 4.7 MB at s = 4,
// 75 MB at s = 5); above it products use the window loop.
const maxBlockBytes = 160 << 20

// polyphase holds the kernel's window as nine P²×P² blocks: writing
// x = P·X + r and y = P·Y + r', K(x, y) − Far = B_E[r, r'] with E = Y − X
// in {−1, 0, 1}² (no pair further apart is in the window). A product with
// K is then nine GEMMs of the coarse-grid-by-residue matrix of v.
type polyphase struct {
	once   sync.Once
	blocks [9][]float64
}

func (k *Kernel) usePolyphase() bool {
	P := k.P
	return k.dense == nil && P >= 4 && k.reach == P-1 && k.H/P >= 3 && k.W/P >= 3 &&
		9*int64(P*P)*int64(P*P)*8 <= maxBlockBytes
}

func (k *Kernel) buildBlocks() {
	P := k.P
	pp := P * P
	for e := range 9 {
		ei, ej := e/3-1, e%3-1
		b := make([]float64, pp*pp)
		for r := range pp {
			ri, rj := r/P, r%P
			for rr := range pp {
				di := P*ei + rr/P - ri
				dj := P*ej + rr%P - rj
				if di < -k.reach || di > k.reach || dj < -k.reach || dj > k.reach {
					continue
				}
				b[r*pp+rr] = k.win[r*k.span*k.span+(di+k.reach)*k.span+dj+k.reach]
			}
		}
		k.poly.blocks[e] = b
	}
}

// applyPolyphase is apply by nine GEMMs (see polyphase).
func (k *Kernel) applyPolyphase(ctx context.Context, v, out []float64, nrhs int) error {
	k.poly.once.Do(k.buildBlocks)
	P := k.P
	pp := P * P
	hc, wc := k.H/P, k.W/P
	nc := hc * wc
	rows := nrhs * nc
	// vm[(c*nc + X)*pp + r] = v at pixel P·X + r, channel c.
	vm := make([]float64, rows*pp)
	for i := range k.H {
		for j := range k.W {
			X := (i/P)*wc + j/P
			r := (i%P)*P + j%P
			for c := range nrhs {
				vm[(c*nc+X)*pp+r] = v[(i*k.W+j)*nrhs+c]
			}
		}
	}
	um := make([]float64, rows*pp)
	sh := make([]float64, rows*pp)
	for e := range 9 {
		if err := ctx.Err(); err != nil {
			return err
		}
		ei, ej := e/3-1, e%3-1
		// sh row X holds vm row X+E (circular on the coarse grid).
		for c := range nrhs {
			for Xi := range hc {
				for Xj := range wc {
					src := c*nc + mod(Xi+ei, hc)*wc + mod(Xj+ej, wc)
					dst := c*nc + Xi*wc + Xj
					copy(sh[dst*pp:(dst+1)*pp], vm[src*pp:(src+1)*pp])
				}
			}
		}
		linalg.Gemm(false, true, rows, pp, pp, 1, sh, pp, k.poly.blocks[e], pp, 1, um, pp)
	}
	sums := make([]float64, nrhs)
	for i := range k.H * k.W {
		for c := range nrhs {
			sums[c] += v[i*nrhs+c]
		}
	}
	for i := range k.H {
		for j := range k.W {
			X := (i/P)*wc + j/P
			r := (i%P)*P + j%P
			for c := range nrhs {
				out[(i*k.W+j)*nrhs+c] = um[(c*nc+X)*pp+r] + k.Far*sums[c]
			}
		}
	}
	return nil
}

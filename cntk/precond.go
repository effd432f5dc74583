package cntk

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Preconditioner names the preconditioner of the conjugate-gradient solve.
type Preconditioner int

// The preconditioners. PrecondBlock is the default: on camera.png it
// needed 2–3.5 times fewer iterations than none (docs/inpainting.md).
const (
	PrecondBlock  Preconditioner = iota // block Jacobi: K_OO restricted to square tiles, each factorised
	PrecondNone                         // plain conjugate gradients
	PrecondJacobi                       // the diagonal of K_OO + λI
)

var precondNames = [...]string{"block", "none", "jacobi"}

func (p Preconditioner) String() string {
	return enumString(precondNames[:], "Preconditioner", int(p))
}

// ParsePreconditioner reads a preconditioner's name.
func ParsePreconditioner(s string) (Preconditioner, error) {
	i, err := parseEnum(precondNames[:], "preconditioner", s)
	return Preconditioner(i), err
}

// precond applies z = M⁻¹ r on the grid (c interleaved right-hand sides,
// only observed pixels read and written).
type precond interface {
	apply(r, z []float64, c int)
}

// diagPrecond divides by the diagonal.
type diagPrecond struct {
	idx []int
	inv []float64 // per observed pixel, in idx's order
}

func (d *diagPrecond) apply(r, z []float64, c int) {
	for t, q := range d.idx {
		for ch := range c {
			z[q*c+ch] = r[q*c+ch] * d.inv[t]
		}
	}
}

// blockPrecond is block Jacobi: the observed pixels of each tile×tile
// square of the grid form a block of K_OO + λI, factorised by Cholesky;
// M⁻¹ applies each block's inverse to its pixels. Each block is positive
// definite when K_OO + λI is, so M is too and CG stays valid.
type blockPrecond struct {
	blocks []pblock
}

type pblock struct {
	pix []int     // grid indices of the block's observed pixels
	l   []float64 // Cholesky factor, len(pix)² row-major
}

func (b *blockPrecond) apply(r, z []float64, c int) {
	// Blocks are disjoint: each writes only its own pixels.
	_ = parallel(context.Background(), len(b.blocks), func(i int) {
		bl := &b.blocks[i]
		n := len(bl.pix)
		v := make([]float64, n)
		for ch := range c {
			for t, q := range bl.pix {
				v[t] = r[q*c+ch]
			}
			cholSolveVec(n, bl.l, v)
			for t, q := range bl.pix {
				z[q*c+ch] = v[t]
			}
		}
	})
}

// cholSolveVec overwrites v by (L·Lᵀ)⁻¹v for the n×n lower factor l
// (row-major): two substitutions, cheaper than the backend's trsm call at
// the few hundred rows of a block.
func cholSolveVec(n int, l, v []float64) {
	for i := range n {
		row := l[i*n : i*n+i]
		s := v[i]
		for j, lv := range row {
			s -= lv * v[j]
		}
		v[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		v[i] /= l[i*n+i]
		vi := v[i]
		row := l[i*n : i*n+i]
		for j, lv := range row {
			v[j] -= lv * vi
		}
	}
}

// DefaultTile is the block-Jacobi tile side: 8 pixels (blocks of at most
// 64 pixels). On camera.png it beat 16 and 32 at s = 3 and 4 in iterations
// or in time (docs/inpainting.md), and its factors take 4 KiB a tile.
const DefaultTile = 8

// newPrecond builds the preconditioner kind for K_OO + λI over the
// observed pixels idx of k's grid.
func newPrecond(ctx context.Context, kind Preconditioner, k *Kernel, idx []int, observed []bool, lambda float64, tile int) (precond, error) {
	switch kind {
	case PrecondNone:
		return nil, nil
	case PrecondJacobi:
		d := &diagPrecond{idx: idx, inv: make([]float64, len(idx))}
		for t, q := range idx {
			v := k.At(q/k.W, q%k.W, q/k.W, q%k.W) + lambda
			if !(v > 0) {
				return nil, fmt.Errorf("cntk: K(x, x) = %g at pixel (%d, %d): the Jacobi preconditioner needs a positive diagonal", v, q%k.W, q/k.W)
			}
			d.inv[t] = 1 / v
		}
		return d, nil
	case PrecondBlock:
	default:
		return nil, fmt.Errorf("cntk: unknown preconditioner %d", kind)
	}
	if tile <= 0 {
		tile = DefaultTile
	}
	var bp blockPrecond
	for i0 := 0; i0 < k.H; i0 += tile {
		for j0 := 0; j0 < k.W; j0 += tile {
			var pix []int
			for i := i0; i < min(i0+tile, k.H); i++ {
				for j := j0; j < min(j0+tile, k.W); j++ {
					if observed[i*k.W+j] {
						pix = append(pix, i*k.W+j)
					}
				}
			}
			if len(pix) > 0 {
				bp.blocks = append(bp.blocks, pblock{pix: pix})
			}
		}
	}
	jitter := 1e-10 * k.At(0, 0, 0, 0)
	var failed atomic.Int32
	err := parallel(ctx, len(bp.blocks), func(b int) {
		bl := &bp.blocks[b]
		n := len(bl.pix)
		a := make([]float64, n*n)
		fill := func(extra float64) {
			for r, p := range bl.pix {
				for s, q := range bl.pix[:r+1] {
					a[r*n+s] = k.At(p/k.W, p%k.W, q/k.W, q%k.W)
				}
				a[r*n+r] += lambda + extra
			}
		}
		fill(0)
		if linalg.Cholesky(n, a, n) >= 0 {
			// A numerically singular block (no ridge): a tiny jitter keeps
			// M positive definite; CG still solves the unjittered system.
			fill(jitter)
			if linalg.Cholesky(n, a, n) >= 0 {
				failed.Add(1)
				return
			}
		}
		bl.l = a
	})
	if err != nil {
		return nil, err
	}
	if failed.Load() > 0 {
		return nil, fmt.Errorf("cntk: a block of K_OO is not positive definite: add a ridge or use another preconditioner")
	}
	return &bp, nil
}

// relResidual is the worst over channels of ‖r‖/‖b‖ given the squared norms.
func relResidual(rr, bn []float64) float64 {
	worst := 0.0
	for ch := range rr {
		if bn[ch] > 0 {
			worst = max(worst, math.Sqrt(rr[ch]/bn[ch]))
		}
	}
	return worst
}

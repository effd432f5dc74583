package cntk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Options tunes the solve.
type Options struct {
	// Ridge is added to K_OO's diagonal, relative to K(x, x) (default 0:
	// none; a negative value is an error).
	Ridge float64
	// ExactMax is the largest number of observed pixels solved by a dense
	// Cholesky factorisation (default 4000, a 128 MB matrix); above it the
	// solve is conjugate gradients with products by the expanded kernel.
	ExactMax int
	// Tol is CG's relative residual ‖r‖/‖b‖ to stop at (default 1e-4).
	Tol float64
	// MaxIter bounds CG's iterations (default 1000, a safety cap: the
	// solve is meant to stop at Tol; Stats.Converged says whether it did).
	MaxIter int
	// Precond is CG's preconditioner (default PrecondBlock).
	Precond Preconditioner
	// Tile is the side in pixels of PrecondBlock's tiles (default
	// DefaultTile).
	Tile int
	// Trace, if set, is called after each CG iteration with its relative
	// residual.
	Trace func(iter int, residual float64)
	// Progress, if set, is called with the fraction done and a stage name.
	Progress func(frac float64, stage string)
}

func (o Options) withDefaults() Options {
	o.ExactMax = cmp.Or(o.ExactMax, 4000)
	o.Tol = cmp.Or(o.Tol, 1e-4)
	o.MaxIter = cmp.Or(o.MaxIter, 1000)
	return o
}

func (o Options) validate() error {
	switch {
	case o.Ridge < 0 || math.IsNaN(o.Ridge):
		return fmt.Errorf("cntk: ridge %g: want ≥ 0", o.Ridge)
	case o.Tol < 0 || o.Tol >= 1 || math.IsNaN(o.Tol):
		return fmt.Errorf("cntk: tolerance %g: want in (0, 1)", o.Tol)
	case o.MaxIter < 0:
		return fmt.Errorf("cntk: %d iterations: want ≥ 1", o.MaxIter)
	case o.ExactMax < 0:
		return fmt.Errorf("cntk: exact-solve limit %d: want ≥ 0", o.ExactMax)
	case o.Precond < 0 || int(o.Precond) >= len(precondNames):
		return fmt.Errorf("cntk: unknown preconditioner %d", o.Precond)
	case o.Tile < 0:
		return fmt.Errorf("cntk: tile side %d: want ≥ 1 (0: the default)", o.Tile)
	}
	return nil
}

// Stats describes a solve.
type Stats struct {
	Observed   int
	Exact      bool    // dense Cholesky (else CG)
	Iterations int     // CG iterations
	Residual   float64 // CG's final worst relative residual ‖b − Aα‖/‖b‖ over channels
	Converged  bool    // Cholesky, or CG reached Options.Tol
	Precond    Preconditioner
	// PrecondTime is the time to build CG's preconditioner (part of Time).
	PrecondTime time.Duration
	Time        time.Duration
}

// CheckMask reports a mask that does not fit an h×w image or leaves
// nothing to do.
func CheckMask(observed []bool, h, w int) (int, error) {
	if len(observed) != h*w {
		return 0, fmt.Errorf("cntk: mask of %d pixels for a %d×%d image (%d pixels)", len(observed), w, h, h*w)
	}
	n := 0
	for _, o := range observed {
		if o {
			n++
		}
	}
	switch n {
	case 0:
		return 0, errors.New("cntk: the mask observes no pixel: nothing to inpaint from")
	case h * w:
		return 0, errors.New("cntk: the mask observes every pixel: nothing to inpaint")
	}
	return n, nil
}

// Inpaint predicts the unobserved pixels of an h×w×c image (values
// interleaved, pixel (i, j) channel ch at (i*w+j)*c+ch) from the observed
// ones by kernel regression with k. Observed pixels are returned unchanged.
func Inpaint(ctx context.Context, k *Kernel, img []float64, c int, observed []bool, opt Options) ([]float64, Stats, error) {
	h, w := k.H, k.W
	if c < 1 {
		return nil, Stats{}, fmt.Errorf("cntk: %d channels", c)
	}
	if len(img) != h*w*c {
		return nil, Stats{}, fmt.Errorf("cntk: %d values for a %d×%d image of %d channels (want %d)", len(img), w, h, c, h*w*c)
	}
	if _, err := CheckMask(observed, h, w); err != nil {
		return nil, Stats{}, err
	}
	for p, v := range img {
		if observed[p/c] && (math.IsNaN(v) || math.IsInf(v, 0)) {
			return nil, Stats{}, fmt.Errorf("cntk: observed pixel (%d, %d) channel %d is %g", (p/c)%w, (p/c)/w, p%c, v)
		}
	}
	// Centre each channel on its observed mean: the kernel's far constant
	// then need not carry the image's mean level.
	mean := make([]float64, c)
	nObs := 0
	for p, o := range observed {
		if o {
			nObs++
			for ch := range c {
				mean[ch] += img[p*c+ch]
			}
		}
	}
	for ch := range c {
		mean[ch] /= float64(nObs)
	}
	rhs := make([]float64, h*w*c)
	for p, o := range observed {
		if o {
			for ch := range c {
				rhs[p*c+ch] = img[p*c+ch] - mean[ch]
			}
		}
	}
	alpha, st, err := solveObserved(ctx, k, rhs, c, observed, opt)
	if err != nil {
		return nil, st, err
	}
	pred := make([]float64, h*w*c)
	if err := k.apply(ctx, alpha, pred, c); err != nil {
		return nil, st, err
	}
	out := make([]float64, h*w*c)
	for p, o := range observed {
		for ch := range c {
			if o {
				out[p*c+ch] = img[p*c+ch]
			} else {
				out[p*c+ch] = pred[p*c+ch] + mean[ch]
			}
		}
	}
	return out, st, nil
}

// Weights returns, for the pixel (xi, xj), the weight of every observed
// pixel in its prediction: w = K_OO⁻¹ K(O, x), zero at unobserved pixels,
// so that the prediction is Σ w·y over the observed pixels.
func Weights(ctx context.Context, k *Kernel, observed []bool, xi, xj int, opt Options) ([]float64, Stats, error) {
	if _, err := CheckMask(observed, k.H, k.W); err != nil {
		return nil, Stats{}, err
	}
	if xi < 0 || xi >= k.H || xj < 0 || xj >= k.W {
		return nil, Stats{}, fmt.Errorf("cntk: pixel (%d, %d) is outside the %d×%d image", xj, xi, k.W, k.H)
	}
	row := k.Row(xi, xj)
	for p, o := range observed {
		if !o {
			row[p] = 0
		}
	}
	return solveObserved(ctx, k, row, 1, observed, opt)
}

// solveObserved solves (K_OO + λI) α = b over the observed pixels for c
// right-hand sides held on the whole grid (zero off O) and returns α on
// the grid (zero off O).
func solveObserved(ctx context.Context, k *Kernel, b []float64, c int, observed []bool, opt Options) ([]float64, Stats, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, Stats{}, err
	}
	start := time.Now()
	idx := make([]int, 0, len(observed))
	for p, o := range observed {
		if o {
			idx = append(idx, p)
		}
	}
	n := len(idx)
	lambda := opt.Ridge * k.At(0, 0, 0, 0)
	st := Stats{Observed: n, Precond: opt.Precond}
	report := func(f float64, s string) {
		if opt.Progress != nil {
			opt.Progress(f, s)
		}
	}
	if n <= opt.ExactMax {
		st.Exact = true
		a := make([]float64, n*n)
		for r, p := range idx {
			for s, q := range idx[:r+1] {
				a[r*n+s] = k.At(p/k.W, p%k.W, q/k.W, q%k.W)
			}
			a[r*n+r] += lambda
		}
		bad, err := linalg.CholeskyProgress(ctx, n, a, n, func(f float64) { report(f, "factorise") })
		if err != nil {
			return nil, st, err
		}
		if bad >= 0 {
			return nil, st, fmt.Errorf("cntk: K_OO is not positive definite at pivot %d of %d: add a ridge", bad, n)
		}
		rhs := make([]float64, n*c)
		for r, p := range idx {
			copy(rhs[r*c:(r+1)*c], b[p*c:(p+1)*c])
		}
		linalg.CholSolve(n, c, a, n, rhs, c)
		alpha := make([]float64, len(b))
		for r, p := range idx {
			copy(alpha[p*c:(p+1)*c], rhs[r*c:(r+1)*c])
		}
		st.Converged = true
		st.Time = time.Since(start)
		report(1, "solve")
		return alpha, st, nil
	}
	// Preconditioned conjugate gradients, one independent recurrence per
	// right-hand side, products on the whole grid.
	report(0, "preconditioner")
	pstart := time.Now()
	m, err := newPrecond(ctx, opt.Precond, k, idx, observed, lambda, opt.Tile)
	if err != nil {
		return nil, st, err
	}
	st.PrecondTime = time.Since(pstart)
	g := len(b)
	x := make([]float64, g)
	r := append([]float64(nil), b...)
	z := r
	if m != nil {
		z = make([]float64, g)
		m.apply(r, z, c)
	}
	p := append([]float64(nil), z...)
	ap := make([]float64, g)
	rz := make([]float64, c)
	rr := make([]float64, c)
	bn := make([]float64, c)
	dot := func(u, v []float64, out []float64) {
		clear(out)
		for _, q := range idx {
			for ch := range c {
				out[ch] += u[q*c+ch] * v[q*c+ch]
			}
		}
	}
	dot(b, b, bn)
	dot(r, r, rr)
	dot(r, z, rz)
	pap := make([]float64, c)
	rzNew := make([]float64, c)
	st.Residual = relResidual(rr, bn)
	for it := 0; it < opt.MaxIter && st.Residual > opt.Tol; it++ {
		if err := k.apply(ctx, p, ap, c); err != nil {
			return nil, st, err
		}
		for pix, o := range observed {
			if !o {
				for ch := range c {
					ap[pix*c+ch] = 0
				}
			}
		}
		for _, q := range idx {
			for ch := range c {
				ap[q*c+ch] += lambda * p[q*c+ch]
			}
		}
		dot(p, ap, pap)
		for _, q := range idx {
			for ch := range c {
				if pap[ch] <= 0 {
					continue
				}
				a := rz[ch] / pap[ch]
				x[q*c+ch] += a * p[q*c+ch]
				r[q*c+ch] -= a * ap[q*c+ch]
			}
		}
		if m != nil {
			m.apply(r, z, c)
		}
		dot(r, z, rzNew)
		dot(r, r, rr)
		for _, q := range idx {
			for ch := range c {
				beta := 0.0
				if rz[ch] > 0 {
					beta = rzNew[ch] / rz[ch]
				}
				p[q*c+ch] = z[q*c+ch] + beta*p[q*c+ch]
			}
		}
		copy(rz, rzNew)
		st.Iterations = it + 1
		st.Residual = relResidual(rr, bn)
		if opt.Trace != nil {
			opt.Trace(st.Iterations, st.Residual)
		}
		report(progressCG(st.Residual, opt.Tol, it+1, opt.MaxIter), "cg")
	}
	st.Converged = st.Residual <= opt.Tol
	st.Time = time.Since(start)
	return x, st, nil
}

// progressCG is the fraction of a CG solve done: the larger of the share of
// the iteration cap used and of the way, in orders of magnitude, from a
// relative residual of 1 to tol.
func progressCG(res, tol float64, it, maxIter int) float64 {
	f := float64(it) / float64(maxIter)
	if res > 0 && res < 1 {
		f = max(f, math.Log(res)/math.Log(tol))
	}
	return min(1, f)
}

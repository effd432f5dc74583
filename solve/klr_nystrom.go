package solve

import (
	"context"
	"fmt"
	"math"

	"github.com/rfmkit/rfm/kernel"
)

// NystromKLROptions configure NystromKLR.
type NystromKLROptions struct {
	// NystromOptions: M, Seed, Leverage, MemoryLimit and NoCache as for
	// Nystrom; Ridge is the λ of the logistic objective (the exact KLR's,
	// not divided by n); MaxIter bounds the CG iterations of each step
	// (0: 3; at n = 40 000, m = 4 000 three took 86 steps and 174 s to
	// converge, ten 90 steps and 228 s) and Tol is their relative
	// tolerance (0: 1e-2). Progress is called after each step, with Iter
	// the step.
	NystromOptions
	// Steps bounds the majorization–minimization steps (0: 100).
	Steps int
	// GradTol stops the steps once the gradient's norm is at most GradTol
	// times its norm at β = 0 (0: 1e-5).
	GradTol float64
}

// NystromKLRResult is a fitted Nyström kernel logistic regression: the
// class logits of x are K(x, Centers)·Beta. Iterations counts the CG
// iterations of all steps.
type NystromKLRResult struct {
	NystromResult
	// Steps run and the gradient's norm relative to its start at the end.
	Steps        int
	GradRelative float64
	// Loss is the mean log-loss of the training rows at the end.
	Loss float64
	// AtLimit: the steps ran out (Steps, or 100) with the gradient above
	// GradTol of its start; a fit that stopped because a plain step no
	// longer lowered the objective (round-off) is not at its limit.
	AtLimit bool
}

// NystromKLR fits multinomial kernel logistic regression on m Nyström
// centres: with logits F = K_nm·β it minimizes
//
//	Σ_i −log softmax(F)_{i, y_i} + (λ/2)·Σ_k β_kᵀ(K_mm + δI)β_k,
//
// which with every row a centre and δ = 0 is KLR's objective. δ is the
// preconditioner's jitter (m·eps of the diagonal, or more when K_mm needs
// it): it keeps the penalty positive in floating point (falkon.kmm). As
// in KLR, Böhning's bound (the log-loss's Hessian in the logits is at
// most ½I) gives a quadratic majorizer at β whose minimizer solves
//
//	(K_nmᵀK_nm + 2λ·(K_mm + δI))Δ = −2g,  g = K_nmᵀ(softmax(F) − Y) + λ(K_mm + δI)β:
//
// Falkon's system with ridge 2λ/n and another right-hand side, solved by
// the same preconditioned CG (for which the preconditioner is made: a few
// iterations suffice). The steps are extrapolated (Nesterov, restarted
// when a step would raise the objective) and each is lengthened while the
// objective along it keeps falling, which costs no kernel pass (the
// logits along Δ are F + s·K_nmΔ). CG from Δ = 0 lowers the majorizer at
// every iteration, so a truncated step still lowers the objective: it
// never rises (a plain step that would, from round-off, ends the fit).
// K_mm + δI products come from the preconditioner's factor (LLᵀ), one a
// step (of Δ; the iterates' follow by linearity), and K_nm is kept
// between passes when it fits in memory, as Nystrom does, in a larger
// share of it (knmCacheShareKLR: the steps make far more passes). A step
// makes CG's passes over K_nm, one for K_nmΔ and one for the gradients at
// the new β and at the point the next step extrapolates to.
// (Newton steps were tried: the softmax's Hessian is singular along
// equal changes of every class's logits and tiny on confident rows, and
// CG on it stalls.)
func NystromKLR(ctx context.Context, s kernel.Spec, x kernel.Points[float64], labels []int, c int, opt NystromKLROptions) (*NystromKLRResult, error) {
	n := x.N
	if n < 1 || c < 2 || x.D < 1 || len(x.Z) < n*x.D || len(x.Norms) < n || len(labels) != n {
		return nil, fmt.Errorf("solve: Nyström KLR shapes do not match (n=%d, d=%d, c=%d, %d labels)", n, x.D, c, len(labels))
	}
	for i, l := range labels {
		if l < 0 || l >= c {
			return nil, fmt.Errorf("solve: Nyström KLR label %d of row %d is outside [0, %d)", l, i, c)
		}
	}
	lam := opt.Ridge
	if !(lam > 0) || math.IsInf(lam, 0) {
		return nil, fmt.Errorf("solve: Nyström KLR needs a ridge λ > 0 (got %v)", lam)
	}
	if opt.Steps < 0 || opt.MaxIter < 0 || !(opt.GradTol >= 0) || !(opt.Tol >= 0) {
		return nil, fmt.Errorf("solve: Nyström KLR: steps %d, CG iterations %d, tolerances %v and %v must be ≥ 0", opt.Steps, opt.MaxIter, opt.GradTol, opt.Tol)
	}
	steps, gradTol, inner, innerTol := opt.Steps, opt.GradTol, opt.MaxIter, opt.Tol
	if steps == 0 {
		steps = 100
	}
	if gradTol == 0 {
		gradTol = 1e-5
	}
	if inner == 0 {
		inner = 3
	}
	if innerTol == 0 {
		innerTol = 1e-2
	}
	no := opt.NystromOptions
	no.Ridge = 2 * lam / float64(n)
	// Its K_mm + δI products come from the factor (falkon.kmm), which must then
	// be exact to float64 round-off: the factors stay float64.
	no.Float32 = false
	sys, err := newNystromSystem(ctx, s, x, c, no, knmCacheShareKLR)
	if err != nil {
		return nil, err
	}
	defer sys.release()
	m := sys.cen.N
	res := &NystromKLRResult{NystromResult: NystromResult{Kernel: s, Index: sys.idx, Centers: sys.cen, C: c, Jitter: sys.pre.jitter, CachedKnm: sys.op.cache != nil}}

	// logLoss is Σ_i −log softmax(F)_{i, y_i}; with r non-nil it also
	// stores the residual softmax(F) − Y there, row i's in
	// r[i*stride+off:], so that two residuals can share one n×2c block.
	q := make([]float64, c)
	logLoss := func(f, r []float64, stride, off int) float64 {
		loss := 0.0
		for i := 0; i < n; i++ {
			loss += softmaxLoss(f[i*c:i*c+c], labels[i], q)
			if r != nil {
				ri := r[i*stride+off : i*stride+off+c]
				copy(ri, q)
				ri[labels[i]]--
			}
		}
		return loss
	}
	dot := func(a, b []float64) float64 {
		v := 0.0
		for i := range a {
			v += a[i] * b[i]
		}
		return v
	}
	// Iterates, each with its logits F = K_nm·β and its K_mm·β (K_mm + δI,
	// as everywhere here): β, the previous one, the extrapolated point y
	// and the next. Both products are linear, so they follow the iterates'
	// combinations and neither needs a kernel pass; only the gradients do
	// (the softmax is not linear), and the gradient at an accepted step and
	// at the point extrapolated from it share one pass over K_nm (2c
	// columns) instead of two. (Profiled on ijcnn1, that pass cost about
	// two of CG's products until knm.transposed formed its sums as yᵀK_nm.)
	// g and gy are the gradients at β and at y.
	beta, f, kbeta := make([]float64, m*c), make([]float64, n*c), make([]float64, m*c)
	prev, fprev, kprev := make([]float64, m*c), make([]float64, n*c), make([]float64, m*c)
	y, fy, ky := make([]float64, m*c), make([]float64, n*c), make([]float64, m*c)
	next, fnext, knext := make([]float64, m*c), make([]float64, n*c), make([]float64, m*c)
	g, gy := make([]float64, m*c), make([]float64, m*c)
	rr, g2 := make([]float64, n*2*c), make([]float64, m*2*c)
	// At β = 0: F = 0 and K_mm·β = 0.
	loss := logLoss(f, rr, c, 0)
	if err := sys.op.transposed(ctx, rr, c, g); err != nil {
		return nil, err
	}
	obj, gn := loss, math.Sqrt(dot(g, g))
	loss /= float64(n)
	g0 := gn
	if g0 == 0 { // β = 0 is the optimum
		g0 = 1
	}
	// The majorizer's system: (K_nmᵀK_nm + 2λ·(K_mm + δI))Δ = −2g, preconditioned.
	apply := sys.operator(ctx, 2*lam)
	b, kd, kdd, ft := make([]float64, m*c), make([]float64, n*c), make([]float64, m*c), make([]float64, n*c)
	tmp := make([]float64, m*c)
	// Nesterov's extrapolation of the MM steps, restarted whenever a step
	// would raise the objective (then a plain MM step from β, which
	// cannot), as in KLR: the objective never rises.
	t := 1.0
	step := 0
	stopped := false // by a plain step that did not lower the objective
	for ; step < steps && gn > gradTol*g0; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		theta := (t - 1) / tn
		grad := gy // y, F_y, K_mm·y and gy were formed with this θ after the last step
		if theta == 0 {
			copy(y, beta)
			copy(fy, f)
			copy(ky, kbeta)
			grad = g
		}
		for i, v := range grad {
			b[i] = -2 * v
		}
		sys.pre.applyBt(b, n, c)
		var cgr NystromResult
		delta, err := cg(ctx, apply, b, m, c, inner, innerTol, &cgr, nil, kd)
		if err != nil {
			return nil, err
		}
		res.Iterations += cgr.Iterations
		sys.pre.applyB(delta, n, c) // and kd = K_nm·Δ
		// The majorizer is loose where the predictions are confident: the
		// objective along y + sΔ (no kernel pass: the logits are
		// F_y + s·K_nmΔ, the penalty a quadratic in s) often keeps falling
		// past s = 1. Double s while it does.
		sys.pre.kmm(delta, tmp, kdd, c)
		ykd, dkd, yky := dot(y, kdd), dot(delta, kdd), dot(y, ky)
		along := func(sc float64) float64 {
			for i := range ft {
				ft[i] = fy[i] + sc*kd[i]
			}
			return logLoss(ft, nil, 0, 0) + lam/2*(yky+2*sc*ykd+sc*sc*dkd)
		}
		sc, best := 1.0, along(1)
		for k := 0; k < 8; k++ {
			v := along(2 * sc)
			if !(v < best) {
				break
			}
			sc, best = 2*sc, v
		}
		if best > obj {
			if theta == 0 {
				// A plain step from β cannot raise the objective but by
				// round-off in its CG: nothing more to gain.
				stopped = true
				break
			}
			t = 1
			copy(prev, beta)
			copy(fprev, f)
			copy(kprev, kbeta)
			continue
		}
		for i := range next {
			next[i] = y[i] + sc*delta[i]
			knext[i] = ky[i] + sc*kdd[i]
		}
		for i := range fnext {
			fnext[i] = fy[i] + sc*kd[i]
		}
		prev, beta, next = beta, next, prev
		fprev, f, fnext = f, fnext, fprev
		kprev, kbeta, knext = kbeta, knext, kprev
		t = tn
		// The point the next step extrapolates to (its θ follows from t),
		// and the residuals at β and there, in one block.
		th := (t - 1) / ((1 + math.Sqrt(1+4*t*t)) / 2)
		for i := range y {
			y[i] = beta[i] + th*(beta[i]-prev[i])
			ky[i] = kbeta[i] + th*(kbeta[i]-kprev[i])
		}
		for i := range fy {
			fy[i] = f[i] + th*(f[i]-fprev[i])
		}
		lossN := logLoss(f, rr, 2*c, 0)
		logLoss(fy, rr, 2*c, c)
		if err := sys.op.transposed(ctx, rr, 2*c, g2); err != nil {
			return nil, err
		}
		gnN := 0.0
		for i := 0; i < m; i++ {
			for k := 0; k < c; k++ {
				g[i*c+k] = g2[i*2*c+k] + lam*kbeta[i*c+k]
				gy[i*c+k] = g2[i*2*c+c+k] + lam*ky[i*c+k]
				gnN += g[i*c+k] * g[i*c+k]
			}
		}
		objN := lossN + lam/2*dot(beta, kbeta)
		stalled := obj-objN <= 1e-13*math.Abs(obj)
		obj, loss, gn = objN, lossN/float64(n), math.Sqrt(gnN)
		res.Residuals = append(res.Residuals, gn/g0)
		if opt.Progress != nil {
			opt.Progress(NystromProgress{Iter: step + 1, MaxIter: steps, Residual: gn / g0})
		}
		// A plain step that no longer lowers the objective beyond
		// round-off ends the fit (the gradient can stall above GradTol).
		if stalled && theta == 0 {
			step++
			stopped = true
			break
		}
	}
	if err := checkFinite(beta); err != nil {
		return nil, err
	}
	res.Beta, res.Steps, res.Loss = beta, step, loss
	res.GradRelative = gn / g0
	res.Converged = gn <= gradTol*g0
	res.AtLimit = !res.Converged && !stopped
	return res, nil
}

package solve

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
)

// KLROptions configure KLR.
type KLROptions struct {
	Options
	// MaxIter bounds the iterations (0: 100).
	MaxIter int
	// Tol stops the iterations once every entry of the gradient residual
	// softmax(Kα) − Y + λα is below it (0: 1e-5).
	Tol float64
}

// KLRResult is a fitted kernel logistic regression.
type KLRResult struct {
	Alpha      []float64 // n×c: the class logits are K(x, Z)·Alpha
	Jitter     float64   // added to 2λ on the diagonal of the factored matrix
	Iterations int
	// Residual is the largest entry of softmax(Kα) − Y + λα at the end (0
	// at the optimum).
	Residual float64
	// Loss is the mean log-loss of the training rows at the end.
	Loss float64
	// AtLimit: the iterations stopped at MaxIter with Residual still at or
	// above the tolerance.
	AtLimit bool
}

// KLR fits multinomial kernel logistic regression on the mapped points z
// with labels in [0, c): it minimizes
//
//	Σ_i −log softmax(Kα)_{i, y_i} + (λ/2)·Σ_k α_kᵀKα_k
//
// by majorization–minimization: the Hessian of the log-loss in the logits
// is at most ½I (Böhning's bound), so every step
//
//	α ← α − 2(K + 2λI)⁻¹(softmax(Kα) − Y + λα)
//
// lowers the objective, and all steps share one Cholesky factor. The
// logits Kα are carried along without a kernel product: with A = K + sI
// factored and AΔ = R, KΔ = R − sΔ. The factor is float64 whatever
// opt.Float32 says (the iterations need accurate solves); class weights
// (RidgeScale) are not supported.
func KLR(ctx context.Context, ws *Workspace, s kernel.Spec, z kernel.Points[float64], labels []int, c int, opt KLROptions) (*KLRResult, error) {
	n := z.N
	if n < 1 || c < 2 || len(labels) != n || len(z.Z) < n*z.D || len(z.Norms) < n {
		return nil, fmt.Errorf("solve: KLR shapes do not match (n=%d, d=%d, c=%d, %d labels)", n, z.D, c, len(labels))
	}
	for i, l := range labels {
		if l < 0 || l >= c {
			return nil, fmt.Errorf("solve: KLR label %d of row %d is outside [0, %d)", l, i, c)
		}
	}
	if !(opt.Ridge > 0) || math.IsInf(opt.Ridge, 0) {
		return nil, fmt.Errorf("solve: KLR needs a ridge λ > 0 (got %v)", opt.Ridge)
	}
	if opt.RidgeScale != nil {
		return nil, errors.New("solve: KLR does not take class weights")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := Plan(n, false, opt.MemoryLimit); err != nil {
		return nil, err
	}
	maxIter, tol := opt.MaxIter, opt.Tol
	if maxIter <= 0 {
		maxIter = 100
	}
	if tol <= 0 {
		tol = 1e-5
	}
	if ws == nil {
		ws = &Workspace{}
		defer ws.Release()
	}
	a := square(ws, &ws.f64, &pool64, n)
	fo := opt.Options
	fo.Ridge, fo.Float32 = 2*opt.Ridge, false
	jit, err := factorJittered(ctx, s, z, a, fo, false, 1e-13)
	if err != nil {
		return nil, err
	}
	shift := 2*opt.Ridge + jit
	lam := opt.Ridge
	// eval returns the objective at (α, F = Kα) and writes the residual
	// softmax(F) − Y + λα into r; worst is its largest entry.
	p := make([]float64, c)
	eval := func(alpha, f, r []float64) (obj, worst, loss float64) {
		for i := 0; i < n; i++ {
			row := f[i*c : i*c+c]
			loss += softmaxLoss(row, labels[i], p)
			for k := range p {
				v := p[k]
				if k == labels[i] {
					v--
				}
				v += lam * alpha[i*c+k]
				r[i*c+k] = v
				worst = max(worst, math.Abs(v))
				obj += lam / 2 * alpha[i*c+k] * row[k]
			}
		}
		return obj + loss, worst, loss
	}
	// Nesterov's extrapolation of the MM steps, restarted whenever a step
	// would raise the objective (then a plain MM step, which cannot): the
	// objective never rises, and on ill-conditioned problems (small λ) the
	// iterations needed drop from hundreds to tens. The logits of the
	// extrapolated point are the same combination of the logits.
	alpha, f := make([]float64, n*c), make([]float64, n*c) // α, Kα
	prev, fprev := make([]float64, n*c), make([]float64, n*c)
	y, fy := make([]float64, n*c), make([]float64, n*c)
	next, fnext := make([]float64, n*c), make([]float64, n*c)
	r, delta, rn := make([]float64, n*c), make([]float64, n*c), make([]float64, n*c)
	obj, worst, loss := eval(alpha, f, r)
	res := &KLRResult{Jitter: jit}
	t := 1.0
	it := 0
	for ; it < maxIter && worst >= tol; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		beta := (t - 1) / tn
		for i := range y {
			y[i] = alpha[i] + beta*(alpha[i]-prev[i])
			fy[i] = f[i] + beta*(f[i]-fprev[i])
		}
		ry := r
		if beta != 0 {
			ry = rn
			eval(y, fy, ry)
		}
		copy(delta, ry)
		linalg.CholSolve(n, c, a, n, delta, c)
		for i := range next {
			next[i] = y[i] - 2*delta[i]
			fnext[i] = fy[i] - 2*(ry[i]-shift*delta[i])
		}
		objN, worstN, lossN := eval(next, fnext, rn)
		if objN > obj && beta != 0 {
			// Restart: no momentum; the next step is a plain MM step from α.
			t = 1
			copy(prev, alpha)
			copy(fprev, f)
			continue
		}
		prev, alpha, next = alpha, next, prev
		fprev, f, fnext = f, fnext, fprev
		r, rn = rn, r
		obj, worst, loss = objN, worstN, lossN
		t = tn
	}
	res.Iterations, res.Residual, res.Loss = it, worst, loss/float64(n)
	res.AtLimit = worst >= tol
	if err := checkFinite(alpha); err != nil {
		return nil, err
	}
	res.Alpha = alpha
	return res, nil
}

// softmaxLoss writes softmax(row) into p and returns −log p[label],
// computed stably (the largest logit subtracted first).
func softmaxLoss(row []float64, label int, p []float64) float64 {
	top := math.Inf(-1)
	for _, v := range row {
		top = max(top, v)
	}
	sum := 0.0
	for k, v := range row {
		p[k] = math.Exp(v - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return math.Log(sum) + top - row[label]
}

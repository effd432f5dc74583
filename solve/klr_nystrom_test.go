package solve

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
)

// nysKLRObjective is the Nyström KLR objective with the kernel formed
// explicitly: Σ −log softmax(K_nm·β)_y + (λ/2)Σ_k β_kᵀK_mmβ_k.
func nysKLRObjective(s kernel.Spec, x kernel.Points[float64], idx []int, beta []float64, labels []int, c int, lam float64) float64 {
	n, m := x.N, len(idx)
	cen := x.Gather(idx, kernel.Points[float64]{})
	knm, kmm := make([]float64, n*m), make([]float64, m*m)
	kernel.Cross(s, x, cen, knm, m)
	kernel.Cross(s, cen, cen, kmm, m)
	obj := 0.0
	for i := 0; i < n; i++ {
		f := make([]float64, c)
		for j := 0; j < m; j++ {
			for k := range f {
				f[k] += knm[i*m+j] * beta[j*c+k]
			}
		}
		top, sum := maxExpSum(f)
		obj += math.Log(sum) + top - f[labels[i]]
	}
	for a := 0; a < m; a++ {
		for b := 0; b < m; b++ {
			for k := 0; k < c; k++ {
				obj += lam / 2 * beta[a*c+k] * kmm[a*m+b] * beta[b*c+k]
			}
		}
	}
	return obj
}

func klrProblem(n, d, c int, seed uint64) (kernel.Points[float64], []int) {
	r := rand.New(rand.NewPCG(seed, 5))
	z, _ := problem(n, d, 1, seed+4)
	labels := make([]int, n)
	for i := range labels {
		v := z[i*d] + 0.5*z[i*d+1] + 0.3*r.NormFloat64()
		switch {
		case v > 0.5 && c > 2:
			labels[i] = 2
		case v > -0.5:
			labels[i] = 1
		}
	}
	return kernel.NewPoints(z, n, d), labels
}

// With every row a centre, Nyström KLR minimizes exact KLR's objective:
// the logits agree with the exact solver's at the optimum.
func TestNystromKLRMatchesExact(t *testing.T) {
	n, c := 150, 3
	pts, labels := klrProblem(n, 3, c, 3)
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	const lam = 0.05
	ex, err := KLR(context.Background(), nil, s, pts, labels, c, KLROptions{Options: Options{Ridge: lam}, MaxIter: 5000, Tol: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	ny, err := NystromKLR(context.Background(), s, pts, labels, c, NystromKLROptions{
		NystromOptions: NystromOptions{M: n, Ridge: lam}, Steps: 1000, GradTol: 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d steps, %d CG iterations, gradient %.2e, loss %.6f (exact %.6f)", ny.Steps, ny.Iterations, ny.GradRelative, ny.Loss, ex.Loss)
	if !ny.Converged {
		t.Fatalf("not converged after %d steps (gradient %.2e)", ny.Steps, ny.GradRelative)
	}
	// Logits of the training rows by both.
	fe, err := kernel.Apply(context.Background(), s, pts, pts, ex.Alpha, c)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := ny.Predict(context.Background(), pts)
	if err != nil {
		t.Fatal(err)
	}
	worst, scale := 0.0, 0.0
	for i := range fe {
		worst = max(worst, math.Abs(fe[i]-fn[i]))
		scale = max(scale, math.Abs(fe[i]))
	}
	t.Logf("logits up to %.3g, largest difference %.3g", scale, worst)
	if worst > 1e-5*scale {
		t.Fatalf("logits differ from the exact KLR's by %.3g (largest logit %.3g)", worst, scale)
	}
	if math.Abs(ny.Loss-ex.Loss) > 1e-7 {
		t.Fatalf("log-loss %.9f, exact %.9f", ny.Loss, ex.Loss)
	}
}

// With fewer centres every step lowers the objective (computed here with
// explicit kernel matrices), even with the inner CG cut after 2 iterations.
func TestNystromKLRMonotone(t *testing.T) {
	n, c, m := 300, 2, 40
	pts, labels := klrProblem(n, 4, c, 9)
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 3}
	const lam = 0.01
	prev := math.Inf(1)
	for steps := 1; steps <= 10; steps++ {
		for _, cache := range []bool{false, true} {
			res, err := NystromKLR(context.Background(), s, pts, labels, c, NystromKLROptions{
				NystromOptions: NystromOptions{M: m, Ridge: lam, MaxIter: 2, Seed: 4, NoCache: !cache}, Steps: steps, GradTol: 1e-300})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps == steps && !res.AtLimit {
				t.Fatalf("%d steps of %d with GradTol 1e-300: AtLimit false", res.Steps, steps)
			}
			obj := nysKLRObjective(s, pts, res.Index, res.Beta, labels, c, lam)
			if cache && obj != prev {
				// The cached K_nm holds the same kernel values: the same fit.
				if math.Abs(obj-prev) > 1e-9*math.Abs(prev) {
					t.Fatalf("step %d: cached K_nm gives objective %.12g, computed %.12g", steps, obj, prev)
				}
				continue
			}
			if !cache && obj > prev+1e-9 {
				t.Fatalf("step %d raised the objective: %.12g > %.12g", steps, obj, prev)
			}
			if !cache {
				prev = obj
			}
		}
	}
	start := float64(n) * math.Log(float64(c)) // β = 0
	if !(prev < 0.8*start) {
		t.Fatalf("10 steps left the objective at %.4g (start %.4g)", prev, start)
	}
}

func TestNystromKLRRejects(t *testing.T) {
	pts, labels := klrProblem(50, 2, 2, 1)
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	ok := NystromOptions{M: 10, Ridge: 0.1}
	bad := append([]int(nil), labels...)
	bad[3] = 2
	zero := ok
	zero.Ridge = 0
	many := ok
	many.M = 51
	for name, c := range map[string]struct {
		labels []int
		opt    NystromKLROptions
		cl     int
	}{
		"label":   {bad, NystromKLROptions{NystromOptions: ok}, 2},
		"ridge":   {labels, NystromKLROptions{NystromOptions: zero}, 2},
		"centres": {labels, NystromKLROptions{NystromOptions: many}, 2},
		"classes": {labels, NystromKLROptions{NystromOptions: ok}, 1},
		"steps":   {labels, NystromKLROptions{NystromOptions: ok, Steps: -1}, 2},
		"rows":    {labels[:10], NystromKLROptions{NystromOptions: ok}, 2},
	} {
		if _, err := NystromKLR(context.Background(), s, pts, c.labels, c.cl, c.opt); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A smooth kernel's K_mm has eigenvalues at round-off level, some of them
// negative as computed. Run long (no gradient stop), the fit must not
// follow them: the objective, with the kernel formed explicitly, stays
// below its value at β = 0 and the training log-loss below log c. (With
// the penalty taken as LLᵀ − δI, β ran away to 4e52 and the mean log-loss to
// 5e40 here; on UCI adult the refit model fell to 66.8% on test.)
func TestNystromKLRPenaltyBounded(t *testing.T) {
	n, c, m := 1000, 2, 600
	pts, labels := klrProblem(n, 3, c, 21)
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 10}
	const lam = 1e-4
	res, err := NystromKLR(context.Background(), s, pts, labels, c, NystromKLROptions{
		NystromOptions: NystromOptions{M: m, Ridge: lam, Seed: 4}, Steps: 200, GradTol: 1e-300})
	if err != nil {
		t.Fatal(err)
	}
	obj := nysKLRObjective(s, pts, res.Index, res.Beta, labels, c, lam)
	start := float64(n) * math.Log(float64(c))
	big := 0.0
	for _, v := range res.Beta {
		big = max(big, math.Abs(v))
	}
	t.Logf("%d steps: objective %.6g (%.6g at β = 0), log-loss %.4g, largest |β| %.3g", res.Steps, obj, start, res.Loss, big)
	if !(obj < start) || !(res.Loss < math.Log(float64(c))) {
		t.Fatalf("the fit ran away: objective %.4g (start %.4g), mean log-loss %.4g, largest |β| %.3g", obj, start, res.Loss, big)
	}
}

// The logistic head keeps K_nm in a larger share of the memory than the
// squared loss's solve: with room for the block three times beyond the
// solver's buffers, NystromKLR keeps it (a half) and Nystrom does not (a
// quarter). Both fits are the same bits as without the cache.
func TestNystromKLRCacheShare(t *testing.T) {
	n, d, c, m := 600, 4, 2, 60
	pts, labels := klrProblem(n, d, c, 21)
	s := kernel.DefaultSpec()
	workers := linalg.Workers((n + nysBand - 1) / nysBand)
	limit := NystromBytes(n, m, c, d, workers, false) + 3*knmCacheBytes(n, m)
	fit := func(noCache bool) *NystromKLRResult {
		res, err := NystromKLR(context.Background(), s, pts, labels, c, NystromKLROptions{
			NystromOptions: NystromOptions{M: m, Ridge: 1e-3, Seed: 2, MemoryLimit: limit, NoCache: noCache}, Steps: 5})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cached, plain := fit(false), fit(true)
	if !cached.CachedKnm {
		t.Fatal("NystromKLR did not keep K_nm with room for it three times beyond its buffers")
	}
	if !slices.Equal(cached.Beta, plain.Beta) {
		t.Error("the cached K_nm changed the logistic fit")
	}
	y := make([]float64, n*c)
	for i, l := range labels {
		y[i*c+l] = 1
	}
	ridge, err := Nystrom(context.Background(), s, pts, y, c, NystromOptions{M: m, Ridge: 1e-3, Seed: 2, MemoryLimit: limit, MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	if ridge.CachedKnm {
		t.Errorf("Nystrom kept K_nm in more than 1/%d of the memory its buffers leave", knmCacheShare)
	}
}

// The steps themselves, against the same method written densely (K_nm and
// K_mm + δI formed, each step's system solved by Cholesky): with CG run to
// convergence, the objective after every number of steps must agree. It
// pins what the solver carries between steps instead of recomputing (the
// logits and K_mm products of the iterates, the gradient at the
// extrapolated point taken in the previous step's pass): a wrong one still
// converges, in a step or two more, so the other tests pass regardless.
func TestNystromKLRStepsMatchDense(t *testing.T) {
	n, c, m := 240, 3, 30
	pts, labels := klrProblem(n, 3, c, 17)
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	const lam = 0.02
	opt := NystromKLROptions{NystromOptions: NystromOptions{M: m, Ridge: lam, MaxIter: 200, Tol: 1e-13, Seed: 2}, GradTol: 1e-300}
	first, err := NystromKLR(context.Background(), s, pts, labels, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	cen := pts.Gather(first.Index, kernel.Points[float64]{})
	knm, kmm := make([]float64, n*m), make([]float64, m*m)
	kernel.Cross(s, pts, cen, knm, m)
	kernel.Cross(s, cen, cen, kmm, m)
	for i := 0; i < m; i++ {
		kmm[i*m+i] += first.Jitter
	}
	K, Kmm := mat.NewDense(n, m, knm), mat.NewSymDense(m, kmm)
	var h mat.SymDense
	h.SymOuterK(1, K.T())
	h.AddSym(&h, scaledSym(Kmm, 2*lam))
	var ch mat.Cholesky
	if !ch.Factorize(&h) {
		t.Fatal("dense majorizer not positive definite")
	}
	objGrad := func(beta []float64, grad []float64) float64 {
		var f, pen, gr mat.Dense
		B := mat.NewDense(m, c, beta)
		f.Mul(K, B)
		pen.Mul(Kmm, B)
		obj := 0.0
		res := mat.NewDense(n, c, nil)
		p := make([]float64, c)
		for i := 0; i < n; i++ {
			obj += softmaxLoss(f.RawRowView(i), labels[i], p)
			p[labels[i]]--
			res.SetRow(i, p)
		}
		for i := range beta {
			obj += lam / 2 * beta[i] * pen.RawMatrix().Data[i]
		}
		if grad != nil {
			gr.Mul(K.T(), res)
			for i := range grad {
				grad[i] = gr.RawMatrix().Data[i] + lam*pen.RawMatrix().Data[i]
			}
		}
		return obj
	}
	// The method of NystromKLR's comment, step by step.
	beta, prev := make([]float64, m*c), make([]float64, m*c)
	obj := objGrad(beta, nil)
	tt := 1.0
	var want []float64
	for step := 0; step < 12; step++ {
		tn := (1 + math.Sqrt(1+4*tt*tt)) / 2
		theta := (tt - 1) / tn
		y := make([]float64, m*c)
		for i := range y {
			y[i] = beta[i] + theta*(beta[i]-prev[i])
		}
		g := make([]float64, m*c)
		objGrad(y, g)
		rhs := mat.NewDense(m, c, nil)
		for i, v := range g {
			rhs.RawMatrix().Data[i] = -2 * v
		}
		var d mat.Dense
		if err := ch.SolveTo(&d, rhs); err != nil {
			t.Fatal(err)
		}
		at := func(sc float64) ([]float64, float64) {
			b := make([]float64, m*c)
			for i := range b {
				b[i] = y[i] + sc*d.RawMatrix().Data[i]
			}
			return b, objGrad(b, nil)
		}
		sc := 1.0
		next, best := at(1)
		for k := 0; k < 8; k++ {
			b, v := at(2 * sc)
			if !(v < best) {
				break
			}
			sc, next, best = 2*sc, b, v
		}
		if best > obj {
			if theta == 0 {
				t.Fatalf("dense reference: a plain step raised the objective at step %d", step+1)
			}
			tt = 1
			copy(prev, beta)
			want = append(want, obj)
			continue
		}
		prev, beta, obj, tt = beta, next, best, tn
		want = append(want, obj)
	}
	for k, w := range want {
		o := opt
		o.Steps = k + 1
		res, err := NystromKLR(context.Background(), s, pts, labels, c, o)
		if err != nil {
			t.Fatal(err)
		}
		got := nysKLRObjective(s, pts, res.Index, res.Beta, labels, c, lam)
		if math.Abs(got-w) > 1e-8*math.Abs(w) {
			t.Fatalf("after %d steps: objective %.12g, the dense method's %.12g", k+1, got, w)
		}
	}
}

// scaledSym returns a·s.
func scaledSym(s *mat.SymDense, a float64) *mat.SymDense {
	var r mat.SymDense
	r.ScaleSym(a, s)
	return &r
}

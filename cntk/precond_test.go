package cntk

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPreconditionedSolveMatchesDense solves the same tiny inpainting
// problem three ways: a dense Cholesky factorisation, plain CG and
// block-Jacobi PCG. Both CG solves must reach the stated tolerance and
// give the dense solution, and the preconditioned one in fewer iterations.
func TestPreconditionedSolveMatchesDense(t *testing.T) {
	ctx := context.Background()
	const n = 32
	for _, tc := range []struct {
		name string
		s    int
		obs  func() []bool
	}{
		{"random 50%", 2, func() []bool { m, _ := RandomMask(n, n, 0.5, 3); return m }},
		{"holes", 3, func() []bool { m, _ := HolesMask(n, n, 3, 6, 3); return m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Expand(ctx, Arch{S: tc.s, Filter: 3}, Prior{Kind: PriorUniform, High: 0.1}, n, n)
			if err != nil {
				t.Fatal(err)
			}
			obs := tc.obs()
			rng := rand.New(rand.NewPCG(7, 8))
			img := make([]float64, n*n*2)
			for i := range n {
				for j := range n {
					// A smooth image plus noise, two channels.
					img[(i*n+j)*2] = 0.5 + 0.3*math.Sin(float64(i)/5) + 0.05*rng.Float64()
					img[(i*n+j)*2+1] = 0.4 + 0.2*math.Cos(float64(i+j)/7) + 0.05*rng.Float64()
				}
			}
			dense, st, err := Inpaint(ctx, k, img, 2, obs, Options{ExactMax: n * n})
			if err != nil || !st.Exact {
				t.Fatalf("dense solve: %v (exact %v)", err, st.Exact)
			}
			iters := map[Preconditioner]int{}
			for _, pc := range []Preconditioner{PrecondNone, PrecondJacobi, PrecondBlock} {
				var trace []float64
				got, st, err := Inpaint(ctx, k, img, 2, obs, Options{ExactMax: 1, Tol: 1e-10, MaxIter: 5000, Precond: pc, Tile: 8,
					Trace: func(_ int, r float64) { trace = append(trace, r) }})
				if err != nil {
					t.Fatal(err)
				}
				if st.Exact || !st.Converged || st.Residual > 1e-10 || st.Precond != pc {
					t.Fatalf("%s: exact %v converged %v residual %g precond %s", pc, st.Exact, st.Converged, st.Residual, st.Precond)
				}
				if len(trace) != st.Iterations || trace[len(trace)-1] != st.Residual {
					t.Errorf("%s: %d traced iterations ending at %g; stats %d, %g", pc, len(trace), trace[len(trace)-1], st.Iterations, st.Residual)
				}
				worst := 0.0
				for p := range got {
					worst = max(worst, math.Abs(got[p]-dense[p]))
				}
				if worst > 1e-6 {
					t.Errorf("%s: differs from the dense solve by %g", pc, worst)
				}
				iters[pc] = st.Iterations
			}
			t.Logf("iterations to 1e-10: none %d, jacobi %d, block %d", iters[PrecondNone], iters[PrecondJacobi], iters[PrecondBlock])
			if iters[PrecondBlock] >= iters[PrecondNone] {
				t.Errorf("block Jacobi took %d iterations, plain CG %d: want fewer", iters[PrecondBlock], iters[PrecondNone])
			}
		})
	}
}

func TestPreconditionerNames(t *testing.T) {
	for _, pc := range []Preconditioner{PrecondNone, PrecondJacobi, PrecondBlock} {
		got, err := ParsePreconditioner(pc.String())
		if err != nil || got != pc {
			t.Errorf("%s: parsed as %v, %v", pc, got, err)
		}
	}
	if _, err := ParsePreconditioner("multigrid"); err == nil || err.Error() != `cntk: preconditioner "multigrid": want block, none or jacobi` {
		t.Errorf("an unknown name: %v", err)
	}
	if s := Preconditioner(7).String(); s != "Preconditioner(7)" {
		t.Errorf("out of range: %q", s)
	}
	for _, k := range []PriorKind{PriorUniform, PriorIdentity, PriorMeshgrid, PriorOneHot} {
		if got, err := ParsePrior(k.String()); err != nil || got != k {
			t.Errorf("%s: parsed as %v, %v", k, got, err)
		}
	}
	if _, err := ParsePrior("gaussian"); err == nil || err.Error() != `cntk: prior "gaussian": want uniform, identity, meshgrid or onehot` {
		t.Errorf("an unknown prior: %v", err)
	}
	if s := PriorKind(-1).String(); s != "PriorKind(-1)" {
		t.Errorf("out of range: %q", s)
	}
	if _, _, err := Inpaint(context.Background(), &Kernel{H: 2, W: 2}, make([]float64, 4), 1, []bool{true, false, true, true}, Options{Precond: 9}); err == nil {
		t.Error("an unknown preconditioner was accepted")
	}
}

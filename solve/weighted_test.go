package solve

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

// RidgeScale solves (K + λ·diag(s))α = y: checked against the residual of
// that system, in float64 and float32 with refinement, and s ≡ 1 gives the
// plain solve bit for bit.
func TestRidgeScale(t *testing.T) {
	const n, d, c = 120, 3, 2
	r := rand.New(rand.NewPCG(5, 6))
	x := testutil.Randn(r, n*d)
	y := testutil.Randn(r, n*c)
	z := kernel.NewPoints(x, n, d)
	spec := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	scale := make([]float64, n)
	ones := make([]float64, n)
	for i := range scale {
		scale[i] = 0.2 + 3*r.Float64()
		ones[i] = 1
	}
	ctx := context.Background()
	plain, err := KRR(ctx, nil, spec, z, y, c, Options{Ridge: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	same, err := KRR(ctx, nil, spec, z, y, c, Options{Ridge: 0.1, RidgeScale: ones})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain.Alpha {
		if plain.Alpha[i] != same.Alpha[i] {
			t.Fatalf("scale 1: α[%d] = %v, plain %v", i, same.Alpha[i], plain.Alpha[i])
		}
	}
	for _, opt := range []Options{{Ridge: 0.1, RidgeScale: scale}, {Ridge: 0.1, RidgeScale: scale, Float32: true, Refine: 3}} {
		res, err := KRR(ctx, nil, spec, z, y, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		ka, err := kernel.SymApply(ctx, spec, z, res.Alpha, c)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range ka {
			resid := ka[i] + (0.1*scale[i/c]+res.Jitter)*res.Alpha[i] - y[i]
			worst = max(worst, math.Abs(resid))
		}
		if tol := map[bool]float64{false: 1e-9, true: 1e-5}[opt.Float32]; worst > tol {
			t.Errorf("float32=%v: residual %g of (K + λ·diag(s))α = y", opt.Float32, worst)
		}
		if d := math.Abs(res.Alpha[0] - plain.Alpha[0]); d < 1e-6 {
			t.Errorf("float32=%v: row scales changed nothing (α₀ %v vs %v)", opt.Float32, res.Alpha[0], plain.Alpha[0])
		}
	}
	for _, bad := range [][]float64{scale[:n-1], append(append([]float64{}, scale[:n-1]...), 0), append(append([]float64{}, scale[:n-1]...), math.Inf(1))} {
		if _, err := KRR(ctx, nil, spec, z, y, c, Options{Ridge: 0.1, RidgeScale: bad}); err == nil {
			t.Errorf("bad ridge scales %v... accepted", bad[len(bad)-1])
		}
	}
}

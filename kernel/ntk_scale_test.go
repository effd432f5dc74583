package kernel

import (
	"math"
	"strings"
	"testing"
)

func TestMaxNorm(t *testing.T) {
	ntk := Spec{Kind: NTK, Depth: 2}
	lim := ntk.MaxNorm(false)
	// At the limit K(x, x) is finite with the headroom; 10× beyond it, not.
	if k := ntk.DotValue(lim*lim, lim*lim, lim*lim); math.IsInf(k, 0) || k > math.MaxFloat64/scaleHeadroom*1.0001 {
		t.Errorf("K at the limit norm %g is %g", lim, k)
	}
	if big := 10 * lim; !math.IsInf(ntk.DotValue(big*big, big*big, big*big)*scaleHeadroom, 0) {
		t.Errorf("K 10× beyond the limit does not come near overflow: the limit is too strict")
	}
	if l32 := ntk.MaxNorm(true); !(l32 > 1e16 && l32 < 1e18) {
		t.Errorf("float32 limit %g", l32)
	}
	if !math.IsInf(DefaultSpec().MaxNorm(false), 1) {
		t.Error("a radial kernel has a norm limit")
	}
}

func TestCheckScale(t *testing.T) {
	ntk := Spec{Kind: NTK, Depth: 2}
	d := 3
	x := []float64{1, 2, 3, 1e150, -1e150, 1e150, 1e200, 1e200, 1e200}
	if err := ntk.CheckScale(x, 2, d, false); err != nil {
		t.Errorf("rows of norm up to 1.7e150: %v", err)
	}
	err := ntk.CheckScale(x, 3, d, false)
	if err == nil || !strings.Contains(err.Error(), "input row 2 has norm 1.73e+200") || !strings.Contains(err.Error(), "scale the inputs down") {
		t.Errorf("row of norm 1.7e200 (squared norm overflows): %v", err)
	}
	if err := ntk.CheckScale(x, 1, d, true); err != nil {
		t.Errorf("small row in float32: %v", err)
	}
	if err := ntk.CheckScale(x[3:], 1, d, true); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Errorf("row of norm 1.7e150 in float32: %v", err)
	}
	if err := ntk.CheckScale([]float64{math.NaN(), 0, 0}, 1, d, false); err == nil {
		t.Error("a NaN row was accepted")
	}
	if err := DefaultSpec().CheckScale(x, 3, d, false); err != nil {
		t.Errorf("radial kernel: %v", err)
	}
	if got := scaledNorm([]float64{3e300, 4e300}); math.Abs(got/5e300-1) > 1e-15 {
		t.Errorf("scaledNorm = %g, want 5e300", got)
	}
}

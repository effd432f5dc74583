package rfm

import (
	"testing"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/synth"
)

// RFM with lp-laplace rounds (the product Laplace kernel and a general p,
// q): the rounds learn M, the model predicts, and predicts the same after
// save/load, in both precisions. On the low-rank task (3 of 8 inputs
// matter) the learned M improves on the plain kernel's validation loss.
func TestFitLpLaplace(t *testing.T) {
	train := regression(t, synth.LowRank, 400, 8, 21)
	q, _ := synth.Generate(synth.LowRank, 300, 8, 22)
	for _, tc := range []struct {
		spec      kernel.Spec
		diag, f32 bool
	}{
		{kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 10, Power: 1, Exponent: 1}, false, false},
		{kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 5, Power: 1.5, Exponent: 0.8}, true, false},
		{kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 10, Power: 1, Exponent: 1}, false, true},
	} {
		cfg := DefaultConfig()
		cfg.Kernel, cfg.Iters, cfg.Diag, cfg.Float32 = tc.spec, 3, tc.diag, tc.f32
		m := mustFit(t, cfg, train, nil)
		if m.KernelUsed != tc.spec {
			t.Fatalf("model kernel %v, want %v", m.KernelUsed, tc.spec)
		}
		pred := saveLoadSame(t, m, q)
		l := losses(m)
		t.Logf("%s diag=%v float32=%v: validation losses %v, best round %d, test R² %.3f", tc.spec, tc.diag, tc.f32, l, m.BestRound, rsquared(q.Y, pred))
		if m.BestRound == 0 || !(l[m.BestRound] < l[0]) {
			t.Errorf("%s: the learned M did not beat the plain kernel on validation: %v", tc.spec, l)
		}
		if r2 := rsquared(q.Y, pred); r2 < 0.1 { // sanity, not a benchmark
			t.Errorf("%s: test R² %.3f < 0.1", tc.spec, r2)
		}
	}
}

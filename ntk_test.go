package rfm

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/solve"
	"github.com/rfmkit/rfm/synth"
)

// saveLoad saves m to memory and loads it back, failing the test on an
// error.
func saveLoad(t *testing.T, m *Model) *Model {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Save(&buf, nil); err != nil {
		t.Fatal(err)
	}
	back, _, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// saveLoadSame saves m, loads it back and checks that both predict q
// bit-identically; it returns the predictions.
func saveLoadSame(t *testing.T, m *Model, q *synth.Data) []float64 {
	t.Helper()
	m2 := saveLoad(t, m)
	if m2.KernelUsed != m.KernelUsed {
		t.Fatalf("kernel after load %+v, want %+v", m2.KernelUsed, m.KernelUsed)
	}
	p1, err := m.Predict(context.Background(), q.X, q.N)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := m2.Predict(context.Background(), q.X, q.N)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p1 {
		if math.IsNaN(p1[i]) || math.IsInf(p1[i], 0) {
			t.Fatalf("prediction %d is %v", i, p1[i])
		}
		if p1[i] != p2[i] {
			t.Fatalf("prediction %d differs after save/load: %v vs %v", i, p1[i], p2[i])
		}
	}
	return p1
}

// RFM with NTK rounds: the AGOP of the NTK predictor drives M; the model
// has no input shift (the NTK is not translation invariant), predicts, and
// predicts the same after save/load. Also in float32 (exact NTK diagonal
// in the float32 matrix and in the refinement residual).
func TestFitNTK(t *testing.T) {
	train := regression(t, synth.LowRank, 400, 8, 11)
	q, _ := synth.Generate(synth.LowRank, 300, 8, 12)
	for _, tc := range []struct{ diag, f32 bool }{{false, false}, {true, false}, {false, true}} {
		diag := tc.diag
		cfg := DefaultConfig()
		cfg.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 2}
		cfg.Iters = 3
		cfg.Diag = diag
		cfg.Float32 = tc.f32
		m := mustFit(t, cfg, train, nil)
		if m.Shift != nil {
			t.Errorf("NTK model has an input shift %v", m.Shift)
		}
		if m.KernelUsed.Kind != kernel.NTK || m.KernelUsed.Depth != 2 {
			t.Errorf("model kernel %v, want ntk(depth=2)", m.KernelUsed)
		}
		if len(m.History) != 4 {
			t.Errorf("%d rounds recorded, want 4 (note: %s)", len(m.History), m.Note)
		}
		pred := saveLoadSame(t, m, q)
		t.Logf("diag=%v float32=%v: validation losses %v, best round %d, test R² %.3f", diag, tc.f32, losses(m), m.BestRound, rsquared(q.Y, pred))
		// Sanity, not a benchmark: better than predicting the mean.
		if r2 := rsquared(q.Y, pred); r2 < 0.1 {
			t.Errorf("diag=%v: test R² %.3f < 0.1", diag, r2)
		}
	}
}

// "RFM (NTK)": M is learned with the Laplace kernel, then α is refitted
// with the NTK on the selected M. M and the round are exactly those of the
// plain Laplace fit, α is the NTK KRR solution on the mapped rows, and the
// model predicts the same after save/load.
func TestFitFinalKernel(t *testing.T) {
	train := regression(t, synth.LowRank, 400, 8, 13)
	valid := regression(t, synth.LowRank, 150, 8, 14)
	q, _ := synth.Generate(synth.LowRank, 300, 8, 15)
	final := kernel.Spec{Kind: kernel.NTK, Depth: 2}
	for _, refit := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Iters = 2
		cfg.Refit = refit
		base := mustFit(t, cfg, train, valid)
		cfg.FinalKernel = &final
		m := mustFit(t, cfg, train, valid)
		if m.KernelUsed != final || m.Shift != nil || m.Refitted != refit {
			t.Fatalf("refit=%v: kernel %v, shift %v, refitted %v", refit, m.KernelUsed, m.Shift, m.Refitted)
		}
		if m.BestRound != base.BestRound || m.M.Form != base.M.Form || len(m.M.Values) != len(base.M.Values) {
			t.Fatalf("refit=%v: the final kernel changed the learned M (round %d vs %d)", refit, m.BestRound, base.BestRound)
		}
		for i := range m.M.Values {
			if m.M.Values[i] != base.M.Values[i] {
				t.Fatalf("refit=%v: M[%d] = %v, Laplace RFM gave %v", refit, i, m.M.Values[i], base.M.Values[i])
			}
		}
		// α is the NTK solution on the selected M, without centring.
		mt, err := kernel.NewFeatureMap(m.M, nil)
		if err != nil {
			t.Fatal(err)
		}
		z := mt.Map(m.Centers, m.N)
		y, _, _ := (&fitter{task: Regression, c: 1}).targets(&Dataset{Y: concatY(train, valid, refit), N: m.N})
		res, err := solve.KRR(context.Background(), nil, final, z, y, 1, solve.Options{Ridge: cfg.Ridge})
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Alpha {
			if res.Alpha[i] != m.Alpha[i] {
				t.Fatalf("refit=%v: α[%d] = %v, NTK KRR gives %v", refit, i, m.Alpha[i], res.Alpha[i])
			}
		}
		// Head scores the NTK predictor itself: the same number as a fit of
		// the NTK kernel with that M and no rounds.
		check := cfg
		check.FinalKernel, check.Kernel, check.Iters, check.Refit, check.InitialM = nil, final, 0, false, base.M
		check.Diag = base.M.Form == kernel.Diagonal
		direct := mustFit(t, check, train, valid)
		if m.Head == nil || math.Abs(m.Head.ValLoss-direct.History[0].ValLoss) > 1e-12*direct.History[0].ValLoss {
			t.Fatalf("refit=%v: head %+v, an NTK fit with the learned M scores %v", refit, m.Head, direct.History[0].ValLoss)
		}
		if m.Head.ValLoss == base.History[base.BestRound].ValLoss {
			t.Fatalf("refit=%v: the head's score is the base kernel's", refit)
		}
		pred := saveLoadSame(t, m, q)
		pb, _ := base.Predict(context.Background(), q.X, q.N)
		t.Logf("refit=%v: test R² Laplace RFM %.3f, RFM (NTK) %.3f", refit, rsquared(q.Y, pb), rsquared(q.Y, pred))
	}
}

// concatY is the training targets, followed by the validation ones when
// the model was refitted on both.
func concatY(train, valid *Dataset, both bool) []float64 {
	y := append([]float64(nil), train.Y...)
	if both {
		y = append(y, valid.Y...)
	}
	return y
}

func TestConfigValidateNTK(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FinalKernel = &kernel.Spec{Kind: kernel.NTK}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "FinalKernel.Depth") {
		t.Errorf("final kernel without depth: error %v", err)
	}
	cfg = DefaultConfig()
	cfg.Kernel = kernel.Spec{Kind: kernel.NNGP, Depth: 3}
	if err := cfg.Validate(); err != nil {
		t.Errorf("nngp without bandwidth rejected: %v", err)
	}
	cfg.AdaptiveBandwidth = 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "radial") {
		t.Errorf("adaptive bandwidth with nngp: error %v", err)
	}
}

// Inputs of norm ~1e200 overflow the NTK's values (K(x, x) = 3‖x‖²): Fit
// and Predict refuse them with a message that says so, instead of "not
// positive definite" or NaN predictions. Norms up to ~1e150 still fit.
func TestNTKHugeInputs(t *testing.T) {
	n, d := 30, 3
	data := func(scale float64) *Dataset {
		x := make([]float64, n*d)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				x[i*d+j] = scale * float64((i*7+j*3)%11-5) / 5
			}
			y[i] = float64(i % 3)
		}
		return &Dataset{X: x, N: n, D: d, Y: y}
	}
	cfg := DefaultConfig()
	cfg.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 2}
	cfg.Iters = 1
	ctx := context.Background()
	_, err := Fit(ctx, cfg, data(1e200), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "would overflow") || strings.Contains(err.Error(), "positive definite") {
		t.Fatalf("fit on rows of norm 1e200: %v", err)
	}
	if _, err := Fit(ctx, cfg, data(1e150), nil, nil); err != nil {
		t.Fatalf("fit on rows of norm 1e150: %v", err)
	}
	// Prediction: with M = I the query rows reach the kernel as they are
	// (a learned M may scale them back into range).
	cfg.Iters = 0
	m, err := Fit(ctx, cfg, data(1), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Predict(ctx, data(1e200).X[:2*d], 2); err == nil || !strings.Contains(err.Error(), "would overflow") {
		t.Errorf("predict on rows of norm 1e200: %v", err)
	}
	p, err := m.Predict(ctx, data(1e150).X[:2*d], 2)
	if err != nil || math.IsNaN(p[0]) || math.IsInf(p[0], 0) {
		t.Errorf("predict on rows of norm 1e150: %v %v", p, err)
	}
}

package metrics

import (
	"errors"
	"math"
	"testing"
)

func TestRegressionMetrics(t *testing.T) {
	tests := []struct {
		name          string
		yTrue, yPred  []float64
		mse, mae, r2  float64
		r2Undefined   bool
		wantErrSubstr string
	}{
		// Errors 0,0,0,1: MSE = MAE = 1/4. mean 2.5, SST = 2.25+0.25+0.25+2.25 = 5,
		// R² = 1 − 1/5 = 0.8.
		{name: "near fit", yTrue: []float64{1, 2, 3, 4}, yPred: []float64{1, 2, 3, 5}, mse: 0.25, mae: 0.25, r2: 0.8},
		// Errors −1,0,1,2: MSE = 6/4, MAE = 4/4, R² = 1 − 6/5 = −0.2 (worse than the mean).
		{name: "worse than mean", yTrue: []float64{1, 2, 3, 4}, yPred: []float64{2, 2, 2, 2}, mse: 1.5, mae: 1, r2: -0.2},
		{name: "perfect", yTrue: []float64{-1, 5}, yPred: []float64{-1, 5}, mse: 0, mae: 0, r2: 1},
		// Constant target: SST = 0, R² undefined; MSE/MAE still fine.
		{name: "constant target", yTrue: []float64{0.1, 0.1, 0.1}, yPred: []float64{0.1, 0.2, 0.1}, mse: 0.01 / 3, mae: 0.1 / 3, r2Undefined: true},
		{name: "mismatch", yTrue: []float64{1}, yPred: []float64{1, 2}, wantErrSubstr: "yTrue has 1 values but yPred has 2"},
		{name: "empty", wantErrSubstr: "empty input"},
		{name: "NaN prediction", yTrue: []float64{1, 2}, yPred: []float64{1, math.NaN()}, wantErrSubstr: "yPred[1] is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mse, err := MSE(tc.yTrue, tc.yPred)
			if !errMatches(err, tc.wantErrSubstr) {
				t.Fatalf("MSE err = %v, want containing %q", err, tc.wantErrSubstr)
			}
			mae, errA := MAE(tc.yTrue, tc.yPred)
			r2, errR := R2(tc.yTrue, tc.yPred)
			if tc.wantErrSubstr != "" {
				if errA == nil || errR == nil {
					t.Errorf("MAE/R2 accepted bad input: %v, %v", errA, errR)
				}
				return
			}
			if !near(mse, tc.mse, tol) || !near(mae, tc.mae, tol) {
				t.Errorf("MSE, MAE = %g, %g; want %g, %g", mse, mae, tc.mse, tc.mae)
			}
			if tc.r2Undefined {
				if !errors.Is(errR, ErrUndefined) {
					t.Errorf("R2 err = %v, want ErrUndefined", errR)
				}
				return
			}
			if errR != nil || !near(r2, tc.r2, tol) {
				t.Errorf("R2 = %g, %v; want %g", r2, errR, tc.r2)
			}
		})
	}
}

func TestR2MultiOutput(t *testing.T) {
	// Rows (y1, y2); y2 is constant, so only y1 has an R².
	// y1 = 1,2,3 predicted 1,2,4: SSE 1, mean 2, SST 2 → R² = 0.5.
	yTrue := []float64{1, 10, 2, 10, 3, 10}
	yPred := []float64{1, 10, 2, 11, 4, 10}
	per, err := R2Outputs(yTrue, yPred, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(per[0], 0.5, tol) || !math.IsNaN(per[1]) {
		t.Errorf("R2Outputs = %v, want [0.5 NaN]", per)
	}
	if got, err := R2Multi(yTrue, yPred, 2); err != nil || !near(got, 0.5, tol) {
		t.Errorf("R2Multi = %g, %v; want 0.5 (constant output skipped)", got, err)
	}
	// MSE over all 6 entries: squared errors 0,0,0,1,1,0 → 2/6.
	if got, _ := MSE(yTrue, yPred); !near(got, 1.0/3, tol) {
		t.Errorf("multi-output MSE = %g, want 1/3", got)
	}
	// With c = 1 R2Multi is R2.
	single, _ := R2([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 5})
	if got, err := R2Multi([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 5}, 1); err != nil || got != single {
		t.Errorf("R2Multi c=1 = %g, %v; want %g", got, err, single)
	}
	if _, err := R2Multi([]float64{1, 1, 1, 1}, []float64{1, 2, 3, 4}, 2); !errors.Is(err, ErrUndefined) {
		t.Errorf("all constant: err = %v, want ErrUndefined", err)
	}
	if _, err := R2Outputs(yTrue, yPred, 4); !errMatches(err, "not a multiple of c = 4") {
		t.Errorf("bad c: err = %v", err)
	}
}

package metrics

import (
	"fmt"
	"math"
)

// MSE returns the mean squared error (1/N) Σ (yTrue−yPred)². For a
// multi-output target pass the row-major n×c slices: the mean over all n·c
// entries equals the uniform average of the c per-output MSEs.
func MSE(yTrue, yPred []float64) (float64, error) {
	if err := checkReg(yTrue, yPred); err != nil {
		return 0, fmt.Errorf("mse: %w", err)
	}
	sum := 0.0
	for i, t := range yTrue {
		d := t - yPred[i]
		sum += d * d
	}
	return sum / float64(len(yTrue)), nil
}

// MAE returns the mean absolute error (1/N) Σ |yTrue−yPred|. Multi-output
// targets work as in MSE.
func MAE(yTrue, yPred []float64) (float64, error) {
	if err := checkReg(yTrue, yPred); err != nil {
		return 0, fmt.Errorf("mae: %w", err)
	}
	sum := 0.0
	for i, t := range yTrue {
		sum += math.Abs(t - yPred[i])
	}
	return sum / float64(len(yTrue)), nil
}

// R2 returns the coefficient of determination of a single output,
// 1 − SSE/SST with SST = Σ (yTrue − mean(yTrue))². It can be negative (worse
// than predicting the mean). A constant yTrue has SST = 0 and no R²: the
// error then wraps ErrUndefined.
func R2(yTrue, yPred []float64) (float64, error) {
	if err := checkReg(yTrue, yPred); err != nil {
		return 0, fmt.Errorf("r2: %w", err)
	}
	r, ok := r2Column(yTrue, yPred, 1, 0)
	if !ok {
		return 0, fmt.Errorf("r2: yTrue is constant (SST = 0): %w", ErrUndefined)
	}
	return r, nil
}

// R2Outputs returns the R² of each column of row-major n×c targets. A column
// whose true values are all equal gets NaN (see R2).
func R2Outputs(yTrue, yPred []float64, c int) ([]float64, error) {
	if err := checkReg(yTrue, yPred); err != nil {
		return nil, fmt.Errorf("r2 per output: %w", err)
	}
	if c < 1 || len(yTrue)%c != 0 {
		return nil, fmt.Errorf("r2 per output: %d values is not a multiple of c = %d outputs", len(yTrue), c)
	}
	out := make([]float64, c)
	for k := range c {
		r, ok := r2Column(yTrue, yPred, c, k)
		if !ok {
			r = math.NaN()
		}
		out[k] = r
	}
	return out, nil
}

// R2Multi returns the uniform average of the per-output R² over the outputs
// whose target is not constant; constant outputs are skipped because their R²
// does not exist. If every output is constant the error wraps ErrUndefined.
// With c = 1 it equals R2.
func R2Multi(yTrue, yPred []float64, c int) (float64, error) {
	per, err := R2Outputs(yTrue, yPred, c)
	if err != nil {
		return 0, err
	}
	sum, m := 0.0, 0
	for _, r := range per {
		if !math.IsNaN(r) {
			sum += r
			m++
		}
	}
	if m == 0 {
		return 0, fmt.Errorf("r2: every output is constant (SST = 0): %w", ErrUndefined)
	}
	return sum / float64(m), nil
}

// r2Column computes R² of column k of row-major n×c data; ok is false when
// the true column is constant. Constancy is tested on the values themselves
// rather than SST == 0 because a rounded mean can leave a tiny positive SST
// and turn "undefined" into a huge negative R².
func r2Column(yTrue, yPred []float64, c, k int) (float64, bool) {
	n := len(yTrue) / c
	first := yTrue[k]
	constant := true
	mean := 0.0
	for i := range n {
		v := yTrue[i*c+k]
		mean += v
		if v != first {
			constant = false
		}
	}
	if constant {
		return 0, false
	}
	mean /= float64(n)
	sse, sst := 0.0, 0.0
	for i := range n {
		t := yTrue[i*c+k]
		d := t - yPred[i*c+k]
		sse += d * d
		e := t - mean
		sst += e * e
	}
	return 1 - sse/sst, true
}

func checkReg(yTrue, yPred []float64) error {
	if err := checkPair(len(yTrue), len(yPred), "yTrue", "yPred"); err != nil {
		return err
	}
	for i, t := range yTrue {
		if math.IsNaN(t) {
			return fmt.Errorf("yTrue[%d] is NaN", i)
		}
		if math.IsNaN(yPred[i]) {
			return fmt.Errorf("yPred[%d] is NaN", i)
		}
	}
	return nil
}

package solve

import (
	"context"
	"math"
	"testing"

	"github.com/rfmkit/rfm/kernel"
)

// klrObjective is Σ −log softmax(Kα)_y + (λ/2)Σ_k α_kᵀKα_k with K formed
// explicitly, and the residual softmax(Kα) − Y + λα.
func klrObjective(k []float64, n, c int, alpha []float64, labels []int, lam float64) (obj, worst float64) {
	f := make([]float64, n*c)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for o := 0; o < c; o++ {
				f[i*c+o] += k[i*n+j] * alpha[j*c+o]
			}
		}
	}
	for i := 0; i < n; i++ {
		row := f[i*c : i*c+c]
		top, sum := maxExpSum(row)
		obj += math.Log(sum) + top - row[labels[i]]
		for o := range row {
			p := math.Exp(row[o]-top) / sum
			if o == labels[i] {
				p--
			}
			worst = max(worst, math.Abs(p+lam*alpha[i*c+o]))
			obj += lam / 2 * alpha[i*c+o] * f[i*c+o]
		}
	}
	return obj, worst
}

// maxExpSum returns the largest of f and Σ exp(f_k − max): the softmax of
// f is exp(f_k − top)/sum, and log Σ exp f_k = log sum + top.
func maxExpSum(f []float64) (top, sum float64) {
	top = math.Inf(-1)
	for _, v := range f {
		top = max(top, v)
	}
	for _, v := range f {
		sum += math.Exp(v - top)
	}
	return top, sum
}

// KLR reaches the optimum of its objective (the residual, computed here
// with an explicit kernel matrix, vanishes) and every iteration lowers the
// objective (majorization–minimization).
func TestKLROptimalAndMonotone(t *testing.T) {
	n, d, c := 120, 3, 3
	pts, labels := klrProblem(n, d, c, 3)
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	k := make([]float64, n*n)
	kernel.Cross(s, pts, pts, k, n)
	for i := 0; i < n; i++ {
		k[i*n+i] = 1
	}
	const lam = 0.05
	prev := math.Inf(1)
	for it := 1; it <= 12; it++ {
		res, err := KLR(context.Background(), nil, s, pts, labels, c, KLROptions{Options: Options{Ridge: lam}, MaxIter: it, Tol: 1e-300})
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := klrObjective(k, n, c, res.Alpha, labels, lam)
		if !res.AtLimit || res.Iterations != it {
			t.Fatalf("stopped by MaxIter %d: %d iterations, AtLimit %v", it, res.Iterations, res.AtLimit)
		}
		if obj > prev+1e-9 {
			t.Fatalf("iteration %d raised the objective: %.12g > %.12g", it, obj, prev)
		}
		prev = obj
	}
	res, err := KLR(context.Background(), nil, s, pts, labels, c, KLROptions{Options: Options{Ridge: lam}, MaxIter: 2000, Tol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	obj, worst := klrObjective(k, n, c, res.Alpha, labels, lam)
	t.Logf("%d iterations, residual %.2e (explicit %.2e), objective %.6f, mean log-loss %.4f", res.Iterations, res.Residual, worst, obj, res.Loss)
	if res.Residual > 1e-9 || worst > 1e-8 || res.AtLimit {
		t.Fatalf("not at the optimum after %d iterations: residual %.2e, explicit %.2e", res.Iterations, res.Residual, worst)
	}
	if obj > prev {
		t.Fatalf("the optimum %.9g is above iteration 12's objective %.9g", obj, prev)
	}
	if _, err := KLR(context.Background(), nil, s, pts, labels, c, KLROptions{Options: Options{Ridge: 0}}); err == nil {
		t.Fatal("λ = 0 was accepted")
	}
	bad := append([]int(nil), labels...)
	bad[5] = 3
	if _, err := KLR(context.Background(), nil, s, pts, bad, c, KLROptions{Options: Options{Ridge: lam}}); err == nil {
		t.Fatal("a label outside the classes was accepted")
	}
}

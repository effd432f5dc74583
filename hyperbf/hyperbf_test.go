package hyperbf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// mustInit is Init(cfg, x, y, n, d, k), failing the test on an error.
func mustInit(t *testing.T, cfg Config, x, y []float64, n, d, k int) *Model {
	t.Helper()
	m, err := Init(cfg, x, y, n, d, k)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The closed-form gradients equal central finite differences of the loss
// (SPEC §7 asks for the signs to be checked numerically), for c, t and a
// non-identity W; tolerance 1e-6 of the largest gradient.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	const n, d, k = 9, 4, 2
	x, y := testutil.NormalRows(n, d, 1, 1), testutil.NormalRows(n, k, 2, 1)
	m := mustInit(t, Config{Centers: 5, Bandwidth: 3, Seed: 1}, x, y, n, d, k)
	r := rand.New(rand.NewPCG(3, 3))
	for i := range m.W {
		m.W[i] += 0.3 * r.NormFloat64()
	}
	for i := range m.T {
		m.T[i] += 0.2 * r.NormFloat64()
	}
	_, g := m.Loss(x, y, n)
	for name, pg := range map[string][2][]float64{"C": {m.C, g.C}, "T": {m.T, g.T}, "W": {m.W, g.W}} {
		p, grad := pg[0], pg[1]
		scale := 0.0
		for _, v := range grad {
			scale = max(scale, math.Abs(v))
		}
		for i := range p {
			old := p[i]
			p[i] = old + 1e-6
			up, _ := m.Loss(x, y, n)
			p[i] = old - 1e-6
			down, _ := m.Loss(x, y, n)
			p[i] = old
			fd := (up - down) / 2e-6
			if math.Abs(fd-grad[i]) > 1e-6*scale {
				t.Fatalf("%s[%d]: closed form %v, finite difference %v", name, i, grad[i], fd)
			}
		}
	}
}

// AGOP equals the average outer product of finite-difference gradients.
func TestAGOPMatchesFiniteDifferences(t *testing.T) {
	const n, d, k = 7, 3, 2
	x, y := testutil.NormalRows(n, d, 4, 1), testutil.NormalRows(n, k, 5, 1)
	m := mustInit(t, Config{Centers: 4, Bandwidth: 2, Seed: 2}, x, y, n, d, k)
	m.W[1] = 0.4
	got := m.AGOP(x, n)
	want := make([]float64, d*d)
	for i := 0; i < n; i++ {
		row := append([]float64(nil), x[i*d:(i+1)*d]...)
		jac := make([][]float64, k)
		for c := range jac {
			jac[c] = make([]float64, d)
		}
		for j := 0; j < d; j++ {
			old := row[j]
			row[j] = old + 1e-6
			up := m.Predict(row, 1)
			row[j] = old - 1e-6
			down := m.Predict(row, 1)
			row[j] = old
			for c := range jac {
				jac[c][j] = (up[c] - down[c]) / 2e-6
			}
		}
		for c := range jac {
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					want[a*d+b] += jac[c][a] * jac[c][b] / n
				}
			}
		}
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
			t.Fatalf("AGOP[%d] = %v, finite differences %v", i, got[i], want[i])
		}
	}
}

// Training lowers the loss on a task that depends on one direction, and
// the learned metric concentrates on it.
func TestTrainingLearnsTheDirection(t *testing.T) {
	const n, d = 400, 5
	x := testutil.NormalRows(n, d, 7, 1)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		y[i] = math.Sin(2 * x[i*d])
	}
	cfg := Config{Centers: 60, Seed: 1, LR: 3e-3, BatchSize: 64}
	m, err := Init(cfg, x, y, n, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTrainer(m, cfg)
	first, _ := tr.Epoch(context.Background(), x, y, n)
	last := first
	for e := 0; e < 60; e++ {
		last, _ = tr.Epoch(context.Background(), x, y, n)
	}
	if !(last < first/2) {
		t.Errorf("loss %v after training, %v in the first epoch", last, first)
	}
	wtw := m.Metric()
	for j := 1; j < d; j++ {
		if !(wtw[0] > 2*wtw[j*d+j]) {
			t.Errorf("WᵀW diagonal %v: the relevant input does not dominate", fmt.Sprint(wtw[0], wtw[j*d+j]))
		}
	}
}

// The default bandwidth ignores duplicate rows (it once fell back to 1
// when most rows were equal), and one row or a bad bandwidth is handled.
func TestDefaultBandwidth(t *testing.T) {
	const n, d = 50, 2
	x := make([]float64, n*d)
	for i := 40; i < n; i++ { // 80% identical rows, the rest far apart
		x[i*d] = float64(100 * (i - 39))
	}
	r := rand.New(rand.NewPCG(1, 1))
	if got := medianSqDist(x, n, d, r); got < 1e4 {
		t.Errorf("median squared distance %v, want the distinct rows' (≥ 1e4)", got)
	}
	if got := medianSqDist(x[:d], 1, d, r); got != 1 {
		t.Errorf("one row: %v", got)
	}
	y := make([]float64, n)
	if _, err := Init(Config{Centers: 3, Bandwidth: math.NaN()}, x, y, n, d, 1); err == nil {
		t.Error("a NaN bandwidth was accepted")
	}
}

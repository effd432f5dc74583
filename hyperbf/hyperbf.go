// Package hyperbf is the HyperBF network of Poggio and Girosi (1990) with
// a learned metric (SPEC §7):
//
//	f(x) = Σ_α c_α exp(−‖x − t_α‖²_W / L),  ‖v‖²_W = vᵀWᵀWv,
//
// trained by gradient descent on the coefficients c, the centres t and W
// ("GD-HyperBF"), with closed-form gradients. Its counterpart with the
// centres fixed at training points, c solved and WᵀW set to the AGOP is an
// RFM with the Gaussian kernel (package rfm); package hyperbf measures how
// the W that gradient descent learns compares with the AGOP of the
// function it computes.
//
// Study is the experiment of 'rfm hyperbf' as a Go call: it trains
// GD-HyperBF on encoded rows, measures each epoch's test score and the
// alignment of WᵀW with the AGOP, and can fit a Laplace machine, an RFM and
// AGOP-HyperBF beside it. Reading and encoding tables, and printing, are the
// command's.
//
// It is for the science tools (rfm hyperbf), not a production model.
package hyperbf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/nn"
)

// Model is a HyperBF network with K outputs on d inputs and m centres.
type Model struct {
	D, K, M int
	L       float64   // bandwidth
	W       []float64 // d×d, row-major: the metric is WᵀW
	T       []float64 // m×d centres
	C       []float64 // m×K coefficients
}

// pass holds one evaluation on n rows: Z = XWᵀ, T' = TWᵀ, the kernel G
// (n×m) and the outputs F = GC (n×K).
type pass struct {
	n     int
	z, tw []float64
	g, f  []float64
}

func (m *Model) forward(x []float64, n int) *pass {
	d, mm := m.D, m.M
	p := &pass{n: n, z: make([]float64, n*d), tw: make([]float64, mm*d), g: make([]float64, n*mm), f: make([]float64, n*m.K)}
	linalg.Gemm(false, true, n, d, d, 1, x, d, m.W, d, 0, p.z, d)
	linalg.Gemm(false, true, mm, d, d, 1, m.T, d, m.W, d, 0, p.tw, d)
	// ‖z − t'‖² = ‖z‖² + ‖t'‖² − 2 z·t'.
	linalg.Gemm(false, true, n, mm, d, -2, p.z, d, p.tw, d, 0, p.g, mm)
	zn, tn := rowNorms(p.z, n, d), rowNorms(p.tw, mm, d)
	inv := 1 / m.L
	for i := 0; i < n; i++ {
		row := p.g[i*mm : (i+1)*mm]
		for a := range row {
			s := max(row[a]+zn[i]+tn[a], 0)
			row[a] = math.Exp(-s * inv)
		}
	}
	linalg.Gemm(false, false, n, m.K, mm, 1, p.g, mm, m.C, m.K, 0, p.f, m.K)
	return p
}

func rowNorms(a []float64, n, d int) []float64 {
	out := make([]float64, n)
	for i := range out {
		s := 0.0
		for _, v := range a[i*d : (i+1)*d] {
			s += v * v
		}
		out[i] = s
	}
	return out
}

// Predict returns the outputs for n rows of x (n×d): n×K.
func (m *Model) Predict(x []float64, n int) []float64 { return m.forward(x, n).f }

// Grads are the gradients of the loss with respect to c, t and W.
type Grads struct{ C, T, W []float64 }

// Loss returns the mean over rows and outputs of the squared error on n
// rows of x against y (n×K), and its gradients:
//
//	∂/∂C = Gᵀ E_F,  E_F = 2(F − Y)/(nK)
//	with E = (E_F Cᵀ) ⊙ G · (−1/L), the gradient with respect to the
//	squared distances s_iα = ‖W(x_i − t_α)‖²,
//	∂/∂W = 2 Σ E_iα W(x_i − t_α)(x_i − t_α)ᵀ
//	     = 2 [Zᵀ(D_r X − E T) + T'ᵀ(D_c T − EᵀX)]
//	∂/∂T = −2 (EᵀX − D_c T) WᵀW
//
// with D_r, D_c the row and column sums of E as diagonals.
func (m *Model) Loss(x, y []float64, n int) (float64, *Grads) {
	d, mm, k := m.D, m.M, m.K
	p := m.forward(x, n)
	ef := make([]float64, n*k)
	loss := 0.0
	for i, v := range p.f {
		r := v - y[i]
		loss += r * r
		ef[i] = 2 * r / float64(n*k)
	}
	loss /= float64(n * k)
	g := &Grads{C: make([]float64, mm*k), T: make([]float64, mm*d), W: make([]float64, d*d)}
	linalg.Gemm(true, false, mm, k, n, 1, p.g, mm, ef, k, 0, g.C, k)
	e := make([]float64, n*mm)
	linalg.Gemm(false, true, n, mm, k, 1, ef, k, m.C, k, 0, e, mm)
	inv := -1 / m.L
	rs, cs := make([]float64, n), make([]float64, mm)
	for i := 0; i < n; i++ {
		for a := 0; a < mm; a++ {
			v := e[i*mm+a] * p.g[i*mm+a] * inv
			e[i*mm+a] = v
			rs[i] += v
			cs[a] += v
		}
	}
	// A1 = D_r X − E T (n×d), A2 = D_c T − EᵀX (m×d).
	a1 := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			a1[i*d+j] = rs[i] * x[i*d+j]
		}
	}
	linalg.Gemm(false, false, n, d, mm, -1, e, mm, m.T, d, 1, a1, d)
	a2 := make([]float64, mm*d)
	for a := 0; a < mm; a++ {
		for j := 0; j < d; j++ {
			a2[a*d+j] = cs[a] * m.T[a*d+j]
		}
	}
	linalg.Gemm(true, false, mm, d, n, -1, e, mm, x, d, 1, a2, d)
	linalg.Gemm(true, false, d, d, n, 2, p.z, d, a1, d, 0, g.W, d)
	linalg.Gemm(true, false, d, d, mm, 2, p.tw, d, a2, d, 1, g.W, d)
	wtw := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, d, 1, m.W, d, m.W, d, 0, wtw, d)
	linalg.Gemm(false, false, mm, d, d, 2, a2, d, wtw, d, 0, g.T, d)
	return loss, g
}

// Metric returns WᵀW (d×d).
func (m *Model) Metric() []float64 {
	d := m.D
	out := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, d, 1, m.W, d, m.W, d, 0, out, d)
	return out
}

// AGOP returns the average over n rows of x of Σ_k ∇f_k ∇f_kᵀ (d×d), with
// ∇f_k(x) = −(2/L) WᵀW Σ_α c_αk G_α(x)(x − t_α).
func (m *Model) AGOP(x []float64, n int) []float64 {
	d, mm, k := m.D, m.M, m.K
	p := m.forward(x, n)
	// u_ik = Σ_α c_αk G_iα (x_i − t_α) = F_ik x_i − (G diag(c_k) T)_i.
	u := make([]float64, n*d)
	gc := make([]float64, n*mm)
	acc := make([]float64, d*d)
	for c := 0; c < k; c++ {
		for i := 0; i < n; i++ {
			for a := 0; a < mm; a++ {
				gc[i*mm+a] = p.g[i*mm+a] * m.C[a*k+c]
			}
			for j := 0; j < d; j++ {
				u[i*d+j] = p.f[i*k+c] * x[i*d+j]
			}
		}
		linalg.Gemm(false, false, n, d, mm, -1, gc, mm, m.T, d, 1, u, d)
		linalg.Gemm(true, false, d, d, n, 1/float64(n), u, d, u, d, 1, acc, d)
	}
	// AGOP = (2/L)² WᵀW · acc · WᵀW.
	wtw := m.Metric()
	tmp := make([]float64, d*d)
	linalg.Gemm(false, false, d, d, d, 1, wtw, d, acc, d, 0, tmp, d)
	out := make([]float64, d*d)
	s := 4 / (m.L * m.L)
	linalg.Gemm(false, false, d, d, d, s, tmp, d, wtw, d, 0, out, d)
	return out
}

// Config is how GD-HyperBF is initialized and trained.
type Config struct {
	Centers   int     // m, drawn from the training rows (seeded)
	Bandwidth float64 // L; 0: the median squared distance between rows
	Ridge     float64 // of the initial least-squares solve for c (default 1e-3)
	LR        float64 // Adam learning rate (default 1e-3)
	Epochs    int
	BatchSize int    // default 256
	Seed      uint64 // centres and batch order
	// FixW and FixCenters keep W = I or the centres at their rows.
	FixW, FixCenters bool
}

// Init draws a model: m centres among the n rows of x, W = I, the
// bandwidth, and c by ridge least squares on the kernel features.
func Init(cfg Config, x, y []float64, n, d, k int) (*Model, error) {
	if !(cfg.Bandwidth >= 0) || math.IsInf(cfg.Bandwidth, 0) || !(cfg.Ridge >= 0) || math.IsInf(cfg.Ridge, 0) {
		return nil, fmt.Errorf("hyperbf: bandwidth %v and ridge %v must be finite numbers ≥ 0", cfg.Bandwidth, cfg.Ridge)
	}
	if cfg.Centers < 1 || cfg.Centers > n {
		return nil, fmt.Errorf("hyperbf: %d centres for %d rows", cfg.Centers, n)
	}
	if len(x) != n*d || len(y) != n*k {
		return nil, fmt.Errorf("hyperbf: %d inputs and %d targets are not %d rows of %d and %d", len(x), len(y), n, d, k)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x4b))
	rows := r.Perm(n)[:cfg.Centers]
	m := &Model{D: d, K: k, M: cfg.Centers, L: cfg.Bandwidth, W: make([]float64, d*d), T: make([]float64, cfg.Centers*d), C: make([]float64, cfg.Centers*k)}
	for j := 0; j < d; j++ {
		m.W[j*d+j] = 1
	}
	for a, i := range rows {
		copy(m.T[a*d:(a+1)*d], x[i*d:(i+1)*d])
	}
	if m.L == 0 {
		m.L = medianSqDist(x, n, d, r)
	}
	ridge := cfg.Ridge
	if ridge == 0 {
		ridge = 1e-3
	}
	// c = (GᵀG + λnI)⁻¹ GᵀY on the training rows.
	p := m.forward(x, n)
	mm := m.M
	a := make([]float64, mm*mm)
	linalg.SyrkLowerTrans(mm, n, 1, p.g, mm, 0, a, mm)
	for i := 0; i < mm; i++ {
		a[i*mm+i] += ridge * float64(n)
	}
	b := make([]float64, mm*k)
	linalg.Gemm(true, false, mm, k, n, 1, p.g, mm, y, k, 0, b, k)
	if info := linalg.Cholesky(mm, a, mm); info >= 0 {
		return nil, fmt.Errorf("hyperbf: the initial least-squares system is not positive definite (bandwidth %v); check the bandwidth and the ridge", m.L)
	}
	linalg.CholSolve(mm, k, a, mm, b, k)
	copy(m.C, b)
	return m, nil
}

// medianSqDist is the median of the non-zero squared distances between
// 2 000 random pairs of rows (duplicate rows would otherwise make it 0);
// 1 when there are none.
func medianSqDist(x []float64, n, d int, r *rand.Rand) float64 {
	if n < 2 {
		return 1
	}
	var s []float64
	for tries := 0; len(s) < 2000 && tries < 20000; tries++ {
		i, j := r.IntN(n), r.IntN(n)
		if i == j {
			continue
		}
		v := 0.0
		for c := 0; c < d; c++ {
			t := x[i*d+c] - x[j*d+c]
			v += t * t
		}
		if v > 0 {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return 1
	}
	slices.Sort(s)
	return s[len(s)/2]
}

// Trainer runs Adam on a model's parameters.
type Trainer struct {
	Model *Model
	cfg   Config
	rng   *rand.Rand
	step  int
	mom   [3][2][]float64 // C, T, W: first and second moments
}

// NewTrainer prepares gradient descent of m.
func NewTrainer(m *Model, cfg Config) *Trainer {
	if cfg.LR == 0 {
		cfg.LR = 1e-3
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 256
	}
	t := &Trainer{Model: m, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x4c))}
	for i, p := range [][]float64{m.C, m.T, m.W} {
		t.mom[i] = [2][]float64{make([]float64, len(p)), make([]float64, len(p))}
	}
	return t
}

// Epoch makes one pass over the rows in seeded random batches and returns
// the mean batch loss.
func (t *Trainer) Epoch(ctx context.Context, x, y []float64, n int) (float64, error) {
	m := t.Model
	return nn.Batches(ctx, t.rng.Perm(n), x, y, m.D, m.K, t.cfg.BatchSize, func(bx, by []float64, rows int) float64 {
		loss, g := m.Loss(bx, by, rows)
		t.apply(g)
		return loss
	})
}

func (t *Trainer) apply(g *Grads) {
	t.step++
	m := t.Model
	params := [][]float64{m.C, m.T, m.W}
	grads := [][]float64{g.C, g.T, g.W}
	for i := range params {
		if (i == 1 && t.cfg.FixCenters) || (i == 2 && t.cfg.FixW) {
			continue
		}
		nn.AdamStep(params[i], grads[i], t.mom[i][0], t.mom[i][1], t.cfg.LR, 0.9, 0.999, 1e-8, t.step)
	}
}

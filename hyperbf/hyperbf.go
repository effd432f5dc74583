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
// W may have fewer rows than inputs (Config.Rank: started at the top
// principal directions), which makes wide images such as CIFAR-10's
// affordable; the learning rate can follow a schedule (Schedules) and be
// scaled per parameter group (Config.RelativeLR); ScalePixels prepares
// image sets, and StudyOptions.Validation scores on a held-out share of
// the training rows, to choose settings without the test set
// (docs/hyperbf.md).
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
	R       int       // rows of W (d: a square W; fewer: a metric of rank R)
	L       float64   // bandwidth
	W       []float64 // R×d, row-major: the metric is WᵀW
	T       []float64 // m×d centres
	C       []float64 // m×K coefficients
}

// pass holds one evaluation on n rows: Z = XWᵀ (n×R), T' = TWᵀ (m×R), the kernel G
// (n×m) and the outputs F = GC (n×K).
type pass struct {
	n     int
	z, tw []float64
	g, f  []float64
}

func (m *Model) forward(x []float64, n int) *pass {
	d, mm, r := m.D, m.M, m.R
	p := &pass{n: n, z: make([]float64, n*r), tw: make([]float64, mm*r), g: make([]float64, n*mm), f: make([]float64, n*m.K)}
	linalg.Gemm(false, true, n, r, d, 1, x, d, m.W, d, 0, p.z, r)
	linalg.Gemm(false, true, mm, r, d, 1, m.T, d, m.W, d, 0, p.tw, r)
	// ‖z − t'‖² = ‖z‖² + ‖t'‖² − 2 z·t'.
	linalg.Gemm(false, true, n, mm, r, -2, p.z, r, p.tw, r, 0, p.g, mm)
	zn, tn := rowNorms(p.z, n, r), rowNorms(p.tw, mm, r)
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
// with D_r, D_c the row and column sums of E as diagonals (∂/∂T is formed
// as ((D_c T − EᵀX) Wᵀ) W, which costs m·d·R rather than m·d²).
func (m *Model) Loss(x, y []float64, n int) (float64, *Grads) {
	d, mm, k, r := m.D, m.M, m.K, m.R
	p := m.forward(x, n)
	ef := make([]float64, n*k)
	loss := 0.0
	for i, v := range p.f {
		r := v - y[i]
		loss += r * r
		ef[i] = 2 * r / float64(n*k)
	}
	loss /= float64(n * k)
	g := &Grads{C: make([]float64, mm*k), T: make([]float64, mm*d), W: make([]float64, r*d)}
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
	linalg.Gemm(true, false, r, d, n, 2, p.z, r, a1, d, 0, g.W, d)
	linalg.Gemm(true, false, r, d, mm, 2, p.tw, r, a2, d, 1, g.W, d)
	a2w := make([]float64, mm*r)
	linalg.Gemm(false, true, mm, r, d, 1, a2, d, m.W, d, 0, a2w, r)
	linalg.Gemm(false, false, mm, d, r, 2, a2w, r, m.W, d, 0, g.T, d)
	return loss, g
}

// Metric returns WᵀW (d×d).
func (m *Model) Metric() []float64 {
	d := m.D
	out := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, m.R, 1, m.W, d, m.W, d, 0, out, d)
	return out
}

// AGOP returns the average over n rows of x of Σ_k ∇f_k ∇f_kᵀ (d×d), with
// ∇f_k(x) = −(2/L) WᵀW Σ_α c_αk G_α(x)(x − t_α).
func (m *Model) AGOP(x []float64, n int) []float64 {
	d, mm, k, r := m.D, m.M, m.K, m.R
	p := m.forward(x, n)
	// u_ik = Σ_α c_αk G_iα (x_i − t_α) = F_ik x_i − (G diag(c_k) T)_i.
	u := make([]float64, n*d)
	uw := make([]float64, n*r)
	gc := make([]float64, n*mm)
	acc := make([]float64, r*r)
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
		// acc += (UWᵀ)ᵀ(UWᵀ)/n, R×R.
		linalg.Gemm(false, true, n, r, d, 1, u, d, m.W, d, 0, uw, r)
		linalg.Gemm(true, false, r, r, n, 1/float64(n), uw, r, uw, r, 1, acc, r)
	}
	// AGOP = (2/L)² Wᵀ · acc · W.
	tmp := make([]float64, r*d)
	linalg.Gemm(false, false, r, d, r, 1, acc, r, m.W, d, 0, tmp, d)
	out := make([]float64, d*d)
	s := 4 / (m.L * m.L)
	linalg.Gemm(true, false, d, d, r, s, m.W, d, tmp, d, 0, out, d)
	return out
}

// Config is how GD-HyperBF is initialized and trained.
type Config struct {
	Centers   int     // m, drawn from the training rows (seeded)
	Bandwidth float64 // L; 0: the median squared distance between rows
	Ridge     float64 // of the initial least-squares solve for c (default 1e-3)
	LR        float64 // Adam learning rate (default 1e-3)
	// Schedule is how the learning rate moves over the epochs: Constant
	// (""), Cosine or Step (see Schedules).
	Schedule string
	Epochs   int
	// Rank is the rows of W: 0 or d, a square W = I; 0 < Rank < d, W's rows
	// are the top Rank principal directions of the training rows (the
	// metric starts as the Euclidean distance in their span), which makes
	// wide inputs such as CIFAR-10's 3 072 pixels affordable.
	Rank      int
	BatchSize int    // default 256
	Seed      uint64 // centres and batch order
	// FixW and FixCenters keep W = I or the centres at their rows.
	FixW, FixCenters bool
	// RelativeLR scales the Adam steps of the coefficients, the centres
	// and W by the root mean square of each one's initial values: Adam's
	// steps have the size of the learning rate in every coordinate, which
	// for W's entries (about 1/√d for a row of unit norm), image pixels or
	// thousands of small solved coefficients moving together is a large
	// change of the function.
	RelativeLR bool
}

// The learning-rate schedules: the rate of epoch e of E is LR times
// 1 (Constant), ½(1 + cos(π(e−1)/E)) (Cosine), or 1, then 0.1 from
// halfway and 0.01 from three quarters of the epochs (Step).
const (
	Constant = "constant"
	Cosine   = "cosine"
	Step     = "step"
)

// Schedules lists the learning-rate schedules.
var Schedules = []string{Constant, Cosine, Step}

// rateFactor is the schedule's multiplier of the learning rate in epoch e
// (1-based) of epochs.
func rateFactor(schedule string, e, epochs int) float64 {
	f := float64(e-1) / float64(max(epochs, 1))
	switch schedule {
	case Cosine:
		return 0.5 * (1 + math.Cos(math.Pi*f))
	case Step:
		switch {
		case f >= 0.75:
			return 0.01
		case f >= 0.5:
			return 0.1
		}
	}
	return 1
}

// Check reports a configuration Init or the trainer cannot use.
func (cfg Config) Check() error {
	switch {
	case !(cfg.Bandwidth >= 0) || math.IsInf(cfg.Bandwidth, 0) || !(cfg.Ridge >= 0) || math.IsInf(cfg.Ridge, 0):
		return fmt.Errorf("hyperbf: bandwidth %v and ridge %v must be finite numbers ≥ 0", cfg.Bandwidth, cfg.Ridge)
	case !(cfg.LR >= 0) || math.IsInf(cfg.LR, 0):
		return fmt.Errorf("hyperbf: learning rate %v must be a finite number > 0", cfg.LR)
	case cfg.Rank < 0:
		return fmt.Errorf("hyperbf: rank %d must be ≥ 0", cfg.Rank)
	case cfg.Schedule != "" && !slices.Contains(Schedules, cfg.Schedule):
		return fmt.Errorf("hyperbf: learning-rate schedule %q: want one of %v", cfg.Schedule, Schedules)
	}
	return nil
}

// Init draws a model: m centres among the n rows of x, W = I (or the top
// principal directions, see Config.Rank), the bandwidth, and c by ridge
// least squares on the kernel features.
func Init(cfg Config, x, y []float64, n, d, k int) (*Model, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Centers < 1 || cfg.Centers > n {
		return nil, fmt.Errorf("hyperbf: %d centres for %d rows", cfg.Centers, n)
	}
	if len(x) != n*d || len(y) != n*k {
		return nil, fmt.Errorf("hyperbf: %d inputs and %d targets are not %d rows of %d and %d", len(x), len(y), n, d, k)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x4b))
	rows := r.Perm(n)[:cfg.Centers]
	m := &Model{D: d, K: k, M: cfg.Centers, R: d, L: cfg.Bandwidth, T: make([]float64, cfg.Centers*d), C: make([]float64, cfg.Centers*k)}
	if cfg.Rank > 0 && cfg.Rank < d {
		w, err := principalDirections(x, n, d, cfg.Rank)
		if err != nil {
			return nil, err
		}
		m.R, m.W = cfg.Rank, w
	} else {
		m.W = make([]float64, d*d)
		for j := 0; j < d; j++ {
			m.W[j*d+j] = 1
		}
	}
	for a, i := range rows {
		copy(m.T[a*d:(a+1)*d], x[i*d:(i+1)*d])
	}
	if m.L == 0 {
		m.L = medianSqDist(m.project(x, n), n, m.R, r)
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

// project returns XWᵀ (n×R); x itself when W is the identity.
func (m *Model) project(x []float64, n int) []float64 {
	if m.R == m.D && isIdentity(m.W, m.D) {
		return x
	}
	z := make([]float64, n*m.R)
	linalg.Gemm(false, true, n, m.R, m.D, 1, x, m.D, m.W, m.D, 0, z, m.R)
	return z
}

func isIdentity(w []float64, d int) bool {
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if v := w[i*d+j]; (i == j && v != 1) || (i != j && v != 0) {
				return false
			}
		}
	}
	return true
}

// principalDirections returns the top r eigenvectors of the covariance of
// the n rows of x as the rows of an r×d matrix.
func principalDirections(x []float64, n, d, r int) ([]float64, error) {
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			mean[j] += v / float64(n)
		}
	}
	xc := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xc[i*d+j] = x[i*d+j] - mean[j]
		}
	}
	cov := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, n, 1/float64(n), xc, d, xc, d, 0, cov, d)
	_, vecs, ok := linalg.EigSym(d, cov)
	if !ok {
		return nil, fmt.Errorf("hyperbf: the eigendecomposition of the %d×%d covariance for the rank-%d metric did not converge", d, d, r)
	}
	// Eigenvalues ascend; eigenvector j is column j of vecs.
	w := make([]float64, r*d)
	for a := 0; a < r; a++ {
		col := d - 1 - a
		for j := 0; j < d; j++ {
			w[a*d+j] = vecs[j*d+col]
		}
	}
	return w, nil
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
	epoch int             // epochs begun
	rate  float64         // this epoch's learning rate
	mom   [3][2][]float64 // C, T, W: first and second moments
	scale [3]float64      // C, T, W: multipliers of the rate
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
		t.scale[i] = 1
		if cfg.RelativeLR {
			if rms := math.Sqrt(dot(p, p) / float64(len(p))); rms > 0 {
				t.scale[i] = rms
			}
		}
	}
	return t
}

// Rate is the learning rate of the last epoch begun (the configured rate
// before the first).
func (t *Trainer) Rate() float64 {
	if t.epoch == 0 {
		return t.cfg.LR
	}
	return t.rate
}

// Epoch makes one pass over the rows in seeded random batches, at the
// schedule's learning rate for this epoch (of cfg.Epochs), and returns
// the mean batch loss.
func (t *Trainer) Epoch(ctx context.Context, x, y []float64, n int) (float64, error) {
	m := t.Model
	t.epoch++
	t.rate = t.cfg.LR * rateFactor(t.cfg.Schedule, t.epoch, t.cfg.Epochs)
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
		nn.AdamStep(params[i], grads[i], t.mom[i][0], t.mom[i][1], t.rate*t.scale[i], 0.9, 0.999, 1e-8, t.step)
	}
}

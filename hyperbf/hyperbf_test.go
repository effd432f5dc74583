package hyperbf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
// non-identity W, square or of rank 2; tolerance 1e-6 of the largest
// gradient.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	forRanks(t, checkGradients)
}

// forRanks runs check as a subtest for a square W (rank 0) and one of
// rank 2.
func forRanks(t *testing.T, check func(t *testing.T, rank int)) {
	for _, rank := range []int{0, 2} {
		t.Run(fmt.Sprint("rank", rank), func(t *testing.T) { check(t, rank) })
	}
}

func checkGradients(t *testing.T, rank int) {
	const n, d, k = 9, 4, 2
	x, y := testutil.NormalRows(n, d, 1, 1), testutil.NormalRows(n, k, 2, 1)
	m := mustInit(t, Config{Centers: 5, Bandwidth: 3, Seed: 1, Rank: rank}, x, y, n, d, k)
	want := d
	if rank > 0 {
		want = rank
	}
	if m.R != want || len(m.W) != want*d {
		t.Fatalf("rank %d: W has %d rows, %d values", rank, m.R, len(m.W))
	}
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

// AGOP equals the average outer product of finite-difference gradients,
// for a square W and one of rank 2.
func TestAGOPMatchesFiniteDifferences(t *testing.T) {
	forRanks(t, checkAGOP)
}

func checkAGOP(t *testing.T, rank int) {
	const n, d, k = 7, 3, 2
	x, y := testutil.NormalRows(n, d, 4, 1), testutil.NormalRows(n, k, 5, 1)
	m := mustInit(t, Config{Centers: 4, Bandwidth: 2, Seed: 2, Rank: rank}, x, y, n, d, k)
	m.W[1] += 0.4
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

// A rank-r W starts as the top r principal directions: on rows spread
// along one axis its single row is that axis, and the default bandwidth is
// measured in the projected space.
func TestPrincipalDirectionsInit(t *testing.T) {
	const n, d = 200, 4
	x := testutil.NormalRows(n, d, 9, 1)
	for i := 0; i < n; i++ {
		x[i*d+2] *= 10 // the widest direction: input 2
	}
	m := mustInit(t, Config{Centers: 10, Rank: 1, Seed: 1}, x, make([]float64, n), n, d, 1)
	if m.R != 1 || math.Abs(math.Abs(m.W[2])-1) > 0.01 {
		t.Fatalf("W = %v, want ±e₂", m.W)
	}
	full := mustInit(t, Config{Centers: 10, Seed: 1}, x, make([]float64, n), n, d, 1)
	if !(m.L < full.L) || !(m.L > full.L/2) {
		t.Errorf("bandwidth %v on the top direction, %v on all four", m.L, full.L)
	}
}

// The schedules scale the rate as documented, and Check refuses unknown
// schedules, negative ranks and bad rates.
func TestScheduleAndCheck(t *testing.T) {
	cases := []struct {
		s         string
		e, epochs int
		want      float64
	}{{Constant, 7, 10, 1}, {"", 3, 10, 1}, {Cosine, 1, 10, 1}, {Cosine, 6, 10, 0.5}, {Step, 5, 10, 1}, {Step, 6, 10, 0.1}, {Step, 9, 10, 0.01}}
	for _, c := range cases {
		if got := rateFactor(c.s, c.e, c.epochs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%q epoch %d of %d: factor %v, want %v", c.s, c.e, c.epochs, got, c.want)
		}
	}
	for _, cfg := range []Config{{Schedule: "linear"}, {Rank: -1}, {LR: math.Inf(1)}, {Ridge: -1}} {
		if err := cfg.Check(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	// The trainer applies the schedule: epoch 2 of 2 under Step runs at a
	// tenth of the rate.
	x, y := testutil.NormalRows(20, 2, 1, 1), testutil.NormalRows(20, 1, 2, 1)
	cfg := Config{Centers: 5, LR: 0.02, Schedule: Step, Epochs: 2, Seed: 1}
	tr := NewTrainer(mustInit(t, cfg, x, y, 20, 2, 1), cfg)
	var rates []float64
	for e := 0; e < 2; e++ {
		if _, err := tr.Epoch(context.Background(), x, y, 20); err != nil {
			t.Fatal(err)
		}
		rates = append(rates, tr.Rate())
	}
	if rates[0] != 0.02 || math.Abs(rates[1]-0.002) > 1e-15 {
		t.Errorf("rates %v, want [0.02 0.002]", rates)
	}
}

// With RelativeLR, Adam's first step moves each entry of W by about the
// rate times the RMS of W's initial entries (1/√d for W = I), not by the
// rate, and each coefficient by the rate times the coefficients' RMS.
func TestRelativeLR(t *testing.T) {
	const n, d = 30, 4
	x, y := testutil.NormalRows(n, d, 3, 1), testutil.NormalRows(n, 1, 4, 1)
	for _, rel := range []bool{false, true} {
		cfg := Config{Centers: 6, LR: 0.01, BatchSize: n, Seed: 1, RelativeLR: rel}
		m := mustInit(t, cfg, x, y, n, d, 1)
		w0, c0 := slices.Clone(m.W), slices.Clone(m.C)
		wantC := 0.01
		if rel {
			wantC *= math.Sqrt(dot(c0, c0) / float64(len(c0)))
		}
		if _, err := NewTrainer(m, cfg).Epoch(context.Background(), x, y, n); err != nil {
			t.Fatal(err)
		}
		want := 0.01
		if rel {
			want = 0.01 / math.Sqrt(d) // RMS of the 4×4 identity's entries
		}
		biggest := func(a, b []float64) float64 {
			v := 0.0
			for i := range a {
				v = max(v, math.Abs(a[i]-b[i]))
			}
			return v
		}
		if got := biggest(m.W, w0); got > want*1.001 || got < want*0.9 {
			t.Errorf("relative %v: the largest step of W is %v, want about %v", rel, got, want)
		}
		if got := biggest(m.C, c0); got > wantC*1.001 || got < wantC*0.9 {
			t.Errorf("relative %v: the largest step of c is %v, want about %v", rel, got, wantC)
		}
	}
}

package nfa

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

// RMoments are the normalised traces tr(Rᵖ) = Tr(Rᵖ)/d, p = 1 … 4, of a
// one-hidden-layer quadratic network's R = Wᵀdiag(a²)W.
type RMoments [4]float64

// PredictedCNFA is the centred-NFA paper's free-probability prediction
// (Appendix E, equations 20, 22 and 28) of the correlation of the second
// derivatives of the centred NFM and AGOP at initialization,
// ρ(ẆᵀẆ, ẆᵀKẆ) = tr(ARARBR)/√(tr(ARAR)·tr(ARBRARBR)), for the data
// matrices A = (XᵀYX)² and B = XᵀX (d×d, symmetric) and the network's
// moments r. Equation 28's last term, printed tr[Ā]²tr[B²]tr[R²]², is
// tr[B]²tr[Ā²]tr[R²]² as its derivation (27) gives; with R = I the formula
// is exact, which the tests check.
func PredictedCNFA(a, b []float64, d int, r RMoments) (float64, error) {
	if d < 1 || len(a) != d*d || len(b) != d*d {
		return 0, fmt.Errorf("nfa: predicted C-NFA: want two %d×%d matrices (got %d and %d entries)", d, d, len(a), len(b))
	}
	nt := func(m []float64) float64 { // normalised trace
		var s float64
		for i := 0; i < d; i++ {
			s += m[i*d+i]
		}
		return s / float64(d)
	}
	ta, tb := nt(a), nt(b)
	ac, bc := centred(a, d, ta), centred(b, d, tb)
	m := make([]float64, d*d) // Ā B̄
	linalg.Gemm(false, false, d, d, d, 1, ac, d, bc, d, 0, m, d)
	// tr(XY) = Σ X_ij Y_ji; Ā, B̄ are symmetric.
	trp := func(x, y []float64) float64 {
		var s float64
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				s += x[i*d+j] * y[j*d+i]
			}
		}
		return s / float64(d)
	}
	aa, bb, ab := trp(ac, ac), trp(bc, bc), trp(ac, bc)
	aab, abb, abab := trp(ac, m), trp(m, bc), trp(m, m)
	a2 := trp(a, a)
	r1, r2, r3, r4 := r[0], r[1], r[2], r[3]
	num := ta*ta*tb*r3 + 2*ta*r2*r1*ab + tb*r1*r2*aa + r1*r1*r1*aab
	den1 := a2*r1*r1 + ta*ta*r2 - ta*ta*r1*r1
	den2 := r1*r1*r1*r1*abab + 2*r1*r1*(r2-r1*r1)*ab*ab +
		2*r1*r1*r2*(tb*aab+ta*abb) + 4*ta*tb*r3*r1*ab + ta*ta*tb*tb*r4 +
		ta*ta*bb*r2*r2 + tb*tb*aa*r2*r2
	if !(den1 > 0 && den2 > 0) {
		return 0, fmt.Errorf("nfa: predicted C-NFA: non-positive denominator (%g, %g)", den1, den2)
	}
	return num / math.Sqrt(den1*den2), nil
}

// centred returns m − t·I.
func centred(m []float64, d int, t float64) []float64 {
	c := append([]float64(nil), m...)
	for i := 0; i < d; i++ {
		c[i*d+i] -= t
	}
	return c
}

// quadNet is a one-hidden-layer quadratic network f(x) = aᵀ(Wx)² at
// initialization (a ~ N(0, I), W ~ N(0, 1/k)), kept as G = diag(a)W (k×d).
type quadNet struct {
	g    []float64
	k, d int
}

func newQuadNet(k, d int, seed uint64) quadNet {
	r := rand.New(rand.NewPCG(seed, 0x9ad))
	g := make([]float64, k*d)
	s := 1 / math.Sqrt(float64(k))
	for i := 0; i < k; i++ {
		a := r.NormFloat64()
		for j := 0; j < d; j++ {
			g[i*d+j] = a * s * r.NormFloat64()
		}
	}
	return quadNet{g: g, k: k, d: d}
}

// moments returns tr(Rᵖ)/d for R = GᵀG.
func (q quadNet) moments() RMoments {
	d := q.d
	r := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, q.k, 1, q.g, d, q.g, d, 0, r, d)
	r2 := make([]float64, d*d)
	linalg.Gemm(false, false, d, d, d, 1, r, d, r, d, 0, r2, d)
	var m RMoments
	for i := 0; i < d; i++ {
		m[0] += r[i*d+i]
	}
	for i := range r {
		m[1] += r[i] * r[i]   // tr(R²) = ‖R‖²_F
		m[2] += r[i] * r2[i]  // tr(R³) = Σ R∘R² (symmetric)
		m[3] += r2[i] * r2[i] // tr(R⁴) = ‖R²‖²_F
	}
	for p := range m {
		m[p] /= float64(d)
	}
	return m
}

// observed returns ρ(ẆᵀẆ, ẆᵀKẆ) of the network on the data, from its
// gradient flow at initialization under the MSE loss with the residual
// taken as the labels (the paper's setting: Ẇ = Σᵢ yᵢ ∂f(xᵢ)/∂W =
// 2·diag(a)W·XᵀYX) and its pre-activation tangent kernel
// K = Σᵢ ∂f(xᵢ)/∂h ∂f(xᵢ)/∂hᵀ = 4·diag(a)W·XᵀX·Wᵀdiag(a). c = XᵀYX and
// b = XᵀX are d×d.
func (q quadNet) observed(c, b []float64) float64 {
	k, d := q.k, q.d
	wd := make([]float64, k*d) // Ẇ = 2 G C
	linalg.Gemm(false, false, k, d, d, 2, q.g, d, c, d, 0, wd, d)
	gb := make([]float64, k*d)
	linalg.Gemm(false, false, k, d, d, 1, q.g, d, b, d, 0, gb, d)
	kk := make([]float64, k*k) // K = 4 G B Gᵀ
	linalg.Gemm(false, true, k, k, d, 4, gb, d, q.g, d, 0, kk, k)
	kw := make([]float64, k*d)
	linalg.Gemm(false, false, k, d, k, 1, kk, k, wd, d, 0, kw, d)
	nfm := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, k, 1, wd, d, wd, d, 0, nfm, d)
	agop := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, k, 1, wd, d, kw, d, 0, agop, d)
	return nn.Cosine(nfm, agop)
}

// ReversingOptions configure the alignment reversing experiment (the
// paper's figure 3).
type ReversingOptions struct {
	N, D, Width int       // rows, inputs, hidden width (the paper: 1 024 each)
	Balances    []float64 // the γ values
	DataSeeds   int       // datasets per γ (seeds Seed, Seed+1, …)
	NetSeeds    int       // networks (the same ones for every dataset)
	Eps1, Eps2  float64   // the dataset's variance parameters (0.5, 0.01)
	Scale       float64   // the dataset's row scale (synth.ReversingOptions.Scale; 0 for 1)
	Seed        uint64
	// Progress, when set, gets each point as it is measured.
	Progress func(ReversingPoint)
}

// ReversingPoint is one dataset's measurement.
type ReversingPoint struct {
	Balance   float64 `json:"balance"`
	DataSeed  uint64  `json:"data_seed"`
	N1        int     `json:"n1"`
	Predicted float64 `json:"predicted"`     // PredictedCNFA with R's moments averaged over the networks
	Observed  float64 `json:"observed"`      // ρ(ẆᵀẆ, ẆᵀKẆ) averaged over the networks
	ObsStd    float64 `json:"observed_std"`  // its std over the networks
	ObsFirst  float64 `json:"observed_net1"` // the first network's value alone
}

// ReversingSummary averages a balance's points over the data seeds.
type ReversingSummary struct {
	Balance   float64 `json:"balance"`
	Predicted float64 `json:"predicted"`
	Observed  float64 `json:"observed"`
	Gap       float64 `json:"abs_gap"` // |predicted − observed| of the means
}

// ReversingResult is the whole sweep.
type ReversingResult struct {
	N, D, Width         int
	Eps1, Eps2, Scale   float64
	DataSeeds, NetSeeds int
	Seed                uint64
	Moments             RMoments // averaged over the networks
	Points              []ReversingPoint
	Summary             []ReversingSummary
	MeanGap             float64 `json:"mean_abs_gap"` // the mean over γ of Summary's gaps
	Backend             string
	Seconds             float64
}

// AlignmentReversing runs the paper's figure-3 experiment: for each balance
// γ and data seed it draws the alignment reversing dataset and measures
// the correlation of the second derivatives of the centred NFM and AGOP at
// initialization of one-hidden-layer quadratic networks, observed (the
// networks' own gradients, averaged over NetSeeds networks) and predicted
// (PredictedCNFA with the traces of R's powers averaged over the same
// networks, as the paper's Appendix H does).
func AlignmentReversing(ctx context.Context, o ReversingOptions) (*ReversingResult, error) {
	switch {
	case len(o.Balances) == 0:
		return nil, fmt.Errorf("nfa: alignment reversing: no balance γ given")
	case o.DataSeeds < 1 || o.NetSeeds < 1:
		return nil, fmt.Errorf("nfa: alignment reversing: need at least one data seed and one network seed (got %d, %d)", o.DataSeeds, o.NetSeeds)
	case o.Width < 1:
		return nil, fmt.Errorf("nfa: alignment reversing: width %d: must be ≥ 1", o.Width)
	case int64(o.Width)*int64(o.D) > 1<<26 || int64(o.D)*int64(o.D) > 1<<26:
		return nil, fmt.Errorf("nfa: alignment reversing: width %d × d %d is too large (at most 2^26 entries per matrix)", o.Width, o.D)
	}
	for _, g := range o.Balances {
		so := synth.ReversingOptions{N: o.N, D: o.D, Balance: g, Eps1: o.Eps1, Eps2: o.Eps2, Scale: o.Scale}
		if err := so.Validate(); err != nil {
			return nil, fmt.Errorf("nfa: %w", err)
		}
	}
	start := time.Now()
	d := o.D
	nets := make([]quadNet, o.NetSeeds)
	res := &ReversingResult{N: o.N, D: d, Width: o.Width, Eps1: o.Eps1, Eps2: o.Eps2, Scale: o.Scale, DataSeeds: o.DataSeeds, NetSeeds: o.NetSeeds, Seed: o.Seed, Backend: linalg.Backend()}
	for i := range nets {
		nets[i] = newQuadNet(o.Width, d, o.Seed+1000+uint64(i))
		m := nets[i].moments()
		for p := range m {
			res.Moments[p] += m[p] / float64(o.NetSeeds)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for _, g := range o.Balances {
		sum := ReversingSummary{Balance: g}
		for s := 0; s < o.DataSeeds; s++ {
			seed := o.Seed + uint64(s)
			data, err := synth.AlignmentReversingData(ctx, synth.ReversingOptions{N: o.N, D: d, Balance: g, Eps1: o.Eps1, Eps2: o.Eps2, Scale: o.Scale, Seed: seed})
			if err != nil {
				return nil, fmt.Errorf("nfa: %w", err)
			}
			c, b := dataMatrices(data)
			a := make([]float64, d*d)
			linalg.Gemm(false, false, d, d, d, 1, c, d, c, d, 0, a, d)
			pred, err := PredictedCNFA(a, b, d, res.Moments)
			if err != nil {
				return nil, fmt.Errorf("%w (γ = %v, data seed %d)", err, g, seed)
			}
			pt := ReversingPoint{Balance: g, DataSeed: seed, N1: data.N1, Predicted: pred}
			var sq float64
			for i, q := range nets {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				v := q.observed(c, b)
				if i == 0 {
					pt.ObsFirst = v
				}
				pt.Observed += v
				sq += v * v
			}
			k := float64(o.NetSeeds)
			pt.Observed /= k
			pt.ObsStd = math.Sqrt(math.Max(0, sq/k-pt.Observed*pt.Observed))
			res.Points = append(res.Points, pt)
			sum.Predicted += pred / float64(o.DataSeeds)
			sum.Observed += pt.Observed / float64(o.DataSeeds)
			if o.Progress != nil {
				o.Progress(pt)
			}
		}
		sum.Gap = math.Abs(sum.Predicted - sum.Observed)
		res.Summary = append(res.Summary, sum)
		res.MeanGap += sum.Gap / float64(len(o.Balances))
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// dataMatrices returns C = XᵀYX and B = XᵀX.
func dataMatrices(r *synth.Reversing) (c, b []float64) {
	n, d := r.N, r.D
	xy := make([]float64, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			xy[i*d+j] = r.Y[i] * r.X[i*d+j]
		}
	}
	c, b = make([]float64, d*d), make([]float64, d*d)
	linalg.Gemm(true, false, d, d, n, 1, r.X, d, xy, d, 0, c, d)
	linalg.Gemm(true, false, d, d, n, 1, r.X, d, r.X, d, 0, b, d)
	// C is symmetric in exact arithmetic; make it so.
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			v := (c[i*d+j] + c[j*d+i]) / 2
			c[i*d+j], c[j*d+i] = v, v
		}
	}
	return c, b
}

// WriteReversing writes reversing.csv (one row per dataset),
// reversing.json, and reversing.png (predicted and observed against γ, the
// means over data seeds and each seed's observed curve) and
// reversing_scatter.png (predicted against observed, one point per γ) into
// dir, which must exist.
func WriteReversing(ctx context.Context, dir string, res *ReversingResult) error {
	if err := atomicfile.Write(ctx, filepath.Join(dir, "reversing.csv"), func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, "balance,data_seed,n1,predicted,observed,observed_std,observed_net1"); err != nil {
			return err
		}
		for _, p := range res.Points {
			if _, err := fmt.Fprintf(w, "%g,%d,%d,%.6f,%.6f,%.6f,%.6f\n", p.Balance, p.DataSeed, p.N1, p.Predicted, p.Observed, p.ObsStd, p.ObsFirst); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := writeJSONFile(ctx, filepath.Join(dir, "reversing.json"), res); err != nil {
		return err
	}
	var xs, pred, obs []float64
	var labels []string
	for _, s := range res.Summary {
		xs, pred, obs = append(xs, s.Balance), append(pred, s.Predicted), append(obs, s.Observed)
		labels = append(labels, "γ="+strconv.FormatFloat(s.Balance, 'g', 3, 64))
	}
	series := map[string][]float64{"predicted (mean)": pred, "observed (mean)": obs}
	// Each data seed's observed curve, up to the plot's series limit.
	for s := 0; s < res.DataSeeds && len(series) < plot.MaxSeries; s++ {
		var v []float64
		for _, p := range res.Points {
			if p.DataSeed == res.Seed+uint64(s) {
				v = append(v, p.Observed)
			}
		}
		series[fmt.Sprintf("observed, data seed %d", res.Seed+uint64(s))] = v
	}
	title := fmt.Sprintf("C-NFA second-derivative correlation at init (n=d=%d, k=%d, scale %g)", res.N, res.Width, res.Scale)
	if res.N != res.D {
		title = fmt.Sprintf("C-NFA second-derivative correlation at init (n=%d, d=%d, k=%d, scale %g)", res.N, res.D, res.Width, res.Scale)
	}
	if err := plot.Curve(filepath.Join(dir, "reversing.png"), xs, series, "balance γ", "ρ(ẆᵀẆ, ẆᵀKẆ)", title); err != nil {
		return err
	}
	return plot.Scatter(filepath.Join(dir, "reversing_scatter.png"), pred, obs, labels, "predicted", "observed", "predicted vs observed, one point per γ", true)
}

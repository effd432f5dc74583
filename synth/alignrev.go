package synth

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rfmkit/rfm/internal/linalg"
)

// AlignmentReversing names the alignment reversing dataset of the centred-NFA
// paper (Appendix F). It is not one of Tasks: it is drawn with
// AlignmentReversingData, has a balance and no EGOP.
const AlignmentReversing Task = "alignment-reversing"

// ReversingOptions configure the alignment reversing dataset.
type ReversingOptions struct {
	N, D    int     // rows and inputs (the paper: 1 024 each)
	Balance float64 // γ ∈ (0, 1]: the fraction of rows in the first subset
	Eps1    float64 // the first subset's covariance 11ᵀ + Eps1·I (the paper: 0.5)
	Eps2    float64 // the std of the noise added to every entry at the end (the paper: 0.01)
	// Scale multiplies the rows of X₁ and of the sample X̃₂ (so X₂, built
	// from (X₁ᵀX₁)⁻¹, shrinks by it): X₁ ~ N(0, Scale²·Σ). The paper leaves
	// it implicit; 0 means 1, its literal reading. It decides how far
	// X₂ᵀX₂ dominates XᵀX and so whether the construction reverses the
	// alignment (docs/science.md).
	Scale float64
	Seed  uint64
}

// DefaultReversing returns the paper's setting for a balance: n = d = 1 024,
// ε₁ = 0.5, ε₂ = 0.01, seed 1.
func DefaultReversing(balance float64) ReversingOptions {
	return ReversingOptions{N: 1024, D: 1024, Balance: balance, Eps1: 0.5, Eps2: 0.01, Seed: 1}
}

// ReversingLabelShift is added to every label (step 5 of the construction),
// so that no label is exactly 0.
const ReversingLabelShift = 1e-5

// Reversing is a drawn alignment reversing dataset: rows 0 … N1−1 are the
// first subset X₁ (label 1), the rest the second, X₂ (label 0), both
// shifted by ReversingLabelShift.
type Reversing struct {
	Data
	N1 int // rows of X₁: round(γ·N)
	// Paired is how many directions of X₁ᵀX₁ X₂ was built on (the
	// smaller of the two subsets' sizes and d): X₂ᵀX₂ equals (X₁ᵀX₁)⁻²
	// on those directions before the noise.
	Paired int
}

// Validate reports what is wrong with o.
func (o ReversingOptions) Validate() error {
	switch {
	case o.N < 2 || o.D < 1:
		return fmt.Errorf("synth: alignment-reversing needs n ≥ 2 rows and d ≥ 1 inputs (got n = %d, d = %d)", o.N, o.D)
	case int64(o.N)*int64(o.D) > 1<<28:
		return fmt.Errorf("synth: alignment-reversing n = %d × d = %d is too large (at most 2^28 entries)", o.N, o.D)
	case !(o.Balance > 0 && o.Balance <= 1):
		return fmt.Errorf("synth: alignment-reversing balance γ = %v: must be in (0, 1]", o.Balance)
	case int(math.Round(o.Balance*float64(o.N))) < 1:
		return fmt.Errorf("synth: alignment-reversing balance γ = %v leaves no row of the first subset in n = %d rows (need γ·n ≥ 0.5)", o.Balance, o.N)
	case !(o.Eps1 > 0) || math.IsInf(o.Eps1, 0):
		return fmt.Errorf("synth: alignment-reversing ε₁ = %v: must be positive and finite", o.Eps1)
	case !(o.Eps2 >= 0) || math.IsInf(o.Eps2, 0):
		return fmt.Errorf("synth: alignment-reversing ε₂ = %v: must be ≥ 0 and finite", o.Eps2)
	case !(o.Scale >= 0) || math.IsInf(o.Scale, 0):
		return fmt.Errorf("synth: alignment-reversing scale %v: must be positive and finite (0 for 1)", o.Scale)
	}
	return nil
}

func (o ReversingOptions) scale() float64 {
	if o.Scale == 0 {
		return 1
	}
	return o.Scale
}

// AlignmentReversingData draws the dataset of the paper's Appendix F:
//
//  1. X₁, round(γn) rows, from N(0, 11ᵀ + ε₁I), label 1;
//  2. the eigenvalues S₁ and eigenvectors U₁ of X₁ᵀX₁ (its SVD), and the
//     left singular vectors V₂ of a fresh sample X̃₂ of the same law with
//     the remaining n − round(γn) rows;
//  3. X₂ = V₂ S₁⁻¹ U₁ᵀ, label 0, so that X₂ᵀX₂ = U₁S₁⁻²U₁ᵀ = (X₁ᵀX₁)⁻²;
//  4. X ← X + ε₂Z, Z standard normal;
//  5. y ← y + 10⁻⁵.
//
// X₂ has fewer rows than d and X₁ᵀX₁ is singular when γn < d, so step 3
// pairs the m = min(|X₁|, |X₂|, d) columns of V₂ with m eigen-directions of
// X₁ᵀX₁: its m smallest non-zero eigenvalues, the largest of (X₁ᵀX₁)⁻²
// (the best rank-m approximation of its pseudo-inverse square). When
// |X₂| ≥ |X₁| (γ ≤ ½) and |X₁| ≤ d, that is the whole pseudo-inverse.
func AlignmentReversingData(ctx context.Context, o ReversingOptions) (*Reversing, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n, d := o.N, o.D
	n1 := int(math.Round(o.Balance * float64(n)))
	n2 := n - n1
	r := rand.New(rand.NewPCG(o.Seed, 0xa11a))
	// x ~ N(0, 11ᵀ + ε₁I) is g·1 + √ε₁·z with g, z standard normal.
	sample := func(rows int) []float64 {
		x := make([]float64, rows*d)
		s := math.Sqrt(o.Eps1)
		sc := o.scale()
		for i := 0; i < rows; i++ {
			g := r.NormFloat64()
			for j := 0; j < d; j++ {
				x[i*d+j] = sc * (g + s*r.NormFloat64())
			}
		}
		return x
	}
	x1 := sample(n1)
	x2t := sample(n2)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Reversing{Data: Data{X: make([]float64, n*d), Y: make([]float64, n), N: n, D: d}, N1: n1}
	copy(out.X, x1)
	m := min(n1, n2, d)
	out.Paired = m
	if m > 0 {
		// X₁ᵀX₁ = U₁S₁U₁ᵀ (eigenvalues ascending).
		s1, u1, err := eigGram(ctx, x1, n1, d, true, "the eigendecomposition of X₁ᵀX₁")
		if err != nil {
			return nil, err
		}
		// Left singular vectors of X̃₂: eigenvectors of X̃₂X̃₂ᵀ (n₂×n₂).
		_, v2, err := eigGram(ctx, x2t, n2, d, false, "the SVD of the second sample")
		if err != nil {
			return nil, err
		}
		// The non-zero eigenvalues of X₁ᵀX₁ are its top min(n₁, d); take
		// the m smallest of them. The top eigenvectors of X̃₂X̃₂ᵀ are
		// those with non-zero singular values.
		first := d - min(n1, d)
		top := s1[d-1]
		if !(s1[first] > top*1e-10) {
			return nil, fmt.Errorf("synth: alignment-reversing: X₁ᵀX₁ is numerically singular on the paired directions (eigenvalue %g of %g)", s1[first], top)
		}
		// X₂ = V₂ S⁻¹ Uᵀ: column c of V₂ (c from the top) scales row
		// first+c of Uᵀ.
		x2 := out.X[n1*d:]
		for c := 0; c < m; c++ {
			k := first + c
			vc := n2 - 1 - c
			inv := 1 / s1[k]
			for i := 0; i < n2; i++ {
				vi := v2[i*n2+vc] * inv
				if vi == 0 {
					continue
				}
				row := x2[i*d : (i+1)*d]
				for j := 0; j < d; j++ {
					row[j] += vi * u1[j*d+k]
				}
			}
		}
	}
	if o.Eps2 > 0 {
		for i := range out.X {
			out.X[i] += o.Eps2 * r.NormFloat64()
		}
	}
	for i := range out.Y {
		if i < n1 {
			out.Y[i] = 1
		}
		out.Y[i] += ReversingLabelShift
	}
	return out, nil
}

// eigGram is the eigendecomposition (eigenvalues ascending) of a Gram
// matrix of the r×c row-major x: XᵀX (c×c) when cols, else XXᵀ (r×r). what
// names it in the error when it does not converge; a cancelled ctx is an
// error too.
func eigGram(ctx context.Context, x []float64, r, c int, cols bool, what string) (vals, vecs []float64, err error) {
	k, inner := r, c
	if cols {
		k, inner = c, r
	}
	g := make([]float64, k*k)
	linalg.Gemm(cols, !cols, k, k, inner, 1, x, c, x, c, 0, g, k)
	vals, vecs, ok := linalg.EigSym(k, g)
	if !ok {
		return nil, nil, fmt.Errorf("synth: alignment-reversing: %s did not converge", what)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return vals, vecs, nil
}

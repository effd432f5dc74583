package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rfmkit/rfm/nn"
)

// JVPFunc applies, for each of rows points at once, a d×d Jacobian to a
// tangent: row r of the result is J_r·v_r. It must not keep v.
type JVPFunc func(v []float64, rows int) []float64

// PowerOptions tunes SpectralRadii.
type PowerOptions struct {
	Iterations int    // products with J (default 200)
	Seed       uint64 // the random start vectors
}

// SpectralRadii estimates the spectral radius ρ(J_r) (the largest
// eigenvalue modulus) of rows Jacobians at once, each given only through
// Jacobian-vector products: from a random unit vector v₀ it forms
// v_{k+1} = J v_k / ‖J v_k‖ and returns the geometric mean of the growth
// factors ‖J v_k‖ over the second half of the iterations, that is
// (‖J^b v‖/‖J^a v‖)^(1/(b−a)) with a = k/2, b = k. The Jacobians are
// not symmetric: the top eigenvalue may be negative or one of a complex
// pair, where the one-step ratio ‖J v‖/‖v‖ oscillates and never settles;
// the growth over many steps still tends to ρ, with an error of order
// log(κ)/(b − a) where κ bounds how unevenly J^k grows across the
// dominant eigenvectors, and a linear rate (|λ₂|/ρ)^a from the other
// directions. The first half is discarded so the start's other
// components have decayed. A Jacobian that maps a vector to zero has
// radius 0 (a nilpotent or zero map).
func SpectralRadii(ctx context.Context, jvp JVPFunc, rows, d int, o PowerOptions) ([]float64, error) {
	iters := o.Iterations
	if iters == 0 {
		iters = 200
	}
	if iters < 2 || rows < 1 || d < 1 {
		return nil, fmt.Errorf("memory: power iteration needs ≥ 2 iterations, rows and a dimension (got %d, %d, %d)", iters, rows, d)
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	v := make([]float64, rows*d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	logSum := make([]float64, rows)
	zero := make([]bool, rows)
	normalize(v, rows, d, nil)
	for k := 0; k < iters; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := jvp(v, rows)
		norms := make([]float64, rows)
		normalize(w, rows, d, norms)
		for i, nr := range norms {
			if nr == 0 {
				zero[i] = true
			} else if k >= iters/2 {
				logSum[i] += math.Log(nr)
			}
		}
		v = w
	}
	out := make([]float64, rows)
	for i := range out {
		if zero[i] {
			continue
		}
		out[i] = math.Exp(logSum[i] / float64(iters-iters/2))
		if math.IsNaN(out[i]) {
			return nil, fmt.Errorf("memory: power iteration on point %d gave NaN (the map overflows there)", i+1)
		}
	}
	return out, nil
}

// normalize scales each row of v to unit length and stores the norms it
// divided by (a zero row stays zero).
func normalize(v []float64, rows, d int, norms []float64) {
	for i := 0; i < rows; i++ {
		row := v[i*d : (i+1)*d]
		s := 0.0
		for _, x := range row {
			s += x * x
		}
		s = math.Sqrt(s)
		if norms != nil {
			norms[i] = s
		}
		if s > 0 {
			for j := range row {
				row[j] /= s
			}
		}
	}
}

// IterateJVP returns the JVPFunc of f^p (p ≥ 1 applications of the
// network) at the rows of x: the tangents are pushed through p
// applications along the trajectory x, f(x), …, f^{p−1}(x) (the chain
// rule, J_{f^p}(x) = J_f(f^{p−1}x)···J_f(x)). x is rows × net.In().
func IterateJVP(net *nn.Network, x []float64, p int) JVPFunc {
	return func(v []float64, rows int) []float64 {
		h := x
		for k := 0; k < p; k++ {
			h, v = net.JVP(h, v, rows)
		}
		return v
	}
}

// DenseJacobian forms the d×d Jacobian of f^p at one point x (row-major,
// J[i][j] = ∂(f^p)_i/∂x_j) from d Jacobian-vector products: for small d
// only, as a check of the power iteration.
func DenseJacobian(net *nn.Network, x []float64, p int) []float64 {
	d := net.In()
	xs := make([]float64, d*d)
	id := make([]float64, d*d)
	for j := 0; j < d; j++ {
		copy(xs[j*d:(j+1)*d], x)
		id[j*d+j] = 1
	}
	cols := IterateJVP(net, xs, p)(id, d) // row j: J e_j, column j of J
	jac := make([]float64, d*d)
	for j := 0; j < d; j++ {
		for i := 0; i < d; i++ {
			jac[i*d+j] = cols[j*d+i]
		}
	}
	return jac
}

// MaxDense is the largest dimension DenseRadius is used for.
const MaxDense = 50

// DenseRadius is the exact spectral radius of a d×d row-major matrix,
// the largest modulus of its (possibly complex) eigenvalues, by gonum's
// nonsymmetric eigendecomposition.
func DenseRadius(a []float64, d int) (float64, error) {
	if len(a) != d*d || d < 1 {
		return 0, fmt.Errorf("memory: %d entries for a %d×%d matrix", len(a), d, d)
	}
	var eig mat.Eigen
	if !eig.Factorize(mat.NewDense(d, d, append([]float64(nil), a...)), mat.EigenNone) {
		return 0, errors.New("memory: the eigendecomposition did not converge")
	}
	rho := 0.0
	for _, l := range eig.Values(nil) {
		rho = max(rho, cmplx.Abs(l))
	}
	return rho, nil
}

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

// RitzRadii estimates the same spectral radii as SpectralRadii by m
// steps of the Arnoldi process on each Jacobian (modified Gram–Schmidt,
// orthogonalized twice): the largest modulus of the eigenvalues of the
// m×m Hessenberg matrix (the Ritz values), which converge to the
// extreme eigenvalues, complex pairs included, in far fewer products than
// the power iteration needs when the Jacobian is strongly non-normal. A
// Krylov space that closes early (an invariant subspace) gives the exact
// value. m ≥ d gives the exact spectrum.
func RitzRadii(ctx context.Context, jvp JVPFunc, rows, d, m int, seed uint64) ([]float64, error) {
	m = min(m, d)
	if m < 1 || rows < 1 {
		return nil, fmt.Errorf("memory: Arnoldi needs ≥ 1 step and rows (got %d, %d)", m, rows)
	}
	r := rand.New(rand.NewPCG(seed, 0xa7))
	// q[k]: the k-th basis vectors of every row, rows × d.
	q := make([][]float64, 0, m+1)
	v0 := make([]float64, rows*d)
	for i := range v0 {
		v0[i] = r.NormFloat64()
	}
	normalize(v0, rows, d, nil)
	q = append(q, v0)
	h := make([][]float64, rows) // per row, (m+1)×m row-major
	for i := range h {
		h[i] = make([]float64, (m+1)*m)
	}
	size := make([]int, rows) // Krylov dimension reached per row
	done := make([]bool, rows)
	for k := 0; k < m; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := jvp(q[k], rows)
		for i := 0; i < rows; i++ {
			if done[i] {
				continue
			}
			wi := w[i*d : (i+1)*d]
			before := math.Sqrt(dot(wi, wi))
			for pass := 0; pass < 2; pass++ {
				for j := 0; j <= k; j++ {
					qj := q[j][i*d : (i+1)*d]
					c := dot(wi, qj)
					h[i][j*m+k] += c
					for t := range wi {
						wi[t] -= c * qj[t]
					}
				}
			}
			size[i] = k + 1
			nrm := math.Sqrt(dot(wi, wi))
			h[i][(k+1)*m+k] = nrm
			if nrm <= 1e-10*before || math.IsNaN(nrm) {
				done[i] = true
				clear(wi)
				continue
			}
			for t := range wi {
				wi[t] /= nrm
			}
		}
		q = append(q, w)
	}
	out := make([]float64, rows)
	for i := 0; i < rows; i++ {
		s := size[i]
		hs := make([]float64, s*s)
		for a := 0; a < s; a++ {
			copy(hs[a*s:(a+1)*s], h[i][a*m:a*m+s])
		}
		rho, err := DenseRadius(hs, s)
		if err != nil {
			return nil, fmt.Errorf("memory: Arnoldi on point %d: %w", i+1, err)
		}
		out[i] = rho
	}
	return out, nil
}

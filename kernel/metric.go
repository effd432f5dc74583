package kernel

import (
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// MetricKind tells how the feature matrix M is stored.
type MetricKind string

// The metric storage kinds.
const (
	Identity MetricKind = "identity" // M = I
	Diagonal MetricKind = "diagonal" // M = diag(m), stored as a vector
	Full     MetricKind = "full"     // M dense d×d, symmetric PSD
)

// Metric is the feature map x ↦ (x − Shift)·S with S = M^{1/2}. The shift
// does not change a radial kernel; it centres the data so that the GEMM
// expansion of distances cancels less (it matters most in float32).
type Metric struct {
	Kind  MetricKind
	D     int
	M     []float64 // d (Diagonal) or d×d (Full); nil for Identity
	Shift []float64 // length d or nil
	s     []float64 // d (Diagonal) or d×d (Full) square root
}

// NewMetric validates M and precomputes its square root. For Full, M is
// symmetrized and its negative eigenvalues (round-off of a PSD matrix) are
// clamped to 0.
func NewMetric(kind MetricKind, d int, m []float64) (*Metric, error) {
	mt := &Metric{Kind: kind, D: d}
	switch kind {
	case Identity:
		return mt, nil
	case Diagonal:
		if len(m) != d {
			return nil, fmt.Errorf("diagonal metric: %d entries for %d features", len(m), d)
		}
		mt.M = append([]float64(nil), m...)
		mt.s = make([]float64, d)
		for i, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("diagonal metric: entry %d is %v", i, v)
			}
			mt.s[i] = math.Sqrt(math.Max(v, 0))
		}
		return mt, nil
	case Full:
		if len(m) != d*d {
			return nil, fmt.Errorf("full metric: %d entries for a %d×%d matrix", len(m), d, d)
		}
		for i, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("full metric: entry (%d,%d) is %v", i/d, i%d, v)
			}
		}
		mt.M = append([]float64(nil), m...)
		s, err := SqrtPSD(d, m)
		if err != nil {
			return nil, err
		}
		mt.s = s
		return mt, nil
	}
	return nil, fmt.Errorf("unknown metric kind %q", kind)
}

// SqrtPSD returns the symmetric square root of the symmetric part of a d×d
// matrix, with negative eigenvalues clamped to 0.
func SqrtPSD(d int, m []float64) ([]float64, error) {
	return PowerPSD(d, m, 0.5)
}

// PowerPSD returns M^p (p > 0) for the symmetric part of a d×d matrix
// through its eigendecomposition V·diag(λ)·Vᵀ, negative eigenvalues (the
// round-off of a PSD matrix) clamped to 0: W·Wᵀ with W = V·diag(λ^(p/2)),
// one GEMM.
func PowerPSD(d int, m []float64, p float64) ([]float64, error) {
	vals, vecs, err := EigSym(d, m)
	if err != nil {
		return nil, err
	}
	for k, l := range vals {
		f := math.Pow(math.Max(l, 0), p/2)
		for i := 0; i < d; i++ {
			vecs[i*d+k] *= f
		}
	}
	out := make([]float64, d*d)
	linalg.Gemm(false, true, d, d, d, 1, vecs, d, vecs, d, 0, out, d)
	for i := 0; i < d; i++ { // exact symmetry despite round-off
		for j := 0; j < i; j++ {
			v := 0.5 * (out[i*d+j] + out[j*d+i])
			out[i*d+j], out[j*d+i] = v, v
		}
	}
	return out, nil
}

// EigSym returns the eigenvalues (ascending) and eigenvectors (columns of a
// row-major d×d matrix) of the symmetric part of m.
func EigSym(d int, m []float64) ([]float64, []float64, error) {
	sym := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := m[i*d+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("eigendecomposition of the %d×%d feature matrix: entry (%d,%d) is %v", d, d, i, j, v)
			}
			sym[i*d+j] = 0.5 * (v + m[j*d+i])
		}
	}
	vals, vecs, ok := linalg.EigSym(d, sym)
	if !ok {
		return nil, nil, fmt.Errorf("eigendecomposition of the %d×%d feature matrix did not converge", d, d)
	}
	return vals, vecs, nil
}

// Sqrt returns S = M^{1/2} (nil for Identity; a vector for Diagonal).
func (m *Metric) Sqrt() []float64 { return m.s }

// Map returns Z = (X − Shift)·S for n rows of X (row-major n×D).
func (m *Metric) Map(x []float64, n int) []float64 {
	d := m.D
	z := make([]float64, n*d)
	copy(z, x[:n*d])
	if m.Shift != nil {
		for i := 0; i < n; i++ {
			row := z[i*d : i*d+d]
			for j := range row {
				row[j] -= m.Shift[j]
			}
		}
	}
	switch m.Kind {
	case Diagonal:
		for i := 0; i < n; i++ {
			row := z[i*d : i*d+d]
			for j := range row {
				row[j] *= m.s[j]
			}
		}
	case Full:
		out := make([]float64, n*d)
		gemm64(false, false, n, d, d, z, d, m.s, d, out, d)
		z = out
	}
	return z
}

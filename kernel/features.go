package kernel

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Form is how a feature matrix M is stored.
type Form string

// The storage forms of M.
const (
	Identity Form = "identity" // M = I, no values
	Diagonal Form = "diagonal" // M = diag(m), D values
	Full     Form = "full"     // M dense D×D, symmetric PSD
)

// FeatureMatrix is the matrix M of a Mahalanobis kernel K_M: what an RFM
// learns. The zero value (with D set) is the identity.
type FeatureMatrix struct {
	Form   Form
	D      int
	Values []float64 // nil (Identity), D (Diagonal) or D×D row-major (Full)
}

// IdentityMatrix is M = I on d features.
func IdentityMatrix(d int) FeatureMatrix { return FeatureMatrix{Form: Identity, D: d} }

// DiagonalMatrix is M = diag(v).
func DiagonalMatrix(v []float64) FeatureMatrix {
	return FeatureMatrix{Form: Diagonal, D: len(v), Values: v}
}

// FullMatrix is a dense d×d M (row-major).
func FullMatrix(d int, v []float64) FeatureMatrix {
	return FeatureMatrix{Form: Full, D: d, Values: v}
}

// Len is the number of values the form stores for D features.
func (m FeatureMatrix) Len() int { return m.Form.values(m.D) }

func (f Form) values(d int) int {
	switch f {
	case Diagonal:
		return d
	case Full:
		return d * d
	}
	return 0
}

// IsIdentity reports M = I (the identity form, or a zero-value matrix).
func (m FeatureMatrix) IsIdentity() bool { return m.Form == Identity || m.Form == "" }

// Validate checks the form, the number of values and that they are finite.
func (m FeatureMatrix) Validate() error {
	switch m.Form {
	case Identity, "", Diagonal, Full:
	default:
		return fmt.Errorf("feature matrix: unknown form %q (known: identity, diagonal, full)", m.Form)
	}
	if m.D < 1 {
		return fmt.Errorf("feature matrix: %d features", m.D)
	}
	if want := m.Len(); len(m.Values) != want {
		return fmt.Errorf("%s feature matrix on %d features has %d values, want %d", m.Form, m.D, len(m.Values), want)
	}
	for i, v := range m.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if m.Form == Full {
				return fmt.Errorf("full feature matrix: entry (%d,%d) is %v", i/m.D, i%m.D, v)
			}
			return fmt.Errorf("diagonal feature matrix: entry %d is %v", i, v)
		}
	}
	return nil
}

// Dense returns M as a D×D matrix (identity and diagonal forms expanded).
func (m FeatureMatrix) Dense() []float64 {
	d := m.D
	out := make([]float64, d*d)
	switch m.Form {
	case Full:
		copy(out, m.Values)
	case Diagonal:
		for i, v := range m.Values {
			out[i*d+i] = v
		}
	default:
		for i := 0; i < d; i++ {
			out[i*d+i] = 1
		}
	}
	return out
}

// Diag returns the diagonal of M.
func (m FeatureMatrix) Diag() []float64 {
	out := make([]float64, m.D)
	for i := range out {
		switch m.Form {
		case Full:
			out[i] = m.Values[i*m.D+i]
		case Diagonal:
			out[i] = m.Values[i]
		default:
			out[i] = 1
		}
	}
	return out
}

// MarshalJSON writes the form alone: the values are stored beside the JSON
// (as an array of the model file), and D is the model's.
func (m FeatureMatrix) MarshalJSON() ([]byte, error) {
	f := m.Form
	if f == "" {
		f = Identity
	}
	return json.Marshal(string(f))
}

// UnmarshalJSON reads the form written by MarshalJSON.
func (m *FeatureMatrix) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("feature matrix form: %w", err)
	}
	m.Form = Form(s)
	return nil
}

// FeatureMap is the map x ↦ (x − Shift)·S with S = M^{1/2}: the one way
// inputs become the mapped points every kernel block is computed on. The
// shift does not change a radial kernel; it centres the data so that the
// GEMM expansion of distances cancels less (it matters most in float32).
// Build it with NewFeatureMap.
type FeatureMap struct {
	FeatureMatrix
	Shift []float64 // length D or nil
	root  []float64 // S: D (Diagonal) or D×D (Full); nil for Identity
}

// NewFeatureMap validates M and precomputes its square root. For Full, M is
// symmetrized and its negative eigenvalues (round-off of a PSD matrix) are
// clamped to 0.
func NewFeatureMap(m FeatureMatrix, shift []float64) (*FeatureMap, error) {
	if m.Form == "" {
		m.Form = Identity
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if shift != nil && len(shift) != m.D {
		return nil, fmt.Errorf("feature map: shift has %d entries for %d features", len(shift), m.D)
	}
	fm := &FeatureMap{FeatureMatrix: m, Shift: shift}
	switch m.Form {
	case Diagonal:
		fm.root = make([]float64, m.D)
		for i, v := range m.Values {
			fm.root[i] = math.Sqrt(math.Max(v, 0))
		}
	case Full:
		s, err := SqrtPSD(m.D, m.Values)
		if err != nil {
			return nil, err
		}
		fm.root = s
	}
	return fm, nil
}

// Root returns S = M^{1/2} (nil for Identity; a vector for Diagonal).
func (fm *FeatureMap) Root() []float64 { return fm.root }

// Map returns the mapped points (X − Shift)·S of n rows of x (n×D).
func (fm *FeatureMap) Map(x []float64, n int) Points[float64] {
	d := fm.D
	z := make([]float64, n*d)
	copy(z, x[:n*d])
	if fm.Shift != nil {
		for i := 0; i < n; i++ {
			row := z[i*d : i*d+d]
			for j := range row {
				row[j] -= fm.Shift[j]
			}
		}
	}
	return NewPoints(fm.timesRoot(z, n), n, d)
}

// ToInput maps gradients g (rows of D values, with respect to mapped
// coordinates) back to input coordinates: ∇ₓ = S·g, the row g·S since S is
// symmetric. It may work in place and returns the result.
func (fm *FeatureMap) ToInput(g []float64, rows int) []float64 {
	return fm.timesRoot(g, rows)
}

// timesRoot returns the rows of v (rows×D) times S: in place for a
// diagonal S, in a new slice for a full one, v itself for the identity.
func (fm *FeatureMap) timesRoot(v []float64, rows int) []float64 {
	d := fm.D
	switch fm.Form {
	case Diagonal:
		for i := 0; i < rows; i++ {
			row := v[i*d : i*d+d]
			for t := range row {
				row[t] *= fm.root[t]
			}
		}
	case Full:
		out := make([]float64, rows*d)
		linalg.Gemm(false, false, rows, d, d, 1, v, d, fm.root, d, 0, out, d)
		return out
	}
	return v
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

// Oriented flips v in place so that its largest-magnitude entry is
// positive (the first of equal magnitude), and returns it: the sign
// convention of eigenvectors here, so that the same data give the same
// vectors on every backend and in every figure.
func Oriented(v []float64) []float64 {
	best := 0
	for j, x := range v {
		if math.Abs(x) > math.Abs(v[best]) {
			best = j
		}
	}
	if len(v) > 0 && v[best] < 0 {
		for j := range v {
			v[j] = -v[j]
		}
	}
	return v
}

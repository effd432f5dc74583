package complete

import (
	"fmt"
	"math"
	"strings"
)

// Prior is a feature prior: one embedding (a row of E, p numbers) per
// column of the matrix to complete. Theorem 5 wants unit-norm columns of
// Z = Eᵀ; Normalize makes them so.
type Prior struct {
	N, P int
	E    []float64 // n×p, row-major
}

// PriorNames lists the built-in priors.
func PriorNames() []string { return []string{"onehot", "metadata", "observed"} }

// OneHot is the identity prior Z = I: every column its own direction. The
// column kernel is κ(1) on the diagonal and κ(0) elsewhere, and the
// prediction of an unobserved cell is a constant multiple of its row's
// observed mean (OneHotConstant).
func OneHot(n int) *Prior {
	p := &Prior{N: n, P: n, E: make([]float64, n*n)}
	for j := 0; j < n; j++ {
		p.E[j*n+j] = 1
	}
	return p
}

// FromFeatures is the prior of a feature table x (n×p, one row per column of
// the matrix), for example column metadata encoded by the dataset pipeline.
// It copies x.
func FromFeatures(n, p int, x []float64) (*Prior, error) {
	if n < 1 || p < 1 || len(x) != n*p {
		return nil, fmt.Errorf("prior features: %d values for %d columns × %d features", len(x), n, p)
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("prior features: column %d, feature %d is %v", k/p+1, k%p+1, v)
		}
	}
	return &Prior{N: n, P: p, E: append([]float64(nil), x...)}, nil
}

// ObservedPrior embeds each column by its own observed entries: column j's
// embedding is Y[:, j] with each row's observed mean subtracted and missing
// cells set to 0 (the row mean). A column without any observed entry has no
// embedding: it is an error naming the column (use metadata for such
// columns). Build it from the training entries only (after a holdout).
func ObservedPrior(y *Matrix) (*Prior, error) {
	m, n := y.Rows, y.Cols
	p := &Prior{N: n, P: m, E: make([]float64, n*m)}
	means, _ := rowMeans(y)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				p.E[j*m+i] = y.Values[i*n+j] - means[i]
			}
		}
	}
	for j := 0; j < n; j++ {
		seen := false
		for i := 0; i < m; i++ {
			if y.Observed[i*n+j] {
				seen = true
				break
			}
		}
		if !seen {
			return nil, fmt.Errorf("prior observed: %s has no observed entry to embed it (give it metadata: --prior metadata,observed, or --meta)", y.ColName(j))
		}
	}
	return p, nil
}

// Normalize scales every embedding to unit norm. An embedding of norm 0
// is an error naming the column (name may be nil).
func (p *Prior) Normalize(name func(j int) string) error {
	for j := 0; j < p.N; j++ {
		row := p.E[j*p.P : (j+1)*p.P]
		var s float64
		for _, v := range row {
			s += v * v
		}
		if !(s > 0) || math.IsInf(s, 0) {
			who := fmt.Sprintf("column %d", j+1)
			if name != nil {
				who = name(j)
			}
			if s == 0 {
				return fmt.Errorf("the prior embeds %s as the zero vector, which has no direction (Theorem 5 needs unit-norm columns): give it metadata that differ from the others' mean, or add --prior-identity", who)
			}
			return fmt.Errorf("the prior's embedding of %s has norm² %v", who, s)
		}
		inv := 1 / math.Sqrt(s)
		for k := range row {
			row[k] *= inv
		}
	}
	return nil
}

// Concat joins priors side by side, each first normalized to unit norm and
// scaled by its weight (nil weights: all 1); the result is normalized.
func Concat(name func(j int) string, weights []float64, parts ...*Prior) (*Prior, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no prior to concatenate")
	}
	n, p := parts[0].N, 0
	for _, q := range parts {
		if q.N != n {
			return nil, fmt.Errorf("priors embed %d and %d columns", n, q.N)
		}
		p += q.P
	}
	out := &Prior{N: n, P: p, E: make([]float64, n*p)}
	off := 0
	for k, q := range parts {
		c := &Prior{N: q.N, P: q.P, E: append([]float64(nil), q.E...)}
		if err := c.Normalize(name); err != nil {
			return nil, err
		}
		w := 1.0
		if weights != nil {
			w = weights[k]
		}
		for j := 0; j < n; j++ {
			for t := 0; t < q.P; t++ {
				out.E[j*p+off+t] = w * c.E[j*q.P+t]
			}
		}
		off += q.P
	}
	return out, out.Normalize(name)
}

// ParsePriors splits a comma-separated list of prior names and checks them.
func ParsePriors(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		ok := false
		for _, n := range PriorNames() {
			ok = ok || f == n
		}
		if !ok {
			return nil, fmt.Errorf("unknown prior %q: want one or more (comma-separated) of %s", f, strings.Join(PriorNames(), ", "))
		}
		for _, o := range out {
			if o == f {
				return nil, fmt.Errorf("prior %q given twice", f)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// WithBias returns the prior with a constant coordinate c appended to every
// embedding (before any normalization). The networks of Theorem 5 have no
// biases and the unit-norm columns keep only directions; a constant input
// coordinate plays the part of a bias and keeps the embeddings' relative
// norms in their angles (a larger c makes the kernel closer to linear in
// the raw embeddings).
func (p *Prior) WithBias(c float64) *Prior {
	q := &Prior{N: p.N, P: p.P + 1, E: make([]float64, p.N*(p.P+1))}
	for j := 0; j < p.N; j++ {
		copy(q.E[j*q.P:], p.E[j*p.P:(j+1)*p.P])
		q.E[j*q.P+p.P] = c
	}
	return q
}

package nn

import (
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// LayerFeatures are the feature matrices of one layer (each In × In of the
// layer, row-major), measured on a set of inputs (SPEC §7):
//
//   - NFM = WᵀW, the neural feature matrix;
//   - AGOP = WᵀKW, the gradient outer product of the network's outputs
//     with respect to the layer's input (averaged over inputs, summed over
//     outputs), where K is the outer product of the outputs' gradients with
//     respect to the layer's pre-activations, averaged over inputs and
//     summed over outputs (for the output layer K = I, so its NFA is 1 by
//     construction);
//   - CNFM = W̄ᵀW̄ and CAGOP = W̄ᵀKW̄ with W̄ = W − W⁰, the change since
//     initialization (the centred NFA), when the initial network is given.
type LayerFeatures struct {
	Layer                  int // 0 is the first layer
	In                     int
	NFM, AGOP, CNFM, CAGOP []float64
}

// measureChunk bounds the rows back-propagated at once.
const measureChunk = 2048

// Features measures every layer's feature matrices on n rows of x. init,
// when not nil, is the network at initialization (for the centred ones).
func Features(net, init *Network, x []float64, n int) ([]LayerFeatures, error) {
	d, k := net.In(), net.Out()
	if n < 1 || len(x) < n*d {
		return nil, fmt.Errorf("nn: %d values are not %d rows of %d inputs", len(x), n, d)
	}
	if init != nil && len(init.Layers) != len(net.Layers) {
		return nil, fmt.Errorf("nn: the initial network has %d layers, the network %d", len(init.Layers), len(net.Layers))
	}
	L := len(net.Layers)
	K := make([][]float64, L)
	for l, ly := range net.Layers {
		K[l] = make([]float64, ly.Out*ly.Out)
	}
	for r0 := 0; r0 < n; r0 += measureChunk {
		rows := min(measureChunk, n-r0)
		p := net.Forward(x[r0*d:(r0+rows)*d], rows)
		for o := 0; o < k; o++ {
			dOut := make([]float64, rows*k)
			for i := 0; i < rows; i++ {
				dOut[i*k+o] = 1
			}
			deltas := net.Deltas(p, dOut)
			for l, ly := range net.Layers {
				linalg.Gemm(true, false, ly.Out, ly.Out, rows, 1/float64(n), deltas[l], ly.Out, deltas[l], ly.Out, 1, K[l], ly.Out)
			}
		}
	}
	out := make([]LayerFeatures, L)
	for l, ly := range net.Layers {
		f := LayerFeatures{Layer: l, In: ly.In}
		f.NFM = gram(ly.W, ly.Out, ly.In)
		f.AGOP = sandwich(ly.W, K[l], ly.Out, ly.In)
		if init != nil {
			wbar := make([]float64, len(ly.W))
			for i, v := range ly.W {
				wbar[i] = v - init.Layers[l].W[i]
			}
			f.CNFM = gram(wbar, ly.Out, ly.In)
			f.CAGOP = sandwich(wbar, K[l], ly.Out, ly.In)
		}
		out[l] = f
	}
	return out, nil
}

// gram is WᵀW for W rows×cols.
func gram(w []float64, rows, cols int) []float64 {
	g := make([]float64, cols*cols)
	linalg.Gemm(true, false, cols, cols, rows, 1, w, cols, w, cols, 0, g, cols)
	return g
}

// sandwich is WᵀKW for W rows×cols and K rows×rows.
func sandwich(w, k []float64, rows, cols int) []float64 {
	kw := make([]float64, rows*cols)
	linalg.Gemm(false, false, rows, cols, rows, 1, k, rows, w, cols, 0, kw, cols)
	g := make([]float64, cols*cols)
	linalg.Gemm(true, false, cols, cols, rows, 1, w, cols, kw, cols, 0, g, cols)
	return g
}

// Cosine is ρ(A, B) = tr(AᵀB)/sqrt(tr(AᵀA)·tr(BᵀB)), the correlation of
// SPEC §7 (the cosine of the matrices as vectors); 0 if either is zero.
func Cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// Pearson is the Pearson correlation of the entries of a and b; 0 if
// either is constant.
func Pearson(a, b []float64) float64 {
	n := float64(len(a))
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma, mb = ma/n, mb/n
	var ab, aa, bb float64
	for i := range a {
		x, y := a[i]-ma, b[i]-mb
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// Diagonal is the diagonal of a d×d matrix.
func Diagonal(a []float64, d int) []float64 {
	out := make([]float64, d)
	for i := range out {
		out[i] = a[i*d+i]
	}
	return out
}

// TopEigenvector is the unit eigenvector of the largest eigenvalue of the
// symmetric d×d matrix a, and that eigenvalue.
func TopEigenvector(a []float64, d int) ([]float64, float64, error) {
	vals, vecs, ok := linalg.EigSym(d, a)
	if !ok {
		return nil, 0, fmt.Errorf("nn: eigendecomposition of a %d×%d matrix did not converge", d, d)
	}
	v := make([]float64, d)
	for i := range v {
		v[i] = vecs[i*d+d-1]
	}
	return v, vals[d-1], nil
}

// Comparison is how alike two d×d feature matrices are.
type Comparison struct {
	Cosine  float64 `json:"cosine"`  // ρ of SPEC §7
	Pearson float64 `json:"pearson"` // of the entries
	TopEig  float64 `json:"top_eig"` // |⟨v₁(A), v₁(B)⟩| of the top eigenvectors
	Diag    float64 `json:"diag"`    // Pearson correlation of the diagonals
}

// Compare measures how alike the symmetric d×d matrices a and b are.
func Compare(a, b []float64, d int) (Comparison, error) {
	c := Comparison{Cosine: Cosine(a, b), Pearson: Pearson(a, b), Diag: Pearson(Diagonal(a, d), Diagonal(b, d))}
	ua, err := topEigenspace(a, d)
	if err != nil {
		return c, err
	}
	ub, err := topEigenspace(b, d)
	if err != nil {
		return c, err
	}
	// The largest singular value of UaᵀUb: the cosine of the smallest
	// principal angle (|⟨va, vb⟩| for single vectors).
	ka, kb := len(ua), len(ub)
	g := make([]float64, ka*kb)
	for i, u := range ua {
		for j, v := range ub {
			for t := range u {
				g[i*kb+j] += u[t] * v[t]
			}
		}
	}
	ggt := make([]float64, ka*ka)
	for i := 0; i < ka; i++ {
		for j := 0; j < ka; j++ {
			for t := 0; t < kb; t++ {
				ggt[i*ka+j] += g[i*kb+t] * g[j*kb+t]
			}
		}
	}
	vals, _, ok := linalg.EigSym(ka, ggt)
	if !ok {
		return c, fmt.Errorf("nn: eigendecomposition of a %d×%d matrix did not converge", ka, ka)
	}
	c.TopEig = math.Sqrt(max(0, min(1, vals[ka-1])))
	return c, nil
}

// topEigenspace returns unit eigenvectors of the symmetric d×d matrix a
// spanning the eigenspace of its largest eigenvalue (eigenvalues within
// 1e-6 of it, relative).
func topEigenspace(a []float64, d int) ([][]float64, error) {
	vals, vecs, ok := linalg.EigSym(d, a)
	if !ok {
		return nil, fmt.Errorf("nn: eigendecomposition of a %d×%d matrix did not converge", d, d)
	}
	top := vals[d-1]
	var out [][]float64
	for k := d - 1; k >= 0 && (k == d-1 || vals[k] >= top-1e-6*math.Abs(top)); k-- {
		v := make([]float64, d)
		for i := range v {
			v[i] = vecs[i*d+k]
		}
		out = append(out, v)
	}
	return out, nil
}

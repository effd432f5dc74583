package agop

import (
	"context"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
)

// Form is how the AGOP's sums are formed.
type Form int

const (
	// FormAuto picks the cheaper of the two forms (see gramBuffer).
	FormAuto Form = iota
	// FormDirect forms every gradient: cost ≈ 2·m·n·C·(d+1) for m
	// evaluation points, n centres, C outputs.
	FormDirect
	// FormGram expands the outer products through the n×n Gram matrix of
	// the gradient coefficients (radial kernels only): cost ≈ m·n² +
	// 2·m·n·(2C + d) + 2·n²·d, independent of C·d, the cheaper form when
	// C·d is large next to n (many classes, wide inputs).
	FormGram
)

// gramBytes is the largest n×n matrix the Gram form allocates itself when
// no scratch buffer is lent.
const gramBytes = 256 << 20

// gramBuffer returns the n×n buffer of the Gram form when that form is to
// be used, nil otherwise. The Gram form always runs in float64: it expands
// |u − s·z|² into terms that cancel, so it squares the round-off of the
// direct form (which float32 could not afford).
func gramBuffer(p *Predictor, m int, opt Options) []float64 {
	if opt.Form == FormDirect || !p.Kernel.Radial() || p.Kernel.Pairwise() {
		return nil
	}
	n, d, c := float64(p.Centers.N), float64(p.Centers.D), float64(p.C)
	mm := float64(m)
	direct := 2 * mm * n * c * (d + 1)
	gram := mm*n*n + 2*mm*n*(2*c+d) + n*n*(c+2*d)
	if opt.Form == FormAuto && !(gram < direct/1.5) {
		return nil
	}
	nn := p.Centers.N * p.Centers.N
	if len(opt.Scratch) >= nn {
		return opt.Scratch[:nn]
	}
	if opt.Form == FormAuto && 8*float64(nn) > gramBytes {
		return nil
	}
	return make([]float64, nn)
}

// gramSums returns what directSums does through the identity, for radial
// kernels (g_ik = u_ik − s_ik·z_i with u_ik = Σ_j A_ij α_jk z_j and
// s_ik = Σ_j A_ij α_jk):
//
//	Σ_i Σ_k g_ik g_ikᵀ = Zᵀ[(AᵀA)∘(ααᵀ)]Z − (Z_Eᵀ Q + Qᵀ Z_E) + Z_Eᵀ diag(Σ_k s_ik²) Z_E,
//
// where A is the m×n coefficient matrix, Z_E the evaluation rows and
// Q = (A∘(S·αᵀ))·Z. The coefficient matrix is made a block of evaluation
// rows at a time; h (n×n) accumulates AᵀA.
func gramSums(ctx context.Context, p *Predictor, eval []int, opt Options, h []float64) (acc, sum []float64, err error) {
	n, d, c := p.Centers.N, p.Centers.D, p.C
	z, alpha := p.Centers.Z, p.Alpha
	rows := max(1, min(len(eval), (32<<20)/(8*n)))
	if opt.BlockRows > 0 {
		rows = min(opt.BlockRows, len(eval))
	}
	a := make([]float64, rows*n)  // coefficients A of the block
	pw := make([]float64, rows*n) // S·αᵀ, then A∘(S·αᵀ)
	s := make([]float64, rows*c)
	q := make([]float64, rows*d) // Q, then V = diag(w/2)·Z_b − Q
	var pq kernel.Points[float64]
	var x []float64 // d×d, for the full AGOP only (a diagonal one with a wide d could not hold it)
	if opt.Diag {
		acc = make([]float64, d)
	} else {
		acc = make([]float64, d*d)
		x = make([]float64, d*d)
	}
	var colA, sz []float64 // Σ_i A_ij; Σ_i s_ik z_i (C×d): for centring
	if opt.Centered {
		colA, sz, sum = make([]float64, n), make([]float64, c*d), make([]float64, c*d)
	}
	for b0 := 0; b0 < len(eval); b0 += rows {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b1 := min(b0+rows, len(eval))
		m := b1 - b0
		pq = evalSource(p, opt).Gather(eval[b0:b1], pq)
		zq := pq.Z
		kernel.CrossCoef(p.Kernel, pq, p.Centers, a, n)
		linalg.Gemm(false, false, m, c, n, 1, a, n, alpha, c, 0, s, c)
		beta := 1.0
		if b0 == 0 {
			beta = 0
		}
		linalg.SyrkLowerTrans(n, m, 1, a, n, beta, h, n)
		linalg.Gemm(false, true, m, n, c, 1, s, c, alpha, c, 0, pw, n)
		for i, v := range a[:m*n] {
			pw[i] *= v
		}
		linalg.Gemm(false, false, m, d, n, 1, pw, n, z, d, 0, q, d)
		for i := 0; i < m; i++ {
			w := 0.0
			for _, v := range s[i*c : i*c+c] {
				w += float64(v) * float64(v)
			}
			zi, qi := zq[i*d:i*d+d], q[i*d:i*d+d]
			for t := range qi {
				qi[t] = 0.5*w*zi[t] - qi[t]
			}
		}
		// Z_bᵀV + VᵀZ_b = Z_bᵀ diag(w) Z_b − Z_bᵀQ − QᵀZ_b.
		if opt.Diag {
			for i := 0; i < m; i++ {
				for t, v := range q[i*d : i*d+d] {
					acc[t] += 2 * float64(zq[i*d+t]) * float64(v)
				}
			}
		} else {
			linalg.Gemm(true, false, d, d, m, 1, zq, d, q, d, 0, x, d)
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					acc[i*d+j] += float64(x[i*d+j]) + float64(x[j*d+i])
				}
			}
		}
		if opt.Centered {
			for i := 0; i < m; i++ {
				for j, v := range a[i*n : i*n+n] {
					colA[j] += float64(v)
				}
				zi := zq[i*d : i*d+d]
				for k := 0; k < c; k++ {
					sk := float64(s[i*c+k])
					dst := sz[k*d : k*d+d]
					for t, v := range zi {
						dst[t] += sk * float64(v)
					}
				}
			}
		}
	}
	// H ∘ ααᵀ on the lower triangle, mirrored to the upper one, a band of
	// rows at a time (ααᵀ for the band into pw).
	for r0 := 0; r0 < n; r0 += rows {
		r1 := min(r0+rows, n)
		linalg.Gemm(false, true, r1-r0, r1, c, 1, alpha[r0*c:], c, alpha, c, 0, pw, r1)
		for i := r0; i < r1; i++ {
			hi, ai := h[i*n:i*n+i+1], pw[(i-r0)*r1:(i-r0)*r1+i+1]
			for j := range hi {
				hi[j] *= ai[j]
				h[j*n+i] = hi[j]
			}
		}
	}
	// Zᵀ H' Z.
	y := make([]float64, n*d)
	linalg.Gemm(false, false, n, d, n, 1, h, n, z, d, 0, y, d)
	if opt.Diag {
		for j := 0; j < n; j++ {
			for t := 0; t < d; t++ {
				acc[t] += float64(z[j*d+t]) * float64(y[j*d+t])
			}
		}
	} else {
		linalg.Gemm(true, false, d, d, n, 1, z, d, y, d, 0, x, d)
		for i, v := range x {
			acc[i] += float64(v)
		}
	}
	if opt.Centered {
		// Σ_i g_ik = Σ_j (Σ_i A_ij) α_jk z_j − Σ_i s_ik z_i.
		for j := 0; j < n; j++ {
			zj := z[j*d : j*d+d]
			for k := 0; k < c; k++ {
				f := colA[j] * float64(alpha[j*c+k])
				dst := sum[k*d : k*d+d]
				for t, v := range zj {
					dst[t] += f * float64(v)
				}
			}
		}
		for i, v := range sz {
			sum[i] -= v
		}
	}
	return acc, sum, nil
}

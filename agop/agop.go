package agop

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
)

// Options select the AGOP variant.
type Options struct {
	Diag     bool // only the diagonal Σ ∇f_k(x)² (needs an identity or diagonal metric)
	Centered bool // subtract each output's mean gradient before the outer products
	// Form picks how the sums are formed (FormAuto: the cheaper one).
	Form Form
	// Scratch, if at least n×n long, may be overwritten: the Gram form
	// keeps its n×n float64 matrix there (the solver's float64 buffer, idle
	// between a solve and the next round's kernel, is meant). Without it
	// the Gram form allocates the matrix only up to 256 MB and is passed
	// over above that. The Gram form runs in float64 whatever Float32 says.
	Scratch []float64
	// BlockRows is the number of evaluation points per block; 0 = as many
	// as keep the block's gradient buffers (rows × C·(d+1) values) near 64 MB.
	BlockRows int
	// Float32 computes the kernel blocks and their GEMMs in float32 (the
	// outer products are still summed in float64): about twice as fast,
	// with relative errors near 1e-6 in the AGOP.
	Float32 bool
	// EvalPoints, when it holds points (N > 0), are the mapped points the
	// evaluation indices refer to, instead of the centres: a Nyström
	// predictor has m centres but its AGOP is taken at training rows.
	EvalPoints kernel.Points[float64]
}

// evalSource is the set of mapped points that Compute's indices select.
func evalSource(p *Predictor, opt Options) kernel.Points[float64] {
	if opt.EvalPoints.N > 0 {
		return opt.EvalPoints
	}
	return p.Centers
}

// Predictor is a fitted kernel machine f(x) = K(Map(x), Centers)·Alpha.
type Predictor struct {
	Kernel  kernel.Spec
	Map     *kernel.FeatureMap
	Centers kernel.Points[float64] // the mapped training rows (Map of X)
	Alpha   []float64              // Centers.N × C
	C       int
}

func (p *Predictor) check() error {
	z := p.Centers
	if z.N < 1 || z.D < 1 || p.C < 1 || len(z.Z) < z.N*z.D || len(p.Alpha) < z.N*p.C || len(z.Norms) < z.N {
		return fmt.Errorf("agop: inconsistent predictor (n=%d, d=%d, c=%d)", z.N, z.D, p.C)
	}
	if p.Map == nil || p.Map.D != z.D {
		return fmt.Errorf("agop: predictor has no feature map on its %d features", z.D)
	}
	if !p.Kernel.Radial() {
		// ntk / nngp are not translation invariant: a shifted feature map
		// would change the kernel, not just its round-off.
		for _, v := range p.Map.Shift {
			if v != 0 {
				return fmt.Errorf("agop: kernel %s is not translation invariant; its metric must not shift the inputs", p.Kernel)
			}
		}
	}
	return nil
}

// engine holds the predictor in the working precision T (float32 halves
// the time of the two big GEMMs inside kernel.Product; the outer products
// are still accumulated in float64) and the output buffer of a block.
type engine[T linalg.Float] struct {
	p     *Predictor
	z     kernel.Points[T] // the centres
	alpha []T
	t     []T // rows × C·(d+1)
	// r is R stored whole when it is small (see rhs); nil: generated per tile.
	r []T
}

// storeRBytes: R up to this size is formed once and stored, so that each
// band of kernel.Product multiplies a stored matrix instead of generating
// and repacking it (which costs ~5% at UCI sizes with many classes).
var storeRBytes = 64 << 20 // a variable so that tests can force generation

func convert[T linalg.Float](x []float64) []T {
	if y, ok := any(x).([]T); ok {
		return y
	}
	y := make([]T, len(x))
	for i, v := range x {
		y[i] = T(v)
	}
	return y
}

// convertPoints converts src into T, reusing dst's storage; in float64 it
// returns src itself. Norms are converted, not recomputed, as newEngine
// does for the centres.
func convertPoints[T linalg.Float](src kernel.Points[float64], dst kernel.Points[T]) kernel.Points[T] {
	if p, ok := any(src).(kernel.Points[T]); ok {
		return p
	}
	n, d := src.N, src.D
	if cap(dst.Z) < n*d {
		dst.Z = make([]T, n*d)
	}
	if cap(dst.Norms) < n {
		dst.Norms = make([]T, n)
	}
	dst.Z, dst.Norms, dst.N, dst.D = dst.Z[:n*d], dst.Norms[:n], n, d
	for i, v := range src.Z[:n*d] {
		dst.Z[i] = T(v)
	}
	for i, v := range src.Norms[:n] {
		dst.Norms[i] = T(v)
	}
	return dst
}

func newEngine[T linalg.Float](p *Predictor, rows int) *engine[T] {
	c := p.Centers
	e := &engine[T]{p: p,
		z:     kernel.Points[T]{Z: convert[T](c.Z), N: c.N, D: c.D, Norms: convert[T](c.Norms)},
		alpha: convert[T](p.Alpha),
		t:     make([]T, rows*p.C*(c.D+1)),
	}
	w := p.C * (c.D + 1)
	var zero T
	if !p.Kernel.Pairwise() && float64(c.N)*float64(w)*float64(unsafe.Sizeof(zero)) <= float64(storeRBytes) {
		e.r = make([]T, c.N*w)
		e.rhs(0, c.N, 0, w, e.r)
	}
	return e
}

// rhs generates blocks of R = [α_0∘Z | … | α_{C−1}∘Z | α_0 … α_{C−1}]
// (n × C·(d+1)): the right-hand side whose product with the gradient
// coefficients gives all the gradient sums at once. It is cheap to make
// and C·d wide, so it is generated per tile instead of stored.
func (e *engine[T]) rhs(c0, c1, j0, j1 int, out []T) {
	d, c := e.z.D, e.p.C
	ld := j1 - j0
	for j := c0; j < c1; j++ {
		dst := out[(j-c0)*ld : (j-c0+1)*ld]
		zj, aj := e.z.Row(j), e.alpha[j*c:j*c+c]
		for col := j0; col < j1; {
			if col >= c*d { // the α columns
				n := copy(dst[col-j0:ld], aj[col-c*d:])
				col += n
				continue
			}
			k, t0 := col/d, col%d
			t1 := min(d, t0+j1-col)
			a := aj[k]
			seg := dst[col-j0 : col-j0+t1-t0]
			for t, v := range zj[t0:t1] {
				seg[t] = a * v
			}
			col += t1 - t0
		}
	}
}

// zGrads computes, for mapped query points zq, the z-space gradients g
// (zq.N × C × d) into out:
//
//	g_ik = Σ_j A_ij α_jk z_j + z_i Σ_j B_ij α_jk,
//
// with ∇K(z_i, z_j) = A_ij z_j + B_ij z_i (kernel.GradCoef): one
// kernel.Product of the coefficients with R. Radial kernels have B = −A,
// so A alone gives both sums; the others (ntk, nngp) multiply the α
// columns of R by B.
func (e *engine[T]) zGrads(ctx context.Context, zq kernel.Points[T], out []float64) error {
	p := e.p
	rows, d, c := zq.N, e.z.D, p.C
	if p.Kernel.Pairwise() {
		return e.pairGrads(ctx, zq, out)
	}
	radial := p.Kernel.Radial()
	w := c * (d + 1)
	ent := kernel.GradA
	if !radial {
		ent = kernel.GradAB
	}
	rhs := kernel.RHS[T]{M: e.r, Gen: e.rhs}
	if err := kernel.Product(ctx, p.Kernel, ent, zq, e.z, rhs, w, c*d, e.t); err != nil {
		return err
	}
	for i := 0; i < rows; i++ {
		ti := e.t[i*w : i*w+w]
		zi := zq.Row(i)
		for k := 0; k < c; k++ {
			// s multiplies −z_i: Σ A α for radial kernels (B = −A), −Σ B α otherwise.
			s := float64(ti[c*d+k])
			if !radial {
				s = -s
			}
			src := ti[k*d : k*d+d]
			dst := out[(i*c+k)*d : (i*c+k)*d+d]
			for t := range dst {
				dst[t] = float64(src[t]) - s*float64(zi[t])
			}
		}
	}
	return nil
}

// pairGrads is zGrads for a pairwise kernel (lp-laplace): the gradients
// of a band of query points at a time (kernel.LpGradients), one task per
// band. Each call copies every centre once (coordinate-major); with 64
// queries a band makes 64 passes over the copy per such copy.
func (e *engine[T]) pairGrads(ctx context.Context, zq kernel.Points[T], out []float64) error {
	const band = 64
	d, c := e.z.D, e.p.C
	clear(out[:zq.N*c*d])
	bands := (zq.N + band - 1) / band
	return linalg.Tasks(ctx, bands, func(_, b int) {
		r0, r1 := b*band, min((b+1)*band, zq.N)
		kernel.LpGradients(e.p.Kernel, zq.Slice(r0, r1), e.z, e.alpha, c, out[r0*c*d:r1*c*d])
	})
}

// Gradients returns ∇f_k(x) for nq query points xq (raw features, nq×d):
// a nq×C×d array (point-major, then output, then coordinate).
func Gradients(ctx context.Context, p *Predictor, xq []float64, nq int) ([]float64, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	d, c := p.Centers.D, p.C
	zq := p.Map.Map(xq, nq)
	rows := blockRows(p, 0)
	e := newEngine[float64](p, min(rows, nq))
	out := make([]float64, nq*c*d)
	for r0 := 0; r0 < nq; r0 += rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r1 := min(r0+rows, nq)
		if err := e.zGrads(ctx, zq.Slice(r0, r1), out[r0*c*d:r1*c*d]); err != nil {
			return nil, err
		}
	}
	return p.Map.ToInput(out, nq*c), nil
}

// blockRows is the number of evaluation points per block: rows given, or
// as many as keep the block's buffers (the product, rows × C·(d+1), and the
// float64 gradients, rows × C·d) near 64 MB. Memory does not grow with n:
// the coefficient matrix is consumed tile by tile inside kernel.Product.
func blockRows(p *Predictor, rows int) int {
	if rows > 0 {
		return rows
	}
	return max(128, min(8192, (64<<20)/(16*p.C*(p.Centers.D+1))))
}

// Compute returns the AGOP over the evaluation points given as row indices
// into the centres (x-space; d×d, or d entries with Diag), averaged over the
// points (the papers' "mean" normalization).
func Compute(ctx context.Context, p *Predictor, eval []int, opt Options) ([]float64, error) {
	if opt.Float32 {
		return compute[float32](ctx, p, eval, opt)
	}
	return compute[float64](ctx, p, eval, opt)
}

func compute[T linalg.Float](ctx context.Context, p *Predictor, eval []int, opt Options) ([]float64, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if len(eval) == 0 {
		return nil, fmt.Errorf("agop: no evaluation points")
	}
	if opt.Diag && p.Map.Form == kernel.Full {
		return nil, fmt.Errorf("agop: a diagonal AGOP needs an identity or diagonal feature matrix")
	}
	d, c := p.Centers.D, p.C
	src := evalSource(p, opt)
	if e := src; e.D != d || len(e.Z) < e.N*e.D || len(e.Norms) < e.N {
		return nil, fmt.Errorf("agop: evaluation points (n=%d, d=%d) do not match the %d-feature predictor", e.N, e.D, d)
	}
	n := src.N
	for _, i := range eval {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("agop: evaluation index %d out of range [0,%d)", i, n)
		}
	}
	var acc, sum []float64
	var err error
	if h := gramBuffer(p, len(eval), opt); h != nil {
		acc, sum, err = gramSums(ctx, p, eval, opt, h)
	} else {
		acc, sum, err = directSums[T](ctx, p, eval, opt)
	}
	if err != nil {
		return nil, err
	}
	inv := 1 / float64(len(eval))
	for i := range acc {
		acc[i] *= inv
	}
	if sum != nil {
		for k := 0; k < c; k++ {
			mk := sum[k*d : k*d+d]
			for t := range mk {
				mk[t] *= inv
			}
			if opt.Diag {
				for t, v := range mk {
					acc[t] -= v * v
				}
			} else {
				for a := 0; a < d; a++ {
					for b := 0; b < d; b++ {
						acc[a*d+b] -= mk[a] * mk[b]
					}
				}
			}
		}
	}
	// Back to x-space: S·A·S.
	switch p.Map.Form {
	case kernel.Diagonal:
		s := p.Map.Root()
		if opt.Diag {
			for t := range acc {
				acc[t] *= s[t] * s[t]
			}
		} else {
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					acc[a*d+b] *= s[a] * s[b]
				}
			}
		}
	case kernel.Full:
		s := p.Map.Root()
		tmp := make([]float64, d*d)
		linalg.Gemm(false, false, d, d, d, 1, s, d, acc, d, 0, tmp, d)
		linalg.Gemm(false, false, d, d, d, 1, tmp, d, s, d, 0, acc, d)
	}
	if !opt.Diag { // exact symmetry despite round-off
		for a := 0; a < d; a++ {
			for b := a + 1; b < d; b++ {
				v := 0.5 * (acc[a*d+b] + acc[b*d+a])
				acc[a*d+b], acc[b*d+a] = v, v
			}
		}
	}
	return acc, nil
}

// directSums returns the z-space sums Σ_i Σ_k g_ik g_ikᵀ (d×d, or the
// diagonal only) and, when centring, Σ_i g_ik per output (C×d), forming the
// gradients block by block with kernel.Product: cost ≈ 2·m·n·C·(d+1).
func directSums[T linalg.Float](ctx context.Context, p *Predictor, eval []int, opt Options) (acc, sum []float64, err error) {
	d, c := p.Centers.D, p.C
	rows := min(blockRows(p, opt.BlockRows), len(eval))
	e := newEngine[T](p, rows)
	var zq kernel.Points[T]
	var zq64 kernel.Points[float64] // gathered evaluation points, before conversion
	g := make([]float64, rows*c*d)
	// acc: Σ g gᵀ (d×d) or Σ g² (d), z-space; sum: Σ g per output, for centring.
	if opt.Diag {
		acc = make([]float64, d)
	} else {
		acc = make([]float64, d*d)
	}
	if opt.Centered {
		sum = make([]float64, c*d)
	}
	for b0 := 0; b0 < len(eval); b0 += rows {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b1 := min(b0+rows, len(eval))
		m := b1 - b0
		if opt.EvalPoints.N > 0 {
			zq64 = opt.EvalPoints.Gather(eval[b0:b1], zq64)
			zq = convertPoints(zq64, zq)
		} else {
			zq = e.z.Gather(eval[b0:b1], zq)
		}
		if err := e.zGrads(ctx, zq, g); err != nil {
			return nil, nil, err
		}
		gm := g[:m*c*d]
		if opt.Diag {
			for r := 0; r < m*c; r++ {
				for t, v := range gm[r*d : r*d+d] {
					acc[t] += v * v
				}
			}
		} else {
			linalg.Gemm(true, false, d, d, m*c, 1, gm, d, gm, d, 1, acc, d)
		}
		if sum != nil {
			for r := 0; r < m; r++ {
				for k := 0; k < c; k++ {
					src := gm[(r*c+k)*d : (r*c+k)*d+d]
					dst := sum[k*d : k*d+d]
					for t, v := range src {
						dst[t] += v
					}
				}
			}
		}
	}
	return acc, sum, nil
}

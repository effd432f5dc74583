package kernel

import "github.com/rfmkit/rfm/internal/linalg"

// Float is the element type of mapped points and kernel blocks: float64,
// or float32 for the big matrices of a float32 fit.
type Float = linalg.Float

// Points is a block of N mapped points with D coordinates each, stored
// row-major in Z, with the squared Euclidean norm of every row in Norms
// (the GEMM expansion of distances needs them). It is a value type in the
// style of gonum's blas64.General: copying it copies the slice headers, not
// the data. Build it with NewPoints so that Norms matches Z.
type Points[T Float] struct {
	Z     []T
	N, D  int
	Norms []T
}

// NewPoints wraps n rows of z (n×d, row-major) and computes their norms.
func NewPoints[T Float](z []T, n, d int) Points[T] {
	return Points[T]{Z: z[:n*d], N: n, D: d, Norms: Norms(z, n, d)}
}

// Row returns point i.
func (p Points[T]) Row(i int) []T { return p.Z[i*p.D : (i+1)*p.D] }

// Slice returns points [i, j) sharing p's storage.
func (p Points[T]) Slice(i, j int) Points[T] {
	return Points[T]{Z: p.Z[i*p.D : j*p.D], N: j - i, D: p.D, Norms: p.Norms[i:j]}
}

// Gather copies the points with the given indices into dst (reusing its
// storage when it is large enough) and returns it.
func (p Points[T]) Gather(idx []int, dst Points[T]) Points[T] {
	n, d := len(idx), p.D
	if cap(dst.Z) < n*d {
		dst.Z = make([]T, n*d)
	}
	if cap(dst.Norms) < n {
		dst.Norms = make([]T, n)
	}
	dst.Z, dst.Norms, dst.N, dst.D = dst.Z[:n*d], dst.Norms[:n], n, d
	for i, r := range idx {
		copy(dst.Z[i*d:(i+1)*d], p.Z[r*d:(r+1)*d])
		dst.Norms[i] = p.Norms[r]
	}
	return dst
}

// To32 rounds float64 points to float32; the norms are taken again of the
// rounded rows so that the distance expansion stays consistent.
func To32(p Points[float64]) Points[float32] {
	z := make([]float32, p.N*p.D)
	for i, v := range p.Z[:p.N*p.D] {
		z[i] = float32(v)
	}
	return NewPoints(z, p.N, p.D)
}

// Norms returns the squared Euclidean norm of each of the n rows of z (n×d).
func Norms[T Float](z []T, n, d int) []T {
	out := make([]T, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range z[i*d : i*d+d] {
			s += float64(v) * float64(v)
		}
		out[i] = T(s)
	}
	return out
}

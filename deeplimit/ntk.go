package deeplimit

import (
	"context"
	"math"
)

// MaxDepth is the largest depth the deep-limit kernels are computed for.
const MaxDepth = 1_000_000

// NTKPlain is the depth-L NTK of the normalized activation on unit vectors
// with cosine z, by the recursion of the thesis (eq. 4.5) in plain floating
// point: K_0 = ρ_0 = z, ρ_l = φ̌(ρ_{l−1}), K_l = ρ_l + K_{l−1}·φ̌′(ρ_{l−1}).
// It overflows or underflows for large L (use NTK); it is the reference the
// normalized recursion is tested against, and it is defined on all of
// [−1, 1].
func (d *Dual) NTKPlain(z float64, L int) float64 {
	rho, k := z, z
	for l := 0; l < L; l++ {
		v, dv := d.Eval(rho)
		k = v + k*dv
		rho = v
	}
	return k
}

// Val is a positive kernel value held without overflow or underflow. When
// Deep is false, V = log K. When Deep is true, K is below e^{−1e10} and
// V = log(−log K): the 1-NN case (A = A′ = 0) drives K_L(z) to 0 doubly
// exponentially in L, beyond the range of log K in float64 at L ≈ 1 000.
// K = 0 is Val{V: −Inf}.
type Val struct {
	V    float64
	Deep bool
}

// Less reports whether a < b as kernel values.
func (a Val) Less(b Val) bool {
	switch {
	case b.zero():
		return false
	case a.zero():
		return true
	case a.Deep && b.Deep:
		return a.V > b.V
	case a.Deep:
		return true
	case b.Deep:
		return false
	}
	return a.V < b.V
}

func (a Val) zero() bool { return !a.Deep && math.IsInf(a.V, -1) }

// LogRatio returns log(a/b), −Inf when it is below the range of float64
// (with b ≥ a in the Deep comparisons the callers make).
func (a Val) LogRatio(b Val) float64 {
	switch {
	case !a.Deep && !b.Deep:
		if math.IsInf(a.V, -1) {
			return math.Inf(-1)
		}
		return a.V - b.V
	case a == b:
		return 0
	case a.zero():
		return math.Inf(-1)
	case a.Deep && b.Deep:
		// log a − log b = e^{b.V} − e^{a.V} = −e^{b.V}·expm1(a.V − b.V).
		return -math.Exp(b.V) * math.Expm1(a.V-b.V)
	case a.Deep:
		return -math.Exp(a.V) - b.V
	}
	return a.V + math.Exp(b.V)
}

// deepSwitch: −log ρ beyond it moves the 1-NN recursion to log(−log ρ).
const deepSwitch = 1e10

// tinyRho: below it φ̌(ρ) = a_m ρ^m and φ̌′(ρ) = m·a_m·ρ^{m−1} to rounding
// (m the lowest degree of the dual's series; the next term is smaller by a
// factor ρ·a_{m+1}/a_m < 1e-150·1e16).
const tinyRho = 1e-150

// ntkState carries the normalized recursion through the layers for one
// cosine z in [0, 1].
type ntkState struct {
	lr, lk float64 // log ρ_l and log K_l (deep = false)
	// In the deep regime (1-NN case): tau = log(−log ρ_l), ls = log(K_l/ρ_l).
	tau, ls float64
	deep    bool
}

func (d *Dual) newState(z float64) ntkState {
	return ntkState{lr: math.Log(z), lk: math.Log(z)}
}

// step advances one layer.
func (d *Dual) step(s *ntkState) {
	m := d.low
	if s.deep {
		// −log ρ' = m(−log ρ) − log a_m; K'/ρ' = 1 + m·K/ρ.
		s.tau += math.Log(float64(m)) + math.Log1p(-math.Log(d.a[m])/(float64(m)*math.Exp(s.tau)))
		s.ls = logAddExp(0, math.Log(float64(m))+s.ls)
		return
	}
	var lv, ldv float64
	if m >= 1 && s.lr < math.Log(tinyRho) {
		lv = math.Log(d.a[m]) + float64(m)*s.lr
		ldv = math.Log(float64(m) * d.a[m])
		if m > 1 {
			ldv += float64(m-1) * s.lr
		}
	} else {
		v, dv := d.Eval(math.Exp(s.lr))
		lv, ldv = math.Log(v), math.Log(dv)
	}
	s.lk = logAddExp(lv, s.lk+ldv)
	s.lr = lv
	if m >= 2 && -s.lr > deepSwitch && !math.IsInf(s.lr, -1) {
		s.deep = true
		s.tau = math.Log(-s.lr)
		s.ls = s.lk - s.lr
	}
}

// val returns K_l as a Val.
func (s *ntkState) val() Val {
	if !s.deep {
		return Val{V: s.lk}
	}
	// −log K = e^τ − ls.
	return Val{V: s.tau + math.Log1p(-s.ls*math.Exp(-s.tau)), Deep: true}
}

// NTK returns the depth-L NTK K_L(z) for a cosine z in [0, 1] (data in the
// positive orthant of the sphere) as a Val, by the recursion in log form:
// log ρ_l and log K_l stay finite for every L where K_l does not vanish, so
// nothing overflows; dividing by (A′)^{2L}(L+1) as Theorem 7 does is a
// subtraction (Normalized).
func (d *Dual) NTK(z float64, L int) (Val, error) {
	if err := checkDepth(L); err != nil {
		return Val{}, err
	}
	if !(z >= 0 && z <= 1) {
		return Val{}, errorf("cosine %g is outside [0, 1] (data must lie in the positive orthant of the sphere)", z)
	}
	s := d.newState(z)
	for l := 0; l < L; l++ {
		d.step(&s)
	}
	return s.val(), nil
}

// Normalized returns log(K_L(z)/((A′)^{2L}(L+1))), Theorem 7's normalized
// kernel (case 1; for other cases the normalization is meaningless and it
// returns an error).
func (d *Dual) Normalized(z float64, L int) (float64, error) {
	if d.Case != CaseSingular {
		return 0, errorf("activation %q is in the %s case: Theorem 7's normalization needs A = 0, A′ ≠ 0", d.Act.Name, d.Case)
	}
	v, err := d.NTK(z, L)
	if err != nil {
		return 0, err
	}
	return v.V - float64(L)*math.Log(d.A1*d.A1) - math.Log(float64(L)+1), nil
}

// maxLimitSteps bounds the iteration of Limit: the iterates leave the
// neighbourhood of 1 after about log(1/(1 − z))/log(B′) layers (below 100
// for every cosine a float64 resolves when B′ > 1.5) and then shrink by A′²
// a layer.
const maxLimitSteps = 1_000_000

// Limit returns log ψ(z), the infinitely deep normalized NTK of Theorem 7,
// ψ(z) = lim K_L(z)/((A′)^{2L}(L+1)) (case 1 only). SI appendix B (eqs.
// C.7–C.8) shows that this limit equals lim φ̌^{(L)}(z)/(A′)^{2L}: the
// finite-depth part of K_L is divided away by L + 1 only as O(1/L), slowly
// (the normalized kernel at z = 0.999 still moves by 0.13 in log from
// L = 5 000 to 10 000), while the iterate's ratio is constant to rounding
// as soon as φ̌^{(L)}(z) < 1e-150, where φ̌ is linear. ψ(1) = +Inf.
func (d *Dual) Limit(z float64) (float64, error) {
	if d.Case != CaseSingular {
		return 0, errorf("activation %q is in the %s case: the normalized limit ψ exists when A = 0, A′ ≠ 0", d.Act.Name, d.Case)
	}
	if !(z >= 0 && z <= 1) {
		return 0, errorf("cosine %g is outside [0, 1] (data must lie in the positive orthant of the sphere)", z)
	}
	if z == 1 {
		return math.Inf(1), nil
	}
	la := math.Log(d.a[1])
	// Within 1e-12 of 1 the iterate is 1 − g with g growing by B′ a layer
	// (relative error of order g): done on g, because φ̌ of a float64 that
	// close to 1 can round back to the fixed point 1 and stay there.
	l0 := 0
	for g := 1 - z; g < 1e-12; g *= d.B1 {
		l0++
		z = 1 - g*d.B1
	}
	s := d.newState(z)
	for l := 1; l <= maxLimitSteps; l++ {
		d.step(&s)
		if s.lr < math.Log(tinyRho) {
			return s.lr - float64(l+l0)*la, nil
		}
	}
	return 0, errorf("the iteration of φ̌ from %g did not reach 1e-150 in %d layers", z, maxLimitSteps)
}

// LimitTable tabulates log ψ (Limit) on the grid of Tables: the kernel of
// the infinitely deep machine, whose train matrix is the identity and which
// Lemma 5 of SI appendix B shows is the smoother sign(Σ y_i ψ(xᵀx_i)).
// Its Depth is 0.
func (d *Dual) LimitTable(ctx context.Context) (*Table, error) {
	if d.Case != CaseSingular {
		return nil, errorf("activation %q is in the %s case: the normalized limit ψ exists when A = 0, A′ ≠ 0", d.Act.Name, d.Case)
	}
	zs := tableGrid()
	t := &Table{L: 0, v: make([]Val, len(zs)), nLog: tableLin}
	for i, z := range zs {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v, err := d.Limit(z)
		if err != nil {
			return nil, err
		}
		if z == 0 {
			v = math.Inf(-1)
		}
		t.v[i] = Val{V: v}
	}
	return t, nil
}

func checkDepth(L int) error {
	if L < 1 || L > MaxDepth {
		return errorf("depth %d is outside 1..%d", L, MaxDepth)
	}
	return nil
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// Table holds K_L on a grid of the cosine for interpolation: uniform in
// u = log z for z in [tableZMin, tableKnee], then uniform in s = log(1 − z)
// down to 1 − z = tableTiny, with K_L(0) and K_L(1) exactly. Kernel values between
// grid points are interpolated by local cubics in log K (or in log(−log K)
// when deep), in u or in s; below tableZMin linearly in u (K_L is a power
// of z there in the singular and 1-NN cases, flat in the majority case).
// TestTable bounds the error.
type Table struct {
	L    int
	v    []Val // [0]: z = 0; then the u grid, the s grid, z = 1
	nLog int   // points of the u grid
}

const (
	tableZMin = 1e-6
	tableKnee = 0.9
	tableLin  = 3000
	tableLog  = 2500
	tableTiny = 1e-17
)

var (
	// The grids overlap past the knee so that the cubics have neighbours on
	// both sides of it.
	tableU0, tableU1 = math.Log(tableZMin), math.Log(0.95)
	tableS0, tableS1 = math.Log(0.15), math.Log(tableTiny)
)

// Tables computes the tables for every depth in depths (one pass of the
// recursion to the largest), reporting progress in [0, 1].
func (d *Dual) Tables(ctx context.Context, depths []int, progress func(float64)) (map[int]*Table, error) {
	maxL := 0
	want := map[int]bool{}
	for _, L := range depths {
		if err := checkDepth(L); err != nil {
			return nil, err
		}
		want[L] = true
		maxL = max(maxL, L)
	}
	zs := tableGrid()
	out := map[int]*Table{}
	for L := range want {
		out[L] = &Table{L: L, v: make([]Val, len(zs)), nLog: tableLin}
	}
	for i, z := range zs {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if progress != nil {
				progress(float64(i) / float64(len(zs)))
			}
		}
		s := d.newState(z)
		for l := 1; l <= maxL; l++ {
			d.step(&s)
			if want[l] {
				out[l].v[i] = s.val()
			}
		}
	}
	return out, nil
}

// tableGrid is the cosines of a Table: 0, the u grid, the s grid, 1.
func tableGrid() []float64 {
	zs := []float64{0}
	for i := 0; i < tableLin; i++ {
		zs = append(zs, math.Exp(tableU0+(tableU1-tableU0)*float64(i)/(tableLin-1)))
	}
	for i := 0; i < tableLog; i++ {
		zs = append(zs, -math.Expm1(tableS0+(tableS1-tableS0)*float64(i)/(tableLog-1)))
	}
	return append(zs, 1)
}

// Depth is L (0 for the infinitely deep limit).
func (t *Table) Depth() int { return t.L }

// At returns K_L at the pair whose squared distance (on the unit sphere,
// ‖x − x̃‖² = 2(1 − z)) is d2, interpolated. d2 = 0 is K_L(1).
func (t *Table) At(d2 float64) Val {
	gap := d2 / 2 // 1 − z, accurate for close pairs
	n := len(t.v)
	if gap <= 0 {
		return t.v[n-1]
	}
	z := 1 - gap
	if z <= 0 {
		return t.v[0]
	}
	if z < tableKnee {
		x := (math.Log(z) - tableU0) / (tableU1 - tableU0) * (tableLin - 1)
		if x < 0 {
			a, b := t.v[1], t.v[2]
			if a.Deep || b.Deep || math.IsInf(a.V, 0) || math.IsInf(b.V, 0) {
				return a
			}
			return Val{V: a.V + x*(b.V-a.V)}
		}
		i := min(int(x), tableLin-2)
		return interpCubic(t.v[1:tableLin+1], i, x-float64(i))
	}
	g := math.Log(gap)
	if g <= tableS1 {
		// Closer than the grid resolves (1 − z < 1e-17: a duplicate in
		// float64): the last grid point before z = 1.
		return t.v[n-2]
	}
	x := (g - tableS0) / (tableS1 - tableS0) * (tableLog - 1)
	i := min(max(int(x), 0), tableLog-2)
	return interpCubic(t.v[1+tableLin:n-1], i, x-float64(i))
}

// interpCubic interpolates v (on a uniform grid) at i + f, 0 ≤ f < 1, by
// the cubic through v[i−1..i+2] (error O(h⁴)), or linearly at the ends of
// the grid or where a neighbour is of another kind (deep, zero).
func interpCubic(v []Val, i int, f float64) Val {
	if i < 1 || i+2 >= len(v) {
		return interpVal(v[i], v[i+1], f)
	}
	a, b, c, e := v[i-1], v[i], v[i+1], v[i+2]
	if a.Deep != b.Deep || c.Deep != b.Deep || e.Deep != b.Deep ||
		math.IsInf(a.V, 0) || math.IsInf(b.V, 0) || math.IsInf(c.V, 0) || math.IsInf(e.V, 0) {
		return interpVal(b, c, f)
	}
	// Lagrange weights at nodes −1, 0, 1, 2.
	w0 := -f * (f - 1) * (f - 2) / 6
	w1 := (f + 1) * (f - 1) * (f - 2) / 2
	w2 := -(f + 1) * f * (f - 2) / 2
	w3 := (f + 1) * f * (f - 1) / 6
	return Val{V: w0*a.V + w1*b.V + w2*c.V + w3*e.V, Deep: b.Deep}
}

func interpVal(a, b Val, f float64) Val {
	if a.Deep == b.Deep && !math.IsInf(a.V, 0) && !math.IsInf(b.V, 0) {
		return Val{V: a.V + f*(b.V-a.V), Deep: a.Deep}
	}
	// One side deep or 0 (K_L(0) = 0 in cases 1 and 2): the nearest point
	// (the values differ by more than e^{1e10} anyway, and the order is
	// what matters there).
	if f < 0.5 {
		return a
	}
	return b
}

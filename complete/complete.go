package complete

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/sysmem"
)

// ErrNothingToComplete: every cell of the matrix is observed.
var ErrNothingToComplete = errors.New("every entry is observed: there is nothing to complete")

// ErrTooLarge is matched (errors.Is) by a refusal of the memory plan.
var ErrTooLarge = errors.New("not enough memory")

// ErrNotPD is matched by a factorization that failed: the column kernel on
// some observed set is singular (duplicate or parallel prior columns).
var ErrNotPD = errors.New("column kernel is not positive definite")

// Strategies of the solve (Options.Strategy).
const (
	// StrategyAuto picks, per group of rows that share an observed
	// pattern, the cheaper of StrategyDirect and StrategySchur.
	StrategyAuto = "auto"
	// StrategyDirect factors G[S,S] once per observed pattern S.
	StrategyDirect = "direct"
	// StrategySchur factors G[U,U] once for the union U of observed
	// columns, inverts it (H), and serves a pattern S = U∖M through the
	// Schur complement H[M,M] of the missing part: r³/3 per pattern
	// (r = |M|) instead of |S|³/3.
	StrategySchur = "schur"
	// StrategyNaive solves every row on its own, as a reference.
	StrategyNaive = "naive"
)

// Options configure Complete.
type Options struct {
	Depth      int        // 1..5 (0: 1)
	Activation Activation // zero value: ReLU
	Ridge      float64    // λ ≥ 0 added to the diagonal of every G[S,S]
	// Refit replaces the observed cells by the model's fit too (the same
	// values when Ridge is 0, up to rounding); by default they are kept.
	Refit    bool
	Strategy string // "" is StrategyAuto
	// MemoryLimit in bytes; 0 means 90% of the memory available.
	MemoryLimit uint64
	// Progress, if set, is called with a stage name and the fraction of
	// the work done.
	Progress func(stage string, done float64)
}

// Result is a completion.
type Result struct {
	Y        *Matrix // the completed matrix (every cell observed)
	Groups   int     // distinct observed patterns among the rows
	Direct   int     // groups solved with their own factorization
	Schur    int     // groups served by the shared inverse
	Fallback int     // Schur groups redone directly (residual check)
	Union    int     // columns observed in at least one row
	Plan     MemoryPlan
	Flops    float64 // estimated floating point operations of the solve
	Elapsed  time.Duration
}

// MemoryPlan lists the large buffers of a completion.
type MemoryPlan struct {
	Items []MemoryItem
	Limit uint64
}

// MemoryItem is one buffer of the plan.
type MemoryItem struct {
	What  string
	Bytes uint64
}

// Total sums the plan.
func (p MemoryPlan) Total() uint64 {
	var t uint64
	for _, it := range p.Items {
		t += it.Bytes
	}
	return t
}

func (p MemoryPlan) String() string {
	s := fmt.Sprintf("%s in all", sysmem.Human(p.Total()))
	for _, it := range p.Items {
		s += fmt.Sprintf("; %s %s", it.What, sysmem.Human(it.Bytes))
	}
	return s
}

// group is a set of rows sharing one observed pattern.
type group struct {
	rows []int
	obs  []int // observed columns S (sorted)
	miss []int // U ∖ S (sorted)
	// schur: served through the shared inverse.
	schur bool
}

// Kernel returns the column kernel G = κ_d(ZᵀZ) (n×n, row-major) of a
// normalized prior.
func Kernel(pr *Prior, depth int, act Activation) ([]float64, error) {
	kappa, err := act.Kappa(depth)
	if err != nil {
		return nil, err
	}
	n := pr.N
	g := make([]float64, n*n)
	linalg.Gemm(false, true, n, n, pr.P, 1, pr.E, pr.P, pr.E, pr.P, 0, g, n)
	linalg.ParallelRows(n, nil, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j <= i; j++ {
				v := kappa(g[i*n+j])
				g[i*n+j], g[j*n+i] = v, v
			}
		}
	})
	return g, nil
}

// OneHotConstant is the factor c with which the one-hot prior predicts an
// unobserved cell from its row's observed mean, when the row has ell
// observed cells: the column kernel on them is (κ(1) − κ(0))·I + κ(0)·J
// (+ λI), and Sherman–Morrison gives
//
//	c = ℓ·κ(0) / (κ(1) − κ(0) + λ + ℓ·κ(0)).
//
// For the depth-1 ReLU (κ(1) = 2, κ(0) = 1/π, λ = 0) this is ℓ/(ℓ + 2π − 1):
// SI appendix D, Proposition 8 (see docs/completion.md on how its printed
// expression relates to this).
func OneHotConstant(ell, depth int, act Activation, ridge float64) (float64, error) {
	kappa, err := act.Kappa(depth)
	if err != nil {
		return 0, err
	}
	k1, k0 := kappa(1), kappa(0)
	l := float64(ell)
	return l * k0 / (k1 - k0 + ridge + l*k0), nil
}

// Complete fills in the unobserved cells of y with the NTK of Theorem 5 on
// the prior pr (one embedding per column; normalized here to unit norm).
// Each row is a kernel regression over its observed columns; rows with the
// same observed pattern share one factorization (see the Strategy
// constants).
func Complete(ctx context.Context, y *Matrix, pr *Prior, opt Options) (*Result, error) {
	start := time.Now()
	if err := y.Validate(); err != nil {
		return nil, err
	}
	if opt.Depth == 0 {
		opt.Depth = 1
	}
	if opt.Activation.Name == "" {
		opt.Activation = Activation{Name: "relu"}
	}
	if _, err := opt.Activation.Kappa(opt.Depth); err != nil {
		return nil, err
	}
	if math.IsNaN(opt.Ridge) || math.IsInf(opt.Ridge, 0) || opt.Ridge < 0 {
		return nil, fmt.Errorf("ridge %v: must be a finite number ≥ 0", opt.Ridge)
	}
	switch opt.Strategy {
	case "":
		opt.Strategy = StrategyAuto
	case StrategyAuto, StrategyDirect, StrategySchur, StrategyNaive:
	default:
		return nil, fmt.Errorf("unknown strategy %q: want auto, direct, schur or naive", opt.Strategy)
	}
	if pr == nil || pr.N != y.Cols {
		got := 0
		if pr != nil {
			got = pr.N
		}
		return nil, fmt.Errorf("the prior embeds %d columns but the matrix has %d", got, y.Cols)
	}
	m, n := y.Rows, y.Cols
	count := y.Count()
	if count == 0 {
		return nil, fmt.Errorf("no entry of the %d×%d matrix is observed: there is nothing to learn from", m, n)
	}
	if count == m*n {
		return nil, ErrNothingToComplete
	}
	for i := 0; i < m; i++ {
		seen := false
		for j := 0; j < n && !seen; j++ {
			seen = y.Observed[i*n+j]
		}
		if !seen {
			return nil, fmt.Errorf("%s has no observed entry: the NTK would predict 0 for all of it (rows are separate regressions); drop the row, or complete the transpose if rows are the new items", y.RowName(i))
		}
	}
	prior := &Prior{N: pr.N, P: pr.P, E: append([]float64(nil), pr.E...)}
	if err := prior.Normalize(y.ColName); err != nil {
		return nil, err
	}
	groups, union := groupRows(y, opt.Strategy == StrategyNaive)
	u := len(union)
	plan, flops := choose(groups, u, n, m, opt.Strategy)
	plan.Limit = opt.MemoryLimit
	if plan.Limit == 0 {
		if avail, ok := sysmem.Available(); ok {
			plan.Limit = avail / 10 * 9
		}
	}
	if plan.Limit > 0 && plan.Total() > plan.Limit {
		return nil, fmt.Errorf("%w: completing %d×%d (%d columns observed somewhere, %d observed patterns) needs %s, over the limit of %s; use --strategy direct, fewer columns, or a smaller prior",
			ErrTooLarge, m, n, u, len(groups), plan, sysmem.Human(plan.Limit))
	}
	progress := func(stage string, f float64) {
		if opt.Progress != nil {
			opt.Progress(stage, min(max(f, 0), 1))
		}
	}
	progress("kernel", 0)
	g, err := Kernel(prior, opt.Depth, opt.Activation)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Result{Y: &Matrix{Rows: m, Cols: n, Values: make([]float64, m*n), Observed: make([]bool, m*n), RowIDs: y.RowIDs, ColIDs: y.ColIDs},
		Groups: len(groups), Union: u, Plan: plan, Flops: flops}
	for k := range out.Y.Observed {
		out.Y.Observed[k] = true
	}
	s := &solver{y: y, g: g, n: n, ridge: opt.Ridge, out: out.Y.Values, flops: flops, progress: progress}
	var schur []*group
	for _, gr := range groups {
		if gr.schur {
			schur = append(schur, gr)
		}
	}
	if len(schur) > 0 {
		redo, err := s.schurGroups(ctx, union, schur)
		if err != nil {
			return nil, err
		}
		out.Schur = len(schur) - len(redo)
		out.Fallback = len(redo)
		for _, gr := range redo {
			gr.schur = false
		}
	}
	var direct []*group
	for _, gr := range groups {
		if !gr.schur {
			direct = append(direct, gr)
		}
	}
	out.Direct = len(direct)
	if parallelGroups(direct) {
		// Many small patterns: one per worker, each factorization serial.
		// Of several failing groups the one of the first row is reported,
		// so the message does not depend on scheduling.
		var mu sync.Mutex
		var first error
		firstRow := -1
		err := linalg.Tasks(ctx, len(direct), func(_, i int) {
			if err := s.direct(ctx, direct[i]); err != nil {
				mu.Lock()
				if r := direct[i].rows[0]; firstRow < 0 || r < firstRow {
					first, firstRow = err, r
				}
				mu.Unlock()
			}
		})
		if first != nil {
			return nil, first
		}
		if err != nil {
			return nil, err
		}
	} else {
		for _, gr := range direct {
			if err := s.direct(ctx, gr); err != nil {
				return nil, err
			}
		}
	}
	if !opt.Refit {
		for k, o := range y.Observed {
			if o {
				out.Y.Values[k] = y.Values[k]
			}
		}
	}
	progress("done", 1)
	out.Elapsed = time.Since(start)
	return out, nil
}

// parallelGroups says whether the direct groups are solved side by side
// (one per worker, serial linear algebra) rather than one after the other
// with threaded linear algebra: when there are several per worker and none
// is large enough for a threaded factorization to pay.
func parallelGroups(gs []*group) bool {
	t := linalg.Threads()
	if t < 2 || len(gs) < 2*t {
		return false
	}
	for _, g := range gs {
		if len(g.obs) > 1500 {
			return false
		}
	}
	return true
}

// groupRows groups the rows by observed pattern (each row alone when
// naive) and returns the union of observed columns.
func groupRows(y *Matrix, naive bool) ([]*group, []int) {
	m, n := y.Rows, y.Cols
	words := (n + 63) / 64
	key := make([]byte, 8*words)
	index := map[string]*group{}
	var groups []*group
	inUnion := make([]bool, n)
	for i := 0; i < m; i++ {
		clear(key)
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				key[j/8] |= 1 << (j % 8)
				inUnion[j] = true
			}
		}
		if gr, ok := index[string(key)]; ok && !naive {
			gr.rows = append(gr.rows, i)
			continue
		}
		gr := &group{rows: []int{i}}
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				gr.obs = append(gr.obs, j)
			}
		}
		index[string(key)] = gr
		groups = append(groups, gr)
	}
	var union []int
	for j, in := range inUnion {
		if in {
			union = append(union, j)
		}
	}
	for _, gr := range groups {
		k := 0
		for _, j := range union {
			if k < len(gr.obs) && gr.obs[k] == j {
				k++
				continue
			}
			gr.miss = append(gr.miss, j)
		}
	}
	return groups, union
}

// Cost model in flops (multiply-adds count 2).
func directCost(s, rows, n int) float64 {
	fs, fr, fn := float64(s), float64(rows), float64(n)
	return fs*fs*fs/3 + 2*fs*fs*fr + 2*fr*fs*fn
}

func schurCost(u, r, rows, n int) float64 {
	fu, fr, fm, fn := float64(u), float64(r), float64(rows), float64(n)
	// W = Ỹ·H, the residual check Ỹ-sized GEMM, H[M,M] factor and solve,
	// the correction T·H[M,:], the prediction X·G[U,:].
	return 4*fm*fu*fu + fr*fr*fr/3 + 2*fr*fr*fm + 2*fm*fr*fu + 2*fm*fu*fn
}

func sharedCost(u int) float64 { fu := float64(u); return fu * fu * fu } // Cholesky + inverse

// choose marks the groups served by the shared inverse and plans memory.
func choose(groups []*group, u, n, m int, strategy string) (MemoryPlan, float64) {
	direct, mixed := 0.0, sharedCost(u)
	for _, gr := range groups {
		d := directCost(len(gr.obs), len(gr.rows), n)
		direct += d
		mixed += min(d, schurCost(u, len(gr.miss), len(gr.rows), n))
	}
	useSchur := strategy == StrategySchur || (strategy == StrategyAuto && mixed < direct)
	flops := direct
	maxS, maxR, schurRows, maxRows := 0, 0, 0, 0
	for _, gr := range groups {
		if useSchur && (strategy == StrategySchur || schurCost(u, len(gr.miss), len(gr.rows), n) < directCost(len(gr.obs), len(gr.rows), n)) {
			gr.schur = true
			maxR = max(maxR, len(gr.miss))
			schurRows += len(gr.rows)
		} else {
			maxS = max(maxS, len(gr.obs))
			maxRows = max(maxRows, len(gr.rows))
		}
	}
	if useSchur {
		flops = mixed
	}
	b := func(k int) uint64 { return 8 * uint64(k) }
	plan := MemoryPlan{Items: []MemoryItem{
		{"input and completed matrices", b(3 * m * n)},
		{fmt.Sprintf("column kernel G (%d×%d)", n, n), b(n * n)},
	}}
	if maxS > 0 {
		var direct []*group
		for _, gr := range groups {
			if !gr.schur {
				direct = append(direct, gr)
			}
		}
		workers := 1
		if parallelGroups(direct) {
			workers = linalg.Threads()
		}
		plan.Items = append(plan.Items, MemoryItem{fmt.Sprintf("%d × the largest factorization G[S,S] and its columns (%d×%d + %d×%d), right-hand sides and predictions of its %d rows", workers, maxS, maxS, maxS, n, maxRows), uint64(workers) * b(maxS*maxS+maxS*n+maxS*maxRows+maxRows*n)})
	}
	if schurRows > 0 {
		rows := min(schurRows, chunkRows(u, n))
		w := uint64(linalg.Threads()) // the per-group blocks, one set per worker at most
		plan.Items = append(plan.Items, MemoryItem{fmt.Sprintf("shared factor and inverse of G[U,U] (2 × %d×%d)", u, u), b(2 * u * u)},
			MemoryItem{fmt.Sprintf("a chunk of %d rows", rows), b(4 * rows * max(u, n))},
			MemoryItem{fmt.Sprintf("%d × the Schur blocks (%d×%d + %d×%d)", w, maxR, maxR, maxR, u), w * b(maxR*maxR+maxR*u)})
	}
	return plan, flops
}

// chunkRows bounds the rows of a Schur chunk to about 64 MB per buffer.
func chunkRows(u, n int) int { return max(1, (8<<20)/max(u, n, 1)) }

type solver struct {
	y        *Matrix
	g        []float64
	n        int
	ridge    float64
	out      []float64
	flops    float64
	done     float64
	progress func(string, float64)
	mu       sync.Mutex // guards done and progress calls
}

func (s *solver) advance(stage string, f float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done += f
	if s.flops > 0 {
		s.progress(stage, s.done/s.flops)
	}
}

// gatherSym copies G[a,b] (len a × len b) into dst (+ridge on the diagonal
// when a and b are the same set).
func (s *solver) gather(a, b []int, dst []float64, ridge float64) {
	n := s.n
	for r, i := range a {
		row := s.g[i*n:]
		d := dst[r*len(b):]
		for c, j := range b {
			d[c] = row[j]
		}
	}
	if ridge != 0 {
		for r := range a {
			dst[r*len(b)+r] += ridge
		}
	}
}

// direct solves one group with its own Cholesky of G[S,S] + λI.
func (s *solver) direct(ctx context.Context, gr *group) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n, sz, nr := s.n, len(gr.obs), len(gr.rows)
	a := make([]float64, sz*sz)
	s.gather(gr.obs, gr.obs, a, s.ridge)
	diag := diagonal(a, sz)
	bad, err := linalg.CholeskyCtx(ctx, sz, a, sz)
	if err != nil {
		return err
	}
	bad = weakPivot(bad, a, diag)
	if bad >= 0 {
		return fmt.Errorf("%w on the %d columns observed in %s (%d rows share them), at %s: two of them have parallel prior embeddings, or the kernel is nearly singular; add a ridge (--ridge) or an identity part (--prior-identity)",
			ErrNotPD, sz, s.y.RowName(gr.rows[0]), nr, s.y.ColName(gr.obs[bad]))
	}
	b := make([]float64, sz*nr) // s × rows
	for c, i := range gr.rows {
		for r, j := range gr.obs {
			b[r*nr+c] = s.y.Values[i*n+j]
		}
	}
	linalg.CholSolve(sz, nr, a, sz, b, nr)
	gs := make([]float64, sz*n)
	s.gather(gr.obs, seq(n), gs, 0)
	pred := make([]float64, nr*n)
	linalg.Gemm(true, false, nr, n, sz, 1, b, nr, gs, n, 0, pred, n)
	for c, i := range gr.rows {
		copy(s.out[i*n:(i+1)*n], pred[c*n:(c+1)*n])
	}
	s.advance("solve", directCost(sz, nr, n))
	return nil
}

func diagonal(a []float64, n int) []float64 {
	d := make([]float64, n)
	for k := range d {
		d[k] = a[k*n+k]
	}
	return d
}

// pivotTol: a Cholesky pivot L_kk² below pivotTol·A_kk means column k is
// a combination of the earlier ones to about 6 digits (a condition number
// near 1e12): the solve would be noise, so it counts as a failure.
const pivotTol = 1e-12

// weakPivot returns bad if the factorization failed, else the first
// column whose pivot is below pivotTol of its diagonal, else −1.
func weakPivot(bad int, l, diag []float64) int {
	if bad >= 0 {
		return bad
	}
	n := len(diag)
	for k := 0; k < n; k++ {
		if p := l[k*n+k]; p*p < pivotTol*diag[k] {
			return k
		}
	}
	return -1
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// schurGroups serves the groups through H = (G[U,U] + λI)⁻¹. For a row
// with observed S = U ∖ M, zero-padding y to ỹ on U and solving
// (G[U,U] + λI)x = ỹ + t with t supported on M chosen so that x_M = 0 gives
// x_S = (G[S,S] + λI)⁻¹ y_S: with w = Hỹ, t = −H[M,M]⁻¹ w_M and
// x = w + H[:,M] t. Rows are batched so that w and the predictions are
// GEMMs. A group whose residual ‖G[S,S]x_S + λx_S − y_S‖ exceeds
// schurResidual of ‖y_S‖ (an ill-conditioned G[U,U]: the explicit inverse
// loses about cond(G[U,U])·1e-16) is returned to be solved directly; so is
// every group when G[U,U] itself is singular.
func (s *solver) schurGroups(ctx context.Context, union []int, groups []*group) ([]*group, error) {
	n, u := s.n, len(union)
	pos := make([]int, n) // column → position in U, −1 outside
	for j := range pos {
		pos[j] = -1
	}
	for k, j := range union {
		pos[j] = k
	}
	l := make([]float64, u*u)
	s.gather(union, union, l, s.ridge)
	diag := diagonal(l, u)
	bad, err := linalg.CholeskyProgress(ctx, u, l, u, func(f float64) {
		s.progress("factorize", f*sharedCost(u)/3/max(s.flops, 1))
	})
	if err != nil {
		return nil, err
	}
	if bad = weakPivot(bad, l, diag); bad >= 0 {
		// G[U,U] is singular, but each pattern's G[S,S] may not be (two
		// parallel columns never observed in the same row): solve them
		// directly, where a singular one is reported by name.
		return groups, nil
	}
	h := make([]float64, u*u)
	for k := 0; k < u; k++ {
		h[k*u+k] = 1
	}
	linalg.CholSolve(u, u, l, u, h, u)
	s.advance("factorize", sharedCost(u))
	gu := make([]float64, u*n) // G[U,:]
	s.gather(union, seq(n), gu, 0)
	guu := l // reuse: G[U,U] + λI for the residual check
	s.gather(union, union, guu, s.ridge)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var redo []*group
	limit := chunkRows(u, n)
	for start := 0; start < len(groups); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end, rows := start, 0
		for end < len(groups) && (end == start || rows+len(groups[end].rows) <= limit) {
			rows += len(groups[end].rows)
			end++
		}
		chunk := groups[start:end]
		start = end
		yt := make([]float64, rows*u)
		r := 0
		for _, gr := range chunk {
			for _, i := range gr.rows {
				for _, j := range gr.obs {
					yt[r*u+pos[j]] = s.y.Values[i*n+j]
				}
				r++
			}
		}
		x := make([]float64, rows*u)
		linalg.Gemm(false, false, rows, u, u, 1, yt, u, h, u, 0, x, u)
		// The correction of each group touches only its own rows of x:
		// many small groups are corrected side by side.
		offset := make([]int, len(chunk))
		for g, r := 1, 0; g < len(chunk); g++ {
			r += len(chunk[g-1].rows)
			offset[g] = r
		}
		failed := make([]bool, len(chunk))
		correct := func(g int) {
			gr, r := chunk[g], offset[g]
			nr, rm := len(gr.rows), len(gr.miss)
			if rm == 0 {
				return
			}
			c := make([]float64, rm*rm)
			for a, ja := range gr.miss {
				for b, jb := range gr.miss {
					c[a*rm+b] = h[pos[ja]*u+pos[jb]]
				}
			}
			if bad := linalg.Cholesky(rm, c, rm); bad >= 0 {
				failed[g] = true
				return
			}
			t := make([]float64, rm*nr) // −H[M,M]⁻¹ w_M, one column per row
			for q := 0; q < nr; q++ {
				for a, ja := range gr.miss {
					t[a*nr+q] = -x[(r+q)*u+pos[ja]]
				}
			}
			linalg.CholSolve(rm, nr, c, rm, t, nr)
			hm := make([]float64, rm*u)
			for a, ja := range gr.miss {
				copy(hm[a*u:(a+1)*u], h[pos[ja]*u:(pos[ja]+1)*u])
			}
			linalg.Gemm(true, false, nr, u, rm, 1, t, nr, hm, u, 1, x[r*u:], u)
			for q := 0; q < nr; q++ {
				for _, ja := range gr.miss {
					x[(r+q)*u+pos[ja]] = 0
				}
			}
		}
		if parallelGroups(chunk) {
			if err := linalg.Tasks(ctx, len(chunk), func(_, g int) { correct(g) }); err != nil {
				return nil, err
			}
		} else {
			for g := range chunk {
				correct(g)
			}
		}
		for g, f := range failed {
			if f {
				redo = append(redo, chunk[g])
			}
		}
		// Residual check: (G[U,U] + λI)x − ỹ on the observed columns.
		res := make([]float64, rows*u)
		linalg.Gemm(false, false, rows, u, u, 1, x, u, guu, u, 0, res, u)
		r = 0
		for _, gr := range chunk {
			nr := len(gr.rows)
			var num, den float64
			for q := 0; q < nr; q++ {
				for _, j := range gr.obs {
					d := res[(r+q)*u+pos[j]] - yt[(r+q)*u+pos[j]]
					num += d * d
					den += yt[(r+q)*u+pos[j]] * yt[(r+q)*u+pos[j]]
				}
			}
			if !(num <= schurResidual*schurResidual*max(den, 1e-300)) && !containsGroup(redo, gr) {
				redo = append(redo, gr)
			}
			r += nr
		}
		pred := make([]float64, rows*n)
		linalg.Gemm(false, false, rows, n, u, 1, x, u, gu, n, 0, pred, n)
		r = 0
		for _, gr := range chunk {
			for _, i := range gr.rows {
				copy(s.out[i*n:(i+1)*n], pred[r*n:(r+1)*n])
				r++
			}
			s.advance("solve", schurCost(u, len(gr.miss), len(gr.rows), n))
		}
	}
	sort.Slice(redo, func(a, b int) bool { return redo[a].rows[0] < redo[b].rows[0] })
	return redo, nil
}

// schurResidual is the relative residual above which a Schur-served group
// is re-solved directly. A direct Cholesky solve leaves ~1e-15; 1e-10
// admits a shared G[U,U] of condition up to about 1e6, and keeps the
// forward error of a pattern near cond(G[S,S])·1e-10.
const schurResidual = 1e-10

func containsGroup(gs []*group, g *group) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

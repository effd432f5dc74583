package rfm

import (
	"errors"
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/solve"
)

// ErrTooLarge is matched (errors.Is) by the refusal of a fit or a
// prediction that would not fit in memory; so is solve.ErrTooLarge, the
// kernel matrix's own refusal.
var ErrTooLarge = errors.New("not enough memory")

// tooLarge is a plan's refusal: its message names the buffer at fault, so
// it does not repeat the generic text of the sentinels it matches.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }

func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge || target == solve.ErrTooLarge }

// FitShape is the size of a fit, as far as memory goes.
type FitShape struct {
	N       int // training rows
	Valid   int // validation rows given apart (0 for a holdout of N)
	D       int // features
	Outputs int // classes (classification) or target columns
	// Threads working at once (0: the linear algebra's thread count).
	Threads int
	// DataHeld says the training and validation matrices are already in
	// memory (Fit's own check): they count against an explicit limit but
	// not against the memory still available.
	DataHeld bool
}

// MemoryItem is one kind of large buffer of a plan: Count buffers of
// Bytes each.
type MemoryItem struct {
	What  string
	Count int
	Bytes uint64
	// Held: already allocated when the plan is checked (see FitShape.DataHeld).
	Held bool
	// Hint says how to shrink this item, for the refusal message.
	Hint string
}

// Total is Count × Bytes, saturating instead of overflowing.
func (it MemoryItem) Total() uint64 { return mulSat(uint64(it.Count), it.Bytes) }

// MemoryPlan sums the large buffers of a fit or a prediction: everything
// that grows with n², n·d, d², n·outputs or the thread count. Small,
// constant-size scratch is left out; the figures are upper bounds of what
// is alive at once, not of what is ever allocated.
type MemoryPlan struct {
	Items []MemoryItem
}

// Total is the sum of the items.
func (p *MemoryPlan) Total() uint64 {
	var t uint64
	for _, it := range p.Items {
		t = addSat(t, it.Total())
	}
	return t
}

func (p *MemoryPlan) add(what string, count int, bytes uint64, hint string) {
	if count > 0 && bytes > 0 {
		p.Items = append(p.Items, MemoryItem{What: what, Count: count, Bytes: bytes, Hint: hint})
	}
}

// Check compares the plan with limit (bytes; 0: 90% of the memory
// available now, not checked when that is unknown) and, when it does not
// fit, returns an error wrapping ErrTooLarge that names the largest item,
// its size, the total and what to change.
func (p *MemoryPlan) Check(limit uint64) error {
	total := p.Total()
	allowed := limit
	auto := limit == 0
	if auto {
		avail, ok := MemoryAvailable()
		if !ok {
			return nil
		}
		allowed = avail / 10 * 9
		for _, it := range p.Items { // already in memory: not taken from what is left
			if it.Held {
				total -= it.Total()
			}
		}
	}
	if total <= allowed {
		return nil
	}
	var big MemoryItem
	for _, it := range p.Items {
		if !(auto && it.Held) && it.Total() > big.Total() {
			big = it
		}
	}
	figure := sysmem.Human(big.Bytes)
	if big.Count > 1 {
		figure = fmt.Sprintf("%d × %s", big.Count, sysmem.Human(big.Bytes))
	}
	what := "allowed (--memory-limit)"
	if auto {
		what = "available"
	}
	msg := fmt.Sprintf("%s needs %s", big.What, figure)
	if total != big.Total() {
		msg += fmt.Sprintf(" (%s in all)", sysmem.Human(total))
	}
	msg += fmt.Sprintf(", %s %s", sysmem.Human(allowed), what)
	if big.Hint != "" {
		msg += "; " + big.Hint
	}
	return &tooLarge{"not enough memory: " + msg}
}

// PlanFit lists the large buffers of Fit with cfg on data of shape s.
func PlanFit(s FitShape, cfg Config) *MemoryPlan {
	p := &MemoryPlan{}
	n, nv, d, c := max(s.N, 0), max(s.Valid, 0), max(s.D, 0), max(s.Outputs, 1)
	threads := s.Threads
	if threads <= 0 {
		threads = linalg.Threads()
	}
	all := n + nv // rows of the last solve when α is refitted on both
	nSolve := n
	if cfg.Refit && nv > 0 {
		nSolve = all
	}
	rowHint := "use fewer rows"
	featHint := "use fewer rows or features"
	// The caller's matrices.
	if all > 0 {
		p.Items = append(p.Items, MemoryItem{What: fmt.Sprintf("the data (%d rows × %d features)", all, d),
			Count: 1, Bytes: f64s(all, d), Held: s.DataHeld, Hint: featHint})
	}
	// Working copies of the rows: the holdout split, the prepared (row-
	// normalized) inputs kept as centres, the mapped inputs Z of the round
	// (two with a full M: the centred copy and its product with M^½), and
	// on refit the joined rows with their own prepared and mapped copies.
	copies := 4
	if !cfg.Diag {
		copies++
	}
	if cfg.Float32 {
		copies++ // float32 copies of Z for the solver and the AGOP (2 × half)
	}
	p.add(fmt.Sprintf("working copies of the %d×%d inputs", all, d), copies, f64s(all, d), featHint)
	// The kernel matrix, and its float64 fallback when a float32 one
	// proves not positive definite (the float32 one is dropped first); or
	// the Nyström solver's m×m factors and blocks.
	if cfg.Solver == SolverNystrom {
		m := cfg.Centers
		if m == 0 {
			m = DefaultCenters(nSolve)
		}
		m = min(m, nSolve)
		p.add(fmt.Sprintf("the Nyström solver with m = %d centres", m), 1,
			solve.NystromBytes(nSolve, m, c, d, threads, cfg.CenterChoice == CentersLeverage), "use fewer --centers")
	} else {
		kb := solve.MatrixBytes(nSolve, cfg.Float32)
		hint := "use --float32 (halves it), fewer training rows or --solver tree"
		if cfg.Float32 {
			hint = "use fewer training rows or --solver tree"
		}
		p.add(fmt.Sprintf("the %d×%d kernel matrix", nSolve, nSolve), 1, kb, hint)
	}
	// d×d matrices of a full M (round ≥ 1): the current M and the best
	// round's, the metric's copy and its square root, the AGOP's sum and
	// its back-transform; M^p adds the eigendecomposition's three. The
	// square root's own eigendecomposition happens before the AGOP's
	// buffers exist and needs no more than they do.
	if !cfg.Diag && (cfg.Iters > 0 || cfg.InitialM.Form == kernel.Full) {
		k := 6
		if pw := cfg.AGOPPower; pw != 0 && pw != 1 {
			k++
		}
		p.add(fmt.Sprintf("full M for d = %d (the d×d matrices)", d), k, f64s(d, d),
			"use a diagonal M (--diag, Config.Diag), whose memory grows with d, not d²")
	}
	// AGOP blocks: the block's kernel products and gradients
	// (rows × C·(d+1), working precision, plus rows × C·d in float64), its
	// query rows, and R stored whole when it is small.
	if cfg.Iters > 0 {
		m := min(cfg.AGOPSamples, n)
		rows := min(agopBlockRows(c, d), max(m, 1))
		w := uint64(8)
		if cfg.Float32 {
			w = 4
		}
		block := mulSat(uint64(rows)*uint64(c)*uint64(d+1), w)
		block = addSat(block, f64s(rows*c, d))
		block = addSat(block, mulSat(uint64(rows)*uint64(d), w))
		if r := mulSat(uint64(n)*uint64(c)*uint64(d+1), w); r <= 64<<20 {
			block = addSat(block, r)
		}
		p.add(fmt.Sprintf("the AGOP's gradient block (%d points × %d outputs × %d features)", rows, c, d), 1, block, featHint)
		if cfg.Kernel.Radial() {
			// The Gram form (chosen when C·d is large next to n): two
			// coefficient blocks of up to 32 MB, n×d and block×d products, and its
			// own n×n matrix (up to 256 MB) when the solver's float64
			// buffer cannot be lent (a float32 solve).
			gr := max(1, min(max(m, 1), (32<<20)/(8*max(n, 1))))
			gram := addSat(2*f64s(gr, n), f64s(n+2*gr, d))
			if cfg.Float32 {
				gram = addSat(gram, min(f64s(n, n), 256<<20))
			}
			p.add("the AGOP's Gram-form buffers", 1, gram, featHint)
		}
	}
	// Per thread: kernel tiles and right-hand-side chunks (Product: about
	// 2 × 128×1024 values plus 4 MB) and SymApply's n×C accumulator.
	perThread := addSat(8<<20, f64s(nSolve, c))
	p.add(fmt.Sprintf("per-thread blocks (%d threads)", threads), threads, perThread, "use fewer --threads")
	// Targets, coefficients and validation scores: n×C each, a few.
	p.add("targets, coefficients and scores", 4, f64s(all, c), rowHint)
	return p
}

// agopBlockRows mirrors agop's default block size (its buffers near 64 MB,
// at least 128 points).
// checkFit is Fit's check before anything is allocated: the memory plan,
// and that a homogeneous kernel's values (NTK, NNGP) will be finite.
func checkFit(cfg Config, train, valid *Dataset, outputs int) error {
	s := FitShape{N: train.N, D: train.D, Outputs: outputs, DataHeld: true}
	if valid != nil {
		s.Valid = valid.N
	}
	if err := PlanFit(s, cfg).Check(cfg.MemoryLimit); err != nil {
		return err
	}
	if cfg.NormalizeRows { // unit rows: nothing can overflow
		return nil
	}
	for _, k := range []*kernel.Spec{&cfg.Kernel, cfg.FinalKernel} {
		if k == nil {
			continue
		}
		if err := k.CheckScale(train.X, train.N, train.D, cfg.Float32 && k == &cfg.Kernel); err != nil {
			return fmt.Errorf("training data: %w", err)
		}
		if valid != nil {
			if err := k.CheckScale(valid.X, valid.N, valid.D, false); err != nil {
				return fmt.Errorf("validation data: %w", err)
			}
		}
	}
	return nil
}

func agopBlockRows(c, d int) int {
	return max(128, min(8192, (64<<20)/(16*max(c, 1)*(d+1))))
}

// PlanPredict lists the large buffers of predicting nq rows with m, a
// chunk of chunk rows at a time (0: all at once), on top of the loaded
// model: the query rows, their mapped copies per chunk, the outputs, the
// model's mapped centres (made once) and the per-thread blocks.
func PlanPredict(m *Model, nq, chunk, threads int) *MemoryPlan {
	p := &MemoryPlan{}
	if threads <= 0 {
		threads = linalg.Threads()
	}
	d, dm, c := m.D, m.Dm(), max(m.Outputs, 1)
	if chunk <= 0 || chunk > nq {
		chunk = nq
	}
	hint := "predict fewer rows at once"
	p.add(fmt.Sprintf("the %d query rows × %d features", nq, d), 1, f64s(nq, d), hint)
	maps := 2 // prepared rows and their mapped copy
	if m.M.Form == kernel.Full {
		maps++
	}
	p.add(fmt.Sprintf("mapped copies of %d query rows", chunk), maps, f64s(chunk, dm), hint)
	p.add(fmt.Sprintf("the %d×%d outputs", nq, c), 2, f64s(nq, c), hint)
	p.add(fmt.Sprintf("the model's mapped centres (%d×%d)", m.N, dm), 1, f64s(m.N, dm), "")
	if m.M.Form == kernel.Full {
		p.add(fmt.Sprintf("the metric's square root (%d×%d, with its eigendecomposition)", dm, dm), 4, f64s(dm, dm), "")
	}
	p.add(fmt.Sprintf("per-thread blocks (%d threads)", threads), threads, 8<<20, "use fewer --threads")
	return p
}

func f64s(a, b int) uint64 { return mulSat(mulSat(uint64(max(a, 0)), uint64(max(b, 0))), 8) }

func mulSat(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// MemoryAvailable is the kernel's estimate of the memory available to a
// new process (MemAvailable in /proc/meminfo), lowered to the cgroup's
// limit when the process runs in one; ok is false when neither can be read.
func MemoryAvailable() (bytes uint64, ok bool) { return sysmem.Available() }

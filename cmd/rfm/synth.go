package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/synth"
)

func cmdSynth(e *env, args []string) error {
	var (
		task    string
		n, d    int
		seed    uint64
		out     string
		egop    string
		balance float64
		xScale  float64
	)
	f := newFlagSet("synth", "rfm synth --task NAME [--n N] [--d D] [--seed S] [--out FILE]",
		`Write a synthetic regression task with known relevant features to CSV:
columns x0 ... x{d-1} and the target y.

  lowrank       x ~ N(0, 0.25 I), y = x0·x1·1[x5 > 0]      (needs d ≥ 6)
  product       x ~ N(0, I),      y = x0·x1                 (d ≥ 2)
  chain         y = Σ_{k<5} x_k·x_{(k+1) mod 5}             (d ≥ 5)
  single-index  y = He2(uᵀx) + He4(uᵀx), u a seeded unit vector
  linear        y = βᵀx, β a seeded unit vector
  alignment-reversing  the centred-NFA paper's Appendix F data (--balance γ,
                n = d = 1024 by default): a fraction γ of rows X₁ ~ N(0, 11ᵀ + ½I)
                with y = 1, the rest X₂ built from X₁'s eigenvectors so that
                X₂ᵀX₂ ≈ (X₁ᵀX₁)⁻² with y = 0; noise 0.01 on every entry, 1e-5 on
                every label. Rows of X₁ come first. --x-scale S draws X₁ from
                N(0, S²Σ) (X₂ shrinks by S): the paper leaves the scale implicit
                and its effect needs rows well below unit size (S = 0.004 at
                d = 1024, 0.01 at d = 256). 'rfm nfa --task alignment-reversing' measures the
                C-NFA on it.

An RFM should rank the relevant inputs first ('rfm inspect'). --egop writes the
target's exact expected gradient outer product E[∇y ∇yᵀ] (a d×d CSV, closed
form; the chain's eigenvalues are 4, 2.618, 2.618, 0.382, 0.382) and prints its
top eigenvalues on stderr: the ground truth that an RFM's M or a network's
W₁ᵀW₁ should match ('rfm nfa'). lowrank has none (its target jumps at x5 = 0).`,
		`rfm synth --task lowrank --n 2000 --d 20 --out lowrank.csv
rfm fit --data lowrank.csv --target y --out lowrank.rfm && rfm inspect --model lowrank.rfm
rfm synth --task alignment-reversing --balance 0.2 --out reversing.csv`)
	f.String(&task, "task", "", "generator `NAME`: "+synth.TaskNames())
	f.Int(&n, "n", 1000, "rows `N`")
	f.Int(&d, "d", 10, "features `D`")
	f.Uint64(&seed, "seed", 1, "random `SEED`")
	f.String(&out, "out", "", "write to `FILE` (atomically) instead of stdout")
	f.String(&egop, "egop", "", "also write the task's exact EGOP, d×d, to `FILE` (CSV)")
	f.Float(&balance, "balance", 0.5, "alignment-reversing: the fraction `γ` ∈ (0, 1] of rows labelled 1")
	f.Float(&xScale, "x-scale", 1, "alignment-reversing: the rows' scale `S` (X₁ ~ N(0, S²Σ))")
	if err := f.ParseFlags(args, e.stdout); err != nil {
		return err
	}
	if task == string(synth.AlignmentReversing) {
		return synthReversing(e, f, n, d, balance, xScale, seed, out, egop)
	}
	if f.IsSet("balance") || f.IsSet("x-scale") {
		return usagef("--balance and --x-scale go with --task alignment-reversing")
	}
	switch {
	case task == "":
		return usagef("--task is required: one of %s, %s", synth.TaskNames(), synth.AlignmentReversing)
	case !synth.IsTask(task):
		return usagef("--task %q: want one of %s, %s", task, synth.TaskNames(), synth.AlignmentReversing)
	case n < 1:
		return usagef("--n %d: must be ≥ 1", n)
	case d < 1:
		return usagef("--d %d: must be ≥ 1", d)
	case int64(n)*int64(d) > 1<<28:
		return usagef("--n %d × --d %d is too large for a CSV (at most 2^28 cells)", n, d)
	}
	if err := checkOutPath("out", out); err != nil {
		return err
	}
	data, err := synth.Generate(synth.Task(task), n, d, seed)
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	if egop != "" {
		if err := checkOutPath("egop", egop, out); err != nil {
			return err
		}
		g, err := synth.EGOP(synth.Task(task), d, seed)
		if err != nil {
			return usagef("--egop: %s", strings.TrimPrefix(err.Error(), "synth: "))
		}
		if err := modelfile.WriteAtomicContext(e.ctx, egop, func(w io.Writer) error { return synth.WriteMatrixCSV(w, g, d) }); err != nil {
			return err
		}
		vals, _, err := kernel.EigSym(d, g)
		if err != nil {
			return err
		}
		var top []string
		for i := d - 1; i >= max(0, d-6); i-- {
			top = append(top, strconv.FormatFloat(vals[i], 'f', 3, 64))
		}
		fmt.Fprintf(e.stderr, "synth: EGOP of %s in d = %d → %s; top eigenvalues %s\n", task, d, egop, strings.Join(top, ", "))
	}
	write := func(w io.Writer) error { return synth.WriteCSV(w, data) }
	if out == "" {
		return write(e.stdout)
	}
	return modelfile.WriteAtomicContext(e.ctx, out, write)
}

// synthReversing writes the alignment reversing dataset (n = d = 1024
// unless --n or --d is given).
func synthReversing(e *env, f *flagSet, n, d int, balance, xScale float64, seed uint64, out, egop string) error {
	if egop != "" {
		return usagef("--egop: alignment-reversing has no EGOP (its labels are a class, not a function of x)")
	}
	o := synth.DefaultReversing(balance)
	if f.IsSet("n") {
		o.N = n
	}
	if f.IsSet("d") {
		o.D = d
	}
	o.Seed = seed
	if !(xScale > 0) {
		return usagef("--x-scale %v: must be positive", xScale)
	}
	o.Scale = xScale
	if err := o.Validate(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	if err := checkOutPath("out", out); err != nil {
		return err
	}
	r, err := synth.AlignmentReversingData(e.ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "synth: alignment-reversing γ = %g: %d rows of X₁ (y = 1), %d of X₂ (y = 0), d = %d; X₂ paired with %d directions of X₁ᵀX₁\n",
		balance, r.N1, r.N-r.N1, r.D, r.Paired)
	write := func(w io.Writer) error { return synth.WriteCSV(w, &r.Data) }
	if out == "" {
		return write(e.stdout)
	}
	return modelfile.WriteAtomicContext(e.ctx, out, write)
}

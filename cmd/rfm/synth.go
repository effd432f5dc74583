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
	f := helpFlagSet("synth", "rfm synth --task NAME [--n N] [--d D] [--seed S] [--out FILE]")
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

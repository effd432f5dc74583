package describe

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// Target describes the target: its name, task and classes (or mean and
// standard deviation).
func Target(tg *dataset.Target) string {
	if tg.IsClassification() {
		return fmt.Sprintf("%s: classification, %d classes (%s)", tg.Name, tg.NumClasses(), JoinLimited(tg.Classes, 10))
	}
	return fmt.Sprintf("%s: regression (mean %.4g, std %.4g)", tg.Name, tg.Mean, tg.Std)
}

// Config describes an engine configuration in one line: kernel, ridge,
// AGOP updates, the metric and the options that are not the default.
func Config(c rfm.Config) string {
	metric := "full M"
	if c.Diag {
		metric = "diagonal M"
	}
	if p := c.AGOPPower; p != 0 && p != 1 {
		metric += fmt.Sprintf(" = AGOP^%g", p)
	}
	s := fmt.Sprintf("%s, ridge %g, %d AGOP updates, %s (%s-normalized", c.Kernel, c.Ridge, c.Iters, metric, c.MNorm)
	if c.Centered {
		s += ", centered"
	}
	s += ")"
	if c.AdaptiveBandwidth > 0 {
		s += fmt.Sprintf(", adaptive bandwidth ×%g", c.AdaptiveBandwidth)
	}
	if c.NormalizeRows {
		s += ", unit-norm rows"
	}
	if c.Float32 {
		s += ", float32 solve"
	}
	if c.FinalKernel != nil {
		s += fmt.Sprintf(", final kernel %s", *c.FinalKernel)
	}
	if c.Loss == rfm.LossLogistic {
		s += ", logistic loss (kernel logistic regression head)"
	}
	return s
}

// Best is the line on the round a model kept: its validation score beside
// the plain kernel's, the head on that M and whether α was refitted.
func Best(m *rfm.Model, validated bool) string {
	var b strings.Builder
	if len(m.History) == 0 {
		return ""
	}
	best := m.History[min(m.BestRound, len(m.History)-1)]
	switch {
	case !validated:
		fmt.Fprintf(&b, "kept round %d (no validation rows)", m.BestRound)
	case m.Task == rfm.Classification:
		fmt.Fprintf(&b, "best round %d: validation accuracy %.4f (round 0, the plain kernel: %.4f)", m.BestRound, best.ValAccuracy, m.History[0].ValAccuracy)
	default:
		fmt.Fprintf(&b, "best round %d: validation loss %.4g (round 0, the plain kernel: %.4g)", m.BestRound, best.ValLoss, m.History[0].ValLoss)
	}
	if h := m.Head; h != nil && validated {
		head := fmt.Sprintf("final kernel %s", m.KernelUsed)
		if m.Config.Loss == rfm.LossLogistic {
			if m.Config.FinalKernel != nil {
				head = "logistic head with the " + head
			} else {
				head = "logistic head"
			}
			if h.Steps > 0 {
				head += fmt.Sprintf(" (%d steps", h.Steps)
				if h.StepLimit {
					head += ", stopped at the limit before its tolerance"
				}
				head += ")"
			}
		}
		if m.Task == rfm.Classification {
			fmt.Fprintf(&b, "; %s on that M: validation accuracy %.4f", head, h.ValAccuracy)
		} else {
			fmt.Fprintf(&b, "; %s on that M: validation loss %.4g", head, h.ValLoss)
		}
	}
	switch {
	case m.Refitted && m.Config.Solver == rfm.SolverNystrom:
		// m.N counts the centres: the model does not keep the rows' count.
		fmt.Fprintf(&b, "; α refitted on all training rows (Nyström on %d centres)", m.N)
	case m.Refitted:
		fmt.Fprintf(&b, "; α refitted on all %d rows", m.N)
	}
	b.WriteString("\n")
	return b.String()
}

// WriteHistory prints the per-round table; the chosen round is starred.
// The timing columns appear for a fit just made: model files do not store
// timings (so that equal fits give equal files), and inspect leaves them out.
func WriteHistory(w io.Writer, h []rfm.Round, best int, task rfm.Task, validated bool) {
	timed, solved := false, false
	for _, r := range h {
		timed = timed || r.FitSeconds > 0
		solved = solved || SolveNote(r) != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "round\tbandwidth\t"
	if task == rfm.Classification {
		head += "val_accuracy\t"
	}
	head += "val_loss\t"
	if timed {
		head += "fit_s\tagop_s\t"
	}
	if solved {
		head += "solve\t"
	}
	fmt.Fprint(tw, head+"\n")
	for _, r := range h {
		mark := "  "
		if r.Round == best {
			mark = "* "
		}
		acc, loss := fmt.Sprintf("%.4f", r.ValAccuracy), fmt.Sprintf("%.5g", r.ValLoss)
		bw := fmt.Sprintf("%.4g", r.Bandwidth)
		if r.Bandwidth == 0 { // ntk, nngp: no bandwidth
			bw = "-"
		}
		if !validated {
			acc, loss = "-", "-"
		}
		row := fmt.Sprintf("%s%d\t%s\t", mark, r.Round, bw)
		if task == rfm.Classification {
			row += acc + "\t"
		}
		row += loss + "\t"
		if timed {
			agop := "-"
			if r.AGOPSeconds > 0 {
				agop = fmt.Sprintf("%.2f", r.AGOPSeconds)
			}
			row += fmt.Sprintf("%.2f\t%s\t", r.FitSeconds, agop)
		}
		if solved {
			note := SolveNote(r)
			if note == "" {
				note = "-"
			}
			row += note + "\t"
		}
		fmt.Fprint(tw, row+"\n")
	}
	tw.Flush()
}

// SolveNote says how a round's solve departed from the plain one asked
// for: a float32 fit solved in float64, a jitter added to the diagonal, a
// float32 residual left above solve.RefineTol; "" when none.
func SolveNote(r rfm.Round) string {
	var parts []string
	if r.Float64Solve {
		parts = append(parts, "float64")
	}
	if r.Jitter > 0 {
		parts = append(parts, fmt.Sprintf("jitter %.2g", r.Jitter))
	}
	if r.Residual > 0 {
		parts = append(parts, fmt.Sprintf("residual %.2g", r.Residual))
	}
	return strings.Join(parts, ", ")
}

// JoinLimited joins the first most strings with ", " and counts the rest.
func JoinLimited(s []string, most int) string {
	if len(s) <= most {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:most], ", ") + fmt.Sprintf(", ... %d more", len(s)-most)
}

// Finite maps NaN and ±Inf to nil so they appear as null in JSON.
func Finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

package complete

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
)

// RunOptions say what Study.Run does besides completing: the holdouts it
// scores and where the completed matrix goes.
type RunOptions struct {
	Data           string  // the matrix's name in the report and errors
	Holdout        float64 // score on this share of the observed cells (0: none)
	HoldoutColumns int     // score on this many held-out columns (0: none)
	Seed           uint64  // of the holdouts
	// Out names the completed matrix's file in the report; Write writes
	// it. Without Write and with a holdout, Run does not complete.
	Out   string
	Write func(*Matrix) error
}

// Run is rfm complete: it scores the holdouts, then completes y when there
// is something to complete and the completion is wanted (Write is set, or
// no holdout is scored), and returns the report. The holdouts' errors name
// the flags.
func (s *Study) Run(ctx context.Context, y *Matrix, o RunOptions) (*Report, error) {
	report := s.NewReport(o.Data, y)
	start := time.Now()
	if err := s.ScoreHoldouts(ctx, y, o.Holdout, o.HoldoutColumns, o.Seed, report); err != nil {
		var he *HoldoutError
		if errors.As(err, &he) {
			flag := map[bool]string{false: "--holdout", true: "--holdout-columns"}[he.Columns]
			if he.Split {
				return nil, cli.Usagef("%s: %v", flag, he.Err)
			}
			err = fmt.Errorf("%s: %w", flag, he.Err)
		}
		return nil, err
	}
	scored := o.Holdout > 0 || o.HoldoutColumns > 0
	if y.Count() == y.Rows*y.Cols {
		if !scored {
			return nil, fmt.Errorf("%s: every one of the %d×%d entries is observed: there is nothing to complete (--holdout F scores the completion on held-out entries)", o.Data, y.Rows, y.Cols)
		}
		report.Note = "every entry is observed: nothing to complete"
		if o.Write != nil {
			report.Note += "; --out was not written"
		}
	} else if o.Write != nil || !scored {
		res, err := s.Complete(ctx, y)
		if err != nil {
			return nil, err
		}
		report.Fill(res)
		if o.Write != nil {
			if err := o.Write(res.Y); err != nil {
				return nil, err
			}
			report.Out = o.Out
		}
	}
	report.Seconds = time.Since(start).Seconds()
	return report, nil
}

// Summary is the one-line summary of the report.
func (r *Report) Summary() string {
	s := fmt.Sprintf("completed %d×%d (%d observed) in %s", r.Rows, r.Cols, r.Observed, cli.Clock(time.Duration(r.Seconds*float64(time.Second))))
	if r.Groups > 0 {
		s += fmt.Sprintf("; %d observed patterns (%d direct, %d through the shared inverse), plan %s", r.Groups, r.Direct, r.Schur, sysmem.Human(r.Memory))
	}
	return s
}

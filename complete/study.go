package complete

import (
	"context"
	"fmt"
	"time"
)

// Study is a completion experiment as rfm complete runs it: how the
// feature prior of a (training) matrix is built, the model's options, and
// the baselines scored beside the NTK on a holdout.
type Study struct {
	// Priors names the priors to concatenate (see ParsePriors); Meta is
	// the metadata prior, needed when Priors holds "metadata".
	Priors []string
	Meta   *Prior
	// Bias is appended as a constant coordinate to each prior's embeddings
	// before normalizing (0: none); Identity·I is concatenated when > 0.
	Bias, Identity float64
	Options        Options
	// Baselines also scores row-mean, column-mean and rank-SVDRank SVD
	// imputation on a holdout.
	Baselines bool
	SVDRank   int
}

// Prior builds the prior of a (training) matrix y: the named priors, each
// with the bias coordinate, concatenated, plus Identity·I.
func (s *Study) Prior(y *Matrix) (*Prior, error) {
	var parts []*Prior
	var weights []float64
	for _, name := range s.Priors {
		switch name {
		case "onehot":
			parts = append(parts, OneHot(y.Cols))
		case "metadata":
			if s.Meta == nil {
				return nil, fmt.Errorf("complete: the metadata prior needs Study.Meta")
			}
			parts = append(parts, s.Meta)
		case "observed":
			p, err := ObservedPrior(y)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		default:
			return nil, fmt.Errorf("complete: unknown prior %q (want %v)", name, PriorNames())
		}
		if s.Bias != 0 {
			parts[len(parts)-1] = parts[len(parts)-1].WithBias(s.Bias)
		}
		weights = append(weights, 1)
	}
	if s.Identity > 0 {
		parts = append(parts, OneHot(y.Cols))
		weights = append(weights, s.Identity)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("complete: no prior named")
	}
	if len(parts) == 1 {
		p := *parts[0]
		p.E = append([]float64(nil), p.E...)
		return &p, p.Normalize(y.ColName)
	}
	return Concat(y.ColName, weights, parts...)
}

// Complete completes y with the study's prior and options.
func (s *Study) Complete(ctx context.Context, y *Matrix) (*Result, error) {
	pr, err := s.Prior(y)
	if err != nil {
		return nil, err
	}
	return Complete(ctx, y, pr, s.Options)
}

// HoldoutReport is the scoring of one holdout.
type HoldoutReport struct {
	Share     float64           `json:"share,omitempty"`
	Columns   []string          `json:"columns,omitempty"`
	Cells     int               `json:"cells"`
	NTK       Scores            `json:"ntk"`
	Baselines map[string]Scores `json:"baselines,omitempty"`
	Seconds   float64           `json:"seconds"`
}

// Score completes the holdout's training matrix and scores the completion
// (and with Baselines the baselines) on the held-out cells. Share is left
// for the caller; Columns holds the ids of held-out columns.
func (s *Study) Score(ctx context.Context, h *Holdout) (*HoldoutReport, error) {
	start := time.Now()
	res, err := s.Complete(ctx, h.Train)
	if err != nil {
		return nil, err
	}
	r := &HoldoutReport{Cells: len(h.Cells), NTK: h.Score(res.Y), Seconds: time.Since(start).Seconds()}
	if s.Baselines {
		r.Baselines = map[string]Scores{
			"row_mean":    h.Score(RowMean(h.Train)),
			"column_mean": h.Score(ColumnMean(h.Train)),
		}
		rank := min(max(s.SVDRank, 1), h.Train.Rows, h.Train.Cols)
		svd, _, err := SVDImpute(ctx, h.Train, rank, 500, 1e-6)
		if err != nil {
			return nil, err
		}
		r.Baselines[fmt.Sprintf("svd_rank%d", rank)] = h.Score(svd)
	}
	for _, j := range h.Columns {
		r.Columns = append(r.Columns, h.Train.ColID(j))
	}
	return r, nil
}

// Report summarizes a completion study of one matrix.
type Report struct {
	Data           string         `json:"data"`
	Rows           int            `json:"rows"`
	Cols           int            `json:"columns"`
	Observed       int            `json:"observed"`
	Prior          string         `json:"prior"`
	Depth          int            `json:"depth"`
	Activation     string         `json:"activation"`
	Ridge          float64        `json:"ridge"`
	Strategy       string         `json:"strategy"`
	Groups         int            `json:"patterns,omitempty"`
	Direct         int            `json:"direct_patterns,omitempty"`
	Schur          int            `json:"schur_patterns,omitempty"`
	Union          int            `json:"observed_columns,omitempty"`
	Memory         uint64         `json:"memory_bytes,omitempty"`
	Holdout        *HoldoutReport `json:"holdout,omitempty"`
	HoldoutColumns *HoldoutReport `json:"holdout_columns,omitempty"`
	Out            string         `json:"out,omitempty"`
	Note           string         `json:"note,omitempty"`
	Seconds        float64        `json:"seconds"`
}

// NewReport starts the report of the study of matrix y read from data.
func (s *Study) NewReport(data string, y *Matrix) *Report {
	prior := ""
	for i, p := range s.Priors {
		if i > 0 {
			prior += ","
		}
		prior += p
	}
	return &Report{Data: data, Rows: y.Rows, Cols: y.Cols, Observed: y.Count(), Prior: prior,
		Depth: s.Options.Depth, Activation: s.Options.Activation.String(), Ridge: s.Options.Ridge, Strategy: s.Options.Strategy}
}

// Fill records a completion's plan in the report.
func (r *Report) Fill(res *Result) {
	r.Groups, r.Direct, r.Schur, r.Union = res.Groups, res.Direct, res.Schur, res.Union
	r.Memory = res.Plan.Total()
}

// ColID is the id of column j, or "c<j>" when the matrix has no column ids.
func (y *Matrix) ColID(j int) string {
	if y.ColIDs != nil {
		return y.ColIDs[j]
	}
	return fmt.Sprintf("c%d", j)
}

// AddColumns returns y with entirely missing columns of the given ids
// appended (their cells unobserved); an id already a column is an error.
func AddColumns(y *Matrix, ids []string) (*Matrix, error) {
	have := map[string]bool{}
	for j := 0; j < y.Cols; j++ {
		have[y.ColID(j)] = true
	}
	var add []string
	for _, id := range ids {
		if have[id] {
			return nil, fmt.Errorf("%q is already a column of the matrix", id)
		}
		have[id] = true
		add = append(add, id)
	}
	n := y.Cols + len(add)
	z := NewMatrix(y.Rows, n)
	z.RowIDs = y.RowIDs
	z.ColIDs = make([]string, 0, n)
	for j := 0; j < y.Cols; j++ {
		z.ColIDs = append(z.ColIDs, y.ColID(j))
	}
	z.ColIDs = append(z.ColIDs, add...)
	for i := 0; i < y.Rows; i++ {
		copy(z.Values[i*n:], y.Values[i*y.Cols:(i+1)*y.Cols])
		copy(z.Observed[i*n:], y.Observed[i*y.Cols:(i+1)*y.Cols])
	}
	return z, nil
}

// HoldoutError is ScoreHoldouts' error: the holdout of entries or of
// whole columns (Columns) could not be split (Split) or scored.
type HoldoutError struct {
	Columns, Split bool
	Err            error
}

func (e *HoldoutError) Error() string {
	what := "holdout of entries"
	if e.Columns {
		what = "holdout of columns"
	}
	return what + ": " + e.Err.Error()
}

func (e *HoldoutError) Unwrap() error { return e.Err }

// ScoreHoldouts scores the study on a seeded share of y's observed cells
// (share > 0, into r.Holdout) and on cols seeded, entirely held-out
// columns (cols > 0, into r.HoldoutColumns).
func (s *Study) ScoreHoldouts(ctx context.Context, y *Matrix, share float64, cols int, seed uint64, r *Report) error {
	for _, columns := range []bool{false, true} {
		var h *Holdout
		var err error
		switch {
		case !columns && share > 0:
			h, err = HoldoutEntries(y, share, seed)
		case columns && cols > 0:
			h, err = HoldoutColumns(y, cols, seed)
		default:
			continue
		}
		if err != nil {
			return &HoldoutError{Columns: columns, Split: true, Err: err}
		}
		sc, err := s.Score(ctx, h)
		if err != nil {
			return &HoldoutError{Columns: columns, Err: err}
		}
		if columns {
			r.HoldoutColumns = sc
		} else {
			sc.Share = share
			r.Holdout = sc
		}
	}
	return nil
}

package tune

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

// Columns is the header of the trials table.
var Columns = []string{"trial", "bracket", "rung", "rows", "status", "accuracy", "loss", "round",
	"plain_accuracy", "plain_loss", "seconds", "scaling", "kernel", "bandwidth", "bandwidth_ratio", "exponent",
	"ridge", "diag", "agop_power", "norm", "centered", "normalize_rows", "iters", "loss", "power", "key",
	"fold_loss", "plain_fold_loss"}

// foldColumns is how many columns at the end of Columns a table written
// before them lacks (the per-split losses, joined by ';'): such a table is
// still read, its trials without fold losses.
const foldColumns = 2

// Record is t as a row of the trials table (Columns). Accuracies are left
// empty for regression and scores for a trial that has none.
func (t *Trial) Record(classification bool) []string {
	// Every digit: a resumed search ranks the leaders of its local draws
	// by these scores, and rounding could turn an order into a tie.
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	acc, loss, pacc, ploss, round := "", "", "", "", ""
	if t.Scored() {
		loss, ploss, round = f(t.Loss), f(t.PlainLoss), strconv.Itoa(t.Round)
		if classification {
			acc, pacc = f(t.Accuracy), f(t.PlainAccuracy)
		}
	}
	c := t.Config
	exp, power := "", ""
	if c.Kernel.Kind == kernel.GenLaplace || c.Kernel.Kind == kernel.LpLaplace {
		exp = f(c.Kernel.Exponent)
	}
	if c.Kernel.Kind == kernel.LpLaplace {
		power = f(c.Kernel.Power)
	}
	lossName := string(c.Loss)
	if lossName == "" {
		lossName = string(rfm.LossSquared)
	}
	ratio := ""
	if t.Ratio > 0 {
		ratio = f(t.Ratio)
	}
	return []string{strconv.Itoa(t.Index), strconv.Itoa(t.Bracket), strconv.Itoa(t.Rung), strconv.Itoa(t.Rows), t.Status,
		acc, loss, round, pacc, ploss, strconv.FormatFloat(t.Seconds, 'f', 3, 64), t.Scaling,
		string(c.Kernel.Kind), f(c.Kernel.Bandwidth), ratio, exp, f(c.Ridge), strconv.FormatBool(c.Diag),
		f(c.AGOPPower), string(c.MNorm), strconv.FormatBool(c.Centered), strconv.FormatBool(c.NormalizeRows),
		strconv.Itoa(c.Iters), lossName, power, t.Key, joinLosses(t.FoldLoss, f), joinLosses(t.PlainFoldLoss, f)}
}

// joinLosses writes per-split losses joined by ';' ("" for none).
func joinLosses(v []float64, f func(float64) string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = f(x)
	}
	return strings.Join(s, ";")
}

// ReadCache reads a trials table written by an earlier search and returns
// its scored trials by key, for Options.Cache. Rows that were cut or failed
// are left out (they are tried again). A malformed table is an error that
// names the line and column.
func ReadCache(r io.Reader) (map[string]Trial, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return map[string]Trial{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trials table: %w", err)
	}
	width := len(Columns)
	if len(head) == width-foldColumns {
		width = len(head)
	}
	if len(head) != width {
		return nil, fmt.Errorf("trials table: %d columns, want %d (not a table written by rfm tune)", len(head), len(Columns))
	}
	for i, name := range Columns[:width] {
		if head[i] != name {
			return nil, fmt.Errorf("trials table: column %d is %q, want %q (not a table written by rfm tune)", i+1, head[i], name)
		}
	}
	col := func(name string) int {
		for i, c := range Columns {
			if c == name {
				return i
			}
		}
		panic("tune: no column " + name)
	}
	out := map[string]Trial{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("trials table: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, fmt.Errorf("trials table line %d: %d fields, want %d", line, len(rec), width)
		}
		t := Trial{Status: rec[col("status")], Key: rec[col("key")]}
		if !t.Scored() {
			continue
		}
		t.Status = StatusOK
		num := func(name string, dst *float64, optional bool) error {
			s := rec[col(name)]
			if s == "" && optional {
				return nil
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("trials table line %d, column %q: %q is not a finite number", line, name, s)
			}
			*dst = v
			return nil
		}
		var round float64
		for _, e := range []error{
			num("accuracy", &t.Accuracy, true), num("loss", &t.Loss, false), num("round", &round, false),
			num("plain_accuracy", &t.PlainAccuracy, true), num("plain_loss", &t.PlainLoss, false),
			num("seconds", &t.Seconds, false),
		} {
			if e != nil {
				return nil, e
			}
		}
		if round < 0 || round != math.Trunc(round) {
			return nil, fmt.Errorf("trials table line %d, column \"round\": %v is not a round number", line, round)
		}
		t.Round = int(round)
		if width == len(Columns) {
			for _, c := range []struct {
				name string
				dst  *[]float64
			}{{"fold_loss", &t.FoldLoss}, {"plain_fold_loss", &t.PlainFoldLoss}} {
				s := rec[col(c.name)]
				if s == "" {
					continue
				}
				for _, x := range strings.Split(s, ";") {
					v, err := strconv.ParseFloat(x, 64)
					if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
						return nil, fmt.Errorf("trials table line %d, column %q: %q is not a finite number", line, c.name, x)
					}
					*c.dst = append(*c.dst, v)
				}
			}
		}
		out[t.Key] = t
	}
}

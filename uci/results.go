package uci

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/benchstore"
)

// resultColumns is the header of results.tsv. List-valued cells (one value
// per selection: 4 for the clean protocol) are comma separated; settings
// are separated by " | ".
var resultColumns = []string{
	"name", "protocol", "status", "n", "d", "classes",
	"lambda", "normalize", "round", "val_acc_pct",
	"test_acc_pct", "laplace_acc_pct", "fit_seconds",
	"setting", "laplace_lambda", "laplace_normalize", "laplace_val_acc_pct", "laplace_setting",
	"test_accs_pct", "laplace_accs_pct", "logloss", "cal_logloss", "members", "reason",
}

// olderColumns are the headers of earlier versions, still read (their
// results lack the later columns) and rewritten in the current format:
// before the members column, and before the log-loss columns too.
var olderColumns = [][]string{
	without(resultColumns, "members"),
	without(resultColumns, "members", "logloss", "cal_logloss"),
}

func without(cols []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(drop, c) })
}

func indexOf(cols []string) map[string]int {
	m := make(map[string]int, len(cols))
	for i, c := range cols {
		m[c] = i
	}
	return m
}

// WriteResults writes results.tsv atomically: to a temporary file in the
// same folder, synced, then renamed over path, so that an interrupted run
// leaves either the old or the new complete file.
func WriteResults(path string, rs []Result) error {
	var b bytes.Buffer
	b.WriteString(strings.Join(resultColumns, "\t"))
	b.WriteByte('\n')
	for i := range rs {
		b.WriteString(strings.Join(resultRow(&rs[i]), "\t"))
		b.WriteByte('\n')
	}
	return benchstore.WriteFile(path, b.Bytes())
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func fmtPct(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func joinChoices(cs []Choice, f func(Choice) string, sep string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = f(c)
	}
	return strings.Join(parts, sep)
}

func joinPcts(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmtPct(x)
	}
	return strings.Join(parts, ",")
}

func resultRow(r *Result) []string {
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s) }
	row := []string{r.Name, r.Protocol, r.Status, strconv.Itoa(r.N), strconv.Itoa(r.D), strconv.Itoa(r.Classes)}
	if r.Status != StatusOK && r.Status != StatusPartial {
		row = append(row, make([]string, len(resultColumns)-len(row)-1)...)
		return append(row, clean(r.Reason))
	}
	lam := func(c Choice) string { return strconv.FormatFloat(c.Lambda, 'g', -1, 64) }
	nrm := func(c Choice) string { return onOff(c.Normalize) }
	val := func(c Choice) string { return fmtPct(c.ValAccuracy) }
	set := func(c Choice) string { return c.Setting.String() }
	return append(row,
		joinChoices(r.RFM, lam, ","),
		joinChoices(r.RFM, nrm, ","),
		joinChoices(r.RFM, func(c Choice) string { return strconv.Itoa(c.Round) }, ","),
		joinChoices(r.RFM, val, ","),
		fmtPct(r.TestAccuracy),
		fmtPct(r.LaplaceAccuracy),
		strconv.FormatFloat(r.Seconds, 'f', 3, 64),
		joinChoices(r.RFM, set, " | "),
		joinChoices(r.Laplace, lam, ","),
		joinChoices(r.Laplace, nrm, ","),
		joinChoices(r.Laplace, val, ","),
		joinChoices(r.Laplace, set, " | "),
		joinPcts(r.TestAccuracies),
		joinPcts(r.LaplaceAccuracies),
		joinPcts(r.LogLosses),
		joinPcts(r.CalLogLosses),
		joinInts(r.Members),
		clean(r.Reason),
	)
}

// ReadResults parses a results.tsv written by WriteResults. A missing file
// gives (nil, nil).
func ReadResults(path string) ([]Result, error) {
	data, err := benchstore.ReadFile(path)
	if data == nil || err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	var out []Result
	var cols map[string]int
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			for _, h := range append([][]string{resultColumns}, olderColumns...) {
				if text == strings.Join(h, "\t") {
					cols = indexOf(h)
				}
			}
			if cols == nil {
				return nil, fmt.Errorf("%s:1: not a results.tsv of this version (header differs)", path)
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != len(cols) {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line, len(f), len(cols))
		}
		r, err := parseRow(f, cols)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, *r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return out, nil
}

func parseRow(f []string, cols map[string]int) (*Result, error) {
	col := func(name string) string {
		if i, ok := cols[name]; ok {
			return f[i]
		}
		return "" // a column of a later version
	}
	r := &Result{Name: col("name"), Protocol: col("protocol"), Status: col("status"), Reason: col("reason")}
	if r.Name == "" {
		return nil, errors.New("empty data-set name")
	}
	var err error
	ints := []struct {
		name string
		dst  *int
	}{{"n", &r.N}, {"d", &r.D}, {"classes", &r.Classes}}
	for _, it := range ints {
		if *it.dst, err = strconv.Atoi(col(it.name)); err != nil {
			return nil, fmt.Errorf("column %s: %q is not an integer", it.name, col(it.name))
		}
	}
	switch r.Status {
	case StatusSkipped, StatusFailed:
		return r, nil
	case StatusOK, StatusPartial:
	default:
		return nil, fmt.Errorf("status %q is not ok, partial, skipped or failed", r.Status)
	}
	if r.RFM, err = parseChoices(col("lambda"), col("normalize"), col("round"), col("val_acc_pct"), col("setting")); err != nil {
		return nil, err
	}
	if r.Laplace, err = parseChoices(col("laplace_lambda"), col("laplace_normalize"), "", col("laplace_val_acc_pct"), col("laplace_setting")); err != nil {
		return nil, fmt.Errorf("laplace: %w", err)
	}
	floats := []struct {
		name string
		dst  *float64
	}{{"test_acc_pct", &r.TestAccuracy}, {"laplace_acc_pct", &r.LaplaceAccuracy}, {"fit_seconds", &r.Seconds}}
	for _, it := range floats {
		if *it.dst, err = strconv.ParseFloat(col(it.name), 64); err != nil {
			return nil, fmt.Errorf("column %s: %q is not a number", it.name, col(it.name))
		}
	}
	if r.TestAccuracies, err = parseFloats(col("test_accs_pct")); err != nil {
		return nil, fmt.Errorf("column test_accs_pct: %w", err)
	}
	if r.LaplaceAccuracies, err = parseFloats(col("laplace_accs_pct")); err != nil {
		return nil, fmt.Errorf("column laplace_accs_pct: %w", err)
	}
	if r.LogLosses, err = parseFloats(col("logloss")); err != nil {
		return nil, fmt.Errorf("column logloss: %w", err)
	}
	if r.CalLogLosses, err = parseFloats(col("cal_logloss")); err != nil {
		return nil, fmt.Errorf("column cal_logloss: %w", err)
	}
	if len(r.LogLosses) != len(r.CalLogLosses) {
		return nil, fmt.Errorf("columns logloss and cal_logloss have %d and %d values", len(r.LogLosses), len(r.CalLogLosses))
	}
	if r.Members, err = parseInts(col("members")); err != nil {
		return nil, fmt.Errorf("column members: %w", err)
	}
	return r, nil
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func parseInts(s string) ([]int, error) {
	return parseList(s, "a count", func(p string) (int, error) {
		v, err := strconv.Atoi(p)
		if err == nil && v < 0 {
			err = strconv.ErrRange
		}
		return v, err
	})
}

func parseFloats(s string) ([]float64, error) {
	return parseList(s, "a number", func(p string) (float64, error) { return strconv.ParseFloat(p, 64) })
}

// parseList parses a comma-separated list ("" is none); what names the
// kind of value expected, for the error.
func parseList[T any](s, what string, parse func(string) (T, error)) ([]T, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]T, len(parts))
	for i, p := range parts {
		v, err := parse(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not %s", p, what)
		}
		out[i] = v
	}
	return out, nil
}

func parseChoices(lams, norms, rounds, vals, settings string) ([]Choice, error) {
	ls, err := parseFloats(lams)
	if err != nil {
		return nil, fmt.Errorf("lambda: %w", err)
	}
	vs, err := parseFloats(vals)
	if err != nil {
		return nil, fmt.Errorf("validation accuracy: %w", err)
	}
	ns := strings.Split(norms, ",")
	ss := strings.Split(settings, " | ")
	var rs []string
	if rounds != "" {
		rs = strings.Split(rounds, ",")
	}
	k := len(ls)
	if k == 0 || len(vs) != k || len(ns) != k || len(ss) != k || (rs != nil && len(rs) != k) {
		return nil, fmt.Errorf("choice columns have different lengths (%q, %q, %q, %q)", lams, norms, rounds, vals)
	}
	out := make([]Choice, k)
	for i := range out {
		c := &out[i]
		c.Lambda, c.ValAccuracy = ls[i], vs[i]
		switch ns[i] {
		case "on":
			c.Normalize = true
		case "off":
		default:
			return nil, fmt.Errorf("normalize %q is not on or off", ns[i])
		}
		if rs != nil {
			if c.Round, err = strconv.Atoi(rs[i]); err != nil {
				return nil, fmt.Errorf("round %q is not an integer", rs[i])
			}
		}
		if err := parseSetting(ss[i], &c.Setting); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SelectionDir is the folder under OutDir that receives one
// <name>.tsv per data set: the validation accuracy of every grid point and
// round, to see what the selection chose from.
const SelectionDir = "selection"

// writeGrids writes the grid log of one result.
func writeGrids(dir string, r *Result) error {
	if len(r.grids) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("selection log: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("selection\tpoint\tlambda\tnormalize\tsetting\tval_acc_pct_by_round\n")
	for k, g := range r.grids {
		for i, s := range g.grid {
			pcts := make([]float64, len(g.history[i]))
			for j, a := range g.history[i] {
				pcts[j] = 100 * a
			}
			fmt.Fprintf(&b, "%d\t%d\t%g\t%s\t%s\t%s\n", k+1, i+1, s.Lambda, onOff(s.Normalize), s, joinPcts(pcts))
		}
	}
	return benchstore.WriteFile(filepath.Join(dir, r.Name+".tsv"), b.Bytes())
}

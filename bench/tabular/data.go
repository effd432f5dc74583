package tabular

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// The task groups: the folders of the benchmark.
const (
	GroupClfNum = "clf_num" // classification, numerical features
	GroupClfCat = "clf_cat" // classification with categorical features
	GroupRegNum = "reg_num" // regression, numerical features
	GroupRegCat = "reg_cat" // regression with categorical features
)

// Groups lists the groups in report order.
func Groups() []string { return []string{GroupClfNum, GroupClfCat, GroupRegNum, GroupRegCat} }

// Task is one benchmark task: a file of a group.
type Task struct {
	Group string `json:"group"`
	Name  string `json:"name"` // file name without .csv.gz
	Path  string `json:"path"`
	// Categorical lists the feature columns one-hot encoded (see
	// categoricalColumns).
	Categorical []string `json:"categorical,omitempty"`
}

// ID is "group/name", unique in the benchmark.
func (t Task) ID() string { return t.Group + "/" + t.Name }

// Classification reports whether the task's metric is accuracy.
func (t Task) Classification() bool { return strings.HasPrefix(t.Group, "clf") }

// fileSuffix is the extension of a task file.
const fileSuffix = ".csv.gz"

// Discover lists the tasks under dir (the benchmark folder, holding the
// group folders), sorted by group (Groups order) then name. A missing group
// folder is skipped; no task at all is an error.
func Discover(dir string) ([]Task, error) {
	var out []Task
	for _, g := range Groups() {
		ents, err := os.ReadDir(filepath.Join(dir, g))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), fileSuffix) {
				continue
			}
			t := Task{Group: g, Name: strings.TrimSuffix(e.Name(), fileSuffix), Path: filepath.Join(dir, g, e.Name())}
			if strings.HasSuffix(g, "_cat") {
				if t.Categorical, err = categoricalColumns(dir, t); err != nil {
					return nil, err
				}
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no task files (*%s in %s)", dir, fileSuffix, strings.Join(Groups(), ", "))
	}
	return out, nil
}

// knownCategorical names the categorical columns of the *_cat tasks that
// have no *_num version to compare with: the files carry categories as
// integer codes and no column types. compas-two-years and
// visualizing_soil come one-hot (0/1 columns) already.
var knownCategorical = map[string][]string{
	"Mercedes_Benz_Greener_Manufacturing": {"X3", "X4", "X6"},
	"analcatdata_supreme":                 {"Actions_taken"},
}

// categoricalColumns finds the categorical columns of a *_cat task: the
// columns its file has and the same task's *_num file lacks (the authors
// made the *_num version by dropping them), else knownCategorical.
func categoricalColumns(dir string, t Task) ([]string, error) {
	twin := filepath.Join(dir, strings.Replace(t.Group, "_cat", "_num", 1), t.Name+fileSuffix)
	if _, err := os.Stat(twin); err != nil {
		return knownCategorical[t.Name], nil
	}
	own, err := header(t.Path)
	if err != nil {
		return nil, err
	}
	other, err := header(twin)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range own[:len(own)-1] { // not the target
		if !slices.Contains(other, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// header reads the column names of a gzipped CSV.
func header(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	line, err := bufio.NewReader(z).ReadString('\n')
	if err != nil && line == "" {
		return nil, fmt.Errorf("%s: no header line: %w", path, err)
	}
	return strings.Split(strings.TrimRight(line, "\r\n"), ","), nil
}

// Table is a loaded task.
type Table struct {
	Task     Task
	T        *dataset.Table
	Target   string   // the last column
	Features []string // the others
}

// Load reads a task's file: the last column is the target (read as
// categorical for classification), the Categorical columns are read as
// categories.
func Load(t Task) (*Table, error) {
	h, err := header(t.Path)
	if err != nil {
		return nil, err
	}
	if len(h) < 2 {
		return nil, fmt.Errorf("%s: %d columns; need features and a target", t.Path, len(h))
	}
	target := h[len(h)-1]
	opt := dataset.ReadOptions{Format: "csv", Categorical: slices.Clone(t.Categorical)}
	if t.Classification() {
		opt.Categorical = append(opt.Categorical, target)
	} else {
		opt.Numeric = []string{target}
	}
	tab, err := dataset.ReadFile(t.Path, opt)
	if err != nil {
		return nil, err
	}
	return &Table{Task: t, T: tab, Target: target, Features: tab.NamesExcept(target)}, nil
}

// Rows is the number of rows of the task.
func (t *Table) Rows() int { return t.T.NRows() }

// Encoded is one split encoded for the engine.
type Encoded struct {
	Train, Val *rfm.Dataset
	// TestX are the test rows' features; TestLabels their classes (−1 for
	// a class the training rows do not have: always a wrong prediction) or
	// TestY their targets.
	TestX      []float64
	TestN      int
	TestLabels []int
	TestY      []float64
	Classes    []string // the training rows' class names (classification)
}

// Encode fits the feature pipeline (standardized numeric columns, one-hot
// categorical ones) and the class list on the split's training rows only
// and encodes its training, validation and test rows. A validation row of
// a class the training rows lack is dropped from the validation set (the
// engine scores known classes); test rows are all kept.
func (t *Table) Encode(s Split) (*Encoded, error) {
	sub := func(rows []int) (*dataset.Table, error) { return t.T.SelectRows(rows) }
	tr, err := sub(s.Train)
	if err != nil {
		return nil, err
	}
	p, err := dataset.FitPipeline(tr, t.Features)
	if err != nil {
		return nil, err
	}
	x := func(tab *dataset.Table) ([]float64, int, int, error) { return p.Transform(tab) }
	va, err := sub(s.Val)
	if err != nil {
		return nil, err
	}
	te, err := sub(s.Test)
	if err != nil {
		return nil, err
	}
	e := &Encoded{}
	xtr, ntr, d, err := x(tr)
	if err != nil {
		return nil, err
	}
	xva, nva, _, err := x(va)
	if err != nil {
		return nil, err
	}
	if e.TestX, e.TestN, _, err = x(te); err != nil {
		return nil, err
	}
	e.Train = &rfm.Dataset{X: xtr, N: ntr, D: d}
	e.Val = &rfm.Dataset{X: xva, N: nva, D: d}
	ctr, _ := tr.Column(t.Target)
	cva, _ := va.Column(t.Target)
	cte, _ := te.Column(t.Target)
	if t.Task.Classification() {
		e.Classes = levels(ctr)
		if len(e.Classes) < 2 {
			return nil, fmt.Errorf("%s: the training rows have %d class(es); need 2 or more", t.Task.ID(), len(e.Classes))
		}
		e.Train.Labels = classIndex(ctr, e.Classes)
		e.Train.Classes = len(e.Classes)
		vl := classIndex(cva, e.Classes)
		keep := make([]int, 0, len(vl))
		for i, l := range vl {
			if l >= 0 {
				keep = append(keep, i)
			}
		}
		if len(keep) < len(vl) {
			e.Val = pickRows(e.Val, keep)
			vl = pickInts(vl, keep)
		}
		e.Val.Labels, e.Val.Classes = vl, len(e.Classes)
		e.TestLabels = classIndex(cte, e.Classes)
		return e, nil
	}
	if e.Train.Y, err = values(ctr); err != nil {
		return nil, err
	}
	if e.Val.Y, err = values(cva); err != nil {
		return nil, err
	}
	if e.TestY, err = values(cte); err != nil {
		return nil, err
	}
	return e, nil
}

// levels returns the sorted distinct non-missing values of a categorical
// column (numbers in numeric order).
func levels(c *dataset.Column) []string {
	seen := map[string]bool{}
	for i, s := range c.Str {
		if !c.IsMissing(i) {
			seen[s] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, ea := strconv.ParseFloat(out[i], 64)
		b, eb := strconv.ParseFloat(out[j], 64)
		if ea == nil && eb == nil && a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// classIndex maps each cell to its index in classes (−1: unknown or missing).
func classIndex(c *dataset.Column, classes []string) []int {
	at := map[string]int{}
	for i, s := range classes {
		at[s] = i
	}
	out := make([]int, len(c.Str))
	for i, s := range c.Str {
		k, ok := at[s]
		if !ok || c.IsMissing(i) {
			k = -1
		}
		out[i] = k
	}
	return out
}

// values returns a numeric target column, refusing missing cells.
func values(c *dataset.Column) ([]float64, error) {
	out := make([]float64, len(c.Num))
	for i, v := range c.Num {
		if c.IsMissing(i) || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("target %q: row %d has no finite value", c.Name, i+1)
		}
		out[i] = v
	}
	return out, nil
}

func pickRows(ds *rfm.Dataset, rows []int) *rfm.Dataset {
	out := &rfm.Dataset{N: len(rows), D: ds.D, X: make([]float64, len(rows)*ds.D)}
	for i, r := range rows {
		copy(out.X[i*ds.D:(i+1)*ds.D], ds.X[r*ds.D:(r+1)*ds.D])
	}
	return out
}

func pickInts(v, rows []int) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = v[r]
	}
	return out
}

// CountRows counts the data rows of a gzipped CSV (lines after the header).
func CountRows(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	r := bufio.NewReaderSize(z, 1<<16)
	n, last := 0, byte('\n')
	buf := make([]byte, 1<<16)
	for {
		k, err := r.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' {
				n++
			}
		}
		if k > 0 {
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	if last != '\n' {
		n++ // a last line without newline
	}
	return max(n-1, 0), nil
}

package uci

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Meta is the metadata file <name>/<name>.txt of one data set.
type Meta struct {
	Name    string `json:"name"`
	Dir     string `json:"-"`       // the data set's folder
	D       int    `json:"d"`       // n_entradas: features
	Classes int    `json:"classes"` // n_clases
	Fich1   string `json:"fich1"`   // main data file (the only one the protocols read)
	N1      int    `json:"n1"`      // n_patrons1: rows of Fich1
	Fich2   string `json:"fich2,omitempty"`
	N2      int    `json:"n2,omitempty"` // n_patrons2: rows of the separate test file
	NTrain  int    `json:"n_train"`      // n_patrons_entrena: conxuntos.dat line 1
	NVal    int    `json:"n_val"`        // n_patrons_valida: conxuntos.dat line 2
}

// InArora90 reports whether the data set passes the filter of Arora et al.
// (2020): no separate test file and at most 5000 patterns.
func (m *Meta) InArora90() bool { return m.N2 == 0 && m.Fich2 == "" && m.N1+m.N2 <= 5000 }

// Split is one (train, test) pair of 0-based row indices into Fich1.
type Split struct {
	Train, Test []int
}

// Set is a loaded data set: the rows of Fich1 and its two split files.
type Set struct {
	Meta
	X      []float64 // N1×D, row-major
	Labels []int     // classes 0..Classes−1
	// Select is conxuntos.dat: Train = line 1, Test = line 2 (the
	// validation half of the model selection).
	Select Split
	// Folds are the EvalSplits (train, test) pairs of conxuntos_kfold.dat.
	Folds []Split
}

// EvalSplits is the number of (train, test) pairs in every set's
// conxuntos_kfold.dat (Load reads that many, and fails on fewer).
const EvalSplits = 4

// ErrNoData marks a data set whose Fich1 is absent: it is skipped, not a
// failure.
var ErrNoData = errors.New("data file missing")

// ReadMeta parses the metadata file dir/<base(dir)>.txt. Lines are
// "key= value"; the keys n_entradas, n_clases, fich1, n_patrons1,
// n_patrons_entrena and n_patrons_valida are required.
func ReadMeta(dir string) (*Meta, error) {
	name := filepath.Base(dir)
	path := filepath.Join(dir, name+".txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kv := map[string]string{}
	lineOf := map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" || strings.ContainsAny(v, " \t") {
			return nil, fmt.Errorf("%s:%d: want \"key= value\", got %q", path, line, text)
		}
		if prev, dup := lineOf[k]; dup {
			return nil, fmt.Errorf("%s:%d: key %s already set on line %d", path, line, k, prev)
		}
		kv[k], lineOf[k] = v, line
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	m := &Meta{Name: name, Dir: dir, Fich1: kv["fich1"], Fich2: kv["fich2"]}
	ints := []struct {
		key      string
		dst      *int
		min      int
		required bool
	}{
		{"n_entradas", &m.D, 1, true},
		{"n_clases", &m.Classes, 2, true},
		{"n_patrons1", &m.N1, 1, true},
		{"n_patrons_entrena", &m.NTrain, 1, true},
		{"n_patrons_valida", &m.NVal, 1, true},
		{"n_patrons2", &m.N2, 0, false},
	}
	for _, it := range ints {
		v, ok := kv[it.key]
		if !ok {
			if it.required {
				return nil, fmt.Errorf("%s: key %s= is missing", path, it.key)
			}
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < it.min {
			return nil, fmt.Errorf("%s:%d: %s= %q is not an integer ≥ %d", path, lineOf[it.key], it.key, v, it.min)
		}
		*it.dst = n
	}
	if m.Fich1 == "" {
		return nil, fmt.Errorf("%s: key fich1= is missing", path)
	}
	if filepath.Base(m.Fich1) != m.Fich1 {
		return nil, fmt.Errorf("%s:%d: fich1= %q must be a file name in the data set's folder", path, lineOf["fich1"], m.Fich1)
	}
	return m, nil
}

// Load reads Fich1, conxuntos.dat and conxuntos_kfold.dat. A missing Fich1
// gives an error wrapping ErrNoData.
func Load(m *Meta) (*Set, error) {
	s := &Set{Meta: *m}
	path := filepath.Join(m.Dir, m.Fich1)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoData)
	}
	var err error
	if s.X, s.Labels, err = readRDat(path, m.D, m.Classes, m.N1); err != nil {
		return nil, err
	}
	sel, err := readIndexLines(filepath.Join(m.Dir, "conxuntos.dat"), 2, m.N1)
	if err != nil {
		return nil, err
	}
	s.Select = Split{Train: sel[0], Test: sel[1]}
	kf, err := readIndexLines(filepath.Join(m.Dir, "conxuntos_kfold.dat"), 2*EvalSplits, m.N1)
	if err != nil {
		return nil, err
	}
	for r := 0; r < EvalSplits; r++ {
		s.Folds = append(s.Folds, Split{Train: kf[2*r], Test: kf[2*r+1]})
	}
	return s, nil
}

// readRDat parses a *_R.dat file: a header line, then n lines of
// "row d-features class" separated by tabs (any white space is accepted).
func readRDat(path string, d, classes, n int) ([]float64, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	x := make([]float64, 0, n*d)
	y := make([]int, 0, n)
	line := 0
	fields := make([]string, 0, d+2)
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			// The header: "\tf1 … fd\tclase".
			if h := strings.Fields(text); len(h) != d+1 {
				return nil, nil, fmt.Errorf("%s:1: header has %d columns, want %d (f1..f%d and clase; n_entradas= %d)", path, len(h), d+1, d, d)
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fields = appendFields(fields[:0], text)
		if len(fields) != d+2 {
			return nil, nil, fmt.Errorf("%s:%d: %d fields, want %d (row number, %d features, class)", path, line, len(fields), d+2, d)
		}
		if len(y) == n {
			return nil, nil, fmt.Errorf("%s:%d: more than n_patrons1= %d data rows", path, line, n)
		}
		if _, err := strconv.Atoi(fields[0]); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: row number %q is not an integer", path, line, fields[0])
		}
		for j := 1; j <= d; j++ {
			v, err := strconv.ParseFloat(fields[j], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%s:%d: feature %d = %q is not a finite number", path, line, j, fields[j])
			}
			x = append(x, v)
		}
		c, err := strconv.Atoi(fields[d+1])
		if err != nil || c < 0 || c >= classes {
			return nil, nil, fmt.Errorf("%s:%d: class %q is not an integer in [0, %d)", path, line, fields[d+1], classes)
		}
		y = append(y, c)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if line == 0 {
		return nil, nil, fmt.Errorf("%s: empty file", path)
	}
	if len(y) != n {
		return nil, nil, fmt.Errorf("%s: %d data rows, but the metadata says n_patrons1= %d", path, len(y), n)
	}
	return x, y, nil
}

// appendFields splits s at runs of tabs and spaces without allocating a
// new slice per line.
func appendFields(dst []string, s string) []string {
	i := 0
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j])
		}
		i = j
	}
	return dst
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' }

// readIndexLines reads the first want lines of 0-based row indices
// (each in [0, n), none repeated within a line) from path.
func readIndexLines(path string, want, n int) ([][]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	var out [][]int
	seen := make([]int, n) // line number (1-based) that last used a row
	line := 0
	for sc.Scan() && len(out) < want {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			return nil, fmt.Errorf("%s:%d: empty line; want %d lines of row indices", path, line, want)
		}
		idx := make([]int, len(fs))
		for k, s := range fs {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 || v >= n {
				return nil, fmt.Errorf("%s:%d: index %q (item %d) is not a row index in [0, %d)", path, line, s, k+1, n)
			}
			if seen[v] == line {
				return nil, fmt.Errorf("%s:%d: row index %d appears twice", path, line, v)
			}
			seen[v] = line
			idx[k] = v
		}
		out = append(out, idx)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	if len(out) < want {
		return nil, fmt.Errorf("%s: %d line(s) of row indices, want %d", path, len(out), want)
	}
	// Within one (train, test) pair, a row may not be on both sides.
	for p := 0; p+1 < want; p += 2 {
		in := make(map[int]bool, len(out[p]))
		for _, v := range out[p] {
			in[v] = true
		}
		for _, v := range out[p+1] {
			if in[v] {
				return nil, fmt.Errorf("%s:%d: row %d is also in the training line %d", path, p+2, v, p+1)
			}
		}
	}
	return out, nil
}

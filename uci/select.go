package uci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Subsets of the benchmark.
const (
	SubsetArora90 = "arora90" // n_patrons1 ≤ 5000 and no separate test file: 90 sets
	SubsetAll     = "all"     // every folder with its metadata file
)

// Entry is one data set of a selection. Skip, when set, says why it is not
// run (its data file is missing); such an entry is reported, not failed.
type Entry struct {
	Meta Meta
	Skip string
}

// Layout locates the benchmark's files under a directory given by the user.
type Layout struct {
	SetsDir string // holds one folder per data set
	// Results is fernandez_delgado_2014_results.txt, or "" when not found.
	Results string
}

// ResultsFile is the name of the 179-classifier table.
const ResultsFile = "fernandez_delgado_2014_results.txt"

// FindLayout accepts either the uci121 folder (with data/ and the results
// table) or the folder of data sets itself (the NTK repository's data/);
// the results table is then looked for next to it and one level up.
func FindLayout(dir string) (*Layout, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	l := &Layout{SetsDir: dir}
	if st, err := os.Stat(filepath.Join(dir, "data")); err == nil && st.IsDir() {
		l.SetsDir = filepath.Join(dir, "data")
	}
	for _, p := range []string{filepath.Join(dir, ResultsFile), filepath.Join(l.SetsDir, ResultsFile), filepath.Join(filepath.Dir(l.SetsDir), ResultsFile)} {
		if _, err := os.Stat(p); err == nil {
			l.Results = p
			break
		}
	}
	return l, nil
}

// Discover lists every data set under setsDir: each sub-folder that holds
// <name>/<name>.txt, sorted by name. A folder whose Fich1 is missing is
// returned with Skip set. A malformed metadata file is an error.
func Discover(setsDir string) ([]Entry, error) {
	des, err := os.ReadDir(setsDir)
	if err != nil {
		return nil, fmt.Errorf("list data sets: %w", err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		dir := filepath.Join(setsDir, de.Name())
		m, err := ReadMeta(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue // not a data-set folder
		}
		if err != nil {
			return nil, err
		}
		e := Entry{Meta: *m}
		if _, err := os.Stat(filepath.Join(dir, m.Fich1)); errors.Is(err, os.ErrNotExist) {
			e.Skip = fmt.Sprintf("%s is missing", m.Fich1)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no data sets under %s (want folders <name>/ holding <name>.txt)", setsDir)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
	return out, nil
}

// Select filters entries by subset: SubsetArora90, SubsetAll, or a comma
// separated list of names (an unknown name is an error).
func Select(entries []Entry, subset string) ([]Entry, error) {
	switch subset {
	case SubsetAll, "":
		return slices.Clone(entries), nil
	case SubsetArora90:
		var out []Entry
		for _, e := range entries {
			if e.Meta.InArora90() {
				out = append(out, e)
			}
		}
		return out, nil
	}
	byName := map[string]Entry{}
	for _, e := range entries {
		byName[e.Meta.Name] = e
	}
	var out []Entry
	seen := map[string]bool{}
	for _, name := range strings.Split(subset, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		e, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("unknown data set %q (subset is %q, %q or a comma list of folder names)", name, SubsetArora90, SubsetAll)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("subset %q names no data set", subset)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
	return out, nil
}

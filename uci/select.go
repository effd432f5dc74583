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

// SubsetCombined is the Subset of a report made by Combine.
const SubsetCombined = "combined"

// Combine summarizes the data sets of several results.tsv files as one
// report: runs of one protocol made with different options (the largest
// sets with --ensemble 1, say) or in different sessions. Each path is a
// results.tsv or the folder holding one; only ok rows count, a data set in
// two files is an error, and so are files of different protocols. It
// writes summary.md, summary.json and the plot into outDir, not a
// results.tsv: the rows keep their own run tags, listed in the report's
// notes (a run resuming from a file of mixed tags would refuse it).
func Combine(dataDir string, paths []string, outDir string) (*Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no results.tsv to combine")
	}
	layout, err := FindLayout(dataDir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Subset: SubsetCombined, OutDir: outDir}
	from := map[string]string{} // data set → file
	tags := map[string]int{}    // tag → data sets
	var order []string          // tags in first-seen order
	for _, p := range paths {
		if p == "" {
			return nil, errors.New("an empty path among the results files to combine")
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, ResultsName)
		}
		rs, err := ReadResults(p)
		if err != nil {
			return nil, err
		}
		if rs == nil {
			return nil, fmt.Errorf("%s: no such file", p)
		}
		n := 0
		for _, r := range rs {
			if r.Status != StatusOK {
				continue
			}
			proto, _, _ := strings.Cut(r.Protocol, "/")
			switch {
			case rep.Protocol == "":
				rep.Protocol = proto
			case proto != rep.Protocol:
				return nil, fmt.Errorf("%s: %s was computed with protocol %q, earlier files with %q: a summary combines one protocol", p, r.Name, proto, rep.Protocol)
			}
			if f, ok := from[r.Name]; ok {
				return nil, fmt.Errorf("%s: %s is also in %s; combine each data set once", p, r.Name, f)
			}
			from[r.Name] = p
			if tags[r.Protocol] == 0 {
				order = append(order, r.Protocol)
			}
			tags[r.Protocol]++
			rep.Results = append(rep.Results, r)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no data set with status ok", p)
		}
	}
	slices.SortFunc(rep.Results, func(a, b Result) int { return strings.Compare(a.Name, b.Name) })
	rep.OK, rep.Reused = len(rep.Results), len(rep.Results)
	for _, t := range order {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d data sets computed under %s", tags[t], t))
	}
	rep.Tag = strings.Join(order, " + ")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	if err := finish(rep, layout); err != nil {
		return nil, err
	}
	return rep, nil
}

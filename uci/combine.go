package uci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

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

package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Table is a benchmark result table: Acc[i][j] is the accuracy of classifier
// Classifiers[j] on data set Datasets[i], NaN where there is no result. All
// values of one table share a unit (the Fernández-Delgado table is in
// percent); the aggregates do not convert.
type Table struct {
	Datasets    []string
	Classifiers []string
	Acc         [][]float64
}

// Validate checks the shape, that names are non-empty and unique, and that
// every value is NaN or finite and ≥ 0.
func (t *Table) Validate() error {
	if err := uniqueNames(t.Datasets, "data set"); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	if err := uniqueNames(t.Classifiers, "classifier"); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	if len(t.Acc) != len(t.Datasets) {
		return fmt.Errorf("table: %d rows of values for %d data sets", len(t.Acc), len(t.Datasets))
	}
	for i, row := range t.Acc {
		if len(row) != len(t.Classifiers) {
			return fmt.Errorf("table: data set %q has %d values for %d classifiers", t.Datasets[i], len(row), len(t.Classifiers))
		}
		for j, v := range row {
			if err := checkAccuracy(v); err != nil {
				return fmt.Errorf("table: data set %q, classifier %q: %w", t.Datasets[i], t.Classifiers[j], err)
			}
		}
	}
	return nil
}

// Subset returns a copy of t holding only the named data sets, in the given
// order. An unknown or repeated name is an error.
func (t *Table) Subset(datasets []string) (*Table, error) {
	if err := uniqueNames(datasets, "data set"); err != nil {
		return nil, fmt.Errorf("subset: %w", err)
	}
	at := index(t.Datasets)
	out := &Table{Datasets: slices.Clone(datasets), Classifiers: slices.Clone(t.Classifiers)}
	for _, name := range datasets {
		i, ok := at[name]
		if !ok {
			return nil, fmt.Errorf("subset: data set %q is not in the table", name)
		}
		out.Acc = append(out.Acc, slices.Clone(t.Acc[i]))
	}
	return out, nil
}

// SelectClassifiers returns a copy of t holding only the named classifiers,
// in the given order. Note that Friedman ranks depend on which classifiers
// take part.
func (t *Table) SelectClassifiers(names []string) (*Table, error) {
	if err := uniqueNames(names, "classifier"); err != nil {
		return nil, fmt.Errorf("select classifiers: %w", err)
	}
	at := index(t.Classifiers)
	cols := make([]int, len(names))
	for c, name := range names {
		j, ok := at[name]
		if !ok {
			return nil, fmt.Errorf("select classifiers: classifier %q is not in the table", name)
		}
		cols[c] = j
	}
	out := &Table{Datasets: slices.Clone(t.Datasets), Classifiers: slices.Clone(names)}
	out.Acc = make([][]float64, len(t.Acc))
	for i, row := range t.Acc {
		out.Acc[i] = make([]float64, len(cols))
		for c, j := range cols {
			out.Acc[i][c] = row[j]
		}
	}
	return out, nil
}

// AddClassifier appends a classifier column to t. acc maps data-set names to
// accuracies in the table's unit; data sets it does not mention get NaN
// (missing). A name already in the table, a data set not in the table (most
// likely a typo) or an invalid value is an error, and t is then unchanged.
func (t *Table) AddClassifier(name string, acc map[string]float64) error {
	if name == "" {
		return errors.New("add classifier: empty name")
	}
	if slices.Contains(t.Classifiers, name) {
		return fmt.Errorf("add classifier: %q is already in the table", name)
	}
	if len(t.Acc) != len(t.Datasets) {
		return fmt.Errorf("add classifier %q: table has %d rows of values for %d data sets", name, len(t.Acc), len(t.Datasets))
	}
	at := index(t.Datasets)
	// Sorted keys make the reported error the same from run to run.
	for _, ds := range slices.Sorted(maps.Keys(acc)) {
		if _, ok := at[ds]; !ok {
			return fmt.Errorf("add classifier %q: data set %q is not in the table", name, ds)
		}
		if err := checkAccuracy(acc[ds]); err != nil {
			return fmt.Errorf("add classifier %q: data set %q: %w", name, ds, err)
		}
	}
	for i, ds := range t.Datasets {
		v, ok := acc[ds]
		if !ok {
			v = math.NaN()
		}
		// Fresh rows: appending in place could write into memory another
		// table shares with this one.
		row := make([]float64, len(t.Acc[i])+1)
		copy(row, t.Acc[i])
		row[len(row)-1] = v
		t.Acc[i] = row
	}
	t.Classifiers = append(slices.Clip(t.Classifiers), name)
	return nil
}

// Column returns a copy of the named classifier's values, one per data set.
func (t *Table) Column(name string) ([]float64, error) {
	j := slices.Index(t.Classifiers, name)
	if j < 0 {
		return nil, fmt.Errorf("column: classifier %q is not in the table", name)
	}
	out := make([]float64, len(t.Acc))
	for i, row := range t.Acc {
		if j >= len(row) {
			return nil, fmt.Errorf("column %q: data set %d has only %d values", name, i, len(row))
		}
		out[i] = row[j]
	}
	return out, nil
}

// Summary is one classifier's benchmark aggregates (see the functions of the
// same names). Sets counts the data sets where it has a value; Average is in
// the table's unit; PMA, P90, P95 and ADTM are percentages.
type Summary struct {
	Classifier   string  `json:"classifier"`
	Sets         int     `json:"sets"`
	Average      float64 `json:"average_accuracy"`
	FriedmanRank float64 `json:"friedman_rank"`
	PMA          float64 `json:"pma"`
	P90          float64 `json:"p90"`
	P95          float64 `json:"p95"`
	ADTM         float64 `json:"adtm"`
}

// Summarize computes every aggregate for every classifier of t, in column
// order; missing sets how PMA, P90, P95 and ADTM count absent results
// (SkipMissing is the usual choice, MissingAsZero reproduces the published
// Fernández-Delgado PMA). A classifier with no value on any of t's data sets
// is an error: drop it with SelectClassifiers first.
func Summarize(t *Table, missing Missing) ([]Summary, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	if len(t.Classifiers) == 0 || len(t.Datasets) == 0 {
		return nil, fmt.Errorf("summarize: table has %d data sets and %d classifiers, need at least one of each", len(t.Datasets), len(t.Classifiers))
	}
	for i, row := range t.Acc {
		if !slices.ContainsFunc(row, func(v float64) bool { return !math.IsNaN(v) }) {
			return nil, fmt.Errorf("summarize: data set %q has no results: drop it with Subset", t.Datasets[i])
		}
	}
	out := make([]Summary, len(t.Classifiers))
	for j, name := range t.Classifiers {
		out[j].Classifier = name
		for _, row := range t.Acc {
			if !math.IsNaN(row[j]) {
				out[j].Sets++
			}
		}
		if out[j].Sets == 0 {
			return nil, fmt.Errorf("summarize: classifier %q has no results on these data sets: drop it with SelectClassifiers", name)
		}
	}
	// The table was validated above, so these cannot fail; the checks only
	// guard against the two validations drifting apart.
	steps := []struct {
		f   func([][]float64) ([]float64, error)
		set func(*Summary, float64)
	}{
		{AverageAccuracy, func(s *Summary, v float64) { s.Average = v }},
		{FriedmanRanks, func(s *Summary, v float64) { s.FriedmanRank = v }},
		{func(a [][]float64) ([]float64, error) { return PMA(a, missing) }, func(s *Summary, v float64) { s.PMA = v }},
		{func(a [][]float64) ([]float64, error) { return PercentNearMax(a, 0.90, missing) }, func(s *Summary, v float64) { s.P90 = v }},
		{func(a [][]float64) ([]float64, error) { return PercentNearMax(a, 0.95, missing) }, func(s *Summary, v float64) { s.P95 = v }},
		{func(a [][]float64) ([]float64, error) { return ADTM(a, missing) }, func(s *Summary, v float64) { s.ADTM = v }},
	}
	for _, st := range steps {
		vals, err := st.f(t.Acc)
		if err != nil {
			return nil, fmt.Errorf("summarize: %w", err)
		}
		for j, v := range vals {
			st.set(&out[j], v)
		}
	}
	return out, nil
}

// SortByFriedman orders s by Friedman rank, best (lowest) first; ties go to
// the higher average accuracy, then to the classifier name.
func SortByFriedman(s []Summary) { sortSummaries(s, byRank, byAverage) }

// SortByAverage orders s by average accuracy, best (highest) first; ties go
// to the lower Friedman rank, then to the classifier name.
func SortByAverage(s []Summary) { sortSummaries(s, byAverage, byRank) }

func byRank(x, y Summary) int    { return cmp.Compare(x.FriedmanRank, y.FriedmanRank) }
func byAverage(x, y Summary) int { return cmp.Compare(y.Average, x.Average) }

// sortSummaries sorts s stably by first, then second, then name.
func sortSummaries(s []Summary, first, second func(x, y Summary) int) {
	slices.SortStableFunc(s, func(x, y Summary) int {
		return cmp.Or(first(x, y), second(x, y), strings.Compare(x.Classifier, y.Classifier))
	})
}

// WriteSummary renders s as an aligned text table in the given order, one
// classifier per line, numbered from 1.
func WriteSummary(w io.Writer, s []Summary) error {
	width := len("classifier")
	for _, r := range s {
		width = max(width, utf8.RuneCountInString(r.Classifier))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%4s  %-*s  %4s  %8s  %8s  %6s  %6s  %6s  %6s\n",
		"#", width, "classifier", "sets", "friedman", "accuracy", "PMA", "P90", "P95", "ADTM")
	for n, r := range s {
		fmt.Fprintf(&b, "%4d  %-*s  %4d  %8.2f  %8.2f  %6.2f  %6.2f  %6.2f  %6.2f\n",
			n+1, width, r.Classifier, r.Sets, r.FriedmanRank, r.Average, r.PMA, r.P90, r.P95, r.ADTM)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

func checkAccuracy(v float64) error {
	if math.IsNaN(v) {
		return nil
	}
	if math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("accuracy %g must be finite and ≥ 0 (NaN marks missing)", v)
	}
	return nil
}

func uniqueNames(names []string, what string) error {
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("%s %d has an empty name", what, i)
		}
		if seen[n] {
			return fmt.Errorf("%s %q appears twice", what, n)
		}
		seen[n] = true
	}
	return nil
}

func index(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}

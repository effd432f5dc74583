package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// ReadFernandezDelgado opens and parses the results.txt of Fernández-Delgado
// et al. (2014), shipped as shared/data/uci121/fernandez_delgado_2014_results.txt.
// See ParseFernandezDelgado for the format. Only a regular file is read (a
// named pipe would wait for a writer).
func ReadFernandezDelgado(path string) (*Table, error) {
	return atomicfile.ReadRegular(path, "Fernández-Delgado results file", ParseFernandezDelgado)
}

// delgadoSummaryCols are the per-row statistics the file appends after the
// classifier columns; they are not classifiers.
var delgadoSummaryCols = []string{"min", "max", "mean", "std"}

// ParseFernandezDelgado parses the whitespace-aligned results table of
// Fernández-Delgado et al. (2014): a header `problema <classifiers…> min max
// mean std`, one row per data set with accuracies in percent and `--` where a
// classifier failed, then a line of dashes followed by `mean` and `std` rows.
// The trailing summary columns and everything after the dashes are dropped;
// missing values become NaN. Values stay in percent.
func ParseFernandezDelgado(r io.Reader) (*Table, error) {
	sc := bufio.NewScanner(r)
	// Rows are ~3 KB; allow far more so a reformatted file does not trip the
	// scanner's 64 KB default.
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	line := 0
	var header []string
	for sc.Scan() {
		line++
		if header = strings.Fields(sc.Text()); len(header) > 0 {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(header) == 0 {
		return nil, errors.New("empty file: want a header line starting with \"problema\"")
	}
	if header[0] != "problema" {
		return nil, fmt.Errorf("line %d: first column is %q, want \"problema\" (not a Fernández-Delgado results file?)", line, header[0])
	}
	width := len(header) // every data row has one field per header field
	classifiers := header[1:]
	if n := len(delgadoSummaryCols); len(classifiers) >= n && slices.Equal(classifiers[len(classifiers)-n:], delgadoSummaryCols) {
		classifiers = classifiers[:len(classifiers)-n]
	}
	if len(classifiers) == 0 {
		return nil, fmt.Errorf("line %d: header names no classifiers", line)
	}
	t := &Table{Classifiers: slices.Clone(classifiers)}
	if err := uniqueNames(t.Classifiers, "classifier"); err != nil {
		return nil, fmt.Errorf("line %d: %w", line, err)
	}
	seen := map[string]int{}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.Trim(text, "-") == "" {
			break // the separator: what follows are the mean/std rows
		}
		fields := strings.Fields(text)
		if len(fields) != width {
			return nil, fmt.Errorf("line %d: %d fields, want %d like the header", line, len(fields), width)
		}
		name := fields[0]
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("line %d: data set %q already listed on line %d", line, name, prev)
		}
		seen[name] = line
		row := make([]float64, len(t.Classifiers))
		for j := range row {
			v, err := parseDelgadoValue(fields[j+1])
			if err != nil {
				return nil, fmt.Errorf("line %d: data set %q, classifier %q: %w", line, name, t.Classifiers[j], err)
			}
			row[j] = v
		}
		t.Datasets = append(t.Datasets, name)
		t.Acc = append(t.Acc, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(t.Datasets) == 0 {
		return nil, errors.New("no data-set rows after the header")
	}
	return t, nil
}

func parseDelgadoValue(s string) (float64, error) {
	if s == "--" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	// ParseFloat accepts "NaN" and "Inf"; the file marks missing values
	// only with "--", so anything else non-finite is a corrupt cell.
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 100 {
		return 0, fmt.Errorf("value %q is not an accuracy in percent (0..100) or \"--\"", s)
	}
	return v, nil
}

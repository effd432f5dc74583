package tabular

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
)

//go:embed testdata/paper_reference.tsv
var referenceTSV []byte

// The published columns, as named in the reference file. Baselines are
// the six methods the paper compares with on every group.
const (
	ColumnPaperRFM = "RFM"
)

// Baselines are the six published methods of the comparison.
var Baselines = []string{"FT-Transformer", "GradientBoostingTree", "RandomForest", "ResNet", "SAINT", "XGBoost"}

// RefRow is one task's published scores (NaN: not in the paper's table).
type RefRow struct {
	Group, Size, Task string
	PaperName         string
	Table             string
	NTrain            int
	// Scores maps a column (ColumnPaperRFM, a baseline, MLP or
	// HistGradientBoostingTree) to its score: accuracy % or R².
	Scores map[string]float64
}

// Reference is the paper's tables 2–5, keyed by size + "/" + group/task.
type Reference map[string]RefRow

// refKey is the key of a task in the reference.
func refKey(size, id string) string { return size + "/" + id }

// Lookup returns the row of a task (group/name) at a size.
func (r Reference) Lookup(size, id string) (RefRow, bool) {
	row, ok := r[refKey(size, id)]
	return row, ok
}

// LoadReference parses the embedded reference file.
func LoadReference() (Reference, error) { return ParseReference(referenceTSV) }

// ParseReference parses a reference TSV: '#' comment lines, a header
// (group, size, task, paper_name, paper_table, paper_n_train, then score
// columns), then one row per task with '-' for a missing score.
func ParseReference(data []byte) (Reference, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var head []string
	ref := Reference{}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if head == nil {
			if len(f) < 7 || f[0] != "group" || f[1] != "size" || f[2] != "task" {
				return nil, fmt.Errorf("reference:%d: header must start group, size, task, paper_name, paper_table, paper_n_train and name score columns", line)
			}
			head = f
			continue
		}
		if len(f) != len(head) {
			return nil, fmt.Errorf("reference:%d: %d fields, the header has %d", line, len(f), len(head))
		}
		n, err := strconv.Atoi(f[5])
		if err != nil {
			return nil, fmt.Errorf("reference:%d: paper_n_train %q is not an integer", line, f[5])
		}
		row := RefRow{Group: f[0], Size: f[1], Task: f[2], PaperName: f[3], Table: f[4], NTrain: n, Scores: map[string]float64{}}
		for j := 6; j < len(f); j++ {
			v := math.NaN()
			if f[j] != "-" {
				if v, err = strconv.ParseFloat(f[j], 64); err != nil {
					return nil, fmt.Errorf("reference:%d: column %s: %q is not a number or -", line, head[j], f[j])
				}
			}
			row.Scores[head[j]] = v
		}
		key := refKey(row.Size, row.Group+"/"+row.Task)
		if _, dup := ref[key]; dup {
			return nil, fmt.Errorf("reference:%d: %s appears twice", line, key)
		}
		ref[key] = row
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if head == nil {
		return nil, fmt.Errorf("reference: no header")
	}
	return ref, nil
}

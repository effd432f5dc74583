package complete

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The synthetic study of docs/completion.md: NTK completion with a metadata
// prior against mean imputation and hard-impute SVD, on held-out entries
// and on entirely held-out columns. Every method's settings (the NTK's
// prior bias, depth and ridge; the SVD's rank) are chosen on a validation
// split of the training cells, never on the test cells. Run with
//
//	COMPLETION_RESULTS=results/completion go test -run '^$' -bench SyntheticStudy -benchtime 1x ./complete
//
// which also writes synthetic.json and synthetic.md there.

type studyConfig struct {
	Bias     float64 `json:"bias"`
	Depth    int     `json:"depth"`
	Ridge    float64 `json:"ridge"`
	Observed bool    `json:"with_observed_prior"`
}

type studyRow struct {
	Observed float64            `json:"observed_share"`
	Task     string             `json:"task"`
	Seed     uint64             `json:"seed"`
	Cells    int                `json:"test_cells"`
	Scores   map[string]Scores  `json:"scores"`
	NTK      studyConfig        `json:"ntk_selected"`
	SVDRank  int                `json:"svd_rank_selected"`
	Seconds  map[string]float64 `json:"seconds"`
}

var (
	studyGrid  = []studyConfig{}
	studyRanks = []int{1, 2, 3, 5, 8, 12}
)

func init() {
	for _, b := range []float64{0, 3, 10, 30, 100} {
		for _, d := range []int{1, 2} {
			for _, r := range []float64{0.001, 0.01, 0.1} {
				for _, o := range []bool{false, true} {
					studyGrid = append(studyGrid, studyConfig{b, d, r, o})
				}
			}
		}
	}
}

func studyNTK(ctx context.Context, train *Matrix, meta *Prior, c studyConfig) (*Matrix, error) {
	pr := meta
	if c.Bias != 0 {
		pr = meta.WithBias(c.Bias)
	}
	if c.Observed { // metadata and each column's own observed cells
		op, err := ObservedPrior(train)
		if err != nil {
			return nil, err
		}
		if pr, err = Concat(nil, nil, pr, op); err != nil {
			return nil, err
		}
	}
	res, err := Complete(ctx, train, pr, Options{Depth: c.Depth, Ridge: c.Ridge})
	if err != nil {
		return nil, err
	}
	return res.Y, nil
}

func studySplit(y *Matrix, task string, seed uint64) (*Holdout, error) {
	if task == "entries" {
		return HoldoutEntries(y, 0.2, seed)
	}
	return HoldoutColumns(y, 30, seed)
}

func runStudy(ctx context.Context, share float64, task string, seed uint64) (*studyRow, error) {
	s := Synthetic{M: 200, N: 300, Rank: 5, MetaDim: 20, Noise: 0.1, MetaNoise: 0.3, Observed: share, Seed: seed}
	y, metaX, err := s.Generate()
	if err != nil {
		return nil, err
	}
	meta, err := FromFeatures(s.N, s.MetaDim, metaX)
	if err != nil {
		return nil, err
	}
	test, err := studySplit(y, task, seed)
	if err != nil {
		return nil, err
	}
	val, err := studySplit(test.Train, task, seed+1000)
	if err != nil {
		return nil, err
	}
	row := &studyRow{Observed: share, Task: task, Seed: seed, Cells: len(test.Cells), Scores: map[string]Scores{}, Seconds: map[string]float64{}}
	best := math.Inf(1)
	for _, c := range studyGrid {
		p, err := studyNTK(ctx, val.Train, meta, c)
		if err != nil {
			continue // a singular configuration is not selectable
		}
		if e := val.Score(p).RMSE; e < best {
			best, row.NTK = e, c
		}
	}
	best = math.Inf(1)
	for _, k := range studyRanks {
		p, _, err := SVDImpute(ctx, val.Train, k, 500, 1e-6)
		if err != nil {
			return nil, err
		}
		if e := val.Score(p).RMSE; e < best {
			best, row.SVDRank = e, k
		}
	}
	t0 := time.Now()
	p, err := studyNTK(ctx, test.Train, meta, row.NTK)
	if err != nil {
		return nil, err
	}
	row.Seconds["ntk"] = time.Since(t0).Seconds()
	row.Scores["ntk"] = test.Score(p)
	t0 = time.Now()
	sv, _, err := SVDImpute(ctx, test.Train, row.SVDRank, 500, 1e-6)
	if err != nil {
		return nil, err
	}
	row.Seconds["svd"] = time.Since(t0).Seconds()
	row.Scores["svd"] = test.Score(sv)
	sv5, _, err := SVDImpute(ctx, test.Train, 5, 500, 1e-6)
	if err != nil {
		return nil, err
	}
	row.Scores["svd_rank5"] = test.Score(sv5)
	row.Scores["row_mean"] = test.Score(RowMean(test.Train))
	row.Scores["column_mean"] = test.Score(ColumnMean(test.Train))
	return row, nil
}

func BenchmarkSyntheticStudy(b *testing.B) {
	ctx := context.Background()
	var rows []*studyRow
	start := time.Now()
	for it := 0; it < b.N; it++ {
		rows = rows[:0]
		for _, share := range []float64{0.05, 0.1, 0.2, 0.5} {
			for _, task := range []string{"entries", "columns"} {
				for seed := uint64(1); seed <= 3; seed++ {
					r, err := runStudy(ctx, share, task, seed)
					if err != nil {
						b.Fatal(err)
					}
					rows = append(rows, r)
				}
			}
		}
	}
	md := studyMarkdown(rows, time.Since(start))
	b.Log("\n" + md)
	if dir := os.Getenv("COMPLETION_RESULTS"); dir != "" {
		if !filepath.IsAbs(dir) { // relative to the module root, not to this package
			dir = filepath.Join("..", dir)
		}
		js, _ := json.MarshalIndent(rows, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "synthetic.json"), append(js, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "synthetic.md"), []byte(md), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func studyMarkdown(rows []*studyRow, took time.Duration) string {
	var sb strings.Builder
	methods := []string{"ntk", "svd", "svd_rank5", "row_mean", "column_mean"}
	fmt.Fprintf(&sb, "# Synthetic matrix completion: NTK (metadata prior) vs mean and SVD imputation\n\n")
	fmt.Fprintf(&sb, "200 × 300, Y = b_i + u_iᵀv_j/√5 + ε (rank 5, ε of std 0.1), column metadata of 20 features = Aᵀv_j/√5 + noise of std 0.3;\n")
	fmt.Fprintf(&sb, "a share of the cells observed at random; test: 20%% of the observed cells (entries) or 30 whole columns (columns).\n")
	fmt.Fprintf(&sb, "NTK settings (prior bias, depth, ridge, observed prior concatenated or not) and the SVD's rank chosen on a validation split of the training cells.\n")
	fmt.Fprintf(&sb, "Mean ± std over seeds 1–3. `svd_rank5` is hard-impute at the true rank (an oracle).\n\n")
	fmt.Fprintf(&sb, "Made by `COMPLETION_RESULTS=results/completion go test -run '^$' -bench SyntheticStudy -benchtime 1x ./complete` (%s, shared machine).\n\n", took.Round(time.Second))
	for _, metric := range []string{"RMSE", "mean cosine", "thesis r"} {
		fmt.Fprintf(&sb, "## Test %s\n\n| observed | task | %s | NTK selected (bias, depth, ridge, +observed) | SVD rank selected |\n|---|---|%s---|---|\n",
			metric, strings.Join(methods, " | "), strings.Repeat("---|", len(methods)))
		for k := 0; k < len(rows); k += 3 {
			grp := rows[k:min(k+3, len(rows))]
			fmt.Fprintf(&sb, "| %.2f | %s |", grp[0].Observed, grp[0].Task)
			for _, m := range methods {
				var v []float64
				for _, r := range grp {
					s := r.Scores[m]
					switch metric {
					case "RMSE":
						v = append(v, s.RMSE)
					case "mean cosine":
						v = append(v, s.MeanCosine)
					default:
						v = append(v, s.ThesisR)
					}
				}
				mu, sd := meanSD(v)
				fmt.Fprintf(&sb, " %.3f ± %.3f |", mu, sd)
			}
			var cfgs, ranks []string
			for _, r := range grp {
				plus := ""
				if r.NTK.Observed {
					plus = ", +obs"
				}
				cfgs = append(cfgs, fmt.Sprintf("(%g, %d, %g%s)", r.NTK.Bias, r.NTK.Depth, r.NTK.Ridge, plus))
				ranks = append(ranks, fmt.Sprint(r.SVDRank))
			}
			fmt.Fprintf(&sb, " %s | %s |\n", strings.Join(cfgs, " "), strings.Join(ranks, ", "))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func meanSD(v []float64) (float64, float64) {
	var s, q float64
	for _, x := range v {
		s += x
	}
	mu := s / float64(len(v))
	for _, x := range v {
		q += (x - mu) * (x - mu)
	}
	if len(v) < 2 {
		return mu, 0
	}
	return mu, math.Sqrt(q / float64(len(v)-1))
}

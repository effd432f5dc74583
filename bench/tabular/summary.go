package tabular

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/internal/benchstore"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/plot"
)

// The names of our columns in the comparisons.
const (
	ColumnOurs        = "RFM (ours)"
	ColumnPaperRFMRow = "RFM (paper)"
	ColumnOurXGBoost  = "XGBoost (ours)"
)

// TaskRow is one task of a group summary.
type TaskRow struct {
	Task        string  `json:"task"`
	Ours        float64 `json:"ours"`
	PaperRFM    Opt     `json:"paper_rfm"` // NaN (null) when the paper has no row
	Diff        Opt     `json:"diff"`      // ours − paper
	XGBoostOurs Opt     `json:"xgboost_ours"`
	// Published are the paper's baseline columns for the task.
	Published   map[string]Opt `json:"published,omitempty"`
	Train       int            `json:"train"`
	PaperNTrain int            `json:"paper_n_train,omitempty"`
	Repeats     int            `json:"repeats"`
	Seconds     float64        `json:"seconds"`
	Choice      string         `json:"choice"`
}

// GroupSummary compares ours with the published columns over one group's
// tasks. Scores are accuracy in % (classification) or R².
type GroupSummary struct {
	Group string    `json:"group"`
	Unit  string    `json:"unit"`
	Rows  []TaskRow `json:"tasks"`
	// Ranked are the aggregates of ours and the six published baselines
	// over the tasks the paper has (Friedman rank, average, PMA, ADTM),
	// best rank first; OursPlace is our 1-based place.
	Ranked    []metrics.Summary `json:"ranked,omitempty"`
	OursPlace int               `json:"ours_place,omitempty"`
	// RankedAll adds the paper's RFM and, when available, our XGBoost.
	RankedAll []metrics.Summary `json:"ranked_all,omitempty"`
	// Means over every task of the group we computed.
	OursMean    float64 `json:"ours_mean"`
	XGBoostMean Opt     `json:"xgboost_ours_mean"` // over tasks with both; NaN without
	OursOnXGB   Opt     `json:"ours_mean_on_xgboost_tasks"`
	XGBoostN    int     `json:"xgboost_tasks"`
}

// XGBoostFile is what scripts/xgboost_tabular.py writes.
type XGBoostFile struct {
	Trials  int                      `json:"trials"`
	Results map[string]XGBoostResult `json:"results"`
}

// XGBoostResult is one task of the XGBoost script (scores as ours).
type XGBoostResult struct {
	Score   float64 `json:"score"`
	Seconds float64 `json:"seconds"`
}

// ReadXGBoost reads the XGBoost script's results ("" : none).
func ReadXGBoost(path string) (*XGBoostFile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f XGBoostFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// rankValue is a score as the rank metrics take it: metrics needs values
// ≥ 0, so a negative R² counts as 0 (no task of the paper has one).
func rankValue(v float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	return max(v, 0)
}

// Summarize builds the group summaries of the OK results.
func Summarize(results []Result, size string, ref Reference, xgb *XGBoostFile) ([]GroupSummary, error) {
	var out []GroupSummary
	for _, g := range Groups() {
		gs := GroupSummary{Group: g, Unit: "R²", XGBoostMean: Opt(math.NaN()), OursOnXGB: Opt(math.NaN())}
		if strings.HasPrefix(g, "clf") {
			gs.Unit = "accuracy %"
		}
		var ours, xo, xx []float64
		for _, r := range results {
			if r.Group != g || r.Status != StatusOK {
				continue
			}
			row := TaskRow{Task: r.Name, Ours: r.Score, PaperRFM: Opt(math.NaN()), Diff: Opt(math.NaN()), XGBoostOurs: Opt(math.NaN()),
				Train: r.Train, Repeats: r.Repeats, Seconds: r.Seconds}
			if len(r.Splits) > 0 {
				c := r.Splits[0].Choice
				row.Choice = c.Config
				if c.Config == "" {
					row.Choice = fmt.Sprintf("λ=%g sphere=%v", c.Ridge, c.Normalize)
				}
			}
			if rr, ok := ref.Lookup(size, r.Task); ok {
				row.PaperRFM = Opt(rr.Scores[ColumnPaperRFM])
				row.Diff = Opt(r.Score) - row.PaperRFM
				row.PaperNTrain = rr.NTrain
				row.Published = map[string]Opt{}
				for _, b := range Baselines {
					row.Published[b] = Opt(rr.Scores[b])
				}
			}
			if xgb != nil {
				if x, ok := xgb.Results[r.Task]; ok {
					row.XGBoostOurs = Opt(x.Score)
					xo, xx = append(xo, r.Score), append(xx, x.Score)
				}
			}
			ours = append(ours, r.Score)
			gs.Rows = append(gs.Rows, row)
		}
		if len(gs.Rows) == 0 {
			continue
		}
		gs.OursMean = mean(ours)
		if len(xx) > 0 {
			gs.XGBoostMean, gs.OursOnXGB, gs.XGBoostN = Opt(mean(xx)), Opt(mean(xo)), len(xx)
		}
		var err error
		if gs.Ranked, gs.OursPlace, err = rank(gs.Rows, false); err != nil {
			return nil, fmt.Errorf("%s: %w", g, err)
		}
		if gs.RankedAll, _, err = rank(gs.Rows, true); err != nil {
			return nil, fmt.Errorf("%s: %w", g, err)
		}
		out = append(out, gs)
	}
	return out, nil
}

// rank aggregates ours and the published baselines (and, with all, the
// paper's RFM and our XGBoost) over the rows the paper has.
func rank(rows []TaskRow, all bool) ([]metrics.Summary, int, error) {
	cols := append([]string{ColumnOurs}, Baselines...)
	if all {
		cols = append(cols, ColumnPaperRFMRow, ColumnOurXGBoost)
	}
	t := &metrics.Table{Classifiers: cols}
	for _, r := range rows {
		if r.Published == nil {
			continue
		}
		vals := []float64{rankValue(r.Ours)}
		for _, b := range Baselines {
			vals = append(vals, rankValue(float64(r.Published[b])))
		}
		if all {
			vals = append(vals, rankValue(float64(r.PaperRFM)), rankValue(float64(r.XGBoostOurs)))
		}
		t.Datasets = append(t.Datasets, r.Task)
		t.Acc = append(t.Acc, vals)
	}
	if len(t.Datasets) == 0 {
		return nil, 0, nil
	}
	var keep []string
	for j, c := range t.Classifiers {
		for _, row := range t.Acc {
			if !math.IsNaN(row[j]) {
				keep = append(keep, c)
				break
			}
		}
	}
	t, err := t.SelectClassifiers(keep)
	if err != nil {
		return nil, 0, err
	}
	s, err := metrics.Summarize(t, metrics.SkipMissing)
	if err != nil {
		return nil, 0, err
	}
	metrics.SortByFriedman(s)
	place := slices.IndexFunc(s, func(x metrics.Summary) bool { return x.Classifier == ColumnOurs }) + 1
	return s, place, nil
}

// Finish computes the summaries of rep's results and writes summary.md,
// summary.json and the figure into outDir; xgbPath ("" : none) is the
// XGBoost script's results.
func Finish(rep *Report, outDir, xgbPath string) error {
	ref, err := LoadReference()
	if err != nil {
		return err
	}
	xgb, err := ReadXGBoost(xgbPath)
	if err != nil {
		return err
	}
	rep.XGBoost = xgbPath
	if rep.Groups, err = Summarize(rep.Results, rep.Size, ref, xgb); err != nil {
		return err
	}
	md := filepath.Join(outDir, SummaryMDName)
	if err := benchstore.WriteFile(md, []byte(Markdown(rep))); err != nil {
		return err
	}
	js := filepath.Join(outDir, SummaryJSONName)
	if err := benchstore.WriteJSON(js, rep); err != nil {
		return err
	}
	rep.Files = append(rep.Files, md, js)
	pp := filepath.Join(outDir, PlotName)
	switch err := writePlot(pp, rep); {
	case errors.Is(err, errNoPoints):
	case err != nil:
		return err
	default:
		rep.Files = append(rep.Files, pp)
	}
	return nil
}

// fmtScore renders a score in its unit ("–" for none).
func fmtScore(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	if strings.HasPrefix(unit, "accuracy") {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func fmtDiff(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	if strings.HasPrefix(unit, "accuracy") {
		return fmt.Sprintf("%+.2f", v)
	}
	return fmt.Sprintf("%+.3f", v)
}

// Markdown renders the report.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Tabular benchmark (Grinsztajn et al.): protocol %s, size %s\n\n", rep.Protocol, rep.Size)
	fmt.Fprintf(&b, "Run tag `%s`. %d tasks (%d computed in this run, %d reused, %d failed); this run took %.0f s with %d job(s) and %d thread(s).\n\n",
		rep.Tag, len(rep.Results), rep.Computed, rep.Reused, rep.Failed, rep.ElapsedSeconds, rep.Jobs, rep.Threads)
	fmt.Fprintf(&b, "Protocol: %s\n\n", protocolText(rep.Protocol))
	b.WriteString("Scores are test accuracy (%) for classification and test R² for regression, averaged over the task's random splits. " +
		"The published columns are the RFM paper's tables 2–5 (its baselines taken from Grinsztajn et al.'s results); `–` is a value the paper does not give. " +
		"Friedman rank (1 = best), PMA (mean % of the best score) and ADTM (mean of (score − min)/(max − min), %) are computed over the tasks of the group the paper has, " +
		"among our RFM and the six published baselines; a negative R² would count as 0.\n\n")
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "Note: %s\n\n", n)
	}
	for _, g := range rep.Groups {
		fmt.Fprintf(&b, "## %s (%d tasks, %s)\n\n", g.Group, len(g.Rows), g.Unit)
		hasX := g.XGBoostN > 0
		b.WriteString("| task | train | splits | RFM (ours) | RFM (paper) | ours − paper |")
		for _, c := range Baselines {
			b.WriteString(" " + c + " |")
		}
		if hasX {
			b.WriteString(" XGBoost (ours) |")
		}
		b.WriteString(" seconds | choice (split 1) |\n|---|---:|---:|---:|---:|---:|")
		for range Baselines {
			b.WriteString("---:|")
		}
		if hasX {
			b.WriteString("---:|")
		}
		b.WriteString("---:|---|\n")
		for _, r := range g.Rows {
			train := fmt.Sprint(r.Train)
			if r.PaperNTrain > 0 && r.PaperNTrain != r.Train {
				train += fmt.Sprintf(" (paper %d)", r.PaperNTrain)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | **%s** | %s | %s |", r.Task, train, r.Repeats, fmtScore(r.Ours, g.Unit), fmtScore(float64(r.PaperRFM), g.Unit), fmtDiff(float64(r.Diff), g.Unit))
			for _, c := range Baselines {
				v := math.NaN()
				if r.Published != nil {
					v = float64(r.Published[c])
				}
				b.WriteString(" " + fmtScore(v, g.Unit) + " |")
			}
			if hasX {
				b.WriteString(" " + fmtScore(float64(r.XGBoostOurs), g.Unit) + " |")
			}
			fmt.Fprintf(&b, " %.0f | %s |\n", r.Seconds, r.Choice)
		}
		fmt.Fprintf(&b, "\nMean of our RFM over the %d tasks: %s.", len(g.Rows), fmtScore(g.OursMean, g.Unit))
		if hasX {
			fmt.Fprintf(&b, " On the %d tasks XGBoost was run on (same splits, same machine): ours %s, XGBoost %s.", g.XGBoostN, fmtScore(float64(g.OursOnXGB), g.Unit), fmtScore(float64(g.XGBoostMean), g.Unit))
		}
		b.WriteString("\n\n")
		writeRanking(&b, "Ranking among our RFM and the six published baselines", g.Ranked, g.Unit)
		writeRanking(&b, "Ranking with the paper's RFM and our XGBoost added", g.RankedAll, g.Unit)
	}
	benchstore.NotComputedTable(&b, "Failed", []string{"task", "reason"}, rep.Results, func(r *Result) []string {
		if r.Status == StatusOK {
			return nil
		}
		return []string{r.Task, r.Reason}
	})
	return b.String()
}

func writeRanking(b *strings.Builder, title string, s []metrics.Summary, unit string) {
	if len(s) == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d tasks the paper has):\n\n| # | method | Friedman rank | average (%s) | PMA | ADTM | tasks |\n|---:|---|---:|---:|---:|---:|---:|\n", title, maxSets(s), unit)
	for i, x := range s {
		name := x.Classifier
		if name == ColumnOurs {
			name = "**" + name + "**"
		}
		fmt.Fprintf(b, "| %d | %s | %.2f | %s | %.1f | %.1f | %d |\n", i+1, name, x.FriedmanRank, fmtScore(x.Average, unit), x.PMA, x.ADTM, x.Sets)
	}
	b.WriteString("\n")
}

func maxSets(s []metrics.Summary) int {
	m := 0
	for _, x := range s {
		m = max(m, x.Sets)
	}
	return m
}

func protocolText(p string) string {
	switch p {
	case ProtocolPaper:
		return "the RFM paper's (appendix D): Laplace kernel, L = 10, 5 RFM iterations (rounds 0–5, the round chosen on validation), ridge λ ∈ {1e-4, 1e-3, 1e-2, 1e-1, 1} × projection of the rows to the unit sphere off/on; numeric columns standardized and categorical ones one-hot, fitted on each split's training rows; regression targets centred and scaled to unit variance. The grid point with the highest mean validation score over the splits is kept and its mean test score reported."
	case ProtocolTuned:
		return "in each split, the search of `rfm tune` (package tune: random configurations of kernel family, bandwidth, ridge, M shape, AGOP power, centring, row normalization and rounds, with successive halving) fits on the training rows and scores on the validation rows, within the per-task trial and time budget; the best configuration is fitted on the training rows (round chosen on validation) and scored once on the test rows."
	}
	return p
}

// errNoPoints: nothing to draw.
var errNoPoints = errors.New("no task to plot")

// writePlot draws, like the paper's figure 5, our score per task against
// the published XGBoost score (and our XGBoost where it ran), accuracy as a
// fraction so that both metrics share the axes.
func writePlot(path string, rep *Report) error {
	var x, y []float64
	var names []string
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			ref := math.NaN()
			if r.Published != nil {
				ref = float64(r.Published["XGBoost"])
			}
			if !math.IsNaN(float64(r.XGBoostOurs)) {
				ref = float64(r.XGBoostOurs)
			}
			if math.IsNaN(ref) {
				continue
			}
			ours := r.Ours
			if strings.HasPrefix(g.Unit, "accuracy") {
				ref, ours = ref/100, ours/100
			}
			x, y = append(x, ref), append(y, ours)
			names = append(names, strings.TrimSuffix(g.Group, "_num")+"/"+r.Task)
		}
	}
	if len(x) == 0 {
		return errNoPoints
	}
	title := fmt.Sprintf("Tabular benchmark (%s protocol, %s): RFM vs XGBoost per task", rep.Protocol, rep.Size)
	return plot.Scatter(path, x, y, names, "XGBoost (ours where run, else published): accuracy or R²", "RFM (ours): accuracy or R²", title, true)
}

// Opt is a score that may be missing (NaN): null in JSON.
type Opt float64

// MarshalJSON writes NaN as null.
func (o Opt) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(o)) || math.IsInf(float64(o), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(o))
}

// UnmarshalJSON reads null as NaN.
func (o *Opt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Opt(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Opt(v)
	return nil
}

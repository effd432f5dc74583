package uci

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/benchstore"
	"github.com/rfmkit/rfm/metrics"
)

// The names of our two columns in the comparison tables.
const (
	ColumnRFM     = "RFM"
	ColumnLaplace = "Laplace"
)

// Scope is the comparison over one group of data sets.
type Scope struct {
	Name     string   `json:"name"` // "arora90", "all", "selected"
	Datasets []string `json:"datasets"`
	// RFMMean and LaplaceMean average our test accuracies (%) over Datasets.
	RFMMean     float64 `json:"rfm_mean_pct"`
	LaplaceMean float64 `json:"laplace_mean_pct"`
	// Summaries are every classifier's aggregates (the 179 of the
	// Fernández-Delgado table plus ours), sorted by Friedman rank; empty
	// when the table was not found.
	Summaries []metrics.Summary `json:"summaries,omitempty"`
	// RFMPlace and LaplacePlace are 1-based positions in Summaries.
	RFMPlace     int `json:"rfm_place,omitempty"`
	LaplacePlace int `json:"laplace_place,omitempty"`
	// NotInTable lists data sets of ours the table does not have (left out
	// of the comparison).
	NotInTable []string `json:"not_in_table,omitempty"`
}

// scopes builds the comparison groups: every OK data set, and, when the
// selection mixes them, Arora's 90 alone.
func scopes(rep *Report, arora map[string]bool, table *metrics.Table) ([]Scope, error) {
	var names, aNames []string
	for _, r := range rep.Results {
		if r.Status != StatusOK {
			continue
		}
		names = append(names, r.Name)
		if arora[r.Name] {
			aNames = append(aNames, r.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	first := "selected"
	switch rep.Subset {
	case SubsetAll:
		first = "all"
	case SubsetArora90:
		first = "arora90"
	}
	groups := []struct {
		name string
		sets []string
	}{{first, names}}
	if len(aNames) > 0 && len(aNames) < len(names) {
		groups = append(groups, struct {
			name string
			sets []string
		}{"arora90", aNames})
	}
	byName := map[string]*Result{}
	for i := range rep.Results {
		byName[rep.Results[i].Name] = &rep.Results[i]
	}
	var out []Scope
	for _, g := range groups {
		sc := Scope{Name: g.name, Datasets: g.sets}
		for _, n := range g.sets {
			sc.RFMMean += byName[n].TestAccuracy / float64(len(g.sets))
			sc.LaplaceMean += byName[n].LaplaceAccuracy / float64(len(g.sets))
		}
		if table != nil {
			if err := compare(&sc, table, byName); err != nil {
				return nil, fmt.Errorf("scope %s: %w", g.name, err)
			}
		}
		out = append(out, sc)
	}
	return out, nil
}

// compare adds our two columns to the table over the scope's data sets and
// computes every classifier's aggregates.
func compare(sc *Scope, table *metrics.Table, byName map[string]*Result) error {
	var in []string
	have := map[string]bool{}
	for _, d := range table.Datasets {
		have[d] = true
	}
	for _, n := range sc.Datasets {
		if have[n] {
			in = append(in, n)
		} else {
			sc.NotInTable = append(sc.NotInTable, n)
		}
	}
	if len(in) == 0 {
		return nil
	}
	t, err := table.Subset(in)
	if err != nil {
		return err
	}
	// A classifier with no value on any of these sets cannot be ranked.
	var keep []string
	for j, c := range t.Classifiers {
		for _, row := range t.Acc {
			if !math.IsNaN(row[j]) {
				keep = append(keep, c)
				break
			}
		}
	}
	if t, err = t.SelectClassifiers(keep); err != nil {
		return err
	}
	rfmAcc, lapAcc := map[string]float64{}, map[string]float64{}
	for _, n := range in {
		rfmAcc[n], lapAcc[n] = byName[n].TestAccuracy, byName[n].LaplaceAccuracy
	}
	if err := t.AddClassifier(ColumnRFM, rfmAcc); err != nil {
		return err
	}
	if err := t.AddClassifier(ColumnLaplace, lapAcc); err != nil {
		return err
	}
	s, err := metrics.Summarize(t, metrics.SkipMissing)
	if err != nil {
		return err
	}
	metrics.SortByFriedman(s)
	sc.Summaries = s
	for i, x := range s {
		switch x.Classifier {
		case ColumnRFM:
			sc.RFMPlace = i + 1
		case ColumnLaplace:
			sc.LaplacePlace = i + 1
		}
	}
	return nil
}

// finish computes the comparison and writes summary.md, summary.json and
// the plot.
func finish(rep *Report, layout *Layout) error {
	var table *metrics.Table
	if layout.Results != "" {
		var err error
		if table, err = metrics.ReadFernandezDelgado(layout.Results); err != nil {
			return err
		}
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s not found: no comparison with the 179 classifiers", ResultsFile))
	}
	arora := map[string]bool{}
	if all, err := Discover(layout.SetsDir); err == nil {
		for _, e := range all {
			if e.Meta.InArora90() {
				arora[e.Meta.Name] = true
			}
		}
	}
	var accR, accL []float64
	for _, r := range rep.Results {
		if r.Status == StatusOK {
			accR = append(accR, r.TestAccuracy)
			accL = append(accL, r.LaplaceAccuracy)
		}
	}
	rep.MeanAccuracy, rep.MeanLaplace = mean(accR), mean(accL)
	rep.Calibration = calibrationSummary(rep.Results)
	rep.Members = membersSummary(rep.Results)
	var err error
	if rep.Scopes, err = scopes(rep, arora, table); err != nil {
		return err
	}
	md := filepath.Join(rep.OutDir, SummaryMDName)
	if err := benchstore.WriteFile(md, []byte(markdown(rep))); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	jp := filepath.Join(rep.OutDir, SummaryJSONName)
	if err := benchstore.WriteFile(jp, append(js, '\n')); err != nil {
		return err
	}
	rep.Files = append(rep.Files, md, jp)
	if rep.OK > 0 {
		pp := filepath.Join(rep.OutDir, PlotName)
		if err := writePlot(pp, rep); err != nil {
			return err
		}
		rep.Files = append(rep.Files, pp)
	}
	return nil
}

// CalibrationSummary is the test log-loss (nats, mean over each data
// set's evaluation splits, then over data sets) of the RFM's probabilities
// as fitted and after calibration (power) on rows of the training split.
type CalibrationSummary struct {
	Datasets   int     `json:"datasets"`
	LogLoss    float64 `json:"log_loss"`
	CalLogLoss float64 `json:"cal_log_loss"`
	// Worse lists the data sets whose calibrated log-loss is higher than
	// the uncalibrated one, with both values.
	Worse []CalibrationWorse `json:"worse,omitempty"`
	// Splits counts their evaluation splits; Changed those whose
	// calibration changed the test log-loss at all (the others left it out
	// after its check on the training split, or fitted the identity), and
	// Lowered those of Changed where it fell.
	Splits  int `json:"splits"`
	Changed int `json:"changed"`
	Lowered int `json:"lowered"`
}

// CalibrationWorse is one data set where calibration raised the log-loss.
type CalibrationWorse struct {
	Name       string  `json:"name"`
	LogLoss    float64 `json:"log_loss"`
	CalLogLoss float64 `json:"cal_log_loss"`
}

// MeanLogLosses averages the test log-losses over the evaluation splits,
// as fitted and calibrated (ok false when the result has none).
func (r *Result) MeanLogLosses() (raw, cal float64, ok bool) {
	if len(r.LogLosses) == 0 {
		return 0, 0, false
	}
	return mean(r.LogLosses), mean(r.CalLogLosses), true
}

// calibrationSummary aggregates the log-losses of the OK results that
// have them (nil when none has).
func calibrationSummary(rs []Result) *CalibrationSummary {
	var raw, cal []float64
	cs := &CalibrationSummary{}
	for _, r := range rs {
		a, b, ok := r.MeanLogLosses()
		if r.Status != StatusOK || !ok {
			continue
		}
		raw, cal = append(raw, a), append(cal, b)
		cs.Splits += len(r.LogLosses)
		for i, v := range r.CalLogLosses {
			if v != r.LogLosses[i] {
				cs.Changed++
				if v < r.LogLosses[i] {
					cs.Lowered++
				}
			}
		}
		if b > a {
			cs.Worse = append(cs.Worse, CalibrationWorse{Name: r.Name, LogLoss: a, CalLogLoss: b})
		}
	}
	if len(raw) == 0 {
		return nil
	}
	cs.Datasets, cs.LogLoss, cs.CalLogLoss = len(raw), mean(raw), mean(cal)
	return cs
}

// String is the one-paragraph account of the comparison.
func (cs *CalibrationSummary) String() string {
	s := fmt.Sprintf("Test log-loss of the RFM (mean over %d data sets): %.4f as fitted, %.4f calibrated (power, fitted on out-of-fold or validation rows of the training split); no worse on %d of %d data sets",
		cs.Datasets, cs.LogLoss, cs.CalLogLoss, cs.Datasets-len(cs.Worse), cs.Datasets)
	if len(cs.Worse) > 0 {
		parts := make([]string, len(cs.Worse))
		for i, w := range cs.Worse {
			parts[i] = fmt.Sprintf("%s %.4f → %.4f", w.Name, w.LogLoss, w.CalLogLoss)
		}
		s += " (worse on: " + strings.Join(parts, ", ") + ")"
	}
	return s + fmt.Sprintf(". The calibration changed the model in %d of the %d evaluation splits (elsewhere its check on the training split left it out or it fitted the identity) and lowered the test log-loss in %d of those.",
		cs.Changed, cs.Splits, cs.Lowered)
}

// TopRows is how many classifiers the Markdown tables list (ours are added
// below when they rank lower).
const TopRows = 10

// markdown renders the summary in the style of the paper's tables.
func markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# UCI-121 benchmark: protocol %s, subset %s\n\n", rep.Protocol, rep.Subset)
	fmt.Fprintf(&b, "%d data sets computed or reused (%d skipped, %d failed). ", rep.OK, rep.Skipped, rep.Failed)
	fmt.Fprintf(&b, "Mean test accuracy over the 4 evaluation splits: **RFM %.2f%%**, Laplace %.2f%%.\n\n", rep.MeanAccuracy, rep.MeanLaplace)
	fmt.Fprintf(&b, "Protocol: %s\n\n", protocolText(rep.Protocol))
	if rep.Members != nil {
		fmt.Fprintf(&b, "%s\n\n", rep.Members)
	}
	if rep.Calibration != nil {
		fmt.Fprintf(&b, "%s\n\n", rep.Calibration)
	}
	if rep.Subset == SubsetCombined {
		b.WriteString("Combined from the results.tsv files of earlier runs (`bench uci --combine`); their run tags are in the notes.\n\n")
	} else {
		fmt.Fprintf(&b, "This run: %d data sets computed (%d reused from results.tsv) in %.1f s with %d job(s) and %d thread(s); float32: %v.\n\n",
			rep.Computed, rep.Reused, rep.ElapsedSeconds, rep.Jobs, rep.Threads, strings.Contains(rep.Tag, "float32"))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "Note: %s\n\n", n)
	}
	for _, sc := range rep.Scopes {
		fmt.Fprintf(&b, "## %s: %d data sets\n\n", sc.Name, len(sc.Datasets))
		fmt.Fprintf(&b, "Mean accuracy: RFM %.2f%%, Laplace %.2f%%.\n\n", sc.RFMMean, sc.LaplaceMean)
		if len(sc.Summaries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "Ranked by Friedman rank among %d classifiers (the 179 of Fernández-Delgado et al. 2014 with a result here, plus ours). "+
			"Averages skip missing results; P90/P95: %% of data sets within 90%%/95%% of the best accuracy; PMA: mean %% of the best; ADTM: mean distance to the minimum (%%).\n\n", len(sc.Summaries))
		b.WriteString("| # | classifier | Friedman rank | avg acc (%) | P90 | P95 | PMA | ADTM | sets |\n")
		b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for i, s := range sc.Summaries {
			ours := s.Classifier == ColumnRFM || s.Classifier == ColumnLaplace
			if i >= TopRows && !ours {
				continue
			}
			name := s.Classifier
			if ours {
				name = "**" + name + " (ours)**"
			}
			fmt.Fprintf(&b, "| %d | %s | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %d |\n",
				i+1, name, s.FriedmanRank, s.Average, s.P90, s.P95, s.PMA, s.ADTM, s.Sets)
		}
		if len(sc.NotInTable) > 0 {
			fmt.Fprintf(&b, "\nNot in the table (left out of the ranking): %s\n", strings.Join(sc.NotInTable, ", "))
		}
		b.WriteString("\n")
	}
	writeChoiceCounts(&b, rep)
	benchstore.NotComputedTable(&b, "Not computed", []string{"data set", "status", "reason"}, rep.Results, func(r *Result) []string {
		if r.Status == StatusOK {
			return nil
		}
		return []string{r.Name, r.Status, r.Reason}
	})
	return b.String()
}

func protocolText(p string) string {
	switch p {
	case ProtocolPaper:
		return "the RFM authors' (SPEC §5): grid λ ∈ {10, 1, 0.1, 0.01, 0.001} × row normalization on/off, 5 rounds each (Laplace, L = 10, full M, mean-normalized AGOP), selected on conxuntos.dat by the first strict maximum of validation accuracy; the fixed M, λ and normalization are evaluated by kernel ridge regression on the 4 conxuntos_kfold.dat splits. Laplace = round 0 of the same grid. M is learned on rows that reappear in the test splits (the published protocol's leak)."
	case ProtocolClean:
		return "leakage-free: inside each of the 4 conxuntos_kfold.dat training splits, a seeded stratified 80/20 split selects the grid point and round (the paper grid) and learns M; kernel ridge regression with that M is then fitted on the whole training split and scored on its test split. No test row influences M or the selection."
	case ProtocolTuned:
		return "leakage-free and tuned: inside each of the 4 conxuntos_kfold.dat training splits, the search of 'rfm tune' (package tune: random configurations of bandwidth, ridge, kernel family and exponents, full or diagonal M, AGOP power, M normalization, centred gradients, row normalization and rounds, cut by successive halving) picks a configuration on that split only, scored by 4-fold cross-validation inside it when it has fewer than 1 000 rows and on a seeded 20% holdout otherwise; the best is fitted on the whole training split (with folds: for the round the folds chose, its probabilities calibrated by a power fitted on the out-of-fold scores) and scored once on its test split. With --ensemble K > 1 the K best configurations are fitted so and the model is the mean of their probabilities, (the members column counts each split's configurations: fewer when fewer reached the search's top rung). A training split of more than 10 000 rows is fitted by Nyström on 10 000 centres (the search, on at most 4 000 rows, stays exact). Laplace = the best plain kernel (round 0) of the same search, refitted the same way. No test row influences any choice."
	case ProtocolTunedGrid:
		return fmt.Sprintf("the paper protocol with a richer grid, selected on conxuntos.dat only (as in the paper protocol): AGOP power %v × centred gradients {off, on} × M ∈ {full, diagonal} × bandwidth L ∈ %v × the paper's λ × normalization grid, rounds 0..%d, each scored in both directions of the conxuntos.dat split (train on one half, validate on the other) and the two accuracies averaged; first strict maximum of the mean in that order; the selected setting's M is then learned again, same rounds, on both conxuntos.dat halves. Laplace = round 0 of the same grid (so its bandwidth is tuned too).", tunedPowers, tunedBandwidths, tunedIters)
	}
	return p
}

// writeChoiceCounts tabulates what the selections picked.
func writeChoiceCounts(b *strings.Builder, rep *Report) {
	counts := map[string]map[string]int{}
	add := func(k, v string) {
		if counts[k] == nil {
			counts[k] = map[string]int{}
		}
		counts[k][v]++
	}
	total := 0
	for _, r := range rep.Results {
		if r.Status != StatusOK {
			continue
		}
		for _, c := range r.RFM {
			total++
			add("λ", strconv.FormatFloat(c.Lambda, 'g', -1, 64))
			add("row normalization", onOff(c.Normalize))
			add("round", strconv.Itoa(c.Round))
			add("bandwidth L", strconv.FormatFloat(c.Bandwidth, 'g', -1, 64))
			m := "full"
			if c.Diag {
				m = "diagonal"
			}
			if c.Round == 0 {
				m = "identity (round 0)"
			}
			add("M", m)
			if c.Centered {
				add("gradients", "centered")
			} else {
				add("gradients", "uncentered")
			}
			add("AGOP normalization", string(c.Norm))
			k := string(c.Kernel)
			if k == "" {
				k = "laplace"
			}
			add("kernel", k)
			p := c.Power
			if p == 0 {
				p = 1
			}
			add("AGOP power", strconv.FormatFloat(p, 'g', -1, 64))
			add("rounds run (T)", strconv.Itoa(c.Iters))
		}
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "## What the RFM selection picked (%d selections)\n\n| parameter | value: count |\n|---|---|\n", total)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	order := []string{"λ", "row normalization", "round", "kernel", "bandwidth L", "M", "gradients", "AGOP normalization", "AGOP power", "rounds run (T)"}
	sort.Slice(keys, func(i, j int) bool { return slices.Index(order, keys[i]) < slices.Index(order, keys[j]) })
	for _, k := range keys {
		vals := make([]string, 0, len(counts[k]))
		for v := range counts[k] {
			vals = append(vals, v)
		}
		sort.Slice(vals, func(i, j int) bool {
			a, b := counts[k][vals[i]], counts[k][vals[j]]
			if a != b {
				return a > b
			}
			return vals[i] < vals[j]
		})
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprintf("%s: %d", v, counts[k][v])
		}
		fmt.Fprintf(b, "| %s | %s |\n", k, strings.Join(parts, ", "))
	}
	b.WriteString("\n")
}

// MembersSummary counts the evaluation splits of the tuned protocol by the
// number of configurations their model averages (--ensemble K > 1).
type MembersSummary struct {
	Splits int `json:"splits"`
	// ByMembers maps a member count to the splits whose model had it.
	ByMembers map[int]int `json:"by_members"`
	// Unrecorded counts the splits of OK results that did not record it
	// (reused from an older results.tsv, or --ensemble 1).
	Unrecorded int `json:"unrecorded,omitempty"`
}

// membersSummary aggregates the members of the OK results that recorded
// them (nil when none did).
func membersSummary(rs []Result) *MembersSummary {
	ms := &MembersSummary{ByMembers: map[int]int{}}
	for _, r := range rs {
		if r.Status != StatusOK {
			continue
		}
		if len(r.Members) == 0 {
			ms.Unrecorded += len(r.TestAccuracies)
		}
		for _, k := range r.Members {
			ms.ByMembers[k]++
			ms.Splits++
		}
	}
	if ms.Splits == 0 {
		return nil
	}
	return ms
}

// String is the one-line account.
func (ms *MembersSummary) String() string {
	ks := make([]int, 0, len(ms.ByMembers))
	for k := range ms.ByMembers {
		ks = append(ks, k)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ks)))
	parts := make([]string, len(ks))
	for i, k := range ks {
		if k == 1 {
			parts[i] = fmt.Sprintf("the best configuration alone in %d (only it reached the search's top rung)", ms.ByMembers[k])
		} else {
			parts[i] = fmt.Sprintf("the mean of %d in %d", k, ms.ByMembers[k])
		}
	}
	s := fmt.Sprintf("Tuned models over %d evaluation splits: %s", ms.Splits, strings.Join(parts, ", "))
	if ms.Unrecorded > 0 {
		s += fmt.Sprintf("; %d more splits did not record it (older results or --ensemble 1)", ms.Unrecorded)
	}
	return s + "."
}

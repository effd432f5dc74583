package tune

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/ensemble"
)

// Report is the account of a search and its saved model ('rfm tune
// --json'): how the search went, the best trial against the plain kernel
// and the base configuration, and what the final fit made.
type Report struct {
	describe.FitData
	Design string `json:"design"`
	// Choice is how the saved configuration was chosen (the rule, the
	// margin over the defaults); TrialCap the cap on the configurations
	// the validation rows set (0: none, Trials given).
	Choice   *Choice `json:"choice,omitempty"`
	TrialCap int     `json:"trial_cap,omitempty"`
	Rungs    []int   `json:"rungs"`
	// MaxRows and FinalCenters are the search's sample size and the saved
	// model's Nyström centres (0: every row, the search's solver), given or
	// chosen for a large table.
	MaxRows      int `json:"max_rows,omitempty"`
	FinalCenters int `json:"final_centers,omitempty"`
	Jobs         int `json:"jobs"`
	// Drawn configurations, Local of them perturbations of the best;
	// Fits made and Cached read back from the trials table.
	Drawn  int `json:"configurations"`
	Local  int `json:"local_configurations"`
	Fits   int `json:"trials"`
	Cached int `json:"cached"`
	// Best is the chosen trial, Plain the best plain kernel and Default
	// the base configuration (nil when it did not reach the top rung).
	Best    TrialScore `json:"best"`
	Plain   TrialScore `json:"plain_kernel"`
	Default *Score     `json:"base,omitempty"`
	// Config and Scaling are the saved model's.
	Config    rfm.Config `json:"config"`
	Scaling   string     `json:"scaling"`
	BestRound int        `json:"best_round"` // the round it kept
	Refitted  bool       `json:"refitted"`   // α refitted on every row
	// Members lists the trials an ensemble model averages, best first.
	Members []int `json:"ensemble_trials,omitempty"`
	Asked   int   `json:"ensemble_asked"`
	// Validation scores the ensemble's mean against its best member and
	// the plain kernel on the held-out rows (with calibration).
	Validation  *ensemble.Validation `json:"ensemble_validation,omitempty"`
	TrialsFile  string               `json:"trials_file"`
	Figures     []string             `json:"figures,omitempty"`
	Seconds     float64              `json:"seconds"`
	FinalSecond float64              `json:"final_fit_seconds"`

	res *Result
}

// Score is a trial's validation score: its accuracy (classification) and
// loss.
type Score struct {
	Trial    int      `json:"trial"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	Loss     float64  `json:"loss"`
}

// TrialScore is a Score with the round it was taken at and the rung's
// training rows.
type TrialScore struct {
	Score
	Round int `json:"round"`
	Rows  int `json:"rows"`
}

// SearchStats counts what a search did: the trials it fitted and those it
// read back from its trials table, and its wall time.
type SearchStats struct {
	Fits, Cached int
	Time         time.Duration
	TrialsFile   string
}

// NewReport starts the report of the search res of opt: every field the
// search sets (the caller adds the data, the final model and its time).
func NewReport(opt Options, res *Result, st SearchStats) Report {
	c := res.Task == rfm.Classification
	r := Report{Design: res.Design, Rungs: res.Rungs, MaxRows: opt.MaxRows, FinalCenters: opt.FinalCenters, Jobs: res.Jobs,
		Drawn: res.Drawn, Local: res.Local, Fits: st.Fits, Cached: st.Cached,
		Best:       trialScore(res.Best, res.Best.Accuracy, res.Best.Loss, res.Best.Round, c),
		Plain:      trialScore(res.Plain, res.Plain.PlainAccuracy, res.Plain.PlainLoss, 0, c),
		TrialsFile: st.TrialsFile, Seconds: st.Time.Seconds(), Choice: res.Choice, TrialCap: res.TrialCap, res: res}
	if d := res.Default; d != nil {
		s := trialScore(d, d.Accuracy, d.Loss, d.Round, c).Score
		r.Default = &s
	}
	return r
}

func trialScore(t *Trial, acc, loss float64, round int, classification bool) TrialScore {
	s := TrialScore{Score: Score{Trial: t.Index, Loss: loss}, Round: round, Rows: t.Rows}
	if classification {
		s.Accuracy = &acc
	}
	return s
}

// ScoreText is a trial's score in a few words: its accuracy, or its loss.
func ScoreText(t *Trial, classification bool) string {
	if classification {
		return fmt.Sprintf("accuracy %.4f", t.Accuracy)
	}
	return fmt.Sprintf("loss %.4g", t.Loss)
}

// FinalWhat names what the final fit fits: the best configuration, or the
// ensemble of k.
func FinalWhat(k int) string {
	if k > 1 {
		return fmt.Sprintf("the %d best configurations", k)
	}
	return "the best configuration"
}

// FoldsText names a cross-validation design: "5-fold cross-validation"
// or "5-fold cross-validation × 2 repeats".
func FoldsText(folds, repeats int) string {
	s := fmt.Sprintf("%d-fold cross-validation", folds)
	if repeats > 1 {
		s += fmt.Sprintf(" × %d repeats", repeats)
	}
	return s
}

func duration(s float64) string { return describe.Seconds(time.Duration(s * float64(time.Second))) }

// WriteText prints the report: the search, the best trial, the plain
// kernel and the base configuration, the model, and the best five trials
// of the top rung. It needs the search's trials: a Report made by
// NewReport (not one read back from JSON).
func (out *Report) WriteText(w io.Writer) error {
	res := out.res
	classification := res.Task == rfm.Classification
	metric := func(acc *float64, loss float64) string {
		if acc != nil {
			return fmt.Sprintf("accuracy %.4f (loss %.4g)", *acc, loss)
		}
		return fmt.Sprintf("loss %.4g (MSE of standardized targets)", loss)
	}
	fmt.Fprintf(w, "Search: %d configurations (%d local), %d fits (%d from the trials table) in %s; scored on %s; rungs of %s training rows; %d fit(s) at once\n",
		out.Drawn, out.Local, out.Fits+out.Cached, out.Cached, duration(out.Seconds), res.Design, joinInts(res.Rungs, "/"), res.Jobs)
	fmt.Fprintf(w, "Best:         trial %d, round %d: validation %s\n", out.Best.Trial, out.Best.Round, metric(out.Best.Accuracy, out.Best.Loss))
	fmt.Fprintf(w, "              %s, %s scaling\n", describe.Config(res.Best.Config), res.Best.Scaling)
	fmt.Fprintf(w, "Plain kernel: trial %d, round 0: validation %s (the best round 0 of the same rung)\n", out.Plain.Trial, metric(out.Plain.Accuracy, out.Plain.Loss))
	if out.Choice != nil {
		fmt.Fprintf(w, "Choice:       %s\n", out.Choice)
	}
	if out.TrialCap > 0 {
		fmt.Fprintf(w, "Trial cap:    %d configurations (max(20, validation rows/10); --trials N sets another)\n", out.TrialCap)
	}
	if out.Default != nil {
		fmt.Fprintf(w, "Base config:  trial 0: validation %s\n", metric(out.Default.Accuracy, out.Default.Loss))
	} else {
		fmt.Fprintln(w, "Base config:  trial 0 did not reach the top rung")
	}
	refit := "α refitted on all rows"
	if !out.Refitted {
		refit = "not refitted"
	}
	fmt.Fprintf(w, "Model: %s (%d rows, round %d kept, %s; final fit %s); trials: %s\n", out.Model, out.Rows, out.BestRound, refit,
		duration(out.FinalSecond), out.TrialsFile)
	out.WriteEnsembleText(w)
	for _, fig := range out.Figures {
		fmt.Fprintf(w, "Figure: %s\n", fig)
	}
	return writeTopTrials(w, res, classification)
}

// writeTopTrials prints the best five trials of the top rung.
func writeTopTrials(w io.Writer, res *Result, classification bool) error {
	top := res.Best.Rows
	var ts []Trial
	for _, t := range res.Trials {
		if t.Scored() && t.Rows == top {
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(i, j int) bool { return Better(res.Task, &ts[i], &ts[j]) })
	ts = ts[:min(len(ts), 5)]
	fmt.Fprintf(w, "\nBest trials on %d rows:\n", top)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	score := "loss"
	if classification {
		score = "accuracy"
	}
	fmt.Fprintf(tw, "trial\t%s\tround\tkernel\tridge\tM\tscaling\trows normalized\tloss\n", score)
	for _, t := range ts {
		m := "full"
		if t.Config.Diag {
			m = "diag"
		}
		if t.Config.AGOPPower != 1 {
			m += fmt.Sprintf(" ^%g", t.Config.AGOPPower)
		}
		v := fmt.Sprintf("%.4g", t.Loss)
		if classification {
			v = fmt.Sprintf("%.4f", t.Accuracy)
		}
		loss := t.Config.Loss
		if loss == "" {
			loss = rfm.LossSquared
		}
		fmt.Fprintf(tw, "%d\t%s\t%d/%d\t%s\t%g\t%s\t%s\t%v\t%s\n", t.Index, v, t.Round, t.Config.Iters, t.Config.Kernel, t.Config.Ridge, m, t.Scaling, t.Config.NormalizeRows, loss)
	}
	return tw.Flush()
}

// joinInts joins integers with sep.
func joinInts(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

// WriteEnsembleText says what became of an ensemble of Asked > 1
// configurations: the members saved, or why the best was saved alone, and
// the mean's validation.
func (out *Report) WriteEnsembleText(w io.Writer) {
	if out.Asked < 2 {
		return
	}
	ids := out.Members
	switch {
	case len(ids) == 0:
		fmt.Fprintf(w, "Ensemble: none (--ensemble %d): only the best trial reached the top rung with its column scaling; saved alone\n", out.Asked)
	case len(ids) < out.Asked:
		fmt.Fprintf(w, "Ensemble: the mean of trials %s: %d of the %d asked, all that reached the top rung with the best one's column scaling (round and refit above are the best one's)\n", joinInts(ids, ", "), len(ids), out.Asked)
	default:
		fmt.Fprintf(w, "Ensemble: the mean of trials %s (round and refit above are the best one's)\n", joinInts(ids, ", "))
	}
	if v := out.Validation; len(ids) > 0 && v != nil {
		rows := "validation rows"
		if v.Folds {
			rows = "out-of-fold rows"
		}
		fmt.Fprintf(w, "Ensemble on the %d %s: %.2f%% right (log-loss %.4f); the best alone %.2f%% (%.4f), the plain kernel %.2f%% (both chosen on these rows, so their scores lean high)\n",
			v.Rows, rows, 100*v.Accuracy, v.LogLoss, 100*v.BestAccuracy, v.BestLogLoss, 100*v.Floor)
	}
}

// LargeReport is the report of a large table's search (TreeFinal): the
// search as for any table, and how the final model was chosen.
type LargeReport struct {
	Report
	Kind  string         `json:"model_kind"`
	Large *TreeChoice    `json:"large_table"`
	Tree  *describe.Tree `json:"tree,omitempty"`
}

// WriteText prints the report of a large table's search (made from
// NewReport's).
func (out *LargeReport) WriteText(w io.Writer) error {
	res := out.res
	fmt.Fprintf(w, "Search: %d configurations (%d local), %d fits (%d from the trials table) in %s on samples of %d rows; scored on %s\n",
		out.Drawn, out.Local, out.Fits+out.Cached, out.Cached, duration(out.Seconds), out.MaxRows, res.Design)
	fmt.Fprintf(w, "Best:         trial %d, %s, %s scaling: validation %s\n", out.Best.Trial, describe.Config(res.Best.Config), res.Best.Scaling, ScoreText(res.Best, res.Task == rfm.Classification))
	fmt.Fprintf(w, "Final model:  %s\n", out.Large)
	fmt.Fprintf(w, "Model: %s, a %s (%d rows; final fit %s); trials: %s\n", out.Model, out.Kind, out.Rows,
		duration(out.FinalSecond), out.TrialsFile)
	if out.Tree != nil {
		fmt.Fprintf(w, "Tree:         %d leaves, depth %d; %s\n", len(out.Tree.Leaves), out.Tree.Depth, out.Tree.Plan)
	}
	if out.Asked > 1 {
		fmt.Fprintf(w, "Ensemble:     none (--ensemble %d does not apply to a large table's final model)\n", out.Asked)
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/tree"
	"github.com/rfmkit/rfm/tune"
)

// tuneLargeJSON is what 'rfm tune --json' prints for a large table: the
// search as for any table, and how the final model was chosen.
type tuneLargeJSON struct {
	tuneJSON
	Kind  string           `json:"model_kind"`
	Large *tune.TreeChoice `json:"large_table"`
	Tree  *describe.Tree   `json:"tree,omitempty"`
}

// finishLarge fits and saves the final model of a large table
// (tune.TreeFinal: the default tree, the tuned tree or Nyström, chosen on
// the search's validation rows) and reports it.
func (o *tuneOptions) finishLarge(e *env, opt tune.Options, res *tune.Result, pipelines map[string]*dataset.Pipeline, tg *dataset.Target, n, fits, cached int, searchTime time.Duration) error {
	classification := tg.IsClassification()
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	opt.Log = bar.Log
	start := time.Now()
	tf, err := tune.TreeFinal(e.ctx, opt, res, func(stage string, p rfm.Progress) {
		bar.Update(p.Fraction, "final fit: "+stage)
	})
	if err != nil {
		bar.Abort()
		if e.ctx.Err() != nil {
			return &interrupted{fmt.Sprintf("in the final fit: no model was written; the %d trials are in %s (--resume reuses them)", fits+cached, o.trialsOut)}
		}
		return fmt.Errorf("final fit of a large table: %w", err)
	}
	finalTime := time.Since(start)
	sp := pipelines[tf.Scaling]
	info := trainingInfo{Data: o.data, Rows: n, Validation: "rfm tune: " + res.Design + "; " + tf.Choice.String(), Version: versionString()}
	if err := saveModel(e.ctx, o.out, tf.Model, sp, tg, info); err != nil {
		bar.Abort()
		return err
	}
	bar.Finish(fmt.Sprintf("tune: final fit (%s) in %s; model written to %s", tf.Choice.Kept, seconds(finalTime), o.out))
	out := tuneLargeJSON{
		tuneJSON: tuneJSON{
			fitData: newFitData(&o.fitOptions, opt.Data[tf.Scaling], sp, tg),
			Design:  res.Design, Rungs: res.Rungs, MaxRows: opt.MaxRows, FinalCenters: opt.FinalCenters, Jobs: res.Jobs, Drawn: res.Drawn, Local: res.Local, Fits: fits, Cached: cached,
			Best:   trialJSON(res.Best, res.Best.Accuracy, res.Best.Loss, res.Best.Round, classification),
			Plain:  trialJSON(res.Plain, res.Plain.PlainAccuracy, res.Plain.PlainLoss, 0, classification),
			Config: tf.Config, Scaling: tf.Scaling, Asked: o.ensemble,
			TrialsFile: o.trialsOut, Seconds: searchTime.Seconds(), FinalSecond: finalTime.Seconds(),
			Choice: res.Choice, TrialCap: res.TrialCap,
		},
		Kind: tf.Model.Kind(), Large: tf.Choice,
	}
	if m, ok := tf.Model.(*rfm.Model); ok {
		out.BestRound, out.Refitted = m.BestRound, m.Refitted
	}
	if tm, ok := tf.Model.(*tree.Model); ok {
		s := describe.SummarizeTree(tm, sp.FeatureNames(), tg, 5)
		if tf.Plan != nil {
			s.Plan = tf.Plan.String()
		}
		out.Tree = &s
	}
	out.Default = baseScore(res, classification)
	if o.common.json {
		return writeJSON(e.stdout, out)
	}
	if o.common.quiet {
		return nil
	}
	return writeTuneLargeText(e.stdout, res, &out, classification)
}

func writeTuneLargeText(w io.Writer, res *tune.Result, out *tuneLargeJSON, classification bool) error {
	fmt.Fprintf(w, "Search: %d configurations (%d local), %d fits (%d from the trials table) in %s on samples of %d rows; scored on %s\n",
		out.Drawn, out.Local, out.Fits+out.Cached, out.Cached, seconds(time.Duration(out.Seconds*float64(time.Second))), out.MaxRows, res.Design)
	fmt.Fprintf(w, "Best:         trial %d, %s, %s scaling: validation %s\n", out.Best.Trial, describeConfig(res.Best.Config), res.Best.Scaling, scoreText(res.Best, classification))
	fmt.Fprintf(w, "Final model:  %s\n", out.Large)
	fmt.Fprintf(w, "Model: %s, a %s (%d rows; final fit %s); trials: %s\n", out.Model, out.Kind, out.Rows,
		seconds(time.Duration(out.FinalSecond*float64(time.Second))), out.TrialsFile)
	if out.Tree != nil {
		fmt.Fprintf(w, "Tree:         %d leaves, depth %d; %s\n", len(out.Tree.Leaves), out.Tree.Depth, out.Tree.Plan)
	}
	if out.Asked > 1 {
		fmt.Fprintf(w, "Ensemble:     none (--ensemble %d does not apply to a large table's final model)\n", out.Asked)
	}
	return nil
}

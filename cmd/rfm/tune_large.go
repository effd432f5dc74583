package main

import (
	"fmt"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/tune"
)

// finishLarge fits and saves the final model of a large table
// (tune.TreeFinal: the default tree, the tuned tree or Nyström, chosen on
// the search's validation rows) and reports it.
func (o *tuneOptions) finishLarge(e *env, opt tune.Options, res *tune.Result, rep tune.Report, pipelines map[string]*dataset.Pipeline, tg *dataset.Target, n int) error {
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	opt.Log = bar.Log
	start := time.Now()
	tf, err := tune.TreeFinal(e.ctx, opt, res, func(stage string, p rfm.Progress) {
		bar.Update(p.Fraction, "final fit: "+stage)
	})
	if err != nil {
		return o.finalError(e, bar, &rep, fmt.Errorf("final fit of a large table: %w", err))
	}
	finalTime := time.Since(start)
	sp := pipelines[tf.Scaling]
	info := trainingInfo{Data: o.data, Rows: n, Validation: "rfm tune: " + res.Design + "; " + tf.Choice.String(), Version: versionString()}
	if err := saveModel(e.ctx, o.out, tf.Model, sp, tg, info); err != nil {
		bar.Abort()
		return err
	}
	bar.Finish(fmt.Sprintf("tune: final fit (%s) in %s; model written to %s", tf.Choice.Kept, seconds(finalTime), o.out))
	rep.FitData = newFitData(&o.fitOptions, opt.Data[tf.Scaling], sp, tg)
	rep.Config, rep.Scaling, rep.FinalSecond = tf.Config, tf.Scaling, finalTime.Seconds()
	out := tune.LargeReport{Report: rep, Kind: tf.Model.Kind(), Large: tf.Choice}
	if km, ok := tf.Model.(rfm.KernelMachine); ok {
		m := km.KernelMachine()
		out.BestRound, out.Refitted = m.BestRound, m.Refitted
	}
	if out.Tree = describe.TreeSummary(tf.Model, sp.FeatureNames(), tg, 5); out.Tree != nil && tf.Plan != nil {
		out.Tree.Plan = tf.Plan.String()
	}
	return printReport(e, o.common, &out)
}

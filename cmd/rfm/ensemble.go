package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
)

// inspectEnsembleJSON is what 'rfm inspect --json' prints for an ensemble:
// a line per member, then the first (best) member inspected as an RFM.
type inspectEnsembleJSON struct {
	fileJSON
	Kind        string               `json:"kind"`
	Features    int                  `json:"features"`
	Members     []memberJSON         `json:"members"`
	Calibration *rfm.Calibration     `json:"calibration,omitempty"`
	Note        string               `json:"note,omitempty"`
	Validation  *ensemble.Validation `json:"validation,omitempty"`
	Best        *inspectJSON         `json:"best_member"`
}

type memberJSON struct {
	Config    rfm.Config `json:"config"`
	BestRound int        `json:"best_round"`
	Centers   int        `json:"centers"`
}

// inspectEnsemble inspects an ensemble: its members, and the best member
// in full (features, metric, figures) as 'rfm inspect' shows one RFM.
func inspectEnsemble(e *env, lm *loadedModel, em *ensemble.Model, top, eig int, plots string, shape *imageDims, common commonFlags) error {
	best := *lm
	best.Fitted = em.Members[0]
	inner, err := inspectModel(&best, top, eig)
	if err != nil {
		return err
	}
	if plots != "" {
		figs, err := writeFigures(plots, &best, featureNames(&best), top, shape)
		if err != nil {
			return err
		}
		inner.Figures = figs
	}
	res := inspectEnsembleJSON{fileJSON: newFileJSON(lm), Kind: "ensemble", Features: em.D, Calibration: em.Calibration, Note: em.Note, Validation: em.Validation, Best: inner}
	for _, m := range em.Members {
		res.Members = append(res.Members, memberJSON{Config: m.Config, BestRound: m.BestRound, Centers: m.N})
	}
	if common.json {
		return writeJSON(e.stdout, res)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	writeFileHeader(tw, lm)
	fmt.Fprintf(tw, "ensemble\tmean of %d RFMs' probabilities (outputs for regression)\n", len(em.Members))
	if cal := em.Calibration; cal != nil {
		fmt.Fprintf(tw, "calibration\tof the mean: %s\n", describeCalibration(cal))
	}
	if v := em.Validation; v != nil {
		rows := "validation rows"
		if v.Folds {
			rows = "out-of-fold rows"
		}
		fmt.Fprintf(tw, "validation\ton %d %s: the mean %.2f%% right (log-loss %.4f), the best member alone %.2f%% (%.4f), the plain kernel %.2f%% (the last two chosen on these rows)\n",
			v.Rows, rows, 100*v.Accuracy, v.LogLoss, 100*v.BestAccuracy, v.BestLogLoss, 100*v.Floor)
	}
	if em.Note != "" {
		fmt.Fprintf(tw, "note\t%s\n", em.Note)
	}
	tw.Flush()
	b.WriteString("\nmembers (best first):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for i, m := range em.Members {
		fmt.Fprintf(tw, "%d\t%s\tround %d\t%d centres\n", i, describeConfig(m.Config), m.BestRound, m.N)
	}
	tw.Flush()
	b.WriteString("\nmember 0 (the best) in detail:\n")
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return err
	}
	return writeInspectText(e.stdout, inner, &best, false) // the file's header is above
}

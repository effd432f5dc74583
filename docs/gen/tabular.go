package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// tabularSummary is the part of bench/tabular's summary.json the page reads
// (a missing score is null, read as NaN by nullable).
type tabularSummary struct {
	Tag    string `json:"tag"`
	Groups []struct {
		Group string `json:"group"`
		Unit  string `json:"unit"`
		Rows  []struct {
			Task        string    `json:"task"`
			Ours        float64   `json:"ours"`
			PaperRFM    *float64  `json:"paper_rfm"`
			XGBoostOurs *float64  `json:"xgboost_ours"`
			Published   pubScores `json:"published"`
			Train       int       `json:"train"`
			Repeats     int       `json:"repeats"`
			Seconds     float64   `json:"seconds"`
		} `json:"tasks"`
		Ranked []struct {
			Classifier   string  `json:"classifier"`
			FriedmanRank float64 `json:"friedman_rank"`
			Average      float64 `json:"average_accuracy"`
		} `json:"ranked"`
		OursPlace int `json:"ours_place"`
	} `json:"groups"`
}

type pubScores map[string]*float64

func nullable(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// tabularCell formats a score in its group's unit ("–" for none).
func tabularCell(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case strings.HasPrefix(unit, "accuracy"):
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// tabularSection writes the per-task table of 'rfm bench tabular' from the
// summary.json of its paper and tuned runs (nothing when neither exists).
func (r *reader) tabularSection(b *bytes.Buffer) {
	const paperRel, tunedRel = "tabular-benchmark/paper/summary.json", "tabular-benchmark/tuned/summary.json"
	var paper, tuned tabularSummary
	hasP := r.exists("results/"+paperRel) && r.json("results/"+paperRel, &paper)
	hasT := r.exists("results/"+tunedRel) && r.json("results/"+tunedRel, &tuned)
	if !hasP && !hasT {
		return
	}
	b.WriteString("## Tabular benchmark (Grinsztajn et al.): `rfm bench tabular`\n\n")
	fmt.Fprintf(b, "The RFM paper's second tabular benchmark, medium size (how it runs: [tabular-benchmark.md](tabular-benchmark.md)). "+
		"From %s and %s: test accuracy (%%) or R², mean over the task's splits; the published columns are the paper's tables 2–5; "+
		"XGBoost (ours) is `scripts/xgboost_tabular.py` on the same splits. Only the tasks computed so far are listed.\n\n", link(paperRel), link(tunedRel))
	type row struct {
		train, reps                         int
		paper, ours, secs, tuned, xgb, pubX float64
		unit                                string
	}
	rows := map[string]*row{}
	var order []string
	get := func(id, unit string) *row {
		if rows[id] == nil {
			rows[id] = &row{ours: math.NaN(), paper: math.NaN(), tuned: math.NaN(), xgb: math.NaN(), pubX: math.NaN(), unit: unit}
			order = append(order, id)
		}
		return rows[id]
	}
	for _, s := range []*tabularSummary{&paper, &tuned} {
		for _, g := range s.Groups {
			for _, t := range g.Rows {
				x := get(g.Group+"/"+t.Task, g.Unit)
				x.train, x.reps = t.Train, t.Repeats
				x.paper, x.pubX = nullable(t.PaperRFM), nullable(t.Published["XGBoost"])
				if v := nullable(t.XGBoostOurs); !math.IsNaN(v) {
					x.xgb = v
				}
				if s == &paper {
					x.ours, x.secs = t.Ours, t.Seconds
				} else {
					x.tuned = t.Ours
				}
			}
		}
	}
	b.WriteString("| task | train × splits | RFM (paper's table) | ours, `paper` protocol | seconds | ours, `tuned` | XGBoost (ours) | XGBoost (paper's table) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, id := range order {
		x := rows[id]
		secs := "–"
		if !math.IsNaN(x.ours) {
			secs = fmt.Sprintf("%.0f", x.secs)
		}
		fmt.Fprintf(b, "| %s | %d × %d | %s | %s | %s | %s | %s | %s |\n", id, x.train, x.reps, tabularCell(x.paper, x.unit), tabularCell(x.ours, x.unit),
			secs, tabularCell(x.tuned, x.unit), tabularCell(x.xgb, x.unit), tabularCell(x.pubX, x.unit))
	}
	b.WriteString("\n")
	for _, g := range tuned.Groups {
		if len(g.Ranked) == 0 {
			continue
		}
		fmt.Fprintf(b, "`tuned`, %s: place %d of %d by Friedman rank among our RFM and the published baselines with a score there (", g.Group, g.OursPlace, len(g.Ranked))
		parts := make([]string, len(g.Ranked))
		for i, s := range g.Ranked {
			parts[i] = fmt.Sprintf("%s %.2f", s.Classifier, s.FriedmanRank)
		}
		b.WriteString(strings.Join(parts, ", ") + ").\n\n")
	}
}

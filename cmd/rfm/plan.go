package main

import (
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// planFit checks the whole fit's memory once the table is read and its
// pipeline fitted, before the rows are encoded (rfm.Fit checks it again
// with the exact sizes). rows is the training rows of one fit: all of the
// table for fit, the largest fold's for cv, whose folds run one at a time.
func planFit(cfg rfm.Config, rows, d int, tg *dataset.Target) error {
	return rfm.PlanFit(fitShape(rows, d, tg), cfg).Check(cfg.MemoryLimit)
}

// fitShape is the shape of a fit of rows × d features with tg's outputs.
func fitShape(rows, d int, tg *dataset.Target) rfm.FitShape {
	outputs := 1
	if tg.IsClassification() {
		outputs = tg.NumClasses()
	}
	return rfm.FitShape{N: rows, D: d, Outputs: outputs}
}

// planPredict checks the memory of predicting rows with a loaded model
// (in chunks of lm.ChunkRows()) before they are encoded; textCols is the
// width of the prediction table built as text before it is written (0 for
// eval, which writes none).
func planPredict(lm *loadedModel, rows, textCols int) error {
	// A composite model predicts part by part (a tree's chunk leaf by
	// leaf, an ensemble's members one after the other): the largest part
	// bounds the memory beyond the rows and outputs.
	var m *rfm.Model
	var parts []*rfm.Model
	if c, ok := lm.Fitted.(rfm.Composite); ok {
		parts = c.SubModels()
	}
	for _, p := range parts {
		if m == nil || p.N > m.N {
			m = p
		}
	}
	if m == nil { // a tree whose every leaf is a constant class
		m = &rfm.Model{Header: rfm.Header{D: lm.D(), Outputs: lm.Outputs()}, N: 1}
	}
	chunk := lm.ChunkRows()
	p := rfm.PlanPredict(m, rows, chunk, 0)
	if _, ok := lm.Fitted.(interface{ NumMembers() int }); ok && len(parts) > 1 {
		// Every member's mapped centres were prepared at load: in memory
		// already, beside the largest one's counted above.
		var other uint64
		for _, mm := range parts {
			if mm != m {
				other += uint64(mm.N) * uint64(mm.Dm()) * 8
			}
		}
		p.Items = append(p.Items, rfm.MemoryItem{What: fmt.Sprintf("the other %d members' mapped centres", len(parts)-1),
			Count: 1, Bytes: other, Held: true})
	}
	if textCols > 0 {
		// A cell is a string header (16 B), its slice slot (16 B) and a
		// number's digits: about 56 bytes.
		p.Items = append(p.Items, rfm.MemoryItem{What: fmt.Sprintf("the %d×%d prediction table", rows, textCols),
			Count: rows, Bytes: uint64(textCols) * 56, Hint: "predict fewer rows at once"})
	}
	return p.Check(0)
}

package predictor

import (
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// FitShape is the shape of a fit of rows × d features with tg's outputs
// (its classes, or one regression column).
func FitShape(rows, d int, tg *dataset.Target) rfm.FitShape {
	outputs := 1
	if tg.IsClassification() {
		outputs = tg.NumClasses()
	}
	return rfm.FitShape{N: rows, D: d, Outputs: outputs}
}

// PlanPredict checks the memory of predicting rows with the model, in
// chunks of ChunkRows, before they are encoded; textCols is the width of
// a prediction table built as text before it is written (0: none).
func (m *Model) PlanPredict(rows, textCols int) error {
	// A composite model predicts part by part (a tree's chunk leaf by
	// leaf, an ensemble's members one after the other): the largest part
	// bounds the memory beyond the rows and outputs.
	var big *rfm.Model
	var parts []*rfm.Model
	if c, ok := m.Fitted.(rfm.Composite); ok {
		parts = c.SubModels()
	}
	for _, p := range parts {
		if big == nil || p.N > big.N {
			big = p
		}
	}
	if big == nil { // a tree whose every leaf is a constant class
		big = &rfm.Model{Header: rfm.Header{D: m.D(), Outputs: m.Outputs()}, N: 1}
	}
	p := rfm.PlanPredict(big, rows, m.ChunkRows(), 0)
	if _, ok := m.Fitted.(interface{ NumMembers() int }); ok && len(parts) > 1 {
		// Every member's mapped centres were prepared at load: in memory
		// already, beside the largest one's counted above.
		var other uint64
		for _, mm := range parts {
			if mm != big {
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

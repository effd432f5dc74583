package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
)

// scoreShard predicts the rows of one shard and writes them to out: a
// header, then per row the prediction (class label or value) and with
// proba one probability per class, as 'rfm predict' writes them. A failed
// shard leaves no output file.
func scoreShard(ctx context.Context, m *predictor.Model, sh Shard, out string, proba bool) (int, error) {
	opt, err := m.ReadOptions()
	if err != nil {
		return 0, err
	}
	if proba && !m.Target.IsClassification() {
		return 0, fmt.Errorf("--proba needs a classification model")
	}
	header := []string{"prediction"}
	if proba {
		for _, c := range m.Target.Classes {
			header = append(header, "proba_"+c)
		}
	}
	n := 0
	err = writeObject(ctx, out, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		err := readChunks(ctx, sh.Path, opt, func(t *dataset.Table) error {
			p, err := m.Predict(ctx, t)
			if err != nil {
				return fmt.Errorf("%s: %w", sh.Path, err)
			}
			c := len(p.Classes)
			for i := 0; i < p.N; i++ {
				var row []string
				if p.Labels == nil {
					row = []string{formatFloat(p.Values[i])}
				} else {
					row = []string{p.Labels[i]}
					if proba {
						for _, v := range p.Proba[i*c : i*c+c] {
							row = append(row, formatFloat(v))
						}
					}
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
			n += p.N
			return nil
		})
		if err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
	return n, err
}

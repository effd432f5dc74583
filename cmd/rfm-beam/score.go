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
	header := m.PredictionHeader(proba)
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
			if err := cw.WriteAll(p.Rows(proba)); err != nil {
				return err
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

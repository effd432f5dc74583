package predictor

import (
	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// EncodeScalings encodes the table t once per column scaling named (a
// search over scalings, as rfm tune's): p is the pipeline already fitted
// with the scaling named base, the others are fitted here on t (with the
// target column target and task, as FitEncoding). It returns each
// scaling's pipeline and rows, encoded with the target tg.
func EncodeScalings(t *dataset.Table, tg *dataset.Target, p *dataset.Pipeline, base string, scalings []string, target, task string) (map[string]*dataset.Pipeline, map[string]*rfm.Dataset, error) {
	pipelines := map[string]*dataset.Pipeline{}
	data := map[string]*rfm.Dataset{}
	for _, name := range scalings {
		sp := p
		if name != base {
			var err error
			if _, sp, err = FitEncoding(t, target, task, dataset.Scaling(name)); err != nil {
				return nil, nil, err
			}
		}
		pipelines[name] = sp
		ds, err := Encode(t, sp, tg)
		if err != nil {
			return nil, nil, err
		}
		data[name] = ds
	}
	return pipelines, data, nil
}

// EncodeEach encodes the table t by each pipeline (the validation rows of
// a search over scalings), keyed as pipelines are.
func EncodeEach(t *dataset.Table, pipelines map[string]*dataset.Pipeline, tg *dataset.Target) (map[string]*rfm.Dataset, error) {
	data := map[string]*rfm.Dataset{}
	for name, p := range pipelines {
		ds, err := Encode(t, p, tg)
		if err != nil {
			return nil, err
		}
		data[name] = ds
	}
	return data, nil
}

// RowReadOptions are the options for reading rows to predict or score
// with pipeline p: the model's column kinds and missing tokens, plus, with
// withTarget (rows to score), the target column's kind so that labels
// keep their text.
func RowReadOptions(p *dataset.Pipeline, tg *dataset.Target, withTarget bool) dataset.ReadOptions {
	opt := p.ReadOptions()
	if withTarget && tg != nil {
		if tg.IsClassification() {
			opt.Categorical = append(opt.Categorical, tg.Name)
		} else {
			opt.Numeric = append(opt.Numeric, tg.Name)
		}
	}
	return opt
}

package complete

import (
	"encoding/json"
	"math"
)

// Scores of predicted against true held-out cells.
//
// RMSE, MAE, R2 (1 − SSE/SST around the mean of the truth) and Pearson are
// over all held-out cells. The thesis's drug-screening metrics (SI
// appendix G), on the held-out cells of each column (a drug / cell type
// profile), are:
//
//   - ThesisR, its "Pearson r value": ⟨ŷ, y⟩/(‖ŷ‖‖y‖) over the vectorized
//     held-out cells (uncentred, as written there);
//   - MeanR2: the mean over columns of 1 − Σ(ŷ − y)²/Σ(y − ȳ)², ȳ the
//     column's mean held-out value (the appendix writes the sum, c_i =
//     Σ_j y_j, which can only be a typo for the mean);
//   - MeanCosine: the mean over columns of ⟨ŷ, y⟩/(‖ŷ‖‖y‖).
//
// MeanR2 counts columns with at least two held-out cells that are not all
// equal (R2Columns of them), MeanCosine columns whose vectors are both
// nonzero (CosineColumns); either mean is 0 when it counts no column.
type Scores struct {
	N             int     `json:"n"`
	RMSE          float64 `json:"rmse"`
	MAE           float64 `json:"mae"`
	R2            float64 `json:"r2"`
	Pearson       float64 `json:"pearson"`
	ThesisR       float64 `json:"thesis_r"`
	MeanR2        float64 `json:"mean_r2"`
	MeanCosine    float64 `json:"mean_cosine"`
	R2Columns     int     `json:"r2_columns"`
	CosineColumns int     `json:"cosine_columns"`
}

// Score computes Scores; cols[q] is the column of cell q.
func Score(truth, pred []float64, cols []int) Scores {
	s := Scores{N: len(truth)}
	if len(truth) == 0 {
		return s
	}
	var se, ae, mt, mp float64
	for q, t := range truth {
		d := pred[q] - t
		se += d * d
		ae += math.Abs(d)
		mt += t
		mp += pred[q]
	}
	nf := float64(len(truth))
	mt /= nf
	mp /= nf
	var st, sp, stp, dot, nt, np float64
	for q, t := range truth {
		st += (t - mt) * (t - mt)
		sp += (pred[q] - mp) * (pred[q] - mp)
		stp += (t - mt) * (pred[q] - mp)
		dot += t * pred[q]
		nt += t * t
		np += pred[q] * pred[q]
	}
	s.RMSE = math.Sqrt(se / nf)
	s.MAE = ae / nf
	s.R2 = 1 - se/st
	s.Pearson = stp / math.Sqrt(st*sp)
	s.ThesisR = dot / math.Sqrt(nt*np)
	type acc struct{ n, sum, ss, se, dot, nt, np float64 }
	per := map[int]*acc{}
	var order []int
	for q, c := range cols {
		a := per[c]
		if a == nil {
			a = &acc{}
			per[c] = a
			order = append(order, c)
		}
		a.n++
		a.sum += truth[q]
		d := pred[q] - truth[q]
		a.se += d * d
		a.dot += truth[q] * pred[q]
		a.nt += truth[q] * truth[q]
		a.np += pred[q] * pred[q]
	}
	for q, c := range cols {
		a := per[c]
		d := truth[q] - a.sum/a.n
		a.ss += d * d
	}
	var r2, cs float64
	for _, c := range order {
		a := per[c]
		if a.nt > 0 && a.np > 0 {
			cs += a.dot / math.Sqrt(a.nt*a.np)
			s.CosineColumns++
		}
		if a.n >= 2 {
			if a.ss > 1e-12*a.nt {
				r2 += 1 - a.se/a.ss
				s.R2Columns++
			}
		}
	}
	if s.R2Columns > 0 {
		s.MeanR2 = r2 / float64(s.R2Columns)
	}
	if s.CosineColumns > 0 {
		s.MeanCosine = cs / float64(s.CosineColumns)
	}
	return s
}

// scoresJSON is Scores on the wire: an undefined score (NaN or ±Inf: R² or
// Pearson of held-out cells that are all equal, for instance) is null.
type scoresJSON struct {
	N             int      `json:"n"`
	RMSE          *float64 `json:"rmse"`
	MAE           *float64 `json:"mae"`
	R2            *float64 `json:"r2"`
	Pearson       *float64 `json:"pearson"`
	ThesisR       *float64 `json:"thesis_r"`
	MeanR2        *float64 `json:"mean_r2"`
	MeanCosine    *float64 `json:"mean_cosine"`
	R2Columns     int      `json:"r2_columns"`
	CosineColumns int      `json:"cosine_columns"`
}

// MarshalJSON writes an undefined score as null.
func (s Scores) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(scoresJSON{s.N, num(s.RMSE), num(s.MAE), num(s.R2), num(s.Pearson), num(s.ThesisR), num(s.MeanR2), num(s.MeanCosine), s.R2Columns, s.CosineColumns})
}

// UnmarshalJSON reads what MarshalJSON writes (null as NaN).
func (s *Scores) UnmarshalJSON(b []byte) error {
	var v scoresJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*s = Scores{N: v.N, RMSE: f(v.RMSE), MAE: f(v.MAE), R2: f(v.R2), Pearson: f(v.Pearson), ThesisR: f(v.ThesisR),
		MeanR2: f(v.MeanR2), MeanCosine: f(v.MeanCosine), R2Columns: v.R2Columns, CosineColumns: v.CosineColumns}
	return nil
}

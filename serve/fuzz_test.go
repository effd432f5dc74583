package serve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
)

// The request decoder never panics: any body either decodes into at most
// maxRows rows that the pipeline encodes, or is refused with a 4xx.
func FuzzDecodeRequest(f *testing.F) {
	p := &dataset.Pipeline{Inputs: []dataset.InputColumn{
		{Name: "x1", Kind: dataset.Numeric, Mean: 1, Std: 2},
		{Name: "x2", Kind: dataset.Numeric, Mean: 0, Std: 1, MissingIndicator: true},
		{Name: "color", Kind: dataset.Categorical, Levels: []string{"1", "blue", "red"}, HasMissingLevel: true},
	}}
	tg := &dataset.Target{Name: "y", Task: dataset.TaskClassification, Classes: []string{"no", "yes"}}
	m := &predictor.Model{Name: "fuzz", Fitted: &rfm.Model{Header: rfm.Header{Task: rfm.Classification, Outputs: 2, D: p.Width()}}, Pipeline: p, Target: tg}
	for _, s := range []string{
		`{"rows": [{"x1": 1, "x2": null, "color": "red"}], "proba": true}`,
		`[{"x1": 1e308, "x2": -0, "color": 1}]`,
		`{"columns": ["color", "x1", "x2"], "data": [["blue", 1, "NA"], [null, 2.5, 3]]}`,
		`{"rows": [{"x1": "1"}]}`,
		`{"rows": 3}`,
		"\x00x1,x2,color\n1,2,red\n",
		"x1,x2,color\n1,NA,\n\"2\",3,\"re\"\"d\"\n",
	} {
		f.Add([]byte(s), s[0] != '{' && s[0] != '[')
	}
	f.Fuzz(func(t *testing.T, body []byte, csv bool) {
		ctype := "application/json"
		if csv {
			ctype = "text/csv"
		}
		c := &charge{b: &budget{limit: 1 << 30}}
		req, err := decodeRequest(context.Background(), m, ctype, nil, strings.NewReader(string(body)), 50, c)
		if c.b.used.Load() != c.held {
			t.Fatalf("the budget holds %d but the request %d", c.b.used.Load(), c.held)
		}
		c.release()
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || he.status < 400 || he.status >= 500 || he.msg == "" {
				t.Fatalf("error %v is not a 4xx answer", err)
			}
			return
		}
		n := req.table.NRows()
		if n < 1 || n > 50 {
			t.Fatalf("%d rows accepted", n)
		}
		x, rows, d, err := p.Transform(req.table)
		if err != nil {
			return // a cell the pipeline refuses (e.g. beyond float64 once scaled): a 400 in the handler
		}
		if rows != n || d != p.Width() || len(x) != n*d {
			t.Fatalf("encoded %d×%d from %d rows", rows, d, n)
		}
	})
}

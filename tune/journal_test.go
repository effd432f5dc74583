package tune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
)

// A journal writes the header and a row per trial; a resumed search reads
// the scored ones back and appends, without a second header.
func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trials.csv")
	if c, err := ReadTrials(path); err != nil || len(c) != 0 {
		t.Fatalf("a missing table: %v, %v", c, err)
	}
	j, err := OpenJournal(path, false, true)
	if err != nil {
		t.Fatal(err)
	}
	tr := Trial{Index: 0, Rows: 100, Status: StatusOK, Accuracy: 0.9, Loss: 0.1, Scaling: "standard", Config: rfm.DefaultConfig(), Key: "k0"}
	j.Add(&tr)
	if err := j.Close(); err != nil || j.Err() != nil {
		t.Fatal(err, j.Err())
	}
	c, err := ReadTrials(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c["k0"]; !ok || got.Accuracy != 0.9 || got.Loss != 0.1 || got.Status != StatusOK {
		t.Fatalf("read back %+v", c)
	}
	j, err = OpenJournal(path, true, true)
	if err != nil {
		t.Fatal(err)
	}
	tr.Index, tr.Key = 1, "k1"
	j.Add(&tr)
	j.Close()
	b, _ := os.ReadFile(path)
	if strings.Count(string(b), "trial,bracket") != 1 || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("the table after a resume:\n%s", b)
	}
	if _, err := OpenJournal(filepath.Join(path, "x"), false, true); err == nil {
		t.Fatal("a journal under a file opened")
	}
}

// LargeTableDefaults sets the sample and centres only where auto would fit
// a tree and the caller gave neither.
func TestLargeTableDefaults(t *testing.T) {
	shape := rfm.FitShape{N: rfm.AutoExactRows + 1, D: 5, Outputs: 2}
	opt := Options{Base: rfm.DefaultConfig(), MinRows: 400}
	if why := LargeTableDefaults(&opt, shape.N, shape, false); why == "" || opt.MaxRows != LargeMaxRows || opt.FinalCenters != LargeCenters {
		t.Fatalf("a large table: %q, max rows %d, centres %d", why, opt.MaxRows, opt.FinalCenters)
	}
	for name, c := range map[string]struct {
		n     int
		given bool
		edit  func(*rfm.Config)
	}{
		"given":    {shape.N, true, nil},
		"small":    {LargeCenters, false, nil},
		"weighted": {shape.N, false, func(c *rfm.Config) { c.ClassWeight = rfm.ClassWeightBalanced }},
		"exact":    {shape.N, false, func(c *rfm.Config) { c.Solver = rfm.SolverExact }},
	} {
		opt := Options{Base: rfm.DefaultConfig()}
		if c.edit != nil {
			c.edit(&opt.Base)
		}
		if why := LargeTableDefaults(&opt, c.n, rfm.FitShape{N: c.n, D: 5, Outputs: 2}, c.given); why != "" || opt.MaxRows != 0 || opt.FinalCenters != 0 {
			t.Errorf("%s: %q, %d, %d", name, why, opt.MaxRows, opt.FinalCenters)
		}
	}
}

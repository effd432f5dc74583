package memory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func tinyOptions(data string) Options {
	return Options{Data: data, Mode: "autoencode", Width: 8, Depth: 2, Act: "cosid", Bias: true, Init: "pytorch", Opt: "adam", LR: 1e-3, Alpha: 0.99,
		Seed: 1, Epochs: 5, PowerIters: 4, Noise: 0.1, Copies: 1, Mask: true, Random: 3, RandomKind: "gaussian", RandomSigma: 1, Tol: 1e-8, MaxSteps: 5}
}

// Options check themselves naming the flag, list the recoveries asked
// for, and run a tiny experiment on a table.
func TestOptions(t *testing.T) {
	dir := t.TempDir()
	table := testutil.WriteFile(t, dir, "p.csv", "a,b\n0,1\n1,0\n-1,0\n")
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Data = "" }, "--data is required"},
		{func(o *Options) { o.Depth = 0 }, "--depth 0"},
		{func(o *Options) { o.Epochs, o.LossTarget = 0, 0 }, "training needs a stop"},
		{func(o *Options) { o.RandomKind = "x" }, "--random-kind"},
	} {
		o := tinyOptions(table)
		c.edit(&o)
		if _, err := o.Experiment(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	o := tinyOptions(table)
	x, err := o.Experiment()
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Recoveries) != 3 || x.Recoveries[2].Name != "random-gaussian" || x.Recoveries[2].Kind != Gaussian || len(x.Network.Widths) != 2 {
		t.Errorf("recoveries %+v, widths %v", x.Recoveries, x.Network.Widths)
	}
	o.Mode = "sequence"
	if _, err := o.Load(context.Background()); err == nil || !strings.Contains(err.Error(), "--order") {
		t.Errorf("sequence without --order: %v", err)
	}
	o.Mode, o.Checkpoint = "autoencode", filepath.Join(dir, "m.ckpt") // not memory.ckpt in the package folder
	res, data, err := o.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if data.Set.N != 3 || res.Examples != 3 || !strings.HasPrefix(res.Summary(data), "stored ") {
		t.Errorf("%d examples, summary %q", res.Examples, res.Summary(data))
	}
	o.SweepWidths = "4"
	if _, err := o.RunSweep(context.Background()); err == nil || !strings.Contains(err.Error(), "need --out") {
		t.Errorf("sweep without --out: %v", err)
	}
}

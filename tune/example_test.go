package tune_test

import (
	"context"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/synth"
	"github.com/rfmkit/rfm/tune"
)

// Search 9 configurations of a regression on a synthetic task (3 of 8
// inputs matter) with successive halving, then fit the best one for use.
func ExampleRun() {
	s, _ := synth.Generate(synth.LowRank, 900, 8, 1)
	train := &rfm.Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}
	base := rfm.DefaultConfig()
	base.Iters = 2
	opt := tune.Options{
		Base:    base,
		Data:    map[string]*rfm.Dataset{"": train}, // one version of the data, no scaling searched
		Trials:  9,                                  // or Budget: 20 * time.Minute
		MinRows: 80,
		Jobs:    1,
	}
	res, err := tune.Run(context.Background(), opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	model, err := tune.FinalFit(context.Background(), opt, res.Best, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rungs:", res.Rungs, "design:", res.Design)
	fmt.Println("tuned RFM at least as good as the tuned plain kernel:", res.Best.Loss <= res.Plain.PlainLoss)
	fmt.Println("model refitted on all rows:", model.Refitted, model.N == train.N)
	// Output:
	// rungs: [80 240 720] design: holdout 20% (180 rows)
	// tuned RFM at least as good as the tuned plain kernel: true
	// model refitted on all rows: true true
}

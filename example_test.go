package rfm_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/synth"
)

// Fit a regression RFM on a task whose target depends on 3 of 20 inputs
// (y = x0·x1·1[x5 > 0]) and read off which inputs it learned to use.
func ExampleFit() {
	train, _ := synth.Generate(synth.LowRank, 1000, 20, 1)
	cfg := rfm.DefaultConfig() // Laplace, L = 10, λ = 1e-3, 5 rounds
	model, err := rfm.Fit(context.Background(), cfg,
		&rfm.Dataset{X: train.X, N: train.N, D: train.D, Y: train.Y}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	diag := model.FeatureDiagonal()
	idx := []int{}
	for i := range diag {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return diag[idx[a]] > diag[idx[b]] })
	top := idx[:3]
	sort.Ints(top)
	fmt.Println("most used inputs:", top)
	fmt.Println("improved on the plain kernel:", model.History[model.BestRound].ValLoss < model.History[0].ValLoss)
	// Output:
	// most used inputs: [0 1 5]
	// improved on the plain kernel: true
}

// Classify, predict probabilities, and save the model to a self-contained file.
func ExampleModel_PredictProba() {
	// Two classes: the sign of x0·x1 (an XOR pattern a plain kernel finds hard).
	s, _ := synth.Generate(synth.Product, 600, 4, 2)
	labels := make([]int, s.N)
	for i, v := range s.Y {
		if v > 0 {
			labels[i] = 1
		}
	}
	ctx := context.Background()
	model, err := rfm.Fit(ctx, rfm.DefaultConfig(), &rfm.Dataset{X: s.X, N: s.N, D: s.D, Labels: labels}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	query := []float64{1, 1, 0, 0, 1, -1, 0, 0} // two rows: x0·x1 > 0, then < 0
	classes, _ := model.PredictClass(ctx, query, 2)
	prob, _ := model.PredictProba(ctx, query, 2)
	fmt.Println("classes:", classes)
	fmt.Printf("P(class 1) of the first row > 0.5: %v\n", prob[1] > 0.5)

	var file bytes.Buffer
	if err := model.Save(&file, nil); err != nil {
		fmt.Println(err)
		return
	}
	loaded, _, err := rfm.Load(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := loaded.PredictClass(ctx, query, 2)
	fmt.Println("after save and load:", again)
	// Output:
	// classes: [1 0]
	// P(class 1) of the first row > 0.5: true
	// after save and load: [1 0]
}

// RFM-T keeps only the inputs the learned feature matrix weighs, then fits
// a plain Laplace machine on them.
func ExampleFitThresholded() {
	train, _ := synth.Generate(synth.LowRank, 1000, 20, 3)
	model, err := rfm.FitThresholded(context.Background(), rfm.DefaultConfig(), rfm.DefaultThreshold,
		&rfm.Dataset{X: train.X, N: train.N, D: train.D, Y: train.Y}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("kept inputs:", model.Selected)
	// Output:
	// kept inputs: [0 1 5]
}

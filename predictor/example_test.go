package predictor_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
)

// A model file from raw columns to labels: fit, write, load, predict.
func Example() {
	ctx := context.Background()
	// Training rows: a number, a category and the class.
	var b strings.Builder
	b.WriteString("size,shape,label\n")
	for i := 0; i < 200; i++ {
		size, shape, label := float64(i%20), []string{"round", "square"}[i%2], "small"
		if size >= 10 {
			label = "large"
		}
		fmt.Fprintf(&b, "%g,%s,%s\n", size, shape, label)
	}
	tab, err := dataset.Read(strings.NewReader(b.String()), "train.csv", dataset.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fitted, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: "label"})
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "predictor-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shapes.rfm")
	if err := fitted.WriteFile(ctx, path); err != nil {
		log.Fatal(err)
	}

	// In the service: load once, predict from many goroutines.
	model, err := predictor.Load(path)
	if err != nil {
		log.Fatal(err)
	}
	p, err := model.PredictRecords(ctx, "request", []map[string]any{
		{"size": 2, "shape": "round"},
		{"size": 17.5, "shape": "square"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Classes, p.Labels)
	_, err = model.PredictRecords(ctx, "request", []map[string]any{{"size": "big", "shape": "round"}})
	fmt.Println(err)
	// Output:
	// [large small] [small large]
	// request: row 1, column "size": got the string "big"; the column is numeric: send a finite number, or null for a missing value
}

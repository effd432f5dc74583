package metrics_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/rfmkit/rfm/metrics"
)

func ExampleEvaluateClassification() {
	yTrue := []int{0, 1, 1, 2}
	// Row-major n×c probabilities; predictions are their row-wise argmax.
	prob := []float64{
		0.8, 0.1, 0.1,
		0.2, 0.7, 0.1,
		0.1, 0.3, 0.6,
		0.1, 0.2, 0.7,
	}
	r, err := metrics.EvaluateClassification(yTrue, nil, prob, 3, []string{"low", "mid", "high"})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.WriteText(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// samples   4
	// classes   3
	// accuracy  0.7500
	// log loss  0.5351
	// brier     0.3000
	// ece       0.3500
	// auc       1.0000
	//
	// true\pred  low  mid  high
	// low          1    0     0
	// mid          0    1     1
	// high         0    0     1
}

func ExampleAUC() {
	// One positive/negative pair is tied at 0.4 and counts one half.
	auc, err := metrics.AUC([]int{0, 0, 1, 1}, []float64{0.1, 0.4, 0.4, 0.8})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.3f\n", auc)
	// Output: 0.875
}

func ExampleEvaluateRegression() {
	r, err := metrics.EvaluateRegression([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 5}, 1)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	// Output: {"n":4,"outputs":1,"mse":0.25,"rmse":0.5,"mae":0.25,"r2":0.8}
}

func ExampleSummarize() {
	t := &metrics.Table{
		Datasets:    []string{"iris", "wine", "zoo"},
		Classifiers: []string{"svm", "forest"},
		Acc: [][]float64{
			{96.0, 95.3},
			{98.3, 98.9},
			{92.0, 96.0},
		},
	}
	// Add our own results for a subset of the data sets; zoo stays missing.
	if err := t.AddClassifier("rfm", map[string]float64{"iris": 97.3, "wine": 99.4}); err != nil {
		log.Fatal(err)
	}
	s, err := metrics.Summarize(t, metrics.SkipMissing)
	if err != nil {
		log.Fatal(err)
	}
	metrics.SortByFriedman(s)
	if err := metrics.WriteSummary(os.Stdout, s); err != nil {
		log.Fatal(err)
	}
	// Output:
	//    #  classifier  sets  friedman  accuracy     PMA     P90     P95    ADTM
	//    1  rfm            2      1.33     98.35  100.00  100.00  100.00  100.00
	//    2  forest         3      2.00     96.73   99.15  100.00  100.00   51.52
	//    3  svm            3      2.67     95.43   97.80  100.00  100.00   11.67
}

func ExampleReadFernandezDelgado() {
	// The published results of 179 classifiers on the 121 UCI data sets
	// (the repo's tests expect the shared data next to the repo).
	t, err := metrics.ReadFernandezDelgado("../../shared/data/uci121/fernandez_delgado_2014_results.txt")
	if err != nil {
		log.Fatal(err)
	}
	s, err := metrics.Summarize(t, metrics.SkipMissing)
	if err != nil {
		log.Fatal(err)
	}
	metrics.SortByFriedman(s)
	for _, r := range s[:3] {
		fmt.Printf("%-12s rank %.2f  accuracy %.2f%% on %d sets\n", r.Classifier, r.FriedmanRank, r.Average, r.Sets)
	}
	// Output:
	// parRF_caret  rank 32.87  accuracy 81.96% on 121 sets
	// rf_caret     rank 33.04  accuracy 82.30% on 120 sets
	// svm_C        rank 36.83  accuracy 81.81% on 119 sets
}

package dataset_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/rfmkit/rfm/dataset"
)

func ExampleRead() {
	csv := "age,color,y\n34,red,yes\nNA,blue,no\n29,,yes\n"
	t, err := dataset.Read(strings.NewReader(csv), "people.csv", dataset.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range t.Columns {
		fmt.Printf("%s: %v, missing %v\n", c.Name, c.Kind, c.Missing)
	}
	// Output:
	// age: numeric, missing [false true false]
	// color: categorical, missing [false false true]
	// y: categorical, missing [false false false]
}

func ExampleRead_error() {
	csv := "id,x,age\n1,2,3\n2,3,abc\n"
	_, err := dataset.Read(strings.NewReader(csv), "data.csv", dataset.ReadOptions{Numeric: []string{"age"}})
	fmt.Println(err)
	// Output:
	// data.csv: line 3, column 3 ("age"): "abc" is not a number
}

func ExampleFitPipeline() {
	train := "age,color,y\n30,red,yes\n40,blue,no\n,red,yes\n"
	t, err := dataset.Read(strings.NewReader(train), "train.csv", dataset.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	p, err := dataset.FitPipeline(t, t.NamesExcept("y"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.FeatureNames())

	// Prediction rows: read with the pipeline's options, columns in any order.
	pred := "color,age\ngreen,35\nblue,\n"
	pt, err := dataset.Read(strings.NewReader(pred), "pred.csv", p.ReadOptions())
	if err != nil {
		log.Fatal(err)
	}
	x, n, d, err := p.Transform(pt)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < n; i++ {
		fmt.Println(x[i*d : (i+1)*d])
	}
	// Output:
	// [age age:missing color=blue color=red]
	// [0 0 0 0]
	// [0 1 1 0]
}

func ExampleFitTarget() {
	t, err := dataset.Read(strings.NewReader("x,y\n1,3\n2,1\n3,2\n4,1\n"), "d.csv", dataset.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	col, err := t.TargetColumn("y")
	if err != nil {
		log.Fatal(err)
	}
	target, err := dataset.FitTarget(col, dataset.TaskAuto)
	if err != nil {
		log.Fatal(err)
	}
	_, classIdx, err := target.Encode(col)
	if err != nil {
		log.Fatal(err)
	}
	labels, _ := target.Labels(classIdx)
	fmt.Println(target.Task, target.Classes, classIdx, labels)
	// Output:
	// classification [1 2 3] [2 0 1 0] [3 1 2 1]
}

package modelfile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/rfmkit/rfm/modelfile"
)

func Example() {
	f := &modelfile.File{
		Kind: "rfm.Model",
		Meta: json.RawMessage(`{"kernel": "laplace", "bandwidth": 10}`),
		Arrays: []modelfile.Array{
			{Name: "M", Shape: []int{2, 2}, F64: []float64{1, 0.5, 0.5, 2}},
			{Name: "alpha", Shape: []int{3, 1}, F32: []float32{0.1, -0.2, 0.3}},
		},
	}
	var buf bytes.Buffer
	if err := modelfile.Write(&buf, f); err != nil {
		log.Fatal(err)
	}
	got, err := modelfile.Read(&buf)
	if err != nil {
		log.Fatal(err)
	}
	m, _ := got.Array("M")
	fmt.Println(got.Kind, got.FormatVersion, string(got.Meta))
	fmt.Println(m.Shape, m.F64)
	// Output:
	// rfm.Model 1 {"kernel":"laplace","bandwidth":10}
	// [2 2] [1 0.5 0.5 2]
}

func ExampleWriteFileAtomic() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.rfm")

	f := &modelfile.File{Kind: "rfm.Model", Arrays: []modelfile.Array{
		{Name: "alpha", Shape: []int{2}, F64: []float64{1, 2}},
	}}
	if err := modelfile.WriteFileAtomic(path, f); err != nil {
		log.Fatal(err)
	}
	got, err := modelfile.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	alpha, _ := got.Array("alpha")
	fmt.Println(alpha.F64)

	// Damage one byte: Read notices.
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	os.WriteFile(path, data, 0o644)
	_, err = modelfile.ReadFile(path)
	fmt.Println(errors.Is(err, modelfile.ErrCorrupted))
	// Output:
	// [1 2]
	// true
}

func ExampleWriteAtomic() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "predictions.csv")

	err := modelfile.WriteAtomic(path, func(w io.Writer) error {
		fmt.Fprintln(w, "id,prediction")
		fmt.Fprintln(w, "1,0.25")
		return errors.New("model failed on row 2")
	})
	fmt.Println(err != nil)
	_, statErr := os.Stat(path)
	fmt.Println(errors.Is(statErr, os.ErrNotExist)) // no half-written CSV
	// Output:
	// true
	// true
}

// exampleDir makes a temporary folder for an example to write into; the
// example removes it when done.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "modelfile-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

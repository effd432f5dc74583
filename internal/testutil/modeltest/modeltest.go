// Package modeltest holds the test helpers that write a model as a model
// file and read it back, shared by the tests of the model kinds (tree,
// forest, ensemble) and of the packages that fit them.
package modeltest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rfmkit/rfm/modelfile"
)

// Encode returns the bytes of m's model file with the extra sections,
// failing the test on an error.
func Encode(t testing.TB, m modelfile.Model, extra map[string]json.RawMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := modelfile.WriteModel(&buf, m, extra); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// RoundTrip writes m as a model file and reads it back by the decoder its
// kind registered (modelfile.Decode), failing the test on an error.
func RoundTrip(t testing.TB, m modelfile.Model) modelfile.Model {
	t.Helper()
	f, err := modelfile.Read(bytes.NewReader(Encode(t, m, nil)))
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := modelfile.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

package modeltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/modelfile"
)

// note is a model kind of one JSON document, registered for the test.
type note struct{ Text string }

const noteKind = "modeltest.Note"

func (n *note) ToFile(extra map[string]json.RawMessage) (*modelfile.File, error) {
	if n.Text == "" {
		return nil, errors.New("empty note")
	}
	b, err := json.Marshal(n)
	return &modelfile.File{Kind: noteKind, Meta: b}, err
}

func init() {
	modelfile.Register(noteKind, func(f *modelfile.File) (*note, map[string]json.RawMessage, error) {
		n := new(note)
		return n, nil, json.Unmarshal(f.Meta, n)
	})
}

// fatalRecorder records a Fatal instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
}
func (r *fatalRecorder) Fatalf(string, ...any) {}

// A model reads back as what was written, and an error writing it fails
// the test with its message.
func TestRoundTrip(t *testing.T) {
	back, ok := RoundTrip(t, &note{"hello"}).(*note)
	if !ok || back.Text != "hello" {
		t.Fatalf("read back %#v", back)
	}
	if b := Encode(t, &note{"x"}, nil); !strings.HasPrefix(string(b), "RFMMODEL") {
		t.Fatalf("encoded %q", b[:8])
	}
	r := &fatalRecorder{TB: t}
	Encode(r, &note{}, nil)
	if r.msg != "empty note" {
		t.Fatalf("an error of ToFile: %q", r.msg)
	}
}

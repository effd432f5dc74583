package modelfile

import (
	"encoding/json"
	"strings"
	"testing"
)

type kindModel struct{}

func (kindModel) ToFile(map[string]json.RawMessage) (*File, error) {
	return &File{Kind: "test.Kind"}, nil
}

func TestRegistry(t *testing.T) {
	RegisterKind("test.Kind", func(f *File) (Model, map[string]json.RawMessage, error) {
		return kindModel{}, map[string]json.RawMessage{"k": json.RawMessage(`1`)}, nil
	})
	m, extra, err := Decode(&File{Kind: "test.Kind"})
	if _, ok := m.(kindModel); !ok || err != nil || string(extra["k"]) != "1" {
		t.Fatalf("Decode: %T %v %v", m, extra, err)
	}
	if _, _, err := Decode(&File{Kind: "other.Kind"}); err == nil || !strings.Contains(err.Error(), `"other.Kind"`) || !strings.Contains(err.Error(), "test.Kind") {
		t.Fatalf("unknown kind: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a kind registered twice did not panic")
		}
	}()
	RegisterKind("test.Kind", func(f *File) (Model, map[string]json.RawMessage, error) { return nil, nil, nil })
}

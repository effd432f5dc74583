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

type sectionModel struct {
	Part *struct{ N int } `json:"part"`
}

func (*sectionModel) ToFile(map[string]json.RawMessage) (*File, error) { return nil, nil }

// DecodeSection needs the kind and the section; Register turns a kind's
// own unpacking into a Decoder, and a failed unpacking into no model.
func TestDecodeSectionAndRegister(t *testing.T) {
	part := func(m *sectionModel) *struct{ N int } { return m.Part }
	f := &File{Kind: "test.Section", Meta: []byte(`{"part": {"N": 3}}`)}
	if m, p, err := DecodeSection(f, "test.Section", "a test model", "part", part); err != nil || p.N != 3 || m.Part != p {
		t.Fatalf("DecodeSection: %v %v %v", m, p, err)
	}
	if _, _, err := DecodeSection(&File{Kind: "test.Section", Meta: []byte(`{}`)}, "test.Section", "a test model", "part", part); err == nil || err.Error() != "part metadata has no part section" {
		t.Errorf("missing section: %v", err)
	}
	if _, _, err := DecodeSection(f, "test.Other", "a test model", "part", part); err == nil || !strings.Contains(err.Error(), "not a test model") {
		t.Errorf("wrong kind: %v", err)
	}
	Register("test.Section", func(f *File) (*sectionModel, map[string]json.RawMessage, error) {
		m, _, err := DecodeSection(f, "test.Section", "a test model", "part", part)
		return m, nil, err
	})
	if m, _, err := Decode(f); err != nil || m.(*sectionModel).Part.N != 3 {
		t.Fatalf("Decode through Register: %v %v", m, err)
	}
	if m, _, err := Decode(&File{Kind: "test.Section", Meta: []byte(`{}`)}); err == nil || m != nil {
		t.Errorf("a failed unpacking gives model %#v (want nil), error %v", m, err)
	}
}

package modelfile

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// part is a toy sub-model: one array of its values and a document naming
// its size.
type part struct {
	vals    []float64
	version int
}

func (p *part) ToFile(map[string]json.RawMessage) (*File, error) {
	if len(p.vals) == 0 {
		return nil, fmt.Errorf("empty part")
	}
	meta, _ := json.Marshal(map[string]int{"n": len(p.vals)})
	return &File{Kind: "toy.Part", FormatVersion: p.version, Meta: meta, Arrays: []Array{{Name: "v", Shape: []int{len(p.vals)}, F64: p.vals}}}, nil
}

func partFromFile(f *File) (*part, map[string]json.RawMessage, error) {
	if f.Kind != "toy.Part" {
		return nil, nil, fmt.Errorf("kind %q", f.Kind)
	}
	var meta struct{ N int }
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		return nil, nil, err
	}
	a, ok := f.Array("v")
	if !ok || len(a.F64) != meta.N {
		return nil, nil, fmt.Errorf("no array of %d values", meta.N)
	}
	return &part{vals: a.F64}, nil, nil
}

type toyOwn struct {
	Name string `json:"name"`
}

var toyNesting = Nesting{Kind: "toy.Whole", What: "a toy model", Own: "whole", Parts: "part_models", Base: "part", PartKind: "toy.Part", MaxParts: 3}

// A model of sub-models is written as its document says, in order (own
// section, parts, extra), its parts' arrays prefixed after its own, and
// reads back: a nil part is null both ways.
func TestNestedRoundTrip(t *testing.T) {
	f := &File{FormatVersion: 1, Arrays: []Array{{Name: "own", Shape: []int{1}, F64: []float64{7}}}}
	parts := []*part{{vals: []float64{1, 2}}, nil, {vals: []float64{3}, version: 2}}
	extra := map[string]json.RawMessage{"z": json.RawMessage(`1`), "a": json.RawMessage(`"x"`)}
	got, err := PackNested(toyNesting, f, toyOwn{"w"}, parts, extra)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"whole":{"name":"w"},"part_models":[{"n":2},null,{"n":1}],"extra":{"a":"x","z":1}}`
	if got != f || f.Kind != "toy.Whole" || string(f.Meta) != want || f.FormatVersion != 2 {
		t.Fatalf("packed kind %q version %d meta %s; want toy.Whole, 2, %s", f.Kind, f.FormatVersion, f.Meta, want)
	}
	var names []string
	for _, a := range f.Arrays {
		names = append(names, a.Name)
	}
	if strings.Join(names, " ") != "own part0/v part2/v" {
		t.Fatalf("arrays %v", names)
	}
	if _, err := PackNested(toyNesting, &File{}, toyOwn{}, []*part(nil), nil); err != nil {
		t.Fatal(err)
	}

	meta, err := DecodeNested[toyOwn](f, toyNesting)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Own.Name != "w" || len(meta.Parts) != 3 || string(meta.Extra["z"]) != "1" {
		t.Fatalf("decoded %+v", meta)
	}
	back, rest, err := UnpackParts(toyNesting, f, meta.Parts, true, partFromFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[1] != nil || fmt.Sprint(back[0].vals, back[2].vals) != "[1 2] [3]" || len(rest) != 1 || rest[0].Name != "own" {
		t.Fatalf("unpacked %v, rest %v", back, rest)
	}
}

// What is wrong with a file of sub-models is named: the wrong kind, a
// missing own section, too many or no parts, an array of no part, a part
// that does not load or pack.
func TestNestedErrors(t *testing.T) {
	good, err := PackNested(toyNesting, &File{}, toyOwn{"w"}, []*part{{vals: []float64{1}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PackNested(toyNesting, &File{}, toyOwn{}, []*part{{vals: []float64{1}}, {}}, nil); err == nil || err.Error() != "part 1: empty part" {
		t.Fatalf("packing an empty part: %v", err)
	}
	decode := func(meta string) error {
		_, err := DecodeNested[toyOwn](&File{Kind: "toy.Whole", Meta: json.RawMessage(meta)}, toyNesting)
		return err
	}
	for meta, want := range map[string]string{
		`{"part_models":[{}]}`:                             "whole metadata has no whole section",
		`{"whole":{},"part_models":[]}`:                    "whole metadata: 0 part models (want 1 to 3)",
		`{"whole":{},"part_models":[{},{},{},{}]}`:         "whole metadata: 4 part models (want 1 to 3)",
		`{"whole":{},"part_models":{}}`:                    "whole metadata: json",
		`{"whole":{"name":"w"},"part_models":[null,null]}`: "",
	} {
		err := decode(meta)
		if (want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", meta, err, want)
		}
	}
	if _, err := DecodeNested[toyOwn](&File{Kind: "toy.Other", Meta: good.Meta}, toyNesting); err == nil || !strings.Contains(err.Error(), "not a toy model") {
		t.Errorf("wrong kind: %v", err)
	}
	metas := []json.RawMessage{json.RawMessage(`{"n":1}`)}
	stray := &File{Arrays: append([]Array{{Name: "own"}}, good.Arrays...)}
	if _, _, err := UnpackParts(toyNesting, stray, metas, false, partFromFile); err == nil || err.Error() != `array "own" names no part` {
		t.Errorf("stray array: %v", err)
	}
	if _, _, err := UnpackParts(toyNesting, good, []json.RawMessage{json.RawMessage(`{"n":2}`)}, false, partFromFile); err == nil || err.Error() != "part 0: no array of 2 values" {
		t.Errorf("bad part: %v", err)
	}
	if _, _, err := UnpackParts(toyNesting, &File{Arrays: []Array{{Name: "part5/v"}}}, metas, false, partFromFile); err == nil || !strings.Contains(err.Error(), "part5/v") {
		t.Errorf("array of a part beyond the document: %v", err)
	}
}

package modelfile

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// A Nesting says how a model made of sub-models (a tree of leaf models, a
// forest of trees, an ensemble of members) is stored. Its metadata
// document is {"<Own>": the model's own fields, "<Parts>": each
// sub-model's metadata document in order (null for a missing one),
// "extra": the caller's sections}, and sub-model i's arrays are stored
// under the prefix "<Base><i>/" after the model's own arrays.
type Nesting struct {
	Kind     string // the file kind ("rfm.Tree")
	What     string // the kind in messages ("a tree model")
	Own      string // the JSON section of the model's own fields ("tree")
	Parts    string // the JSON section of the sub-models' documents ("leaf_models")
	Base     string // a sub-model's noun and array prefix ("leaf")
	PartKind string // the file kind of a sub-model ("rfm.Model")
	// MaxParts, when positive, bounds the sub-models: a file must hold 1
	// to MaxParts of them.
	MaxParts int
}

// A Part is a sub-model: it packs itself into a File of its own kind.
type Part interface {
	comparable
	ToFile(extra map[string]json.RawMessage) (*File, error)
}

// Nested is a decoded metadata document of a Nesting: the model's own
// section (of type S), the sub-models' documents and the caller's extra
// sections.
type Nested[S any] struct {
	Own   *S
	Parts []json.RawMessage
	Extra map[string]json.RawMessage
}

// docType is the Go type of n's metadata document with the own section of
// type own: a struct of the fields Own, Parts and Extra tagged with n's
// names, so that encoding/json writes and reads it as it would a declared
// struct of those tags.
func (n Nesting) docType(own reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "Own", Type: own, Tag: reflect.StructTag(`json:"` + n.Own + `"`)},
		{Name: "Parts", Type: reflect.TypeFor[[]json.RawMessage](), Tag: reflect.StructTag(`json:"` + n.Parts + `"`)},
		{Name: "Extra", Type: reflect.TypeFor[map[string]json.RawMessage](), Tag: `json:"extra,omitempty"`},
	})
}

// PackNested completes f (which may already hold arrays and a format
// version of the model's own) as a file of n's kind: each part's arrays,
// prefixed, after f's; the metadata document of own (any value that
// encodes as the model's own section), the parts' documents (null for a
// nil part) and extra; and f's format version raised to the highest a
// part needs. It returns f.
func PackNested[P Part](n Nesting, f *File, own any, parts []P, extra map[string]json.RawMessage) (*File, error) {
	f.Kind = n.Kind
	metas := make([]json.RawMessage, len(parts))
	var none P
	for i, p := range parts {
		if p == none {
			metas[i] = json.RawMessage("null")
			continue
		}
		pf, err := p.ToFile(nil)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", n.Base, i, err)
		}
		f.FormatVersion = max(f.FormatVersion, pf.FormatVersion)
		metas[i] = pf.Meta
		f.Arrays = append(f.Arrays, Prefixed(fmt.Sprintf("%s%d/", n.Base, i), pf.Arrays)...)
	}
	doc := reflect.New(n.docType(reflect.TypeOf(own))).Elem()
	doc.Field(0).Set(reflect.ValueOf(own))
	doc.Field(1).Set(reflect.ValueOf(metas))
	doc.Field(2).Set(reflect.ValueOf(extra))
	b, err := json.Marshal(doc.Interface())
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", n.Own, err)
	}
	f.Meta = b
	return f, nil
}

// DecodeNested reads the metadata document of a file of n's kind with the
// own section of type S, which must be there ("tree metadata has no tree
// section"), and, when n.MaxParts is positive, 1 to MaxParts sub-models.
func DecodeNested[S any](f *File, n Nesting) (*Nested[S], error) {
	doc := reflect.New(n.docType(reflect.TypeFor[*S]()))
	if err := f.DecodeMeta(n.Kind, n.What, n.Own, doc.Interface()); err != nil {
		return nil, err
	}
	d := doc.Elem()
	out := &Nested[S]{
		Own:   d.Field(0).Interface().(*S),
		Parts: d.Field(1).Interface().([]json.RawMessage),
		Extra: d.Field(2).Interface().(map[string]json.RawMessage),
	}
	if out.Own == nil {
		return nil, fmt.Errorf("%s metadata has no %s section", n.Own, n.Own)
	}
	if k := len(out.Parts); n.MaxParts > 0 && (k == 0 || k > n.MaxParts) {
		return nil, fmt.Errorf("%s metadata: %d %s models (want 1 to %d)", n.Own, k, n.Base, n.MaxParts)
	}
	return out, nil
}

// UnpackParts is PackNested's inverse for the sub-models: each part of
// the documents metas, with its arrays, by fromFile (the zero P for a
// null document), and the arrays that belong to no part: the model's own,
// an error unless others says it has some.
func UnpackParts[P comparable](n Nesting, f *File, metas []json.RawMessage, others bool, fromFile func(*File) (P, map[string]json.RawMessage, error)) (parts []P, rest []Array, err error) {
	byPart, rest, err := SplitIndexed(f.Arrays, n.Base, len(metas))
	if err != nil {
		return nil, nil, err
	}
	if len(rest) > 0 && !others {
		return nil, nil, fmt.Errorf("array %q names no %s", rest[0].Name, n.Base)
	}
	parts = make([]P, len(metas))
	for i, meta := range metas {
		if string(meta) == "null" {
			continue
		}
		if parts[i], _, err = fromFile(&File{Kind: n.PartKind, Meta: meta, Arrays: byPart[i]}); err != nil {
			return nil, nil, fmt.Errorf("%s %d: %w", n.Base, i, err)
		}
	}
	return parts, rest, nil
}

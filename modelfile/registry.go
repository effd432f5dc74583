package modelfile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// A Decoder unpacks a File of its kind into a model and the caller's extra
// JSON sections stored with it, checking what it reads.
type Decoder func(f *File) (Model, map[string]json.RawMessage, error)

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Decoder{}
)

// RegisterKind makes Decode read files of the given kind with dec. A
// model package registers its kind in its init function, so that adding a
// model kind is one package (imported, perhaps blank, by the program that
// reads its files) and no switch to edit elsewhere: the pattern of
// image.RegisterFormat. Registering a kind twice or an empty kind panics,
// a programming error.
func RegisterKind(kind string, dec Decoder) {
	if kind == "" || dec == nil {
		panic("modelfile: RegisterKind needs a kind and a decoder")
	}
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[kind]; dup {
		panic("modelfile: model kind " + kind + " registered twice")
	}
	kinds[kind] = dec
}

// Kinds lists the registered model kinds, sorted.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Decode unpacks f by the decoder registered for its kind. A kind no
// package registered is an error naming it and the kinds this program
// reads (a file written by a newer build, or a program that did not
// import the kind's package).
func Decode(f *File) (Model, map[string]json.RawMessage, error) {
	kindsMu.RLock()
	dec := kinds[f.Kind]
	kindsMu.RUnlock()
	if dec == nil {
		return nil, nil, fmt.Errorf("model file holds a %q, a model kind this program does not read (it reads %s)", f.Kind, strings.Join(Kinds(), ", "))
	}
	return dec(f)
}

// Register is RegisterKind for a kind's own unpacking function, which
// returns its concrete model type (rfm.FromFile, tree.FromFile, …).
func Register[M Model](kind string, fromFile func(*File) (M, map[string]json.RawMessage, error)) {
	RegisterKind(kind, func(f *File) (Model, map[string]json.RawMessage, error) {
		m, extra, err := fromFile(f)
		if err != nil {
			return nil, nil, err
		}
		return m, extra, nil
	})
}

// DecodeSection is the first step of a kind's unpacking: DecodeMeta into
// a new metadata document of type M, and the document's own section of
// the model (what section returns from it), which must be there: a
// missing one is an error ("tree metadata has no tree section").
func DecodeSection[M, S any](f *File, kind, what, name string, section func(*M) *S) (*M, *S, error) {
	meta := new(M)
	if err := f.DecodeMeta(kind, what, name, meta); err != nil {
		return nil, nil, err
	}
	s := section(meta)
	if s == nil {
		return nil, nil, fmt.Errorf("%s metadata has no %s section", name, name)
	}
	return meta, s, nil
}

package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/modelfile"
)

// builder collects the nodes and constants of a graph. Names are unique:
// a node's output is "<op>_<k>", a constant keeps its name (a second
// constant of the same name is the same constant) or gets "const_<k>".
type builder struct {
	nodes []node
	inits []tensor
	names map[string]bool
	k     int
}

func (b *builder) fresh(prefix string) string {
	b.k++
	return fmt.Sprintf("%s_%d", strings.ToLower(prefix), b.k)
}

// op adds a node of the default domain and returns its output. args are
// an optional []attr, then the input names.
func (b *builder) op(op string, args ...any) string {
	var attrs []attr
	var inputs []string
	for _, a := range args {
		switch v := a.(type) {
		case []attr:
			attrs = v
		case string:
			inputs = append(inputs, v)
		case nil:
		default:
			panic(fmt.Sprintf("onnx builder: argument of type %T", a))
		}
	}
	return b.add(op, "", attrs, inputs)
}

// add adds a node and returns its output.
func (b *builder) add(op, domain string, attrs []attr, inputs []string) string {
	out := b.fresh(op)
	b.nodes = append(b.nodes, node{op: op, domain: domain, name: out, inputs: inputs, outputs: []string{out}, attrs: attrs})
	return out
}

// opTo adds a node whose output has the given name (a graph output).
func (b *builder) opTo(op, out string, attrs []attr, inputs ...string) {
	b.nodes = append(b.nodes, node{op: op, name: b.fresh(op), inputs: inputs, outputs: []string{out}, attrs: attrs})
}

// opDomain adds a node of another operator domain.
func (b *builder) opDomain(op, domain string, attrs []attr, inputs ...string) string {
	return b.add(op, domain, attrs, inputs)
}

func (b *builder) constant(t tensor) string {
	if b.names == nil {
		b.names = map[string]bool{}
	}
	if t.name == "" {
		t.name = b.fresh("const")
	} else if b.names[t.name] {
		return t.name
	}
	b.names[t.name] = true
	b.inits = append(b.inits, t)
	return t.name
}

// f64 is a double constant of the given dims (nil: a scalar).
func (b *builder) f64(name string, dims []int, v []float64) string {
	return b.constant(tensor{name: name, dims: dims, dtype: typeDouble, f64: slices.Clone(v)})
}

func (b *builder) i64(name string, dims []int, v []int64) string {
	return b.constant(tensor{name: name, dims: dims, dtype: typeInt64, i64: slices.Clone(v)})
}

func (b *builder) str(name string, dims []int, v []string) string {
	return b.constant(tensor{name: name, dims: dims, dtype: typeString, strings: slices.Clone(v)})
}

func pow(x, y float64) float64 { return math.Pow(x, y) }

// graph is a GraphProto with what it needs to become a ModelProto.
type graph struct {
	name            string
	nodes           []node
	inits           []tensor
	inputs, outputs []valueInfo
}

func (g *graph) encode() msg {
	var m msg
	for i := range g.nodes {
		m = m.sub(1, g.nodes[i].encode())
	}
	m = m.str(2, g.name)
	for i := range g.inits {
		m = m.sub(5, g.inits[i].encode())
	}
	for _, v := range g.inputs {
		m = m.sub(11, v.encode())
	}
	for _, v := range g.outputs {
		m = m.sub(12, v.encode())
	}
	return m
}

// model wraps the graph in a ModelProto with the opsets, the producer, a
// doc string and metadata (sorted by key, so equal models give equal bytes).
func (g *graph) model(doc string, meta map[string]string) []byte {
	m := msg(nil).int64(1, IRVersion)
	m = m.str(2, "rfm")
	m = m.str(3, strings.TrimPrefix(modelfile.DefaultCreatedBy(), "rfm "))
	m = m.str(6, doc)
	m = m.sub(7, g.encode())
	m = m.sub(8, msg(nil).str(1, "").int64(2, Opset))
	m = m.sub(8, msg(nil).str(1, "ai.onnx.ml").int64(2, OpsetML))
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m = m.sub(14, msg(nil).str(1, k).str(2, meta[k]))
	}
	return m
}

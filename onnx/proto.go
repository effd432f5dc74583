package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The subset of onnx.proto that an exported graph uses, written field by
// field with protowire (field numbers and enum values from onnx.proto,
// IR version 8).

// TensorProto.DataType values.
const (
	typeFloat  = 1
	typeInt64  = 7
	typeString = 8
	typeBool   = 9
	typeDouble = 11
)

// AttributeProto.AttributeType values.
const (
	attrFloat   = 1
	attrInt     = 2
	attrString  = 3
	attrInts    = 7
	attrStrings = 8
)

// msg is a protobuf message being written.
type msg []byte

func (m msg) varint(num protowire.Number, v uint64) msg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m msg) int64(num protowire.Number, v int64) msg { return m.varint(num, uint64(v)) }

func (m msg) bytes(num protowire.Number, b []byte) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m msg) str(num protowire.Number, s string) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m msg) sub(num protowire.Number, sub msg) msg { return m.bytes(num, sub) }

func (m msg) float32(num protowire.Number, v float32) msg {
	m = protowire.AppendTag(m, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(m, math.Float32bits(v))
}

// tensor is a TensorProto initializer: dims, type and data (raw little-
// endian bytes for numbers, string_data for strings).
type tensor struct {
	name    string
	dims    []int
	dtype   int
	f64     []float64
	i64     []int64
	strings []string
}

func (t *tensor) encode() msg {
	var m msg
	for _, d := range t.dims {
		m = m.int64(1, int64(d))
	}
	m = m.int64(2, int64(t.dtype))
	for _, s := range t.strings {
		m = m.str(6, s)
	}
	m = m.str(8, t.name)
	switch {
	case t.f64 != nil:
		raw := make([]byte, 8*len(t.f64))
		for i, v := range t.f64 {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
		}
		m = m.bytes(9, raw)
	case t.i64 != nil:
		raw := make([]byte, 8*len(t.i64))
		for i, v := range t.i64 {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
		m = m.bytes(9, raw)
	}
	return m
}

// attr is a node attribute.
type attr struct {
	name    string
	kind    int
	i       int64
	f       float32
	s       string
	ints    []int64
	strings []string
}

func (a attr) encode() msg {
	m := msg(nil).str(1, a.name)
	switch a.kind {
	case attrFloat:
		m = m.float32(2, a.f)
	case attrInt:
		m = m.int64(3, a.i)
	case attrString:
		m = m.bytes(4, []byte(a.s))
	case attrInts:
		for _, v := range a.ints {
			m = m.int64(8, v)
		}
	case attrStrings:
		for _, s := range a.strings {
			m = m.bytes(9, []byte(s))
		}
	}
	return m.int64(20, int64(a.kind))
}

func intAttr(name string, v int64) attr { return attr{name: name, kind: attrInt, i: v} }

// node is a NodeProto.
type node struct {
	op, domain, name string
	inputs, outputs  []string
	attrs            []attr
}

func (n *node) encode() msg {
	var m msg
	for _, in := range n.inputs {
		m = m.str(1, in)
	}
	for _, out := range n.outputs {
		m = m.str(2, out)
	}
	m = m.str(3, n.name)
	m = m.str(4, n.op)
	for _, a := range n.attrs {
		m = m.sub(5, a.encode())
	}
	if n.domain != "" {
		m = m.str(7, n.domain)
	}
	return m
}

// valueInfo is a graph input or output: a tensor of elem type with dims,
// where a dim of -1 is the symbolic batch size "N".
type valueInfo struct {
	name  string
	dtype int
	dims  []int
	doc   string
}

func (v valueInfo) encode() msg {
	var shape msg
	for _, d := range v.dims {
		var dim msg
		if d < 0 {
			dim = dim.str(2, "N")
		} else {
			dim = dim.int64(1, int64(d))
		}
		shape = shape.sub(1, dim)
	}
	tt := msg(nil).int64(1, int64(v.dtype)).sub(2, shape)
	m := msg(nil).str(1, v.name).sub(2, msg(nil).sub(1, tt))
	if v.doc != "" {
		m = m.str(3, v.doc)
	}
	return m
}

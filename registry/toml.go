package registry

import (
	"fmt"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxKeyDepth bounds how deep the keys of a config or models file nest:
// the deepest either reads is 4 (models.prices."ID".input,
// agents.NAME.env.VAR). A header of thousands of dotted keys, a few KB of
// text, decodes into as many nested tables, hundreds of bytes each: a
// 4 MB file took a GB and seconds before a word of it was checked.
const MaxKeyDepth = 16

// DeepError is a document whose keys nest deeper than MaxKeyDepth, at
// the key (1-based line and column) that goes past it.
type DeepError struct{ Line, Column int }

func (e *DeepError) Error() string {
	return fmt.Sprintf("keys nested more than %d deep", MaxKeyDepth)
}

// DecodeTOML decodes a TOML document into a table, as toml.Unmarshal
// does, after refusing one whose keys nest deeper than MaxKeyDepth
// (*DeepError) without building its tables. The look is one pass of
// go-toml's own parser, which a syntax error just ends: Unmarshal then
// reports it, with its position (*toml.DecodeError).
func DecodeTOML(data []byte) (map[string]any, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	var t map[string]any
	if err := toml.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return t, nil
}

func checkDepth(data []byte) error {
	var p unstable.Parser
	p.Reset(data)
	table := 0 // the depth of the last [header]'s keys
	for p.NextExpression() {
		e := p.Expression()
		var deep *unstable.Node
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table, deep = keyDepth(e, 0)
		case unstable.KeyValue:
			deep = valueDepth(e, table)
		}
		if deep != nil {
			pos := p.Shape(deep.Raw).Start
			return &DeepError{Line: pos.Line, Column: pos.Column}
		}
	}
	return nil // a syntax error is Unmarshal's to report
}

// keyDepth returns depth plus the parts of e's (dotted) key, and the
// first key part past MaxKeyDepth, if one is.
func keyDepth(e *unstable.Node, depth int) (int, *unstable.Node) {
	it := e.Key()
	for it.Next() {
		if depth++; depth > MaxKeyDepth {
			return depth, it.Node()
		}
	}
	return depth, nil
}

// valueDepth returns the first key past MaxKeyDepth of the key-value kv,
// whose table is depth deep, inline tables included. The parser bounds
// how deep values nest, and so this recursion.
func valueDepth(kv *unstable.Node, depth int) *unstable.Node {
	depth, deep := keyDepth(kv, depth)
	if deep != nil {
		return deep
	}
	return nestedDepth(kv.Value(), depth)
}

func nestedDepth(v *unstable.Node, depth int) *unstable.Node {
	switch v.Kind {
	case unstable.InlineTable, unstable.Array:
		it := v.Children()
		for it.Next() {
			var deep *unstable.Node
			if c := it.Node(); c.Kind == unstable.KeyValue {
				deep = valueDepth(c, depth)
			} else {
				deep = nestedDepth(c, depth)
			}
			if deep != nil {
				return deep
			}
		}
	}
	return nil
}

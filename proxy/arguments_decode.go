package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpgw/gateway/catalog"
)

// decodeArgs decodes the arguments object and, as it goes, checks every
// number and spells it canonically (see canonicalNumbers: the same rule),
// so the schema and the upstream see the same bounded values; the error
// names the first offending argument in the document's order.
//
// The values are what encoding/json with UseNumber gives (map[string]any,
// []any, string, json.Number, bool, nil; the last duplicate member
// wins), built by a small walk over bytes json.Valid has accepted
// instead of through reflection: every call decodes its arguments, and
// most are a few short strings. A fuzz target holds the two to each other.
// The path to the value being read is kept as steps, and spelt out only
// for an error.
func decodeArgs(raw []byte) (map[string]any, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return map[string]any{}, nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("arguments must be a JSON object")
	}
	d := argDecoder{b: raw}
	d.space()
	if raw[d.i] != '{' {
		return nil, errors.New("arguments must be a JSON object")
	}
	args := d.object()
	if d.err != nil {
		return nil, errors.New("invalid arguments: " + d.err.Error())
	}
	return args, nil
}

// argDecoder walks one valid JSON value; it never sees invalid input, so
// it checks nothing json.Valid has checked.
type argDecoder struct {
	b    []byte
	i    int
	err  error     // the first number refused
	path []argStep // where the value being read sits; as long as it is deep
}

// argStep is one step of a path: a member (key) or an element (index >= 0).
type argStep struct {
	key   string
	index int
}

// field spells the path as catalog.ArgumentError does: filter.tags[2].
func (d *argDecoder) field() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

func (d *argDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *argDecoder) value() any {
	d.space()
	switch d.b[d.i] {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		return d.str()
	case 't':
		d.i += len("true")
		return true
	case 'f':
		d.i += len("false")
		return false
	case 'n':
		d.i += len("null")
		return nil
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		d.i++
	}
	n, msg := canonicalNumber(string(d.b[start:d.i]))
	if msg != "" && d.err == nil {
		d.err = &catalog.ArgumentError{Field: d.field(), Msg: msg}
	}
	return n
}

func (d *argDecoder) object() map[string]any {
	m := map[string]any{}
	d.i++ // {
	d.space()
	if d.b[d.i] == '}' {
		d.i++
		return m
	}
	for {
		d.space()
		k := d.str()
		d.space()
		d.i++ // :
		d.path = append(d.path, argStep{key: k, index: -1})
		m[k] = d.value()
		d.path = d.path[:len(d.path)-1]
		d.space()
		c := d.b[d.i]
		d.i++ // , or }
		if c == '}' {
			return m
		}
	}
}

func (d *argDecoder) array() []any {
	a := []any{}
	d.i++ // [
	d.space()
	if d.b[d.i] == ']' {
		d.i++
		return a
	}
	for {
		d.path = append(d.path, argStep{index: len(a)})
		a = append(a, d.value())
		d.path = d.path[:len(d.path)-1]
		d.space()
		c := d.b[d.i]
		d.i++ // , or ]
		if c == ']' {
			return a
		}
	}
}

// str decodes the string token at d.i. One without escapes in valid UTF-8
// is its bytes; any other goes through encoding/json, whose rules
// (surrogate pairs, invalid UTF-8 as U+FFFD) are the reference.
func (d *argDecoder) str() string {
	start := d.i
	escaped, ascii := false, true
	j := start + 1
	for d.b[j] != '"' {
		switch c := d.b[j]; {
		case c == '\\':
			escaped = true
			j += 2
		case c >= utf8.RuneSelf:
			ascii = false
			j++
		default:
			j++
		}
	}
	d.i = j + 1
	body := d.b[start+1 : j]
	if !escaped && (ascii || utf8.Valid(body)) {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(d.b[start:d.i], &s)
	return s
}

// Package rendering turns upstream answers into what an agent receives:
// the shaped JSON object (structuredContent) and its compact text, bounded,
// honest about what it dropped, fenced where text came from documents, and
// raw bytes rendered as UTF-8 or hex. It is pure: bytes and plain options
// in, bytes out; it imports nothing from this module.
package rendering

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// ErrNotJSON: the upstream body is not a JSON document.
var ErrNotJSON = errors.New("upstream answer is not JSON")

// Field maps an output name to a gjson path into the selected value.
type Field struct {
	Name string
	Path string
	// Optional: a path that finds nothing leaves its name out. Otherwise
	// Shape fails with a [MissingError].
	Optional bool
}

// ShapeOptions says how to shape an upstream JSON body.
type ShapeOptions struct {
	// Select is a gjson path to the value to return; "" is the whole body.
	Select string
	// SelectOptional: a Select that finds nothing shapes as null (and
	// nothing under it is required). Otherwise Shape fails with a
	// [MissingError].
	SelectOptional bool
	// Fields, when set, builds the output object from these paths, in
	// order.
	Fields []Field
	// List, when set, is a top-level key the shaped result must hold,
	// unless ListOptional. An empty array or null that is there counts.
	List         string
	ListOptional bool
	// Paged applies the cursor conventions to a Fields result: an empty
	// or null nextCursor is left out, and unless Fields maps hasMore,
	// hasMore is true exactly when nextCursor is non-empty.
	Paged bool
}

// MissingError: a path the options require matched nothing in the body
// (a typo in a path must not read as an empty answer).
type MissingError struct {
	Kind string // "select", "field" or "list"
	Name string // the field's name, for "field"
	Path string // the path, or the list's key
}

func (e *MissingError) Error() string {
	if e.Kind == "field" {
		return fmt.Sprintf("response.fields %s (%q) matched nothing in the answer", e.Name, e.Path)
	}
	return fmt.Sprintf("response.%s %q matched nothing in the answer", e.Kind, e.Path)
}

// IsEmpty reports whether body holds nothing but JSON white space: an
// empty answer (204 No Content, or Content-Length: 0).
func IsEmpty(body []byte) bool {
	for _, c := range body {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// Empty is the result of a successful answer with no body:
// {"ok":true,"upstreamStatus":N}.
func Empty(upstreamStatus int) []byte {
	b := []byte(`{"ok":true,"upstreamStatus":`)
	b = strconv.AppendInt(b, int64(upstreamStatus), 10)
	return append(b, '}')
}

// Text renders a text body as {"text","truncated","byteCount"}: at most
// inline bytes of it, cut on a character boundary, invalid UTF-8 as
// U+FFFD; total is the full length (at least len(raw)).
func Text(raw []byte, total int64, inline int) []byte {
	if total < int64(len(raw)) {
		total = int64(len(raw))
	}
	if inline <= 0 {
		inline = 16 << 10
	}
	cut, truncated := raw, total > int64(len(raw))
	if len(cut) > inline {
		cut, truncated = cut[:inline], true
		// Step back off a character the cut split.
		for i := 1; i < utf8.UTFMax && len(cut) > 0; i++ {
			if r, size := utf8.DecodeLastRune(cut); r != utf8.RuneError || size != 1 {
				break
			}
			cut = cut[:len(cut)-1]
		}
	}
	b := make([]byte, 0, len(cut)+64)
	b = append(b, `{"text":`...)
	b = AppendString(b, string(cut))
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, truncated)
	b = append(b, `,"byteCount":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, '}')
}

// Shape returns the shaped result as a compact JSON object. An array is
// wrapped as {"items": [...]} and reported as wrapped (its list is then
// "items"), any other non-object as {"value": ...}. Invalid UTF-8 inside
// strings becomes U+FFFD, so the output is always valid JSON in valid UTF-8.
// A required path that finds nothing is a [*MissingError]; an answer
// nested too deeply, or holding a number out of range, an
// [*UnreadableError].
func Shape(body []byte, o ShapeOptions) (out []byte, wrapped bool, err error) {
	if e := Readable(body); e != nil {
		return nil, false, e
	}
	if !gjson.ValidBytes(body) {
		return nil, false, ErrNotJSON
	}
	// root is the selected value: the whole body, or what Select finds.
	// rootRaw is its bytes, a sub-slice of body wherever gjson says where
	// the value lies (Result.Index), so a compact selection is returned
	// without a copy; get reads a path under it.
	rootRaw := bytes.TrimSpace(body)
	get := func(path string) gjson.Result { return gjson.GetBytes(body, path) }
	required := true
	if o.Select != "" {
		sel := gjson.GetBytes(body, o.Select)
		switch {
		case !sel.Exists():
			if !o.SelectOptional {
				return nil, false, &MissingError{Kind: "select", Path: o.Select}
			}
			required = false // nothing under a missing optional selection is required
			rootRaw = []byte("null")
		case sel.Index > 0 && sel.Index+len(sel.Raw) <= len(body) && string(body[sel.Index:sel.Index+len(sel.Raw)]) == sel.Raw:
			rootRaw = body[sel.Index : sel.Index+len(sel.Raw)]
		default: // a value gjson built (a query, a modifier): not in body
			rootRaw = []byte(sel.Raw)
		}
		get = sel.Get
	}
	if len(o.Fields) > 0 {
		if out, err = shapeFields(get, o, required); err != nil {
			return nil, false, err
		}
	} else {
		out = rootRaw
		if firstSpace(rootRaw) >= 0 {
			out = appendCompact(make([]byte, 0, len(rootRaw)), rootRaw)
		}
		out = out[:len(out):len(out)] // appending to it never writes into body
		switch rootRaw[0] {
		case '{':
		case '[':
			out, wrapped = wrap("items", out), true
		default:
			out = wrap("value", out)
		}
		if required && o.List != "" && !o.ListOptional {
			var found bool
			switch {
			case wrapped:
				found = o.List == "items"
			case rootRaw[0] == '{':
				found = get(gjson.Escape(o.List)).Exists()
			default:
				found = o.List == "value"
			}
			if !found {
				return nil, false, &MissingError{Kind: "list", Path: o.List}
			}
		}
	}
	if !utf8.Valid(out) {
		// Outside strings JSON is ASCII, so only string contents change.
		out = []byte(strings.ToValidUTF8(string(out), "\uFFFD"))
	}
	return out, wrapped, nil
}

// firstSpace returns the index of the first white space outside strings,
// or -1. It jumps from quote to quote with IndexByte, so a compact body
// costs about a memchr.
func firstSpace(raw []byte) int {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '"')
		seg := raw[i:]
		if j >= 0 {
			seg = raw[i : i+j]
		}
		// The segments between strings are short (":", ",", "},{"): a
		// loop beats IndexAny, which builds its set on every call.
		for k, c := range seg {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				return i + k
			}
		}
		if j < 0 {
			return -1
		}
		i += j + 1 // inside a string: find its closing quote
		for strStart := i; ; {
			q := bytes.IndexByte(raw[i:], '"')
			if q < 0 {
				return -1
			}
			n := 0
			for p := i + q - 1; p >= strStart && raw[p] == '\\'; p-- {
				n++
			}
			i += q + 1
			if n%2 == 0 {
				break
			}
		}
	}
	return -1
}

// appendCompact appends raw without white space outside strings.
func appendCompact[T string | []byte](dst []byte, raw T) []byte {
	inString := false
	start := 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

func wrap(key string, raw []byte) []byte {
	b := make([]byte, 0, len(raw)+len(key)+5)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, raw...)
	return append(b, '}')
}

func shapeFields(get func(path string) gjson.Result, o ShapeOptions, required bool) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	cursor, hasMoreMapped := "", false
	for _, f := range o.Fields {
		v := get(f.Path)
		if !v.Exists() {
			if required && !f.Optional {
				return nil, &MissingError{Kind: "field", Name: f.Name, Path: f.Path}
			}
			continue
		}
		if o.Paged && f.Name == "nextCursor" {
			if v.Type == gjson.Null || (v.Type == gjson.String && v.Str == "") {
				continue
			}
			cursor = v.String()
		}
		if f.Name == "hasMore" {
			hasMoreMapped = true
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		writeKey(&b, f.Name)
		b.Write(appendCompact(nil, v.Raw))
	}
	if o.Paged && !hasMoreMapped {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"hasMore":`)
		if cursor != "" {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeKey(b *bytes.Buffer, k string) {
	b.Write(AppendString(nil, k))
	b.WriteByte(':')
}

// plainByte marks the ASCII bytes AppendString copies as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != 0x7f
	}
	return t
}()

// AppendString appends s as a JSON string without HTML escaping, so tags
// read as written. Invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	// Runs of bytes that need no escape are copied at once, found with a
	// table: the text copy of a 30 KiB answer is written per call.
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				for i < len(s) && plainByte[s[i]] {
					i++
				}
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

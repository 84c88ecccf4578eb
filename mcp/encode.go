package mcp

import (
	"strconv"

	"github.com/mcpgw/gateway/rendering"
)

// This file is the wire's one JSON encoder. Every answer the surfaces send
// is a typed value below, encoded here; nothing else in the package
// assembles JSON. It is hand-written rather than encoding/json because two
// members arrive already encoded and must be copied, not re-scanned: the
// tool objects of a tools/list page (hundreds of KiB for a large catalog,
// encoded once at load) and a call's structuredContent (compact JSON from
// rendering). Strings go through rendering.AppendString, the module's one
// JSON string escaper. FuzzEncode decodes every value's output with
// encoding/json.

// value is a JSON value the encoder writes.
type value interface{ appendJSON(b []byte) []byte }

// encode appends v to dst.
func encode(dst []byte, v value) []byte { return v.appendJSON(dst) }

// raw is JSON that is already encoded (valid, compact).
type raw []byte

func (r raw) appendJSON(b []byte) []byte { return append(b, r...) }

// str is a JSON string.
type str string

func (s str) appendJSON(b []byte) []byte { return rendering.AppendString(b, string(s)) }

// strs is an array of strings; nil encodes as [].
type strs []string

func (ss strs) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = rendering.AppendString(b, s)
	}
	return append(b, ']')
}

// object is a JSON object whose members are written in order; a nil
// member value is left out.
type object []member

type member struct {
	key string // written as it is: every key is a constant of this package
	val value
}

func (o object) appendJSON(b []byte) []byte {
	b = append(b, '{')
	n := 0
	for _, m := range o {
		if m.val == nil {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		b = m.val.appendJSON(b)
	}
	return append(b, '}')
}

// integer and boolean values.
type (
	num  int64
	flag bool
)

func (n num) appendJSON(b []byte) []byte  { return strconv.AppendInt(b, int64(n), 10) }
func (f flag) appendJSON(b []byte) []byte { return strconv.AppendBool(b, bool(f)) }

// response is a JSON-RPC response: a result or an error. A nil id is
// written as null.
type response struct {
	id     []byte
	result value     // nil for an error
	err    *errorObj // nil for a result
}

type errorObj struct {
	code int
	msg  string
	data value // nil: no data member
}

func (r *response) appendJSON(b []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if r.id == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, r.id...)
	}
	if r.err != nil {
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, int64(r.err.code), 10)
		b = append(b, `,"message":`...)
		b = rendering.AppendString(b, r.err.msg)
		if r.err.data != nil {
			b = append(b, `,"data":`...)
			b = r.err.data.appendJSON(b)
		}
		return append(b, "}}"...)
	}
	b = append(b, `,"result":`...)
	return append(r.result.appendJSON(b), '}')
}

// callResult is a tools/call result (CallToolResult).
type callResult struct {
	text       string
	structured []byte // compact JSON object, or nil
	isError    bool
	tail       *modernTail // modern era only
}

func (r *callResult) appendJSON(b []byte) []byte {
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = rendering.AppendString(b, r.text)
	b = append(b, "}]"...)
	if r.structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, r.structured...)
	}
	if r.isError {
		b = append(b, `,"isError":true`...)
	}
	return append(r.tail.appendMembers(b), '}')
}

// listResult is a tools/list result: each tool already encoded.
type listResult struct {
	tools      [][]byte
	nextCursor string      // "" on the last page
	cache      bool        // modern: ttlMs and cacheScope
	tail       *modernTail // modern era only
}

func (r *listResult) appendJSON(b []byte) []byte {
	b = append(b, `{"tools":[`...)
	for i, t := range r.tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
	}
	b = append(b, ']')
	if r.nextCursor != "" {
		b = append(b, `,"nextCursor":`...)
		b = rendering.AppendString(b, r.nextCursor)
	}
	if r.cache {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, ListTTLMillis, 10)
		b = append(b, `,"cacheScope":"private"`...)
	}
	return append(r.tail.appendMembers(b), '}')
}

// modernTail is what every modern result ends with: resultType and the
// serverInfo in _meta. A nil tail writes nothing.
type modernTail struct{ info object }

func (t *modernTail) appendMembers(b []byte) []byte {
	if t == nil {
		return b
	}
	b = append(b, `,"resultType":"complete","_meta":{"`+metaServerInfo+`":`...)
	return append(t.info.appendJSON(b), '}')
}

// members are the tail as object members, for results built as objects.
func (t *modernTail) members() []member {
	if t == nil {
		return nil
	}
	return []member{{"resultType", str("complete")}, {"_meta", object{{metaServerInfo, t.info}}}}
}

// inputRequiredResult is a multi round-trip InputRequiredResult
// (2026-07-28): one elicitation the client must put to its user, under
// key, and the sealed requestState it must echo.
type inputRequiredResult struct {
	key     string
	request object // the elicitation/create request
	state   string
	info    object // serverInfo for _meta
}

func (r *inputRequiredResult) appendJSON(b []byte) []byte {
	b = append(b, `{"resultType":"input_required","inputRequests":{`...)
	b = rendering.AppendString(b, r.key)
	b = append(b, ':')
	b = r.request.appendJSON(b)
	b = append(b, `},"requestState":`...)
	b = rendering.AppendString(b, r.state)
	b = append(b, `,"_meta":{"`+metaServerInfo+`":`...)
	return append(r.info.appendJSON(b), "}}"...)
}

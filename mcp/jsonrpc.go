package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpgw/gateway/rendering"
)

// This file decodes one JSON-RPC 2.0 message strictly and without
// reflection: json.Valid checks the syntax once, then a small scanner walks
// the (now known-valid) bytes and keeps raw slices of the members we read.
//
// Strict means: exactly one object per message (a batch array is refused),
// "jsonrpc" exactly "2.0", no duplicate member names at the top level, in
// params or in params._meta (parsers disagree on which duplicate wins, and
// that disagreement is how requests get smuggled past a check), no member
// that differs from one we read only by case ("Method": encoding/json would
// take it for "method"), no unknown top-level member, and an id that is a
// string or an integer. Ids are kept as the raw bytes received so that they
// are echoed exactly: "1" stays a string, 1 stays a number, and an integer
// too large for int64 or float64 keeps all its digits.

// msgKind says what a decoded message is.
type msgKind uint8

const (
	kindRequest      msgKind = iota + 1 // method and id
	kindNotification                    // method, no id
	kindResponse                        // result or error, and id
)

// message is one decoded JSON-RPC message. Slices alias the input.
type message struct {
	kind   msgKind
	id     []byte // raw id bytes; nil when absent (notification) or unreadable
	method string
	params []byte // raw params object; nil when absent

	// Members of params that some method reads, raw; nil when absent.
	name            []byte
	arguments       []byte
	cursor          []byte
	protocolVersion []byte // initialize
	meta            []byte // params._meta
	// W3C trace context in params._meta (BASE §_meta reserves the keys),
	// raw JSON; nil when absent.
	metaTraceparent, metaTracestate []byte

	// Members of params._meta that decide the era, raw; nil when absent.
	metaVersion []byte // io.modelcontextprotocol/protocolVersion
	metaCaps    []byte // io.modelcontextprotocol/clientCapabilities

	// A response's result or error, raw (elicit.go reads them).
	result, errv []byte
}

// Meta keys of the modern era (BASE §_meta).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaTraceparent        = "traceparent"
	metaTracestate         = "tracestate"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// JSON-RPC and MCP error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// MCP 2026-07-28 (BASE §Error Codes).
	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
	// Application codes, outside the JSON-RPC reserved range
	// (-32768..-32000): HTTP status minus 31000... as catalog.md has it.
	codeOutputTooLarge    = -31413
	codeInsufficientScope = -31403
	codeRateLimited       = -31429
	codeUnauthorized      = -31401 // stdio only: HTTP answers 401 before JSON-RPC
	codeUnavailable       = -31503 // stdio only: token verification is unavailable
)

// decodeError is a message the decoder refuses. id is the request's id when
// it could be read, so the error response can carry it.
type decodeError struct {
	code int
	msg  string
	id   []byte
}

// decode decodes b as one JSON-RPC message.
func decode(b []byte) (*message, *decodeError) {
	if !json.Valid(b) {
		return nil, &decodeError{code: codeParseError, msg: "parse error: invalid JSON"}
	}
	i := skipSpace(b, 0)
	switch b[i] {
	case '{':
	case '[':
		return nil, &decodeError{code: codeInvalidRequest, msg: "batch requests are not supported: send one message per POST"}
	default:
		return nil, &decodeError{code: codeInvalidRequest, msg: "a JSON-RPC message must be an object"}
	}
	obj := b[i:skipValue(b, i)]

	var (
		m                                         message
		version, id, method, params, result, errv []byte
		nID                                       int
		fail                                      *decodeError
		seen                                      keySet
	)
	// refuse records the first problem but the scan goes on, so that the id
	// can still be echoed when it was readable.
	refuse := func(msg string) {
		if fail == nil {
			fail = &decodeError{code: codeInvalidRequest, msg: msg}
		}
	}
	for it := newObjIter(obj); ; {
		rawKey, val, ok := it.next()
		if !ok {
			break
		}
		key := unquote(rawKey)
		if seen.add(key) {
			if string(key) == "id" {
				nID++
			}
			refuse("duplicate member " + quoteForMsg(key))
			continue
		}
		switch string(key) {
		case "jsonrpc":
			version = val
		case "id":
			id = val
			nID++
		case "method":
			method = val
		case "params":
			params = val
		case "result":
			result = val
		case "error":
			errv = val
		default:
			if known := foldMatch(key, "jsonrpc", "id", "method", "params", "result", "error"); known != "" {
				refuse("member " + quoteForMsg(key) + " must be spelled " + quoteForMsg([]byte(known)))
			} else {
				refuse("unknown member " + quoteForMsg(key))
			}
		}
	}

	// The id first: every later error can then carry it.
	idOK := false
	if id != nil && nID == 1 {
		switch {
		case id[0] == '"':
			idOK = true
		case isInteger(id):
			idOK = true
		case string(id) == "null" && method == nil:
			// A response to a request whose id could not be read.
			idOK = true
		}
		if idOK {
			m.id = id
		} else {
			refuse("id must be a string or an integer")
		}
	}
	if fail != nil {
		fail.id = m.id
		return nil, fail
	}
	if version == nil {
		return nil, &decodeError{code: codeInvalidRequest, msg: `missing "jsonrpc": "2.0"`, id: m.id}
	}
	if v := unquote(version); version[0] != '"' || string(v) != "2.0" {
		return nil, &decodeError{code: codeInvalidRequest, msg: `"jsonrpc" must be "2.0"`, id: m.id}
	}

	if method == nil {
		// A response. Legacy clients may POST one: the answer to a live
		// confirmation's elicitation (elicit.go), or anything else, which is
		// acknowledged and dropped.
		if params != nil || id == nil || (result == nil) == (errv == nil) {
			return nil, &decodeError{code: codeInvalidRequest, msg: "a message needs a method, or an id with exactly one of result and error", id: m.id}
		}
		m.kind, m.result, m.errv = kindResponse, result, errv
		return &m, nil
	}
	if result != nil || errv != nil {
		return nil, &decodeError{code: codeInvalidRequest, msg: "a request cannot carry result or error", id: m.id}
	}
	if method[0] != '"' {
		return nil, &decodeError{code: codeInvalidRequest, msg: "method must be a string", id: m.id}
	}
	m.method = string(unquote(method))
	if id != nil {
		m.kind = kindRequest
	} else {
		m.kind = kindNotification
	}
	if params != nil {
		if params[0] != '{' {
			return nil, &decodeError{code: codeInvalidRequest, msg: "params must be an object", id: m.id}
		}
		m.params = params
		if fail := m.decodeParams(); fail != nil {
			fail.id = m.id
			return nil, fail
		}
	}
	return &m, nil
}

// decodeParams picks the members of params (and params._meta) that methods
// read, refusing duplicates and case variants of them.
func (m *message) decodeParams() *decodeError {
	var seen keySet
	for it := newObjIter(m.params); ; {
		rawKey, val, ok := it.next()
		if !ok {
			break
		}
		key := unquote(rawKey)
		if seen.add(key) {
			return &decodeError{code: codeInvalidRequest, msg: "duplicate member " + quoteForMsg(key) + " in params"}
		}
		switch string(key) {
		case "name":
			m.name = val
		case "arguments":
			m.arguments = val
		case "cursor":
			m.cursor = val
		case "protocolVersion":
			m.protocolVersion = val
		case "_meta":
			m.meta = val
		default:
			if known := foldMatch(key, "name", "arguments", "cursor", "protocolVersion", "_meta"); known != "" {
				return &decodeError{code: codeInvalidRequest, msg: "params member " + quoteForMsg(key) + " must be spelled " + quoteForMsg([]byte(known))}
			}
		}
	}
	if m.meta == nil || m.meta[0] != '{' {
		return nil // a non-object _meta is the dispatcher's -32602
	}
	var metaSeen keySet
	for it := newObjIter(m.meta); ; {
		rawKey, val, ok := it.next()
		if !ok {
			break
		}
		key := unquote(rawKey)
		if metaSeen.add(key) {
			return &decodeError{code: codeInvalidRequest, msg: "duplicate member " + quoteForMsg(key) + " in params._meta"}
		}
		switch string(key) {
		case metaTraceparent:
			m.metaTraceparent = val
		case metaTracestate:
			m.metaTracestate = val
		case metaProtocolVersion:
			m.metaVersion = val
		case metaClientCapabilities:
			m.metaCaps = val
		default:
			if known := foldMatch(key, metaProtocolVersion, metaClientCapabilities); known != "" {
				return &decodeError{code: codeInvalidRequest, msg: "params._meta member " + quoteForMsg(key) + " must be spelled " + quoteForMsg([]byte(known))}
			}
		}
	}
	return nil
}

// duplicateMember returns the first member name of obj (a valid JSON
// object) that appears twice at its top level, decoded, or nil.
func duplicateMember(obj []byte) []byte {
	var seen keySet
	for it := newObjIter(obj); ; {
		rawKey, _, ok := it.next()
		if !ok {
			return nil
		}
		if key := unquote(rawKey); seen.add(key) {
			return key
		}
	}
}

// foldMatch returns the name in names that key equals under case folding,
// or "".
func foldMatch(key []byte, names ...string) string {
	for _, n := range names {
		if len(n) == len(key) && bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return ""
}

// quoteForMsg quotes a member name for an error message, capped so that a
// hostile name cannot bloat the answer.
func quoteForMsg(b []byte) string {
	const max = 64
	if len(b) > max {
		b = append(b[:max:max], "…"...)
	}
	return string(rendering.AppendString(nil, string(b)))
}

// isInteger reports whether raw (a valid JSON number) has no fraction and no
// exponent.
func isInteger(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	i := 0
	if raw[0] == '-' {
		i++
	}
	if i == len(raw) {
		return false
	}
	for ; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	return true
}

// stringValue returns the decoded value of raw when it is a JSON string.
func stringValue(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return string(unquote(raw)), true
}

// unquote decodes a JSON string token (quotes included); other tokens are
// returned as they are. raw must be valid JSON. The fast path returns a
// sub-slice of raw; escapes and invalid UTF-8 (which becomes U+FFFD) go
// through encoding/json, so both read a string the same way.
func unquote(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return raw
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return inner
	}
	return []byte(s)
}

// keySet detects duplicate member names. The first few names live in an
// array; a map takes over beyond, so a params object with many thousand
// members costs linear time, not quadratic.
type keySet struct {
	small [16][]byte
	n     int
	big   map[string]struct{}
}

// add records key and reports whether it was already there.
func (s *keySet) add(key []byte) (dup bool) {
	if s.big != nil {
		if _, ok := s.big[string(key)]; ok {
			return true
		}
		s.big[string(key)] = struct{}{}
		return false
	}
	for _, k := range s.small[:s.n] {
		if bytes.Equal(k, key) {
			return true
		}
	}
	if s.n < len(s.small) {
		s.small[s.n] = key
		s.n++
		return false
	}
	s.big = make(map[string]struct{}, 2*len(s.small))
	for _, k := range s.small {
		s.big[string(k)] = struct{}{}
	}
	s.big[string(key)] = struct{}{}
	return false
}

// The scanner below assumes valid JSON (json.Valid has run): it only finds
// where values end.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); {
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

// objIter walks the members of a valid JSON object without allocating.
type objIter struct {
	b []byte
	i int
}

func newObjIter(obj []byte) objIter { return objIter{b: obj, i: skipSpace(obj, 1)} }

// next returns the next member's raw key (quotes included) and raw value.
func (it *objIter) next() (key, val []byte, ok bool) {
	b, i := it.b, it.i
	if i >= len(b) || b[i] == '}' {
		return nil, nil, false
	}
	if b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	ks := i
	i = skipString(b, i)
	key = b[ks:i]
	i = skipSpace(b, i)
	i = skipSpace(b, i+1) // ':'
	vs := i
	i = skipValue(b, i)
	val = b[vs:i]
	it.i = skipSpace(b, i)
	return key, val, true
}

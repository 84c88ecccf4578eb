package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgw/gateway/internal/strictjson"
	"github.com/mcpgw/gateway/internal/text"
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
	// A modern tools/call retry's params.requestState and
	// params.inputResponses (approval.go).
	requestState, inputResponses []byte
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

// The members each object of a message may have. A member that spells one
// of these in other case is refused, not ignored: a parser in front of the
// gateway that reads it differently would see another message.
var (
	envelopeMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsMembers   = []string{"name", "arguments", "cursor", "protocolVersion", "_meta", "requestState", "inputResponses"}
	metaMembers     = []string{metaTraceparent, metaTracestate, metaProtocolVersion, metaClientCapabilities}
)

// problemText is the public reason for a strict scan's problem in the
// object named where ("" for the envelope, "params", "params._meta").
func problemText(p *strictjson.Problem, where string) string {
	key := quoteForMsg(p.Key)
	switch {
	case p.Kind == strictjson.Duplicate && where != "":
		return "duplicate member " + key + " in " + where
	case p.Kind == strictjson.Duplicate:
		return "duplicate member " + key
	case p.Kind == strictjson.Misspelled && where != "":
		return where + " member " + key + " must be spelled " + quoteForMsg([]byte(p.Want))
	case p.Kind == strictjson.Misspelled:
		return "member " + key + " must be spelled " + quoteForMsg([]byte(p.Want))
	default:
		return "unknown member " + key
	}
}

// decode decodes b as one JSON-RPC message.
func decode(b []byte) (*message, *decodeError) {
	if !json.Valid(b) {
		return nil, &decodeError{code: codeParseError, msg: "parse error: invalid JSON"}
	}
	// Valid JSON: only JSON whitespace can surround the one value.
	obj := bytes.TrimSpace(b)
	switch obj[0] {
	case '{':
	case '[':
		return nil, &decodeError{code: codeInvalidRequest, msg: "batch requests are not supported: send one message per POST"}
	default:
		return nil, &decodeError{code: codeInvalidRequest, msg: "a JSON-RPC message must be an object"}
	}

	var (
		m    message
		vals [6][]byte
	)
	// The scan reads on past the first problem, so that the id can still
	// be echoed when it was readable (present once).
	p, dup := strictjson.Scan(obj, envelopeMembers, true, vals[:])
	version, id, method, params, result, errv := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
	var fail *decodeError
	if p != nil {
		fail = &decodeError{code: codeInvalidRequest, msg: problemText(p, "")}
	}
	refuse := func(msg string) {
		if fail == nil {
			fail = &decodeError{code: codeInvalidRequest, msg: msg}
		}
	}

	// The id first: every later error can then carry it.
	if id != nil && dup&(1<<1) == 0 {
		idOK := false
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
	if v := strictjson.Unquote(version); version[0] != '"' || string(v) != "2.0" {
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
	m.method = string(strictjson.Unquote(method))
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
	var vals [7][]byte
	if p, _ := strictjson.Scan(m.params, paramsMembers, false, vals[:]); p != nil {
		return &decodeError{code: codeInvalidRequest, msg: problemText(p, "params")}
	}
	m.name, m.arguments, m.cursor, m.protocolVersion, m.meta = vals[0], vals[1], vals[2], vals[3], vals[4]
	m.requestState, m.inputResponses = vals[5], vals[6]
	if m.meta == nil || m.meta[0] != '{' {
		return nil // a non-object _meta is the dispatcher's -32602
	}
	var meta [4][]byte
	if p, _ := strictjson.Scan(m.meta, metaMembers, false, meta[:]); p != nil {
		return &decodeError{code: codeInvalidRequest, msg: problemText(p, "params._meta")}
	}
	m.metaTraceparent, m.metaTracestate, m.metaVersion, m.metaCaps = meta[0], meta[1], meta[2], meta[3]
	return nil
}

// quoteForMsg quotes a member name for an error message, capped so that a
// hostile name cannot bloat the answer.
func quoteForMsg(b []byte) string {
	return string(rendering.AppendString(nil, text.Clip(string(b), 64)))
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
	return string(strictjson.Unquote(raw)), true
}

package mcp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpgw/gateway/proxy"

	"github.com/mcpgw/gateway/internal/text"
)

// Every failure is classified once, where it happens, into a [failure]
// of one kind carrying its public detail; the cause goes to the log
// there and never further. Each framing then renders it through one
// table: rpcErrors for JSON-RPC (the MCP endpoint once a message is
// decoded, and everything on stdio, which has no HTTP layer) and
// httpErrors for plain HTTP answers (the MCP endpoint's guards and
// bearer check before JSON-RPC, and the whole REST mirror). Adding a
// kind is one row in each table that can meet it.
//
// MCP endpoint, JSON-RPC answers:
//
//	situation                                   HTTP  code    notes
//	invalid JSON                                400   -32700  id null
//	batch array, bad envelope, duplicate or     400   -32600  id echoed when readable, else null
//	  wrong-case member, bad id, bad "jsonrpc"
//	notification, or a response POSTed          202   —       no body
//	response to a live confirmation (elicit.go)  202   —       403/404 + JSON-RPC error without id
//	  from another principal, or unknown here           when it cannot be taken
//	modern: _meta version not a string,         400   -32602
//	  clientCapabilities missing; header says
//	  2026-07-28 but _meta has no version
//	modern: MCP-Protocol-Version, Mcp-Method    400   -32020
//	  or Mcp-Name missing or not matching
//	unsupported revision (modern _meta, or a    400   -32022  data {supported, requested}
//	  legacy MCP-Protocol-Version header)
//	unknown or undeclared method, modern        404   -32601
//	subscriptions/listen, either era            404   -32601  no notification types offered
//	unknown or undeclared method, legacy        200   -32601  legacy clients may treat a 404
//	                                                          as a lost session, or fail the
//	                                                          transport
//	unknown tool, bad cursor, bad call params   200   -32602
//	  (duplicate member names in arguments too)
//	tools/call over a rate limit or quota       429   -31429  + Retry-After, RateLimit, RateLimit-Policy;
//	                                                          data {error: rate_limited, limit, retryAfterMs[, quota: per_day]}
//	tool failure (gate, arguments, upstream)    200   result  isError: true (proxy decides)
//	proxy.OutputTooLargeError                   413   -31413  data {error: AGENT_OUTPUT_TOO_LARGE, tool, bytes, limit}
//	proxy.ChallengeError                        403   -31403  + WWW-Authenticate insufficient_scope
//	anything else                               500   -32603  "internal error", data {request_id}; cause logged
//
// stdio (ServeStdio) renders what HTTP answers before JSON-RPC as
// JSON-RPC errors, with application codes outside the reserved range (the
// HTTP status they stand for, minus 31000, as -31413 does):
//
//	line over limits.request_bytes              -32600  id null; the next line is read
//	no token, or invalid/expired token          -31401  "unauthorized", data {error, error_description}
//	token verification unavailable             -31503  "unavailable", data {request_id}
//	no catalog, or server.enabled: false        -32603  "mcp server not initialised"
//
// HTTP answers (JSON body {"error": KIND, "message": TEXT}): 503 not
// initialised or disabled, 405 method, 403 Origin or Host, 415
// Content-Type, 406 Accept, 413 body size, 401 token (WWW-Authenticate,
// with scope="<view gate scopes>" when a view gate is declared; a refused
// token adds error="invalid_token" and an error_description naming the
// reason class, from authz.Description, which the JSON body repeats as
// "error_description").
//
// REST mirror (POST {admin_path}/call): unknown tool 404
// McpToolNotFoundError; OutputTooLargeError 413 AGENT_OUTPUT_TOO_LARGE;
// ChallengeError 403 insufficient_scope; bad body 400 invalid_request;
// rate limited 429 rate_limited; anything else 500 internal_error with
// request_id; tool failures 200 with is_error.

// kind is a failure's class.
type kind uint8

const (
	// Before any framing: the caller, the state, the limits.
	failNoToken         kind = iota + 1 // no bearer token
	failInvalidToken                    // text: authz.Description
	failAuthUnavailable                 // verification failed, not the caller's fault
	failCancelled                       // the client went away while waiting
	failNotInitialised                  // no catalog, or server.enabled: false
	failRateLimited                     // rate set
	// HTTP guards.
	failNotFound      // text
	failMethod        // text; Allow set by the surface
	failForbidden     // text
	failMediaType     // text
	failNotAcceptable // text
	failBodyTooLarge  // text
	failBadRequest    // text
	failConflict      // text; attached: the resource as it now stands
	failUnavailable   // text
	// Calls, as the core reports them.
	failUnknownTool       // text
	failBadParams         // text: a well-formed request whose params a method cannot use
	failOutputTooLarge    // tooLarge set
	failInsufficientScope // scopes set
	failInternal          // cause logged
	// JSON-RPC framing.
	failParse              // text
	failInvalidRequest     // text
	failLineTooLarge       // text (stdio)
	failBadMeta            // text
	failHeaderMismatch     // text
	failUnsupportedVersion // text: the requested revision
	failMethodNotFound     // text; modern, or subscriptions/listen
	failMethodNotFoundOld  // text; legacy
)

// failure is one classified failure: its kind and what the answer may
// say about it.
type failure struct {
	kind     kind
	text     string
	rid      string
	rate     *rateLimited
	tooLarge *proxy.OutputTooLargeError
	scopes   []string
	attached value
}

func fail(k kind, text string) *failure { return &failure{kind: k, text: text} }

// rpcRow is how JSON-RPC renders a kind: the HTTP status the answer
// travels with, the code, the message ("": the failure's text) and the
// error's data (nil: none).
type rpcRow struct {
	status int
	code   int
	msg    string
	data   func(*failure) value
}

var rpcErrors = map[kind]rpcRow{
	failNoToken: {http.StatusUnauthorized, codeUnauthorized, "unauthorized: a bearer token is required",
		func(*failure) value { return object{{"error", str("unauthorized")}} }},
	failInvalidToken: {http.StatusUnauthorized, codeUnauthorized, "unauthorized: the bearer token is invalid or expired",
		func(f *failure) value {
			return object{{"error", str("unauthorized")}, {"error_description", str(f.text)}}
		}},
	failAuthUnavailable: {http.StatusServiceUnavailable, codeUnavailable, "token verification is unavailable",
		func(f *failure) value { return object{{"error", str("unavailable")}, {"request_id", str(f.rid)}} }},
	failCancelled:      {http.StatusServiceUnavailable, codeInternal, "request cancelled", nil},
	failNotInitialised: {http.StatusServiceUnavailable, codeInternal, "mcp server not initialised", nil},
	failRateLimited: {http.StatusTooManyRequests, codeRateLimited, "", func(f *failure) value {
		o := object{{"error", str("rate_limited")}, {"limit", str(f.rate.kind)}, {"retryAfterMs", num(retryAfterMillis(f.rate.retry))}}
		if f.rate.quota {
			o = append(o, member{"quota", str("per_day")})
		}
		return o
	}},
	failUnknownTool: {http.StatusOK, codeInvalidParams, "", nil},
	failBadParams:   {http.StatusOK, codeInvalidParams, "", nil},
	failOutputTooLarge: {http.StatusRequestEntityTooLarge, codeOutputTooLarge, "output too large", func(f *failure) value {
		return object{{"error", str("AGENT_OUTPUT_TOO_LARGE")}, {"tool", str(f.tooLarge.Tool)}, {"bytes", num(f.tooLarge.Bytes)}, {"limit", num(f.tooLarge.Limit)}}
	}},
	failInsufficientScope: {http.StatusForbidden, codeInsufficientScope, "insufficient scope",
		func(f *failure) value {
			return object{{"error", str("insufficient_scope")}, {"scopes", strs(f.scopes)}}
		}},
	failInternal: {http.StatusInternalServerError, codeInternal, "internal error",
		func(f *failure) value { return object{{"request_id", str(f.rid)}} }},
	failParse:          {http.StatusBadRequest, codeParseError, "", nil},
	failInvalidRequest: {http.StatusBadRequest, codeInvalidRequest, "", nil},
	failLineTooLarge:   {http.StatusRequestEntityTooLarge, codeInvalidRequest, "", nil},
	failBadMeta:        {http.StatusBadRequest, codeInvalidParams, "", nil},
	failHeaderMismatch: {http.StatusBadRequest, codeHeaderMismatch, "", nil},
	failUnsupportedVersion: {http.StatusBadRequest, codeUnsupportedVersion, "unsupported protocol version", func(f *failure) value {
		return object{{"supported", strs(supportedVersions[:])}, {"requested", str(text.Clip(f.text, 64))}}
	}},
	failMethodNotFound:    {http.StatusNotFound, codeMethodNotFound, "", nil},
	failNotFound:          {http.StatusNotFound, codeInvalidRequest, "", nil}, // a toolset gone after a reload
	failMethodNotFoundOld: {http.StatusOK, codeMethodNotFound, "", nil},
}

// rpcError renders f as a JSON-RPC error response to id.
func rpcError(id []byte, f *failure) (status int, v value) {
	row, ok := rpcErrors[f.kind]
	if !ok {
		row, f = rpcErrors[failInternal], &failure{kind: failInternal, rid: f.rid}
	}
	e := &errorObj{code: row.code, msg: row.msg}
	if e.msg == "" {
		e.msg = f.text
	}
	if row.data != nil {
		e.data = row.data(f)
	}
	return row.status, &response{id: id, err: e}
}

// httpRow is how a plain HTTP answer renders a kind: the status, the
// "error" member, the "message" (a constant, or built from the failure;
// when neither, the failure's text, and no member when that is empty)
// and members added after them.
type httpRow struct {
	status int
	err    string
	msg    string
	msgOf  func(*failure) string
	extra  func(*failure) []member
}

var httpErrors = map[kind]httpRow{
	failNoToken: {http.StatusUnauthorized, "unauthorized", "a bearer token is required", nil, nil},
	failInvalidToken: {http.StatusUnauthorized, "unauthorized", "the bearer token is invalid or expired", nil,
		func(f *failure) []member { return []member{{"error_description", str(f.text)}} }},
	failAuthUnavailable: {http.StatusServiceUnavailable, "unavailable", "",
		func(f *failure) string { return "token verification is unavailable; request " + f.rid }, nil},
	failCancelled:      {http.StatusServiceUnavailable, "unavailable", "request cancelled", nil, nil},
	failNotInitialised: {http.StatusServiceUnavailable, "mcp server not initialised", "", nil, nil},
	failRateLimited: {http.StatusTooManyRequests, "rate_limited", "", func(f *failure) string {
		if !f.rate.rule {
			return "rate limit reached; retry after the Retry-After delay"
		}
		return f.rate.message()
	}, func(f *failure) []member {
		m := []member{{"limit", str(f.rate.kind)}, {"retry_after_ms", num(retryAfterMillis(f.rate.retry))}}
		if f.rate.quota {
			m = append(m, member{"quota", str("per_day")})
		}
		return m
	}},
	failNotFound:      {http.StatusNotFound, "not_found", "", nil, nil},
	failMethod:        {http.StatusMethodNotAllowed, "method_not_allowed", "", nil, nil},
	failForbidden:     {http.StatusForbidden, "forbidden", "", nil, nil},
	failMediaType:     {http.StatusUnsupportedMediaType, "unsupported_media_type", "", nil, nil},
	failNotAcceptable: {http.StatusNotAcceptable, "not_acceptable", "", nil, nil},
	failBodyTooLarge:  {http.StatusRequestEntityTooLarge, "request_too_large", "", nil, nil},
	failBadRequest:    {http.StatusBadRequest, "bad_request", "", nil, nil},
	failConflict: {http.StatusConflict, "conflict", "", nil, func(f *failure) []member {
		return []member{{"approval", f.attached}}
	}},
	failUnavailable: {http.StatusServiceUnavailable, "unavailable", "", nil, nil},
	failUnknownTool: {http.StatusNotFound, "McpToolNotFoundError", "", nil, nil},
	failBadParams:   {http.StatusBadRequest, "invalid_request", "", nil, nil},
	failOutputTooLarge: {http.StatusRequestEntityTooLarge, "AGENT_OUTPUT_TOO_LARGE", "", func(f *failure) string {
		return "output too large: the result of " + strconv.Quote(f.tooLarge.Tool) + " does not fit its bounds; narrow the query"
	}, func(f *failure) []member {
		return []member{{"tool", str(f.tooLarge.Tool)}, {"bytes", num(f.tooLarge.Bytes)}, {"limit", num(f.tooLarge.Limit)}}
	}},
	failInsufficientScope: {http.StatusForbidden, "insufficient_scope", "this call needs more scopes", nil,
		func(f *failure) []member { return []member{{"scopes", strs(f.scopes)}} }},
	failInternal: {http.StatusInternalServerError, "internal_error", "",
		func(f *failure) string { return "internal error; request " + f.rid }, nil},
}

// httpError renders f as a plain HTTP JSON answer.
func httpError(f *failure) (status int, v value) {
	row, ok := httpErrors[f.kind]
	if !ok {
		row, f = httpErrors[failInternal], &failure{kind: failInternal, rid: f.rid}
	}
	msg := row.msg
	switch {
	case row.msgOf != nil:
		msg = row.msgOf(f)
	case msg == "":
		msg = f.text
	}
	o := object{{"error", str(row.err)}}
	if msg != "" {
		o = append(o, member{"message", str(msg)})
	}
	if row.extra != nil {
		o = append(o, row.extra(f)...)
	}
	return row.status, o
}

// classify turns an error from proxy.Core.Call into its failure, logging
// the cause where the caller may not see it. tool is the name asked for.
func (x *exchange) classify(tool string, err error) *failure {
	if unknown, ok := errors.AsType[*proxy.UnknownToolError](err); ok {
		return fail(failUnknownTool, unknown.Error())
	}
	if errors.Is(err, proxy.ErrUnknownTool) {
		return fail(failUnknownTool, (&proxy.UnknownToolError{Name: tool}).Error())
	}
	if ut, ok := errors.AsType[*proxy.UnknownToolsetError](err); ok {
		// The catalog was reloaded without the toolset this endpoint (or
		// stdio session) serves.
		return unknownToolset(ut.Name)
	}
	if tl, ok := errors.AsType[*proxy.OutputTooLargeError](err); ok {
		x.log.Debug("output too large", "tool", tl.Tool, "bytes", tl.Bytes, "limit", tl.Limit)
		return &failure{kind: failOutputTooLarge, tooLarge: tl}
	}
	if ch, ok := errors.AsType[*proxy.ChallengeError](err); ok {
		x.log.Debug("insufficient scope", "tool", tool, "gate", ch.Gate)
		return &failure{kind: failInsufficientScope, scopes: ch.Scopes}
	}
	if x.ctx.Err() != nil {
		x.log.Debug("call abandoned", "tool", tool, "error", err)
	} else {
		x.log.Error("call failed", "tool", tool, "error", err)
	}
	return &failure{kind: failInternal, rid: x.rid}
}

var errNilResult = errors.New("proxy returned neither a result nor an error")

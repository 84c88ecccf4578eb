package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mcpgw/gateway/proxy"
)

// Error mapping, one table per surface (STYLE.md "Errors"; catalog.md
// "Errors, by who caused them").
//
// MCP endpoint, JSON-RPC answers (Dispatch):
//
//	situation                                   HTTP  code    notes
//	invalid JSON                                400   -32700  id null
//	batch array, bad envelope, duplicate or     400   -32600  id echoed when readable, else null
//	  wrong-case member, bad id, bad "jsonrpc"
//	notification, or a response POSTed          202   —       no body
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
//	tools/call over a rate limit                429   -31429  + Retry-After; data {error: rate_limited, limit, retryAfterMs}
//	tool failure (gate, arguments, upstream)    200   result  isError: true (proxy decides)
//	proxy.OutputTooLargeError                   413   -31413  data {error: AGENT_OUTPUT_TOO_LARGE, tool, bytes, limit}
//	proxy.ChallengeError                        403   -31403  + WWW-Authenticate insufficient_scope
//	anything else                               500   -32603  "internal error", data {request_id}; cause logged
//
// stdio (ServeStdio) has no HTTP layer, so what HTTP answers before
// JSON-RPC becomes JSON-RPC errors there, with application codes outside
// the reserved range (the HTTP status they stand for, minus 31000, as
// -31413 does):
//
//	line over limits.request_bytes              -32600  id null; the next line is read
//	no token, or invalid/expired token          -31401  "unauthorized", data {error, error_description}
//	token verification unavailable             -31503  "unavailable", data {request_id}
//	no catalog, or server.enabled: false        -32603  "mcp server not initialised"
//
// HTTP guards before any JSON-RPC (both MCP routes; JSON body
// {"error": KIND, "message": TEXT}): 503 not initialised or disabled, 405
// method, 403 Origin or Host, 415 Content-Type, 406 Accept, 413 body size,
// 401 token (WWW-Authenticate, with scope="<view gate scopes>" when a view
// gate is declared; a refused token adds error="invalid_token" and an
// error_description naming the reason class, from authz.Description, which
// the JSON body repeats as "error_description"). See http.go.
//
// REST mirror (POST {admin_path}/call): unknown tool 404
// McpToolNotFoundError; OutputTooLargeError 413 AGENT_OUTPUT_TOO_LARGE;
// ChallengeError 403 insufficient_scope; bad body 400 invalid_request;
// anything else 500 internal_error with request_id; tool failures 200 with
// is_error. See rest.go.

// rpcError is a JSON-RPC error with the HTTP status it travels with.
type rpcError struct {
	status int
	code   int
	msg    string
	data   []byte // raw JSON or nil
}

var errNilResult = errors.New("proxy returned neither a result nor an error")

func badParams(msg string) *rpcError {
	return &rpcError{status: http.StatusBadRequest, code: codeInvalidParams, msg: msg}
}

// badParamsCall is -32602 for a well-formed request whose parameters a
// method cannot use: HTTP 200, the usual convention (mcp-spec-notes §2.4).
func badParamsCall(msg string) *rpcError {
	return &rpcError{status: http.StatusOK, code: codeInvalidParams, msg: msg}
}

func headerMismatch(msg string) *rpcError {
	return &rpcError{status: http.StatusBadRequest, code: codeHeaderMismatch, msg: msg}
}

func unsupportedVersion(requested string) *rpcError {
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{SupportedVersions, truncate(requested, 64)})
	return &rpcError{status: http.StatusBadRequest, code: codeUnsupportedVersion, msg: "unsupported protocol version", data: data}
}

// callError maps an error from proxy.Core.Call to its JSON-RPC answer.
func (d *dispatcher) callError(tool string, err error) (rpcError, *proxy.ChallengeError) {
	var (
		unknown  *proxy.UnknownToolError
		tooLarge *proxy.OutputTooLargeError
		chal     *proxy.ChallengeError
	)
	switch {
	case errors.As(err, &unknown):
		return *badParamsCall(unknown.Error()), nil
	case errors.Is(err, proxy.ErrUnknownTool):
		return *badParamsCall((&proxy.UnknownToolError{Name: tool}).Error()), nil
	case errors.As(err, &tooLarge):
		d.log.Debug("output too large", "tool", tooLarge.Tool, "bytes", tooLarge.Bytes, "limit", tooLarge.Limit)
		data := []byte(`{"error":"AGENT_OUTPUT_TOO_LARGE","tool":`)
		data = appendString(data, tooLarge.Tool)
		data = append(data, `,"bytes":`...)
		data = strconv.AppendInt(data, int64(tooLarge.Bytes), 10)
		data = append(data, `,"limit":`...)
		data = strconv.AppendInt(data, int64(tooLarge.Limit), 10)
		data = append(data, '}')
		return rpcError{status: http.StatusRequestEntityTooLarge, code: codeOutputTooLarge, msg: "output too large", data: data}, nil
	case errors.As(err, &chal):
		d.log.Debug("insufficient scope", "tool", tool, "gate", chal.Gate)
		data := []byte(`{"error":"insufficient_scope","scopes":`)
		data = appendStrings(data, chal.Scopes)
		data = append(data, '}')
		return rpcError{status: http.StatusForbidden, code: codeInsufficientScope, msg: "insufficient scope", data: data}, chal
	}
	id := d.req.RequestID
	if id == "" {
		id = newRequestID()
	}
	if d.ctx.Err() != nil {
		d.log.Debug("call abandoned", "tool", tool, "request_id", id, "error", err)
	} else {
		d.log.Error("call failed", "tool", tool, "request_id", id, "error", err)
	}
	data := appendString([]byte(`{"request_id":`), id)
	data = append(data, '}')
	return rpcError{status: http.StatusInternalServerError, code: codeInternal, msg: "internal error", data: data}, nil
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// newRequestID returns 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

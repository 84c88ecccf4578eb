package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/gateway/proxy"
)

// The REST mirror at {admin_path} serves the same core for callers that do
// not speak JSON-RPC: GET /tools lists, POST /call calls. It has the same
// guards and the same 401 as the MCP endpoint; only the framing differs.

// serveRESTTools answers GET {admin_path}/tools with a JSON array of the
// tools the caller may see, each as proxy encoded it for REST at load.
func (s *serving) serveRESTTools(w http.ResponseWriter, r *http.Request) {
	if !s.guard(w, r, http.MethodGet, false) {
		return
	}
	p, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	release, ok := s.h.limits.acquire(r.Context(), s.cat, s.log)
	defer release()
	if !ok {
		writeHTTPError(w, http.StatusServiceUnavailable, "unavailable", "request cancelled")
		return
	}
	tools := s.core.List(principalContext(r, p), p)
	size := 2
	for _, t := range tools {
		size += len(t.REST) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.REST...)
	}
	writeJSON(w, http.StatusOK, append(b, ']'))
}

// serveRESTCall answers POST {admin_path}/call, body {name, arguments},
// with {"is_error", "content", "metadata": {"latency_ms"}}, content being
// exactly the MCP text block.
//
// Errors (one table for this surface):
//
//	body not a JSON object {name, arguments},  400 invalid_request
//	  or duplicate members in arguments
//	proxy.UnknownToolError                     404 McpToolNotFoundError
//	proxy.OutputTooLargeError                  413 AGENT_OUTPUT_TOO_LARGE
//	proxy.ChallengeError                       403 insufficient_scope + WWW-Authenticate
//	a rate limit is empty                      429 rate_limited + Retry-After, retry_after_ms
//	anything else                              500 internal_error, request id; cause logged
//	tool failure                               200 is_error: true
func (s *serving) serveRESTCall(w http.ResponseWriter, r *http.Request) {
	body, p, ok := s.admitPost(w, r, false)
	if !ok {
		return
	}
	name, args, msg := decodeRESTCall(body)
	if msg != "" {
		writeHTTPError(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}
	s.acc.tool = name
	if rl := s.h.limits.checkRate(s.cat, p, name); rl != nil {
		s.log.Debug("rate limited", "tool", truncate(name, 128), "limit", rl.kind, "retry_after", rl.retry)
		w.Header().Set("Retry-After", strconv.FormatInt(rl.retryAfterSeconds(), 10))
		b := []byte(`{"error":"rate_limited","message":"rate limit reached; retry after the Retry-After delay","limit":`)
		b = appendString(b, rl.kind)
		b = append(b, `,"retry_after_ms":`...)
		b = strconv.AppendInt(b, retryAfterMillis(rl.retry), 10)
		writeJSON(w, http.StatusTooManyRequests, append(b, '}'))
		return
	}
	release, ok := s.h.limits.acquire(r.Context(), s.cat, s.log)
	defer release()
	if !ok {
		writeHTTPError(w, http.StatusServiceUnavailable, "unavailable", "request cancelled")
		return
	}
	start := time.Now()
	res, err := s.core.Call(proxy.WithRequestID(principalContext(r, p), s.rid), p, name, args)
	latency := time.Since(start).Milliseconds()
	if err == nil && res == nil {
		err = errNilResult
	}
	if err != nil {
		s.restCallError(w, r, name, err)
		return
	}
	b := []byte(`{"is_error":`)
	b = strconv.AppendBool(b, res.IsError)
	b = append(b, `,"content":`...)
	b = appendString(b, res.Text)
	b = append(b, `,"metadata":{"latency_ms":`...)
	b = strconv.AppendInt(b, latency, 10)
	writeJSON(w, http.StatusOK, append(b, "}}"...))
}

func (s *serving) restCallError(w http.ResponseWriter, r *http.Request, name string, err error) {
	var (
		unknown  *proxy.UnknownToolError
		tooLarge *proxy.OutputTooLargeError
		chal     *proxy.ChallengeError
	)
	switch {
	case errors.As(err, &unknown):
		writeHTTPError(w, http.StatusNotFound, "McpToolNotFoundError", unknown.Error())
	case errors.Is(err, proxy.ErrUnknownTool):
		writeHTTPError(w, http.StatusNotFound, "McpToolNotFoundError", (&proxy.UnknownToolError{Name: name}).Error())
	case errors.As(err, &tooLarge):
		b := []byte(`{"error":"AGENT_OUTPUT_TOO_LARGE","message":`)
		b = appendString(b, "output too large: the result of "+strconv.Quote(tooLarge.Tool)+" does not fit its bounds; narrow the query")
		b = append(b, `,"tool":`...)
		b = appendString(b, tooLarge.Tool)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, int64(tooLarge.Bytes), 10)
		b = append(b, `,"limit":`...)
		b = strconv.AppendInt(b, int64(tooLarge.Limit), 10)
		writeJSON(w, http.StatusRequestEntityTooLarge, append(b, '}'))
	case errors.As(err, &chal):
		w.Header().Set("WWW-Authenticate", s.challenge(r, `error="insufficient_scope", scope=`+quoteParam(strings.Join(chal.Scopes, " "))))
		b := []byte(`{"error":"insufficient_scope","message":"this call needs more scopes","scopes":`)
		b = appendStrings(b, chal.Scopes)
		writeJSON(w, http.StatusForbidden, append(b, '}'))
	default:
		if r.Context().Err() != nil {
			s.log.Debug("call abandoned", "tool", name, "error", err)
		} else {
			s.log.Error("call failed", "tool", name, "error", err)
		}
		writeHTTPError(w, http.StatusInternalServerError, "internal_error", "internal error; request "+s.rid)
	}
}

// decodeRESTCall reads {name, arguments} with the same strictness as the
// JSON-RPC envelope: no duplicate or case-variant members, name a string,
// arguments an object or absent. msg is the public reason when it fails.
func decodeRESTCall(body []byte) (name string, args []byte, msg string) {
	if !json.Valid(body) {
		return "", nil, "body is not valid JSON"
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return "", nil, "body must be a JSON object {name, arguments}"
	}
	var (
		seen    keySet
		rawName []byte
	)
	for it := newObjIter(body[i:]); ; {
		rawKey, val, ok := it.next()
		if !ok {
			break
		}
		key := unquote(rawKey)
		if seen.add(key) {
			return "", nil, "duplicate member " + quoteForMsg(key)
		}
		switch string(key) {
		case "name":
			rawName = val
		case "arguments":
			args = val
		default:
			return "", nil, "unknown member " + quoteForMsg(key) + ": want name and arguments"
		}
	}
	name, ok := stringValue(rawName)
	if !ok {
		return "", nil, "name must be a string naming a tool"
	}
	if args != nil && args[0] != '{' {
		return "", nil, "arguments must be an object"
	}
	if args != nil {
		if dup := duplicateMember(args); dup != nil {
			return "", nil, "duplicate member " + quoteForMsg(dup) + " in arguments"
		}
	}
	return name, args, ""
}

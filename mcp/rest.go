package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpgw/gateway/internal/strictjson"
	"github.com/mcpgw/gateway/proxy"
)

// The REST mirror at {admin_path} serves the same pipeline for callers
// that do not speak JSON-RPC: GET /tools lists, POST /call calls. It has
// the same guards and the same 401 as the MCP endpoint; only the framing
// differs, and every failure renders through httpErrors (errors.go).

// serveRESTTools answers GET {admin_path}/tools with a JSON array of the
// tools the caller may see, each as proxy encoded it for REST at load.
func (h *handler) serveRESTTools(w http.ResponseWriter, r *http.Request, x *exchange) {
	if !guard(w, r, x, http.MethodGet, false) || !h.authenticate(w, r, x) {
		return
	}
	s, f := h.pl.admit(x, false, "")
	defer s.release()
	if f != nil {
		writeFailure(w, f)
		return
	}
	var (
		tools []*proxy.Listed
		err   error
	)
	// Any search parameter makes it a search: a filter must never be
	// dropped silently into the whole listing, so a query string that
	// does not decode (URL.Query drops such pairs) or that names q, kind
	// or limit twice is refused.
	qs, qerr := url.ParseQuery(r.URL.RawQuery)
	if qerr == nil {
		for _, k := range []string{"q", "kind", "limit"} {
			if len(qs[k]) > 1 {
				qerr = fmt.Errorf("%s is given %d times", k, len(qs[k]))
			}
		}
	}
	if qerr != nil {
		writeFailure(w, fail(failBadParams, "the query string: "+qerr.Error()))
		return
	}
	if qs.Has("q") || qs.Has("tag") || qs.Has("kind") || qs.Has("limit") {
		tools, err = x.st.core.Search(x.ctx, x.principal, x.toolset, restSearch(qs))
	} else {
		tools, err = x.st.core.ListIn(x.ctx, x.principal, x.toolset)
	}
	if errors.Is(err, proxy.ErrBadSearch) {
		writeFailure(w, fail(failBadParams, err.Error()))
		return
	}
	if err != nil {
		writeFailure(w, x.classify("", err))
		return
	}
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

// restSearch reads GET {admin_path}/tools?q=WORDS&tag=T&kind=K&limit=N.
// A limit that is not a number is out of range, so the core refuses it.
func restSearch(qs url.Values) proxy.SearchQuery {
	q := proxy.SearchQuery{Query: qs.Get("q"), Tags: qs["tag"], Kind: qs.Get("kind")}
	if l := qs.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			n = -1
		}
		q.Limit = n
	}
	return q
}

// serveRESTCall answers POST {admin_path}/call, body {name, arguments},
// with {"is_error", "content", "metadata": {"latency_ms"}}, content being
// exactly the MCP text block. Tool failures are 200 with is_error: true;
// every other failure is its httpErrors row.
func (h *handler) serveRESTCall(w http.ResponseWriter, r *http.Request, x *exchange) {
	body, ok := h.admitPost(w, r, x, false)
	if !ok {
		return
	}
	name, args, f := decodeRESTCall(body)
	if f == nil {
		name = x.callTarget(name, &args)
		args, f = callArguments(args, "arguments")
	}
	if f != nil {
		writeFailure(w, f)
		return
	}
	s, f := h.pl.admit(x, true, name)
	defer s.release()
	if f != nil {
		failureHeaders(w, r, x, f)
		writeFailure(w, f)
		return
	}
	start := time.Now()
	res, f := x.call(name, args)
	if f != nil {
		failureHeaders(w, r, x, f)
		writeFailure(w, f)
		return
	}
	writeJSON(w, http.StatusOK, encode(nil, object{
		{"is_error", flag(res.IsError)},
		{"content", str(res.Text)},
		{"metadata", object{{"latency_ms", num(time.Since(start).Milliseconds())}}},
	}))
}

// decodeRESTCall reads {name, arguments} with the same strictness as the
// JSON-RPC envelope: no duplicate or case-variant members, name a string,
// arguments an object or absent. msg is the public reason when it fails.
func decodeRESTCall(body []byte) (name string, args []byte, f *failure) {
	if !json.Valid(body) {
		return "", nil, fail(failBadParams, "body is not valid JSON")
	}
	obj := bytes.TrimSpace(body)
	if obj[0] != '{' {
		return "", nil, fail(failBadParams, "body must be a JSON object {name, arguments}")
	}
	var vals [2][]byte
	if p, _ := strictjson.Scan(obj, []string{"name", "arguments"}, true, vals[:]); p != nil {
		msg := problemText(p, "")
		if p.Kind == strictjson.Unknown {
			msg += ": want name and arguments"
		}
		return "", nil, fail(failBadParams, msg)
	}
	rawName, args := vals[0], vals[1]
	name, ok := stringValue(rawName)
	if !ok {
		return "", nil, fail(failBadParams, "name must be a string naming a tool")
	}
	args, f = callArguments(args, "arguments")
	return name, args, f
}

package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/gateway/proxy"

	"github.com/mcpgw/gateway/internal/text"
)

// Live confirmation for legacy eras. A 2025-06-18 or
// 2025-11-25 client that declares form elicitation on its tools/call, in
// params._meta["io.modelcontextprotocol/clientCapabilities"] (the
// gateway is stateless: what initialize declared is not remembered), and
// whose Accept lists text/event-stream, is asked on the POST's own
// response stream (Streamable HTTP: "the server MAY send JSON-RPC
// requests and notifications before sending the JSON-RPC response"):
//
//	POST tools/call            → 200 text/event-stream
//	                             event: elicitation/create, id mcpgw-elicit-<128 random bits>
//	POST {"id": that id, "result": {...}} → 202 (same subject and workspace)
//	                             event: the tools/call response; stream ends
//
// The answer must reach the node holding the stream: the waiting call is
// kept in this process's memory (liveHub). A response POST for an
// elicitation id this node does not know is refused at once with 404
// saying so; it never waits. Across several nodes this needs sticky
// routing of the response POST, or the 2026-07-28 era, whose sealed
// request state any node can serve.

// elicitIDPrefix marks the JSON-RPC ids of the gateway's own requests.
// A response POSTed with another id is acknowledged and dropped, as
// before (202).
const elicitIDPrefix = "mcpgw-elicit-"

// afterAnswer is how long the stream may still be written once the wait
// is over: the call's upstream round trip and the last event.
const afterAnswer = 5 * time.Minute

// liveHub is the calls of one handler waiting for an elicitation answer,
// by request id.
type liveHub struct {
	mu      sync.Mutex
	waiting map[string]*liveWait
}

// liveWait is one waiting elicitation: whose it is, and where its answer
// goes (buffered: the deliverer never blocks).
type liveWait struct {
	subject, actor, workspace string
	answer                    chan liveAnswer
}

// liveAnswer is a response POST's result or error member, raw.
type liveAnswer struct{ result, errv []byte }

func newLiveHub() *liveHub { return &liveHub{waiting: map[string]*liveWait{}} }

// liveStream is one MCP POST that may turn into an SSE stream: it turns
// when the core asks (ask) and is finished with the call's answer. Only
// the request's goroutine writes to it.
type liveStream struct {
	hub    *liveHub
	w      http.ResponseWriter
	x      *exchange
	opened bool
}

// stream returns what lets x's call ask over w, or nil when the client's
// Accept does not list text/event-stream.
func (h *liveHub) stream(w http.ResponseWriter, r *http.Request, x *exchange) *liveStream {
	if h == nil || !acceptsEventStream(r.Header.Values("Accept")) {
		return nil
	}
	return &liveStream{hub: h, w: w, x: x}
}

// started reports whether the answer has become an SSE stream.
func (s *liveStream) started() bool { return s != nil && s.opened }

// ask sends an elicitation/create request (form mode) on the stream,
// opening it first, and waits for its answer, the client going away, or
// wait. It is the proxy.AskFunc of a live confirmation.
func (s *liveStream) ask(ctx context.Context, message string, schema json.RawMessage, wait time.Duration) (*proxy.ElicitAnswer, error) {
	x := s.x
	if x.principal == nil {
		return nil, errors.New("the caller is not authenticated")
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := elicitIDPrefix + hex.EncodeToString(b[:])
	params := map[string]any{"message": message, "requestedSchema": schema}
	if x.version >= "2025-11-25" {
		params["mode"] = "form"
	}
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params})
	if err != nil {
		return nil, err
	}
	wt := &liveWait{subject: x.principal.Subject, actor: x.principal.Actor, workspace: x.principal.Workspace, answer: make(chan liveAnswer, 1)}
	s.hub.mu.Lock()
	s.hub.waiting[id] = wt
	s.hub.mu.Unlock()
	defer func() {
		s.hub.mu.Lock()
		delete(s.hub.waiting, id)
		s.hub.mu.Unlock()
	}()
	if !s.opened {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Del("Content-Length")
		s.w.WriteHeader(http.StatusOK)
		s.opened = true
	}
	// The server's WriteTimeout counts from the request; the wait, and
	// the call after it, must fit. The deadline is moved, never removed.
	_ = http.NewResponseController(s.w).SetWriteDeadline(time.Now().Add(wait + afterAnswer))
	if err := s.event(req); err != nil {
		return nil, errors.New("the client went away before it could be asked")
	}
	x.log.Debug("asked the client over the response stream", "elicitation_id", id, "wait", wait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-wt.answer:
		return decodeElicitAnswer(a)
	case <-ctx.Done():
		return nil, errors.New("the client went away before answering")
	case <-timer.C:
		return nil, fmt.Errorf("the user did not answer within %s", wait)
	}
}

// decodeElicitAnswer reads a response POST's result as an ElicitResult.
func decodeElicitAnswer(a liveAnswer) (*proxy.ElicitAnswer, error) {
	if a.errv != nil {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(a.errv, &e)
		return nil, fmt.Errorf("the client answered the elicitation with error %d %q", e.Code, text.Clip(e.Message, 200))
	}
	var ans proxy.ElicitAnswer
	if a.result[0] != '{' || json.Unmarshal(a.result, &ans) != nil {
		return nil, errors.New("the client's elicitation result is not an object with a string action")
	}
	return &ans, nil
}

// event writes one SSE message event carrying the JSON b and flushes it.
// b may hold newlines between tokens (a structuredContent copied as the
// upstream formatted it); each line becomes a data: line, which the
// reader joins with newlines again.
func (s *liveStream) event(b []byte) error {
	var out bytes.Buffer
	out.Grow(len(b) + 32)
	out.WriteString("event: message\n")
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		out.WriteString("data: ")
		out.Write(bytes.TrimSuffix(line, []byte("\r")))
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
	if _, err := s.w.Write(out.Bytes()); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

// finish writes the call's answer (a result, or a JSON-RPC error, which
// travels with status 200 now that the stream is open) as the last event.
func (s *liveStream) finish(v value) {
	if v == nil {
		return
	}
	if err := s.event(encode(grow(nil, v), v)); err != nil {
		s.x.log.Debug("the client went away before the answer", "error", err)
	}
}

// deliver takes a POSTed JSON-RPC response. One answering an elicitation
// this node is waiting for, from the caller who was asked (same subject
// and workspace), is handed to the call: 202. From anyone else: 403, and
// the call keeps waiting. An id with the gateway's prefix that no call
// here waits for (answered already, gone, or waiting on another node):
// 404, at once. Any other id: 202 and dropped, as before.
func (h *liveHub) deliver(x *exchange) (int, value, *failure) {
	m := x.msg
	id, ok := stringValue(m.id)
	if !ok || !strings.HasPrefix(id, elicitIDPrefix) {
		return 202, nil, nil
	}
	h.mu.Lock()
	wt := h.waiting[id]
	mine := wt != nil && x.principal != nil && wt.subject == x.principal.Subject && wt.actor == x.principal.Actor && wt.workspace == x.principal.Workspace
	if mine {
		delete(h.waiting, id)
	}
	h.mu.Unlock()
	switch {
	case wt == nil:
		x.log.Debug("elicitation response for no waiting call", "elicitation_id", text.Clip(id, 64))
		return liveRefusal(x, http.StatusNotFound, "no call on this gateway node is waiting for elicitation "+quoteForMsg([]byte(text.Clip(id, 64)))+
			": it was answered already, ended (timed out or the client went away), or is waiting on another node. "+
			"Send the response to the node that holds the call's stream (sticky routing), or use MCP 2026-07-28")
	case !mine:
		x.log.Info("elicitation response from another principal refused", "elicitation_id", id)
		return liveRefusal(x, http.StatusForbidden, "this elicitation was sent to another principal; only the caller who was asked can answer it")
	}
	wt.answer <- liveAnswer{result: m.result, errv: m.errv}
	return 202, nil, nil
}

// liveRefusal answers a response POST that cannot be taken: an HTTP
// error with a JSON-RPC error without id (Streamable HTTP: the body MAY
// be a JSON-RPC error response that has no id).
func liveRefusal(x *exchange, status int, text string) (int, value, *failure) {
	x.rpcCode = codeInvalidRequest
	return status, &response{id: nil, err: &errorObj{code: codeInvalidRequest, msg: text}}, nil
}

// acceptsEventStream reports whether Accept lists text/event-stream (or
// text/*) with q > 0. */* alone does not count: a client that lists only
// that has not said it reads streams.
func acceptsEventStream(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := parseMediaType(strings.TrimSpace(part))
			if err != nil || (mt != "text/event-stream" && mt != "text/*") {
				continue
			}
			if qs, ok := params["q"]; ok {
				if q, err := strconv.ParseFloat(qs, 64); err != nil || q <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

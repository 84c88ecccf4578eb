// Package demo is the sample upstream the gateway is demonstrated and tested
// against: a small multi-workspace job system (the Monitor's reads, the
// Operator's audited writes and a knowledge base) served over plain
// net/http from deterministic in-memory data.
//
// Every request must carry the service token as "Authorization: Bearer
// <token>" and the tenant in X-Workspace-Id; every write must also carry the
// acting identity in X-Actor, which lands in the workspace's append-only
// audit trail. Errors are JSON objects {"error", "message"}; conflicts are
// RFC 9457 problem documents carrying the same two keys.
//
// Two workspaces are seeded from a fixed epoch, so the same build always
// serves the same ids, timestamps and bytes: "acme" (60 jobs, a knowledge
// base) and "globex" (15 jobs, no knowledge base). The package imports
// nothing from this module.
package demo

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configures a [Server].
type Options struct {
	// ServiceToken is the bearer token every request must carry. Empty
	// refuses every request (New) or is an error (Start).
	ServiceToken string
	// Record, when set, is called with every request the server receives,
	// after its body has been read and before any check, so tests can
	// assert exactly what the upstream saw. The request's Body reads body
	// again. Record must not retain r past the call.
	Record func(r *http.Request, body []byte)
	// Now is the clock for writes (audit times, new transitions, triggered
	// jobs). Nil: time.Now. Seed data never depends on it.
	Now func() time.Time
}

// MaxRequestBytes bounds request bodies; larger ones get 413.
const MaxRequestBytes = 1 << 20

// Server is the demo service. It implements http.Handler and holds every
// workspace's state behind one mutex; it is safe for concurrent use.
type Server struct {
	token  string
	record func(*http.Request, []byte)
	now    func() time.Time
	mux    *http.ServeMux

	// workspaces is fixed by New; the values' contents are guarded by mu.
	workspaces map[string]*workspace
	mu         sync.Mutex
}

// New returns a server seeded with the demo workspaces.
func New(opts Options) *Server {
	s := &Server{
		token:      opts.ServiceToken,
		record:     opts.Record,
		now:        opts.Now,
		mux:        http.NewServeMux(),
		workspaces: seed(),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.routes()
	return s
}

// Start serves a new [Server] on 127.0.0.1 at a free port until stop is
// called or ctx is done. url has no trailing slash. stop waits for the
// server to finish and may be called more than once.
func Start(ctx context.Context, opts Options) (url string, stop func(), err error) {
	if opts.ServiceToken == "" {
		return "", nil, errors.New("demo: a service token is required")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: New(opts), ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln) // http.ErrServerClosed after Shutdown
	}()
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer done()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	stop = func() {
		cancel()
		wg.Wait()
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// AuditRecord is one entry of a workspace's append-only audit trail.
type AuditRecord struct {
	Time      time.Time `json:"time"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Workspace string    `json:"workspace"`
	Detail    string    `json:"detail,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

// AuditRecords returns a copy of workspace's audit trail, oldest first
// (seeded history included), or nil for an unknown workspace.
func (s *Server) AuditRecords(workspace string) []AuditRecord {
	ws := s.workspaces[workspace]
	if ws == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AuditRecord(nil), ws.audit...)
}

type ctxKey struct{}

// ServeHTTP reads the body, records the request, then checks the service
// token and the workspace before routing.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeReply(w, fail(http.StatusRequestEntityTooLarge, "request too large", "the body is over 1 MiB"))
			return
		}
		writeReply(w, fail(http.StatusBadRequest, "unreadable body", err.Error()))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if s.record != nil {
		s.record(r, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}

	if r.URL.Path == OpenAPIPath {
		serveOpenAPI(w, r)
		return
	}

	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="demo"`)
		writeReply(w, fail(http.StatusUnauthorized, "unauthorized", "a bearer service token is required"))
		return
	}
	if s.token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="demo", error="invalid_token"`)
		writeReply(w, fail(http.StatusUnauthorized, "unauthorized", "the service token is not valid"))
		return
	}

	id := r.Header.Get("X-Workspace-Id")
	if id == "" {
		writeReply(w, fail(http.StatusBadRequest, "workspace required", "send the tenant in the X-Workspace-Id header"))
		return
	}
	ws := s.workspaces[id]
	if ws == nil {
		writeReply(w, fail(http.StatusNotFound, "unknown workspace", "no workspace "+quote(id)))
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, ws))

	if _, pattern := s.mux.Handler(r); pattern == "" {
		// The mux would answer 404 or 405 in plain text; keep its status
		// and Allow header but speak JSON like every other error.
		rec := &discard{header: http.Header{}}
		s.mux.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		if rec.code == http.StatusMethodNotAllowed {
			writeReply(w, fail(rec.code, "method not allowed", r.Method+" is not allowed on "+r.URL.Path))
			return
		}
		writeReply(w, fail(http.StatusNotFound, "not found", "no route for "+r.Method+" "+r.URL.Path))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// discard keeps the status and headers of a response and drops its body.
type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

// call is one routed request as a handler sees it. Handlers run with s.mu
// held and must not do I/O.
type call struct {
	r   *http.Request
	ws  *workspace
	now time.Time
	// Writes only.
	actor  string
	body   map[string]json.RawMessage
	reason string
}

// reply is a handler's answer: a JSON value, or raw bytes when raw is set.
type reply struct {
	status int
	ctype  string
	value  any
	raw    []byte
	header map[string]string
}

func ok(v any) reply { return reply{status: http.StatusOK, value: v} }

// fail is the house error shape.
func fail(status int, code, message string) reply {
	return reply{status: status, value: apiError{Error: code, Message: message}}
}

// problem is an RFC 9457 problem document that also carries the house
// error keys, so clients reading either shape understand it.
func problem(status int, code, title, detail, instance string) reply {
	return reply{
		status: status,
		ctype:  "application/problem+json",
		value: problemDoc{
			Type:  "https://demo.backwave.example/problems/" + strings.ReplaceAll(code, " ", "-"),
			Title: title, Status: status, Detail: detail, Instance: instance,
			Error: code, Message: detail,
		},
	}
}

type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

type problemDoc struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`
	Error    string `json:"error"`
	Message  string `json:"message"`
}

// read adapts a read handler.
func (s *Server) read(h func(*call) reply) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, &call{r: r, ws: r.Context().Value(ctxKey{}).(*workspace)}, h)
	}
}

// write adapts a write handler: it requires X-Actor and decodes the
// optional JSON object body, whose "reason" every write accepts.
func (s *Server) write(h func(*call) reply) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{r: r, ws: r.Context().Value(ctxKey{}).(*workspace)}
		c.actor = strings.TrimSpace(r.Header.Get("X-Actor"))
		if c.actor == "" {
			writeReply(w, fail(http.StatusBadRequest, "actor required", "writes must name the acting identity in X-Actor"))
			return
		}
		body, _ := io.ReadAll(r.Body) // already buffered by ServeHTTP
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &c.body); err != nil {
				writeReply(w, fail(http.StatusBadRequest, "invalid body", "the body must be a JSON object: "+err.Error()))
				return
			}
		}
		if raw, ok := c.body["reason"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &c.reason); err != nil {
				writeReply(w, fail(http.StatusBadRequest, "invalid body", "reason must be a string"))
				return
			}
		}
		s.serve(w, c, h)
	}
}

// serve runs h and encodes its answer under the lock, then writes it
// after releasing the lock.
func (s *Server) serve(w http.ResponseWriter, c *call, h func(*call) reply) {
	c.now = s.now().UTC()
	s.mu.Lock()
	rep := h(c)
	if rep.raw == nil {
		b, err := json.Marshal(rep.value)
		if err != nil {
			rep = fail(http.StatusInternalServerError, "internal error", "encoding the response failed")
			b, _ = json.Marshal(rep.value)
		}
		rep.raw = b
	}
	s.mu.Unlock()
	writeRaw(w, rep)
}

func writeReply(w http.ResponseWriter, rep reply) {
	b, _ := json.Marshal(rep.value)
	rep.raw = b
	writeRaw(w, rep)
}

func writeRaw(w http.ResponseWriter, rep reply) {
	ctype := rep.ctype
	if ctype == "" {
		ctype = "application/json"
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.raw)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

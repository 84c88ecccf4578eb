package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// Options configures the handler from [NewHandler].
type Options struct {
	// State returns what serves the current request: the core (catalog and
	// calls) and the token verifier. It is called once per request, so a
	// reload can swap both at once. Nil, or a nil core or verifier: every
	// request is answered 503 "mcp server not initialised".
	State func() (*proxy.Core, authz.Verifier)
	// Logger receives diagnostics and the access log (one Info line per
	// request, message "request"). Nil: discard.
	Logger *slog.Logger
	// Metrics receives request, auth, in-flight and rate-limit
	// observations. Nil: none.
	Metrics Metrics
	// InFlightWait bounds how long a request waits for an in-flight slot
	// (limits.max_in_flight) before it is served anyway. Zero:
	// DefaultInFlightWait.
	InFlightWait time.Duration
}

// NewHandler returns the gateway's HTTP surface. Paths come from the
// current catalog's server section on every request, so they follow a
// reload:
//
//   - POST {mcp_path}: Streamable HTTP for both protocol eras, stateless,
//     JSON responses only; no Mcp-Session-Id is ever issued, and one
//     received is ignored. GET and DELETE get 405.
//   - GET {admin_path}/tools and POST {admin_path}/call: the REST mirror,
//     when admin_path is not "".
//   - GET /.well-known/oauth-protected-resource and
//     /.well-known/oauth-protected-resource{mcp_path}: RFC 9728 metadata,
//     when auth.resource_metadata is set.
//
// Other paths get 404. Every request, whatever its answer, gets an
// X-Request-Id and one access log line. The in-flight cap and the rate
// limits (limits.go) are shared by the MCP and REST routes. The handler is
// safe for concurrent use.
func NewHandler(opts *Options) http.Handler {
	h := &handler{}
	var wait time.Duration
	if opts != nil {
		h.state = opts.State
		h.log = opts.Logger
		h.metrics = opts.Metrics
		wait = opts.InFlightWait
	}
	h.log = logger(h.log)
	h.metrics = metricsOrNop(h.metrics)
	h.limits = newLimits(wait, h.metrics)
	return h
}

type handler struct {
	state   func() (*proxy.Core, authz.Verifier)
	log     *slog.Logger
	metrics Metrics
	limits  *limits
	// hosts is the Origin and Host policy of the catalog it was built
	// from, rebuilt when a request sees another catalog.
	hosts atomic.Pointer[hostPolicy]
}

// hostPolicy returns the Origin and Host policy for cat, built once per
// catalog.
func (h *handler) hostPolicy(cat *catalog.Catalog) *hostPolicy {
	if p := h.hosts.Load(); p != nil && p.cat == cat {
		return p
	}
	p := newHostPolicy(&cat.Server)
	p.cat = cat
	h.hosts.Store(p)
	return p
}

const wellKnownPRM = "/.well-known/oauth-protected-resource"

func (h *handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	rid := newRequestID()
	rw.Header().Set("X-Request-Id", rid)
	w := &statusWriter{ResponseWriter: rw}
	acc := &access{rid: rid, surface: SurfaceNone, method: r.Method, start: time.Now()}
	defer func() {
		acc.status = w.status
		acc.finish(r.Context(), h.log, h.metrics)
	}()

	var (
		core *proxy.Core
		ver  authz.Verifier
	)
	if h.state != nil {
		core, ver = h.state()
	}
	if core == nil || core.Catalog() == nil || ver == nil {
		writeHTTPError(w, http.StatusServiceUnavailable, "mcp server not initialised", "")
		return
	}
	cat := core.Catalog()
	srv := &cat.Server
	mcpPath := srv.MCPPath
	if mcpPath == "" {
		mcpPath = catalog.DefaultMCPPath
	}
	s := &serving{core: core, cat: cat, ver: ver, mcpPath: mcpPath, rid: rid, log: withRequestID(h.log, rid), h: h, acc: acc, hosts: h.hostPolicy(cat)}

	p := r.URL.Path
	switch {
	case p == mcpPath:
		acc.surface = SurfaceMCP
		if !srv.Enabled {
			writeHTTPError(w, http.StatusServiceUnavailable, "mcp server not initialised", "")
			return
		}
		s.serveMCP(w, r)
	case srv.AdminPath != "" && (p == srv.AdminPath+"/tools" || p == srv.AdminPath+"/call"):
		acc.surface = SurfaceREST
		acc.method = r.Method + " " + strings.TrimPrefix(p, srv.AdminPath)
		if !srv.Enabled {
			writeHTTPError(w, http.StatusServiceUnavailable, "mcp server not initialised", "")
			return
		}
		if strings.HasSuffix(p, "/tools") {
			s.serveRESTTools(w, r)
		} else {
			s.serveRESTCall(w, r)
		}
	case srv.AdminPath != "" && (p == srv.AdminPath+"/approvals" || strings.HasPrefix(p, srv.AdminPath+"/approvals/")):
		acc.surface = SurfaceREST
		acc.method = r.Method + " /approvals"
		s.serveApprovals(w, r, strings.TrimPrefix(p, srv.AdminPath+"/approvals"))
	case cat.Auth.ResourceMetadata != nil && (p == wellKnownPRM || p == wellKnownPRM+mcpPath):
		acc.surface = SurfaceMetadata
		acc.method = r.Method + " " + wellKnownPRM
		s.serveMetadata(w, r)
	default:
		writeHTTPError(w, http.StatusNotFound, "not_found", "no such endpoint")
	}
}

// serving is one request's view of the current state.
type serving struct {
	core    *proxy.Core
	cat     *catalog.Catalog
	ver     authz.Verifier
	mcpPath string
	rid     string
	log     *slog.Logger
	h       *handler
	acc     *access
	hosts   *hostPolicy
}

// admitPost runs what every POST route checks before its own work, in
// order: the shared guards, Accept (when checkAccept), the declared body
// length, the bearer token, and only then the body, read as it arrives.
// No byte of the body is read, and no buffer is sized, before the caller
// is authenticated (issue 9: 300 unauthenticated connections declaring
// 1 MiB each grew the heap by ~300 MB when the body came first). ok is
// false when an answer has already been written.
func (s *serving) admitPost(w http.ResponseWriter, r *http.Request, checkAccept bool) (body []byte, p *authz.Principal, ok bool) {
	if !s.guard(w, r, http.MethodPost, true) {
		return nil, nil, false
	}
	if checkAccept && !acceptsJSON(r.Header.Values("Accept")) {
		writeHTTPError(w, http.StatusNotAcceptable, "not_acceptable", "this endpoint answers application/json")
		return nil, nil, false
	}
	limit := s.requestLimit()
	if r.ContentLength > limit {
		s.tooLarge(w, limit)
		return nil, nil, false
	}
	if p, ok = s.authenticate(w, r); !ok {
		return nil, nil, false
	}
	if body, ok = s.readBody(w, r, limit); !ok {
		return nil, nil, false
	}
	return body, p, true
}

// serveMCP is the Streamable HTTP endpoint.
func (s *serving) serveMCP(w http.ResponseWriter, r *http.Request) {
	body, p, ok := s.admitPost(w, r, true)
	if !ok {
		return
	}
	req := &Request{
		Body:      body,
		Principal: p,
		Headers: &Headers{
			ProtocolVersion: r.Header.Get("Mcp-Protocol-Version"),
			Method:          r.Header.Get("Mcp-Method"),
			Name:            r.Header.Get("Mcp-Name"),
		},
		RequestID: s.rid,
		Logger:    s.log,
	}
	msg, derr := decode(body)
	var reply Reply
	if derr != nil {
		s.acc.method = MethodInvalid
		reply = decodeErrorReply(s.log, derr)
	} else {
		s.acc.method = msg.method
		reply = s.h.limits.serve(r.Context(), s.core, req, msg, s.acc, s.log)
	}
	s.acc.rpcCode = reply.code
	if reply.Challenge != nil {
		w.Header().Set("WWW-Authenticate", s.challenge(r, `error="insufficient_scope", scope=`+quoteParam(strings.Join(reply.Challenge.Scopes, " "))))
	}
	if reply.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(reply.retryAfter, 10))
	}
	if reply.Body == nil {
		w.WriteHeader(reply.Status)
		return
	}
	writeJSON(w, reply.Status, reply.Body)
	reply.release()
}

// guard runs the checks shared by both MCP routes, in order: method (405),
// Origin (403), Host (403) and, for a request with a body, Content-Type
// (415). None of them reads the body. It writes the answer and returns
// false when one fails.
func (s *serving) guard(w http.ResponseWriter, r *http.Request, method string, hasBody bool) bool {
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeHTTPError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use "+method)
		return false
	}
	if !s.hosts.originAllowed(r) {
		s.log.Debug("refused origin", "origin", truncate(r.Header.Get("Origin"), 128))
		writeHTTPError(w, http.StatusForbidden, "forbidden", "origin not allowed")
		return false
	}
	if !s.hosts.hostAllowed(r) {
		s.log.Debug("refused host", "host", truncate(r.Host, 128))
		writeHTTPError(w, http.StatusForbidden, "forbidden", "host not allowed")
		return false
	}
	if hasBody {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			writeHTTPError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
			return false
		}
	}
	return true
}

// requestLimit is limits.request_bytes.
func (s *serving) requestLimit() int64 {
	if limit := int64(s.cat.Limits.RequestBytes); limit > 0 {
		return limit
	}
	return int64(catalog.DefaultRequestBytes)
}

func (s *serving) tooLarge(w http.ResponseWriter, limit int64) {
	writeHTTPError(w, http.StatusRequestEntityTooLarge, "request_too_large", "request body over "+strconv.FormatInt(limit, 10)+" bytes")
}

// initialBodyBuffer is the most a body buffer starts with, whatever the
// declared Content-Length: a client that declares 1 MiB and sends ten
// bytes costs ten bytes, plus this.
const initialBodyBuffer = 16 << 10

// readBody reads the request body up to limit (413 above). The buffer
// starts small and grows as bytes arrive; Content-Length only shrinks the
// first allocation.
func (s *serving) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	capHint := int64(512)
	if r.ContentLength >= 0 {
		capHint = min(r.ContentLength, initialBodyBuffer)
	}
	buf := make([]byte, 0, capHint+1)
	body := http.MaxBytesReader(w, r.Body, limit)
	for {
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, true
		}
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				s.tooLarge(w, limit)
			} else {
				s.log.Debug("reading body failed", "error", err)
				writeHTTPError(w, http.StatusBadRequest, "bad_request", "could not read the request body")
			}
			return nil, false
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// authenticate verifies the bearer token. A token is read only from the
// Authorization header, never from the query string (AUTH §Token
// Handling). Failures get 401 with WWW-Authenticate and a public message;
// the verifier's detail goes to the log only.
//
// More than one Authorization header, or more than one credential in one
// (a comma, which no bearer token68 holds), is 400: a proxy in front may
// read another one than the gateway does, so neither is guessed at.
func (s *serving) authenticate(w http.ResponseWriter, r *http.Request) (*authz.Principal, bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) > 1 || (len(vals) == 1 && strings.Contains(vals[0], ",")) {
		s.h.metrics.AuthFailure(authz.ReasonMalformed)
		s.log.Debug("more than one credential", "authorization_headers", len(vals))
		writeHTTPError(w, http.StatusBadRequest, "bad_request", "send exactly one Authorization header with one Bearer credential")
		return nil, false
	}
	token, hasToken := bearerToken(r.Header.Get("Authorization"))
	var (
		p   *authz.Principal
		err = authz.ErrNoToken
	)
	if hasToken {
		p, err = s.ver.Verify(r.Context(), token)
		if err == nil && p == nil {
			s.log.Error("verifier returned no principal and no error")
			err = authz.ErrInvalidToken
		}
	}
	switch {
	case err == nil:
		s.acc.principal = p
		return p, true
	case errors.Is(err, authz.ErrNoToken):
		s.h.metrics.AuthFailure(authz.Reason(err))
		w.Header().Set("WWW-Authenticate", s.challenge(r, s.viewScope()))
		writeHTTPError(w, http.StatusUnauthorized, "unauthorized", "a bearer token is required")
	case errors.Is(err, authz.ErrInvalidToken):
		s.h.metrics.AuthFailure(authz.Reason(err))
		s.log.Debug("token refused", "error", err, "reason", authz.Reason(err))
		// The reason class, never the token or what was expected of it
		// (RFC 6750 §3; issue 10): authz.Description keeps the text inside
		// error_description's characters.
		desc := authz.Description(err)
		params := `error="invalid_token", error_description=` + quoteParam(desc)
		if sc := s.viewScope(); sc != "" {
			params += ", " + sc
		}
		w.Header().Set("WWW-Authenticate", s.challenge(r, params))
		b := []byte(`{"error":"unauthorized","message":"the bearer token is invalid or expired","error_description":`)
		b = appendString(b, desc)
		writeJSON(w, http.StatusUnauthorized, append(b, '}'))
	case r.Context().Err() != nil:
		s.log.Debug("token verification abandoned", "error", err)
		writeHTTPError(w, http.StatusServiceUnavailable, "unavailable", "request cancelled")
	default:
		// Not the caller's fault (a key set that cannot be fetched, say):
		// no 401, which would send the client to re-authorize for nothing.
		s.log.Error("token verification failed", "error", err)
		writeHTTPError(w, http.StatusServiceUnavailable, "unavailable", "token verification is unavailable; request "+s.rid)
	}
	return nil, false
}

// viewScope is the scope auth-param of a 401 challenge: the view gate's
// scopes, which every use of the surface needs (AUTH §Scope Selection
// Strategy, a SHOULD), or "" when no view gate (or an empty one) is
// declared.
func (s *serving) viewScope() string {
	g := s.cat.Gates[catalog.ViewGate]
	if g == nil || len(g.Scopes) == 0 {
		return ""
	}
	return "scope=" + quoteParam(strings.Join(g.Scopes, " "))
}

// bearerToken extracts the token from an Authorization header value. The
// scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// challenge builds a WWW-Authenticate value: Bearer, then params, then
// resource_metadata when the catalog configures it.
func (s *serving) challenge(r *http.Request, params string) string {
	v := "Bearer"
	if params != "" {
		v += " " + params
	}
	if u := s.metadataURL(r); u != "" {
		if params != "" {
			v += ","
		}
		v += " resource_metadata=" + quoteParam(u)
	}
	return v
}

// metadataURL is <resource origin>/.well-known/oauth-protected-resource
// <mcp_path>, or "" without auth.resource_metadata. The origin is the
// configured resource's; the request's own origin stands in when the
// resource is not an absolute URL.
func (s *serving) metadataURL(r *http.Request) string {
	rm := s.cat.Auth.ResourceMetadata
	if rm == nil {
		return ""
	}
	origin := ""
	if u, err := url.Parse(rm.Resource); err == nil && u.Scheme != "" && u.Host != "" {
		origin = strings.ToLower(u.Scheme) + "://" + u.Host
	} else {
		origin = requestScheme(r) + "://" + r.Host
	}
	return origin + wellKnownPRM + s.mcpPath
}

// quoteParam quotes an auth-param value (RFC 9110 §5.6.4).
func quoteParam(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// acceptsJSON is the Accept policy, deliberately lenient: the spec says
// clients MUST list application/json and text/event-stream but not how a
// server reacts when they don't (mcp-spec-notes §2.1). We answer JSON
// whenever JSON is acceptable: no Accept header, or a media range that
// matches application/json (application/json, application/*, */*) whose
// most specific match has q > 0. Only an Accept that excludes JSON gets
// 406.
func acceptsJSON(values []string) bool {
	seen, best, bestQ := false, 0, 0.0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			seen = true
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			spec := 0
			switch mt {
			case "application/json":
				spec = 3
			case "application/*":
				spec = 2
			case "*/*":
				spec = 1
			default:
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(qs, 64); err == nil {
					q = f
				}
			}
			if spec > best || (spec == best && q > bestQ) {
				best, bestQ = spec, q
			}
		}
	}
	if !seen {
		return true
	}
	return best > 0 && bestQ > 0
}

// writeJSON writes a JSON answer that must not be cached.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeHTTPError writes {"error": kind, "message": msg} (message omitted
// when empty).
func writeHTTPError(w http.ResponseWriter, status int, kind, msg string) {
	b := append([]byte(`{"error":`), appendString(nil, kind)...)
	if msg != "" {
		b = append(b, `,"message":`...)
		b = appendString(b, msg)
	}
	writeJSON(w, status, append(b, '}'))
}

// serveMetadata serves RFC 9728 protected resource metadata. It is public:
// no token, no Origin check (a client must be able to read it before it
// has a token).
func (s *serving) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeHTTPError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return
	}
	rm := s.cat.Auth.ResourceMetadata
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name,omitempty"`
	}{
		Resource:               rm.Resource,
		AuthorizationServers:   rm.AuthorizationServers,
		ScopesSupported:        rm.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           s.cat.Server.Title,
	}
	if doc.AuthorizationServers == nil {
		doc.AuthorizationServers = []string{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		s.log.Error("encoding resource metadata", "error", err)
		writeHTTPError(w, http.StatusInternalServerError, "internal_error", "internal error; request "+s.rid)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// principalContext is the context calls run in: the request's, so a client
// that goes away cancels upstream work, carrying the principal.
func principalContext(r *http.Request, p *authz.Principal) context.Context {
	return authz.WithPrincipal(r.Context(), p)
}

// withRequestID returns a logger that adds request_id to each record it
// writes. Unlike Logger.With it formats nothing up front: most requests
// log nothing through it (the access line is written separately).
func withRequestID(l *slog.Logger, rid string) *slog.Logger {
	return slog.New(ridHandler{l.Handler(), rid})
}

type ridHandler struct {
	slog.Handler
	rid string
}

func (h ridHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.String("request_id", h.rid))
	return h.Handler.Handle(ctx, r)
}

func (h ridHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return ridHandler{h.Handler.WithAttrs(as), h.rid}
}

func (h ridHandler) WithGroup(name string) slog.Handler {
	// Inside a group the id would be nested; keep it at the top level by
	// adding it before the group opens.
	return h.Handler.WithAttrs([]slog.Attr{slog.String("request_id", h.rid)}).WithGroup(name)
}

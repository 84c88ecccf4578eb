package mcp

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/proxy"
	"github.com/mcpgw/gateway/rendering"

	"github.com/mcpgw/gateway/internal/text"
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
	// ApprovalPage serves the approval page when the catalog configures
	// approval_page. Nil: no page; browsers get the approver REST API.
	ApprovalPage ApprovalPage
	// Limiter counts limits.rules, and, when it is shared (Redis), every
	// rate limit, so that replicas enforce one limit. Nil: a local one of
	// this handler's own, made when a catalog has rules.
	Limiter *fleet.Limiter
}

// NewHandler returns the gateway's HTTP surface. Paths come from the
// current core's resolved configuration on every request, so they follow
// a reload:
//
//   - POST {mcp_path}: Streamable HTTP for both protocol eras, stateless,
//     JSON responses, except a legacy-era live confirmation, answered as
//     an SSE stream (elicit.go); no Mcp-Session-Id is ever issued, and one
//     received is ignored. GET and DELETE get 405.
//   - GET {admin_path}/tools and POST {admin_path}/call: the REST mirror,
//     when admin_path is not "".
//   - POST {mcp_path}/{toolset}: the same endpoint for one toolset of the
//     catalog; GET {admin_path}/toolsets/{toolset}/tools and POST
//     {admin_path}/toolsets/{toolset}/call: its REST mirror. An unknown
//     toolset is 404.
//   - GET /.well-known/oauth-protected-resource and
//     /.well-known/oauth-protected-resource{mcp_path}: RFC 9728 metadata,
//     when auth.resource_metadata is set.
//
// Other paths get 404. Every request, whatever its answer, gets an
// X-Request-Id and one access log line. The in-flight cap and the rate
// limits (limits.go) are shared by the MCP and REST routes. The handler is
// safe for concurrent use.
func NewHandler(opts *Options) http.Handler {
	if opts == nil {
		opts = &Options{}
	}
	pl := newPipeline(opts.State, opts.Logger, opts.Metrics, opts.InFlightWait, opts.Limiter)
	pl.live = newLiveHub()
	return &handler{pl: pl, page: opts.ApprovalPage}
}

type handler struct {
	pl   *pipeline
	page ApprovalPage // nil: no approval page
}

const wellKnownPRM = "/.well-known/oauth-protected-resource"

// adminToolsets is where the REST mirror serves toolsets under admin_path.
const adminToolsets = "/toolsets/"

// unknownToolset is the 404 for a toolset the catalog does not declare.
func unknownToolset(name string) *failure {
	return fail(failNotFound, "unknown toolset "+quoteForMsg([]byte(text.Clip(name, 64))))
}

func (h *handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	x := h.pl.begin(r.Context(), SurfaceNone, r.Method)
	rw.Header()["X-Request-Id"] = []string{x.rid} // canonical already
	w := &statusWriter{ResponseWriter: rw}
	defer func() {
		x.status = w.status
		h.pl.finish(x)
	}()
	if x.st == nil {
		writeFailure(w, &failure{kind: failNotInitialised})
		return
	}
	cfg, p := x.st.cfg, r.URL.Path
	for i := range routes {
		rt := &routes[i]
		rest, ok := rt.match(cfg, p)
		if !ok {
			continue
		}
		x.surface, x.method = rt.surface, rt.label(r.Method, rest)
		if rt.toolset {
			name, _, _ := strings.Cut(rest, "/")
			if name == "" || !x.st.core.HasToolset(name) {
				writeFailure(w, unknownToolset(name))
				return
			}
			x.toolset = name
		}
		if !rt.always && !cfg.Enabled {
			writeFailure(w, &failure{kind: failNotInitialised})
			return
		}
		rt.serve(h, w, r, x, rest)
		return
	}
	writeFailure(w, fail(failNotFound, "no such endpoint"))
}

// route is one endpoint of the HTTP surface. routes is every endpoint the
// handler serves, tried in order; paths come from the installed catalog,
// so they change with a reload.
type route struct {
	surface string
	// match reports whether path p is this route's under cfg, and the
	// part of the path the route reads (a toolset's name, an approval id).
	match func(cfg *proxy.Config, p string) (rest string, ok bool)
	// label is the request's method label: bounded, for metrics and logs.
	label func(method, rest string) string
	// toolset routes start with a toolset's name, refused unless the
	// catalog declares it.
	toolset bool
	// always routes answer while server.enabled is false; every other
	// route answers 503 then, as before a catalog is installed.
	always bool
	serve  func(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, rest string)
}

var routes = []route{
	{ // POST {mcp_path}: the MCP endpoint.
		surface: SurfaceMCP,
		match:   func(cfg *proxy.Config, p string) (string, bool) { return "", p == cfg.MCPPath },
		label:   func(m, _ string) string { return m },
		serve:   func(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, _ string) { h.serveMCP(w, r, x) },
	},
	{ // GET {admin_path}/tools, POST {admin_path}/call: the REST mirror.
		surface: SurfaceREST,
		match: func(cfg *proxy.Config, p string) (string, bool) {
			rest, ok := strings.CutPrefix(p, cfg.AdminPath)
			return rest, cfg.AdminPath != "" && ok && (rest == "/tools" || rest == "/call")
		},
		label: func(m, rest string) string { return m + " " + rest },
		serve: serveREST,
	},
	{ // {admin_path}/approvals[/ID[/approve|/reject]]: the approvers' API and page.
		surface: SurfaceREST,
		match: func(cfg *proxy.Config, p string) (string, bool) {
			rest, ok := strings.CutPrefix(p, cfg.AdminPath+"/approvals")
			return rest, cfg.AdminPath != "" && ok && (rest == "" || rest[0] == '/')
		},
		label: func(m, _ string) string { return m + " /approvals" },
		serve: func(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, rest string) {
			h.serveApprovals(w, r, x, rest)
		},
	},
	{ // {admin_path}/toolsets/{name}/tools and .../call: the REST mirror of one toolset.
		surface: SurfaceREST,
		toolset: true,
		match: func(cfg *proxy.Config, p string) (string, bool) {
			rest, ok := strings.CutPrefix(p, cfg.AdminPath+adminToolsets)
			if cfg.AdminPath == "" || !ok {
				return "", false
			}
			_, sub, _ := strings.Cut(rest, "/")
			return rest, sub == "tools" || sub == "call"
		},
		label: func(m, rest string) string { _, sub, _ := strings.Cut(rest, "/"); return m + " /" + sub },
		serve: func(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, rest string) {
			_, sub, _ := strings.Cut(rest, "/")
			serveREST(h, w, r, x, "/"+sub)
		},
	},
	{ // RFC 9728 protected resource metadata, at the root and under {mcp_path}.
		surface: SurfaceMetadata,
		always:  true,
		match: func(cfg *proxy.Config, p string) (string, bool) {
			return "", cfg.ResourceMetadata != nil && (p == wellKnownPRM || p == wellKnownPRM+cfg.MCPPath)
		},
		label: func(m, _ string) string { return m + " " + wellKnownPRM },
		serve: func(_ *handler, w http.ResponseWriter, r *http.Request, x *exchange, _ string) {
			serveMetadata(w, r, x)
		},
	},
	{ // POST {mcp_path}/{toolset}: the MCP endpoint of one toolset.
		surface: SurfaceMCP,
		toolset: true,
		match: func(cfg *proxy.Config, p string) (string, bool) {
			name, ok := strings.CutPrefix(p, strings.TrimSuffix(cfg.MCPPath, "/")+"/")
			return name, ok && !strings.Contains(name, "/")
		},
		label: func(m, _ string) string { return m },
		serve: func(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, _ string) { h.serveMCP(w, r, x) },
	},
}

// serveREST answers the REST mirror's /tools or /call.
func serveREST(h *handler, w http.ResponseWriter, r *http.Request, x *exchange, rest string) {
	if rest == "/tools" {
		h.serveRESTTools(w, r, x)
	} else {
		h.serveRESTCall(w, r, x)
	}
}

// serveMCP is the Streamable HTTP endpoint: the HTTP steps, then the
// JSON-RPC message through the pipeline, rendered as JSON-RPC.
func (h *handler) serveMCP(w http.ResponseWriter, r *http.Request, x *exchange) {
	body, ok := h.admitPost(w, r, x, true)
	if !ok {
		return
	}
	x.hdrv = Headers{
		ProtocolVersion: r.Header.Get("Mcp-Protocol-Version"),
		Method:          r.Header.Get("Mcp-Method"),
		Name:            r.Header.Get("Mcp-Name"),
	}
	x.hdr = &x.hdrv
	x.live = h.pl.live.stream(w, r, x)
	status, v, f := h.pl.decodeAndServe(x, body)
	if x.live.started() {
		x.live.finish(v)
		return
	}
	if v == nil {
		w.WriteHeader(status)
		return
	}
	failureHeaders(w, r, x, f)
	buf := pageBufs.Get().(*[]byte)
	b := encode(grow(*buf, v), v)
	writeJSON(w, status, b)
	*buf = b[:0]
	pageBufs.Put(buf)
}

// pageBufs recycles response buffers of the JSON-RPC surfaces: a page of
// a large catalog is hundreds of KiB, and allocating one per request made
// garbage collection the largest cost of listing.
var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

// failureHeaders sets what a failure adds to an HTTP answer: the
// insufficient_scope challenge, or Retry-After.
func failureHeaders(w http.ResponseWriter, r *http.Request, x *exchange, f *failure) {
	switch {
	case f == nil:
	case f.kind == failInsufficientScope:
		w.Header().Set("WWW-Authenticate", x.challenge(r, `error="insufficient_scope", scope=`+quoteParam(strings.Join(f.scopes, " "))))
	case f.kind == failRateLimited:
		w.Header().Set("Retry-After", strconv.FormatInt(f.rate.retryAfterSeconds(), 10))
		policy, state := f.rate.headerFields()
		w.Header().Set("RateLimit-Policy", policy)
		w.Header().Set("RateLimit", state)
	}
}

// writeFailure writes f as a plain HTTP JSON answer.
func writeFailure(w http.ResponseWriter, f *failure) {
	status, v := httpError(f)
	writeJSON(w, status, encode(nil, v))
}

// admitPost runs what every POST route checks before its own work, in
// order: the shared guards, Accept (when checkAccept), the declared body
// length, the bearer token, and only then the body, read as it arrives.
// No byte of the body is read, and no buffer is sized, before the caller
// is authenticated (300 unauthenticated connections declaring
// 1 MiB each grew the heap by ~300 MB when the body came first). ok is
// false when an answer has already been written.
func (h *handler) admitPost(w http.ResponseWriter, r *http.Request, x *exchange, checkAccept bool) (body []byte, ok bool) {
	if !guard(w, r, x, http.MethodPost, true) {
		return nil, false
	}
	if checkAccept && !acceptsJSON(r.Header.Values("Accept")) {
		writeFailure(w, fail(failNotAcceptable, "this endpoint answers application/json"))
		return nil, false
	}
	limit := x.st.cfg.RequestBytes
	if r.ContentLength > limit {
		writeFailure(w, tooLarge(limit))
		return nil, false
	}
	if !h.authenticate(w, r, x) {
		return nil, false
	}
	return readBody(w, r, x, limit)
}

// guard runs the checks shared by both MCP routes, in order: method (405),
// Origin (403), Host (403) and, for a request with a body, Content-Type
// (415). None of them reads the body. It writes the answer and returns
// false when one fails.
func guard(w http.ResponseWriter, r *http.Request, x *exchange, method string, hasBody bool) bool {
	var f *failure
	switch {
	case r.Method != method:
		w.Header().Set("Allow", method)
		f = fail(failMethod, "use "+method)
	case !x.st.hosts.originAllowed(r):
		x.log.Debug("refused origin", "origin", text.Clip(r.Header.Get("Origin"), 128))
		f = fail(failForbidden, "origin not allowed")
	case !x.st.hosts.hostAllowed(r):
		x.log.Debug("refused host", "host", text.Clip(r.Host, 128))
		f = fail(failForbidden, "host not allowed")
	case hasBody:
		if !isJSONMediaType(r.Header.Get("Content-Type")) {
			f = fail(failMediaType, "Content-Type must be application/json")
		}
	}
	if f != nil {
		writeFailure(w, f)
		return false
	}
	return true
}

func tooLarge(limit int64) *failure {
	return fail(failBodyTooLarge, "request body over "+strconv.FormatInt(limit, 10)+" bytes")
}

// initialBodyBuffer is the most a body buffer starts with, whatever the
// declared Content-Length: a client that declares 1 MiB and sends ten
// bytes costs ten bytes, plus this.
const initialBodyBuffer = 16 << 10

// readBody reads the request body up to limit (413 above) with
// rendering.ReadUpTo, the module's one bounded read loop. The buffer
// starts small and grows as bytes arrive; Content-Length only shrinks the
// first allocation.
func readBody(w http.ResponseWriter, r *http.Request, x *exchange, limit int64) ([]byte, bool) {
	length := r.ContentLength
	if length > initialBodyBuffer {
		length = initialBodyBuffer
	}
	buf, err := rendering.ReadUpTo(http.MaxBytesReader(w, r.Body, limit), limit+1, length)
	if err == nil {
		return buf, true
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeFailure(w, tooLarge(limit))
	} else {
		x.log.Debug("reading body failed", "error", err)
		writeFailure(w, fail(failBadRequest, "could not read the request body"))
	}
	return nil, false
}

// authenticate is the pipeline's first step over HTTP. A token is read
// only from the Authorization header, never from the query string (AUTH
// §Token Handling). Failures get 401 with WWW-Authenticate and a public
// message; the verifier's detail goes to the log only.
//
// More than one Authorization header, or more than one credential in one
// (a comma, which no bearer token68 holds), is 400: a proxy in front may
// read another one than the gateway does, so neither is guessed at.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	vals := r.Header.Values("Authorization")
	if len(vals) > 1 || (len(vals) == 1 && strings.Contains(vals[0], ",")) {
		h.pl.metrics.AuthFailure(authz.ReasonMalformed)
		x.log.Debug("more than one credential", "authorization_headers", len(vals))
		writeFailure(w, fail(failBadRequest, "send exactly one Authorization header with one Bearer credential"))
		return false
	}
	token, present := bearerToken(r.Header.Get("Authorization"))
	f := h.pl.verify(x, token, present)
	switch {
	case f == nil:
		return true
	case f.kind == failNoToken:
		w.Header().Set("WWW-Authenticate", x.challenge(r, x.st.viewScope))
	case f.kind == failInvalidToken:
		// authz.Description keeps the text inside error_description's
		// characters.
		params := `error="invalid_token", error_description=` + quoteParam(f.text)
		if sc := x.st.viewScope; sc != "" {
			params += ", " + sc
		}
		w.Header().Set("WWW-Authenticate", x.challenge(r, params))
	}
	writeFailure(w, f)
	return false
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
func (x *exchange) challenge(r *http.Request, params string) string {
	v := "Bearer"
	if params != "" {
		v += " " + params
	}
	if u := x.metadataURL(r); u != "" {
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
func (x *exchange) metadataURL(r *http.Request) string {
	rm := x.st.cfg.ResourceMetadata
	if rm == nil {
		return ""
	}
	origin := ""
	if u, err := url.Parse(rm.Resource); err == nil && u.Scheme != "" && u.Host != "" {
		origin = strings.ToLower(u.Scheme) + "://" + u.Host
	} else {
		origin = requestScheme(r) + "://" + r.Host
	}
	return origin + wellKnownPRM + x.st.cfg.MCPPath
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
			mt, params, err := parseMediaType(part)
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

// parseMediaType is mime.ParseMediaType, less its work (and its map) for
// the bare media types clients send on every request, which it would
// return as they are.
func parseMediaType(v string) (string, map[string]string, error) {
	switch v {
	case "application/json", "text/event-stream", "application/*", "text/*", "*/*":
		return v, nil, nil
	}
	return mime.ParseMediaType(v)
}

// isJSONMediaType reports whether a Content-Type names application/json,
// with parameters or in any case.
func isJSONMediaType(ct string) bool {
	mt, _, err := parseMediaType(ct)
	return err == nil && mt == "application/json"
}

// writeJSON writes a JSON answer that must not be cached.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	// One backing array for the four values, each a slice whose capacity
	// is its length (an Add elsewhere reallocates rather than overwrite a
	// neighbour); the keys are canonical already, so no Set is needed.
	v := [...]string{"application/json", "no-store", "nosniff", strconv.Itoa(len(body))}
	h := w.Header()
	h["Content-Type"] = v[0:1:1]
	h["Cache-Control"] = v[1:2:2]
	h["X-Content-Type-Options"] = v[2:3:3]
	h["Content-Length"] = v[3:4:4]
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// serveMetadata serves RFC 9728 protected resource metadata. It is public:
// no token, no Origin check (a client must be able to read it before it
// has a token).
func serveMetadata(w http.ResponseWriter, r *http.Request, x *exchange) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeFailure(w, fail(failMethod, "use GET"))
		return
	}
	rm := x.st.cfg.ResourceMetadata
	o := object{
		{"resource", str(rm.Resource)},
		{"authorization_servers", strs(rm.AuthorizationServers)},
	}
	if len(rm.ScopesSupported) > 0 {
		o = append(o, member{"scopes_supported", strs(rm.ScopesSupported)})
	}
	o = append(o, member{"bearer_methods_supported", strs{"header"}})
	if t := x.st.cfg.Server.Title; t != "" {
		o = append(o, member{"resource_name", str(t)})
	}
	writeJSON(w, http.StatusOK, encode(nil, o))
}

// ridHandler adds request_id to each record an exchange's logger writes.
// Unlike Logger.With it formats nothing up front: most requests log
// nothing through it (the access line is written separately).
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

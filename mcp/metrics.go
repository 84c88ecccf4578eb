package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpgw/gateway/authz"
)

// Metrics receives what the surfaces observe. Every label it is given
// comes from a fixed set (below), never from a caller's input, so a
// metric built on it stays bounded. Implementations must be safe for
// concurrent use; cmd/gateway registers them.
type Metrics interface {
	// Request is one finished request: its surface (SurfaceMCP,
	// SurfaceREST, SurfaceStdio, SurfaceMetadata or SurfaceNone), a
	// bounded method label (see [MethodLabel]), the HTTP status it was
	// answered with (on stdio, the status the same answer carries on
	// /mcp) and how long it took.
	Request(surface, method string, status int, d time.Duration)
	// AuthFailure is one refused token, by [authz.Reason] (missing,
	// malformed, signature, expired, claims, unknown_key, oversize,
	// api_key, lifetime).
	AuthFailure(reason string)
	// InFlight is +1 when a request takes an in-flight slot and -1 when it
	// gives it back.
	InFlight(delta int)
	// RateLimited is one request refused by a rate limit, by kind
	// (RateLimitPrincipal or RateLimitTool).
	RateLimited(kind string)
}

// Surfaces, as the access log and [Metrics.Request] name them.
const (
	SurfaceMCP      = "mcp"      // POST {mcp_path}
	SurfaceREST     = "rest"     // {admin_path}/tools and /call
	SurfaceStdio    = "stdio"    // ServeStdio
	SurfaceMetadata = "metadata" // /.well-known/oauth-protected-resource
	SurfaceNone     = "none"     // no route: 404, or 503 before a catalog is loaded
)

// Method labels for messages and routes outside the known sets.
const (
	MethodOther   = "other"   // a JSON-RPC method or HTTP route not listed in knownMethods
	MethodInvalid = "invalid" // a message that could not be decoded (no method to name)
)

// knownMethods are the method labels [MethodLabel] keeps as they are: the
// JSON-RPC methods this server answers or accepts, and the REST and
// metadata routes as "VERB /route" (route relative to admin_path).
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"subscriptions/listen": true,
	MethodInvalid:          true,
	"GET /tools":           true,
	"POST /call":           true,
	"GET " + wellKnownPRM:  true,
	"HEAD " + wellKnownPRM: true,
}

// MethodLabel bounds a method for a metric label: a known JSON-RPC method
// or route as it is, anything else MethodOther.
func MethodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return MethodOther
}

type nopMetrics struct{}

func (nopMetrics) Request(string, string, int, time.Duration) {}
func (nopMetrics) AuthFailure(string)                         {}
func (nopMetrics) InFlight(int)                               {}
func (nopMetrics) RateLimited(string)                         {}

func metricsOrNop(m Metrics) Metrics {
	if m == nil {
		return nopMetrics{}
	}
	return m
}

// access is what the access log line and the request metric say about
// one request; surfaces fill it in as they learn more.
type access struct {
	rid       string
	surface   string
	method    string // JSON-RPC method or "VERB /route"; caller input, truncated
	tool      string // tools/call only
	status    int
	rpcCode   int // JSON-RPC error code, 0 when none
	principal *authz.Principal
	start     time.Time
}

// finish writes the access log line, one per request at Info with the
// constant message "request", and records the request metric. It never
// logs tokens, credentials or bodies: only the principal's subject and
// workspace.
func (a *access) finish(ctx context.Context, log *slog.Logger, m Metrics) {
	d := time.Since(a.start)
	if a.status == 0 {
		a.status = http.StatusOK
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("request_id", a.rid),
		slog.String("surface", a.surface),
		slog.String("method", truncate(a.method, 64)),
	)
	if a.tool != "" {
		attrs = append(attrs, slog.String("tool", truncate(a.tool, 128)))
	}
	attrs = append(attrs, slog.Int("status", a.status))
	if a.rpcCode != 0 {
		attrs = append(attrs, slog.Int("rpc_code", a.rpcCode))
	}
	attrs = append(attrs, slog.Duration("duration", d))
	if p := a.principal; p != nil {
		attrs = append(attrs, slog.String("subject", p.Subject), slog.String("workspace", p.Workspace))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
	label := a.method
	if a.surface == SurfaceNone {
		label = MethodOther
	}
	m.Request(a.surface, MethodLabel(label), a.status, d)
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

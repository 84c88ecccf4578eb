package mcp

import (
	"net/http"
	"time"
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
	// (RateLimitPrincipal, RateLimitTool, or a limits.rules rule's name).
	RateLimited(kind string)
}

// LimitMetrics, when a [Metrics] also implements it, observes each limit
// a tools/call was counted against: by rule name (limits.rules, or
// RateLimitPrincipal and RateLimitTool for limits.rate), never by
// subject or workspace, and the result (LimitAllowed, LimitRefusedRate,
// LimitRefusedQuota). Only calls counted through the fleet limiter are
// observed (a catalog with rules, or a shared store).
type LimitMetrics interface {
	LimitCall(rule, result string)
}

// Results, as [LimitMetrics.LimitCall] reports them.
const (
	LimitAllowed      = "allowed"
	LimitRefusedRate  = "refused_rate"
	LimitRefusedQuota = "refused_quota"
)

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

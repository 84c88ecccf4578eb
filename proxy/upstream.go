package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/rendering"
)

// sharedTransport pools upstream connections for every Core, so a reload
// keeps warm connections. Proxy settings from the environment are ignored:
// upstreams are named by the catalog alone.
var sharedTransport = &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          1024,
	MaxIdleConnsPerHost:   256,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   5 * time.Second,
	ExpectContinueTimeout: time.Second,
	ResponseHeaderTimeout: 0, // the per-upstream timeout bounds the whole exchange
	// An answer's headers are parsed whole before max_response_bytes
	// applies to its body: Go's default, 10 MiB, let a 7-byte answer cost
	// 90 MiB. Real upstreams send a few kilobytes.
	MaxResponseHeaderBytes: MaxResponseHeaderBytes,
}

// MaxResponseHeaderBytes bounds the headers of an upstream's answer.
const MaxResponseHeaderBytes = 64 << 10

// startSpan starts a span named verb+" "+object when tracing is on
// (Options.Tracer); otherwise it returns ctx and a span that records
// nothing, at no cost (not even the name), and the caller's trace context
// (if any) still travels on.
func startSpan(ctx context.Context, tr trace.Tracer, verb, object string, kind trace.SpanKind) (context.Context, trace.Span) {
	if tr == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return tr.Start(ctx, verb+" "+object, trace.WithSpanKind(kind))
}

// leaseMargin is how long a shared lease outlives its upstream's timeout,
// which bounds every call: a replica that dies holding one gives it back
// then.
const leaseMargin = time.Second

// maxRedirects is how many redirects a call follows, when it follows any.
const maxRedirects = 3

// upstream is a catalog upstream ready to send requests.
type upstream struct {
	tracer  trace.Tracer // nil: no spans
	metrics Metrics
	breaker *breakers
	slots   chan struct{} // nil: no cap on concurrent calls
	shares  *shares       // nil: no per-workspace cap
	// fleet, when set, holds the caps in a store the replicas share
	// (leases in Redis) instead of slots and shares.
	fleet    *fleet.Limiter
	name     string
	def      *catalog.Upstream
	origin   string // scheme://host[:port]
	prefix   string // origin plus the base URL's escaped path, without a trailing slash
	basePath string // the base URL's escaped path, without a trailing slash
	rt       http.RoundTripper
	headers  [][2]string // the upstream's own headers, keys canonical, made at load
	// credHeader, when set, carries the caller's workspace's credential
	// from creds; a workspace without one is refused before sending.
	credHeader string
	creds      map[string]catalog.Secret
	// secrets are what an answer must not echo (echo.go): the upstream's
	// own, and each workspace's credential's, made at load.
	secrets     *secretSet
	credSecrets map[string]*secretSet
	// queryBound: the workspace travels in the query (binding.queryBound).
	queryBound bool
	// auth, when set, obtains the bearer token each request carries
	// (upstreams.NAME.auth of type client_credentials or token_exchange).
	auth *tokenSource
	// statusOnly: error_detail is status, so an upstream's own error
	// message never reaches the agent.
	statusOnly bool
	timeout    time.Duration
	max        int64
}

func newUpstream(name string, def *catalog.Upstream, rt http.RoundTripper, cooldown time.Duration) (*upstream, error) {
	base, err := url.Parse(def.BaseURL)
	if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") || base.User != nil || strings.Contains(def.BaseURL, "@") {
		// Not quoted: a base_url from the environment may hold a secret.
		return nil, fmt.Errorf("upstream %q: base_url is not an absolute http(s) URL without credentials", name)
	}
	u := &upstream{
		name:    name,
		def:     def,
		origin:  base.Scheme + "://" + base.Host,
		timeout: def.Timeout.D(),
		max:     int64(def.MaxResponseBytes),

		statusOnly: def.ErrorDetail == catalog.ErrorDetailStatus,
	}
	u.basePath = strings.TrimSuffix(base.EscapedPath(), "/")
	u.prefix = u.origin + u.basePath
	if u.timeout <= 0 {
		u.timeout = catalog.DefaultTimeout.D()
	}
	if u.max <= 0 {
		u.max = int64(catalog.DefaultMaxResponseBytes)
	}
	u.rt = rt
	for k, v := range def.Headers {
		u.headers = append(u.headers, [2]string{http.CanonicalHeaderKey(k), v})
	}
	if cr := def.Credentials; cr != nil {
		u.credHeader, u.creds = http.CanonicalHeaderKey(cr.Header), cr.Values
	}
	u.secrets = upstreamSecrets(u.headers)
	if len(u.creds) > 0 {
		u.credSecrets = make(map[string]*secretSet, len(u.creds))
		for ws, c := range u.creds {
			u.credSecrets[ws] = credentialSecrets(c, def.Credentials.Format)
		}
	}
	u.queryBound = def.Workspace != nil && def.Workspace.Query != ""
	u.breaker = newBreakers(time.Now, cooldown)
	if def.MaxConcurrent > 0 {
		u.slots = make(chan struct{}, def.MaxConcurrent)
	}
	if def.MaxConcurrentPerWorkspace > 0 {
		u.shares = newShares(def.MaxConcurrentPerWorkspace)
	}
	return u, nil
}

// do sends req within the upstream's timeout, following the redirects pol
// allows, and reads at most
// max_response_bytes of the answer, keeping at most keep bytes of it (keep
// <= 0 keeps all it reads). Past keep, the length is taken from
// Content-Length when the upstream sent one, and counted otherwise.
// Transport failures come back as errors whose text is safe for the caller:
// what happened, never an address. ws is the caller's workspace, for its
// max_concurrent_per_workspace share.
func (u *upstream) do(ctx context.Context, req *http.Request, pol redirectPolicy, ws string, keep int64) (*upstreamResponse, error) {
	return u.doFor(ctx, req, pol, binding{workspace: ws}, keep)
}

// doFor is do for the caller b: its workspace, and the person a token is
// obtained for when the upstream's auth exchanges one.
func (u *upstream) doFor(ctx context.Context, req *http.Request, pol redirectPolicy, b binding, keep int64) (*upstreamResponse, error) {
	ws := b.workspace
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, u.timeout)
	defer cancel()
	ok, probe, wait := u.breaker.allow(ws)
	if !ok {
		return nil, fmt.Errorf("upstream %s is unavailable: %d connection failures in a row; calls fail fast for the next %s while it recovers", u.name, breakerThreshold, wait.Round(time.Second))
	}
	// The token before any slot: a call waiting for the authorization
	// server must not hold one of the upstream's.
	var tok string
	if u.auth != nil {
		var err error
		if tok, err = u.auth.token(ctx, b); err != nil {
			u.breaker.release(probe) // the upstream was not asked
			switch {
			case errors.Is(ctx.Err(), context.DeadlineExceeded) && caller.Err() == nil:
				return nil, &tokenError{fmt.Sprintf("upstream %s: no token from its authorization server within the upstream's %s timeout; nothing was sent to the upstream", u.name, u.timeout)}
			case ctx.Err() != nil:
				return nil, u.transportError(ctx, ctx.Err())
			}
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if u.fleet != nil {
		release, heldBy := u.fleet.Acquire(ctx, fleet.Lease{Upstream: u.name, Workspace: ws,
			Max: u.def.MaxConcurrent, MaxPerWorkspace: u.def.MaxConcurrentPerWorkspace, TTL: u.timeout + leaseMargin})
		switch {
		case heldBy == fleet.CapWorkspace:
			u.breaker.release(probe)
			return nil, fmt.Errorf("upstream %s is at its max_concurrent_per_workspace limit of %d calls for this workspace; no slot freed %s", u.name, u.def.MaxConcurrentPerWorkspace, u.waited(caller))
		case release == nil:
			u.breaker.release(probe)
			return nil, fmt.Errorf("upstream %s is at its max_concurrent limit; no slot freed %s", u.name, u.waited(caller))
		}
		defer release()
	}
	// The workspace's share first: a call over it must not hold one of
	// the upstream's slots while it waits.
	if u.fleet == nil && u.shares != nil {
		sh := u.shares.acquire(ctx, ws)
		if sh == nil {
			u.breaker.release(probe)
			return nil, fmt.Errorf("upstream %s is at its max_concurrent_per_workspace limit of %d calls for this workspace; no slot freed %s", u.name, u.shares.max, u.waited(caller))
		}
		defer u.shares.release(ws, sh)
	}
	if u.fleet == nil && u.slots != nil {
		select {
		case u.slots <- struct{}{}:
			defer func() { <-u.slots }()
		case <-ctx.Done():
			u.breaker.release(probe)
			return nil, fmt.Errorf("upstream %s is at its max_concurrent limit; no slot freed %s", u.name, u.waited(caller))
		}
	}
	ctx, span := startSpan(ctx, u.tracer, "upstream", u.name, trace.SpanKindClient)
	if u.tracer != nil {
		defer span.End()
		span.SetAttributes(attribute.String("http.request.method", req.Method), attribute.String("gateway.upstream", u.name))
	}
	// The caller's trace (from a traceparent header or _meta) continues at
	// the upstream; nothing else of the inbound request does.
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	req = req.WithContext(ctx)
	start := time.Now()
	resp, notFollowed, err := u.send(req, pol)
	if err != nil && isConnectFailure(err) && replayable(req) && ctx.Err() == nil {
		// The request never left: one retry, after a jittered pause, is
		// safe for any method. Only reads get it, to keep writes simple to
		// reason about.
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			if sleepJitter(ctx) {
				resp, notFollowed, err = u.send(req, pol)
			}
		}
	}
	if err == nil && resp.StatusCode == http.StatusUnauthorized && u.auth != nil {
		resp, notFollowed, tok, err = u.retryUnauthorized(ctx, req, pol, b, tok, resp, notFollowed)
	}
	if err != nil {
		u.judge(caller, ctx, probe, err)
		u.metrics.Upstream(u.name, 0, time.Since(start))
		terr := u.transportError(ctx, err)
		span.SetStatus(codes.Error, terr.Error())
		return nil, terr
	}
	defer resp.Body.Close()
	if u.tracer != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	}
	resp2, err := u.read(ctx, resp, keep)
	if resp2 != nil {
		// A redirect not followed is an answer: the breaker counts it as one.
		resp2.notFollowed = notFollowed
		resp2.token, resp2.cred = tok, u.credSecrets[ws]
	}
	if err != nil && !isOverCap(err) {
		u.metrics.Upstream(u.name, 0, time.Since(start))
	} else {
		u.metrics.Upstream(u.name, resp.StatusCode, time.Since(start))
	}
	if err != nil {
		u.judge(caller, ctx, probe, err)
		// The upstream answered: its status goes in the audit record.
		return nil, &answeredError{status: resp.StatusCode, err: err}
	}
	u.breaker.record(probe, false, false)
	return resp2, nil
}

// retryUnauthorized answers a 401 to a request that carried tok: the
// authorization server may have revoked or rotated it before it expired.
// The token is dropped, and the request is sent once more with a fresh
// one; a second 401 is the answer. An upstream that refused the token
// did not act on the request, so a write may be sent again too (under its
// own idempotency key, if it has one).
func (u *upstream) retryUnauthorized(ctx context.Context, req *http.Request, pol redirectPolicy, b binding, tok string, resp *http.Response, notFollowed string) (*http.Response, string, string, error) {
	again := resend(ctx, req)
	if again == nil {
		return resp, notFollowed, tok, nil
	}
	u.auth.invalidate(b, tok)
	fresh, err := u.auth.token(ctx, b)
	if err != nil {
		// No fresh token: the upstream's 401 is the answer.
		return resp, notFollowed, tok, nil
	}
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	again.Header.Set("Authorization", "Bearer "+fresh)
	resp, notFollowed, err = u.send(again, pol)
	return resp, notFollowed, fresh, err
}

// answeredError is an answer that came (status) but could not be used:
// over max_response_bytes, or broken off while it was read.
type answeredError struct {
	status int
	err    error
}

func (e *answeredError) Error() string { return e.err.Error() }
func (e *answeredError) Unwrap() error { return e.err }

// answeredStatus is the status of the upstream's answer behind err, or 0
// when none came.
func answeredStatus(err error) int {
	var ae *answeredError
	if errors.As(err, &ae) {
		return ae.status
	}
	return 0
}

// waited says how a wait for a slot ended: the upstream's timeout, or the
// caller's own end (gone, or its deadline).
func (u *upstream) waited(caller context.Context) string {
	if caller.Err() != nil {
		return "before the call ended"
	}
	return fmt.Sprintf("within its %s timeout", u.timeout)
}

// judge tells the breaker what a failed exchange says about the upstream.
// Only failures that say it is unhealthy count. A call the caller ended
// (it went away, or its own deadline passed) and a request refused for its
// own sake (an invalid header value, URL or method; a redirect policy)
// judge nothing: otherwise one tenant could open the breaker for all.
// An answer over max_response_bytes shows the upstream is up.
func (u *upstream) judge(caller, ctx context.Context, probe ticket, err error) {
	switch {
	case caller.Err() != nil:
		u.breaker.release(probe)
	case unhealthy(ctx, err):
		var dnsErr *net.DNSError
		dial := isConnectFailure(err) || errors.As(err, &dnsErr)
		u.breaker.record(probe, true, dial && ctx.Err() == nil)
	case isOverCap(err):
		u.breaker.record(probe, false, false)
	default:
		u.breaker.release(probe)
	}
}

// unhealthy reports whether a failed exchange says the upstream is
// unhealthy: it could not be reached (a dial error: refused, no route,
// DNS), the connection broke mid-exchange (reset, unexpected EOF), or the
// exchange outlived the upstream's timeout.
func unhealthy(ctx context.Context, err error) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dnsErr *net.DNSError
	if isConnectFailure(err) || errors.As(err, &dnsErr) {
		return true
	}
	for _, e := range brokenConnection {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// brokenConnection are the errors of a connection that broke mid-exchange.
var brokenConnection = []error{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.ErrUnexpectedEOF, io.EOF,
}

// overCapError is an answer larger than max_response_bytes: the upstream
// is up, so the breaker does not count it.
type overCapError struct{ msg string }

func (e *overCapError) Error() string { return e.msg }

func isOverCap(err error) bool { var oc *overCapError; return errors.As(err, &oc) }

// isConnectFailure reports a failure to establish the connection, when no
// byte of the request was sent.
func isConnectFailure(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func replayable(req *http.Request) bool { return req.Body == nil || req.Body == http.NoBody }

// sleepJitter pauses 50–150 ms unless ctx ends first.
func sleepJitter(ctx context.Context) bool {
	t := time.NewTimer(50*time.Millisecond + time.Duration(rand.Int64N(int64(100*time.Millisecond))))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// read reads a bounded answer; see do.
func (u *upstream) read(ctx context.Context, resp *http.Response, keep int64) (*upstreamResponse, error) {
	if keep <= 0 || keep > u.max {
		keep = u.max
	}
	body, err := rendering.ReadUpTo(resp.Body, keep+1, resp.ContentLength)
	if err != nil {
		return nil, u.readError(ctx, err)
	}
	total := int64(len(body))
	if total > keep {
		body = body[:keep]
		switch {
		case keep == u.max:
			return nil, &overCapError{fmt.Sprintf("upstream %s answered more than max_response_bytes (%d bytes); nothing of it is returned", u.name, u.max)}
		case resp.ContentLength > u.max:
			return nil, &overCapError{fmt.Sprintf("upstream %s answered more than max_response_bytes (%d bytes); nothing of it is returned", u.name, u.max)}
		case resp.ContentLength >= 0:
			total = resp.ContentLength
		default:
			n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, u.max-total+1))
			if err != nil {
				return nil, u.readError(ctx, err)
			}
			if total += n; total > u.max {
				return nil, &overCapError{fmt.Sprintf("upstream %s answered more than max_response_bytes (%d bytes); nothing of it is returned", u.name, u.max)}
			}
		}
	}
	return &upstreamResponse{status: resp.StatusCode, header: resp.Header, body: body, total: total}, nil
}

// transportFailure is a failed read of an answer: msg is safe for the
// caller, and the cause stays reachable (errors.Is, errors.As) for the
// breaker.
type transportFailure struct {
	msg   string
	cause error
}

func (e *transportFailure) Error() string { return e.msg }
func (e *transportFailure) Unwrap() error { return e.cause }

func (u *upstream) readError(ctx context.Context, err error) error {
	return &transportFailure{msg: u.transportError(ctx, err).Error(), cause: err}
}

func (u *upstream) transportError(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("upstream %s did not answer within its %s timeout", u.name, u.timeout)
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("call cancelled before upstream %s answered", u.name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("upstream %s refused the connection", u.name)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("upstream %s reset the connection", u.name)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("upstream %s could not be resolved", u.name)
	}
	// net/http names this one only in its text.
	if strings.Contains(err.Error(), "server response headers exceeded") {
		return fmt.Errorf("upstream %s answered with headers over the %d bytes the gateway reads", u.name, MaxResponseHeaderBytes)
	}
	return fmt.Errorf("upstream %s could not be reached", u.name)
}

// sendOnce makes req, a write, a request net/http's Transport never sends
// a second time. The Transport resends a request on a fresh connection
// when a reused one drops after the request was written, if the request
// is "replayable" (net/http Request.isReplayable): no body or a body it
// can rewind (GetBody), and an idempotent method or an Idempotency-Key or
// X-Idempotency-Key header. Every approved write carries such a header,
// so an upstream that read the request and then reset the connection
// received it twice, although the gateway had sent it once.
//
// A body is made one-shot by dropping GetBody (the Transport rewinds
// only through it). A write without a body keeps http.NoBody, so the
// upstream sees the same framing (Content-Length: 0 on a POST, where a
// one-shot empty body would go chunked), except a GET or HEAD write, which
// its method alone makes replayable: it gets a one-shot empty body, which
// the Transport probes and sends as no body, framing unchanged. The
// idempotency headers of a bodyless write travel under their lower-case
// names, which the Transport's check, an exact map lookup of the
// canonical names, does not see (header names are case-insensitive on the
// wire).
func sendOnce(req *http.Request) {
	req.GetBody = nil
	if req.Body != nil && req.Body != http.NoBody {
		return
	}
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("")), 0
	}
	var keys []string
	for k := range req.Header {
		if ck := http.CanonicalHeaderKey(k); ck == "Idempotency-Key" || ck == "X-Idempotency-Key" {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		v := req.Header[k]
		delete(req.Header, k)
		req.Header[strings.ToLower(k)] = v
	}
}

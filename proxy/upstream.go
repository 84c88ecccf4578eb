package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/authz"
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
}

// startSpan starts a span when tracing is on (Options.Tracer); otherwise
// it returns ctx and a span that records nothing, at no cost, and the
// caller's trace context (if any) still travels on.
func startSpan(ctx context.Context, tr trace.Tracer, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if tr == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return tr.Start(ctx, name, trace.WithSpanKind(kind))
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
	u.breaker = newBreakers(time.Now, cooldown)
	if def.MaxConcurrent > 0 {
		u.slots = make(chan struct{}, def.MaxConcurrent)
	}
	if def.MaxConcurrentPerWorkspace > 0 {
		u.shares = newShares(def.MaxConcurrentPerWorkspace)
	}
	return u, nil
}

// redirectPolicy says which redirects one call follows. A
// redirect it does not follow comes back as the answer itself: a 3xx,
// which the call reports as a tool error naming the status and why.
type redirectPolicy struct {
	never  string // when set, no redirect is followed, for this reason
	prefix string // the escaped path a followed redirect must stay under, base path included
	whole  bool   // prefix is the call's whole path: the target is it or below it
}

// redirects is the policy for a call to path. Writes never follow: a
// redirected DELETE or POST could land elsewhere or turn into a GET, and
// be recorded as done. Reads follow only when the upstream opts in, and
// only under the path the catalog and the token fixed for the call.
func (u *upstream) redirects(write bool, p builtPath) redirectPolicy {
	switch {
	case write:
		return redirectPolicy{never: "writes never follow redirects"}
	case !u.def.FollowRedirects:
		return redirectPolicy{never: "the upstream does not set follow_redirects"}
	}
	return redirectPolicy{prefix: u.basePath + p.escaped[:p.fixed], whole: p.whole}
}

// refuse says why the redirect from req to loc, after hops redirects, is
// not followed, or "" to follow it to next.
func (u *upstream) refuse(pol redirectPolicy, req *http.Request, loc string, hops int) (next *url.URL, why string) {
	switch {
	case pol.never != "":
		return nil, pol.never
	case loc == "":
		return nil, "it has no Location"
	}
	next, err := req.URL.Parse(loc)
	switch {
	case err != nil:
		return nil, "its Location cannot be parsed"
	case next.Scheme+"://"+next.Host != u.origin || next.User != nil:
		return nil, "it leads to another origin"
	case !pol.within(next.EscapedPath()):
		return nil, "it leads outside the tool's path"
	case hops >= maxRedirects:
		return nil, fmt.Sprintf("more than %d redirects in a row", maxRedirects)
	}
	return next, ""
}

// within reports whether an escaped target path stays under the policy's
// prefix however a server reads it: as sent (escapes compared without
// regard to hex case), and after each of up to maxDecodes percent-decodings,
// each cleaned of dot segments with "\" taken as "/". A segment that
// is a dot segment before a ";" parameter (Tomcat) is refused too.
func (pol redirectPolicy) within(target string) bool {
	if !underPath(cleanPath(upperEscapes(target)), cleanPath(upperEscapes(pol.prefix)), pol.whole) {
		return false
	}
	t, pre := target, pol.prefix
	for level := 1; level <= maxDecodes; level++ {
		d, changed := percentDecode(t)
		if !changed {
			return true
		}
		t = d
		pre, _ = percentDecode(pre)
		if !underPath(cleanPath(t), cleanPath(pre), pol.whole) {
			return false
		}
	}
	_, changed := percentDecode(t)
	return !changed
}

// underPath reports whether the clean path t lies under p. A prefix (the
// literal before the first argument, "/jobs/" of "/jobs/{id}" or "/jobs-"
// of "/jobs-{id}") is matched as text, and t must extend it, as a value
// would; a whole path (no argument in it) as a directory: t is p or below
// it. A dot segment before a ";" parameter (Tomcat) is never under.
func underPath(t, p string, whole bool) bool {
	for _, seg := range strings.Split(t, "/") {
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			seg = seg[:i]
		}
		if seg == "." || seg == ".." {
			return false
		}
	}
	if !whole {
		return len(t) > len(p) && strings.HasPrefix(t, p)
	}
	return t == p || strings.HasPrefix(t, strings.TrimSuffix(p, "/")+"/")
}

// cleanPath is p with "\" read as "/" and dot segments resolved, keeping
// a trailing slash, as the servers that clean paths do.
func cleanPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// upperEscapes writes every %xx escape of s in upper case.
func upperEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && ishex(b[i+1]) && ishex(b[i+2]) {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// send performs req on the transport and follows the redirects pol allows,
// as net/http's client would (301, 302 and 303 turn a non-GET into a
// body-less GET; 307 and 308 keep method and body). Every header set on
// req, credentials included, goes to each hop: all hops are the upstream's
// own origin. A redirect not followed is returned as the answer, with
// notFollowed saying why.
//
// Using the transport directly, as httputil.ReverseProxy does, spares
// every call the client's per-request header copying for redirects.
func (u *upstream) send(req *http.Request, pol redirectPolicy) (resp *http.Response, notFollowed string, err error) {
	for hops := 0; ; hops++ {
		resp, err := u.rt.RoundTrip(req)
		if err != nil {
			return nil, "", err
		}
		if !isRedirect(resp.StatusCode) {
			return resp, "", nil
		}
		next, why := u.refuse(pol, req, resp.Header.Get("Location"), hops)
		if why != "" {
			return resp, why, nil
		}
		// Drain a little so the connection can be reused, then let go.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
		// The token's workspace binding goes to every hop, as the headers
		// do: a Location that drops or names another workspace must not
		// change whose data is asked for.
		if w := u.def.Workspace; w != nil && w.Query != "" {
			q := next.Query()
			q[w.Query] = req.URL.Query()[w.Query]
			next.RawQuery = q.Encode()
		}
		nreq := req.Clone(req.Context())
		nreq.URL, nreq.Host = next, ""
		keepBody := resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect
		if !keepBody && req.Method != http.MethodGet && req.Method != http.MethodHead {
			nreq.Method = http.MethodGet
		}
		switch {
		case keepBody && req.GetBody != nil:
			if nreq.Body, err = req.GetBody(); err != nil {
				return nil, "", err
			}
		case keepBody:
			nreq.Body = req.Body // http.NoBody
		default:
			nreq.Body, nreq.ContentLength, nreq.GetBody = http.NoBody, 0, nil
			nreq.Header.Del("Content-Type")
		}
		req = nreq
	}
}

// upstreamResponse is a fully read, bounded upstream answer.
type upstreamResponse struct {
	status int
	header http.Header
	body   []byte
	// total is the body's full length when known (Content-Length), else
	// the bytes read.
	total int64
	// notFollowed says why a redirect (the status) was not followed.
	notFollowed string
}

func (r *upstreamResponse) contentType() string {
	ct := r.header.Get("Content-Type")
	if ct == "" {
		return "no content type"
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return "an invalid content type"
}

// mediaType is the answer's media type in lower case, or "" when it has
// none or an invalid one.
func (r *upstreamResponse) mediaType() string {
	mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// isText reports a text answer other than HTML (text/plain, text/csv…),
// which a 2xx returns as {"text": …}. An HTML page in a JSON API's place
// is a login page or a proxy's, not data.
func (r *upstreamResponse) isText() bool {
	mt := r.mediaType()
	return strings.HasPrefix(mt, "text/") && mt != "text/html"
}

// failure describes a non-2xx answer for a tool error: the status, the
// upstream's own short reason when it sent one and error_detail allows
// it (statusOnly false), and Retry-After. reasonPath is the tool's
// response.error_message.
func (r *upstreamResponse) failure(name string, statusOnly bool, reasonPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "upstream %s answered %d %s", name, r.status, http.StatusText(r.status))
	if r.notFollowed != "" {
		b.WriteString(" (a redirect, not followed): ")
		b.WriteString(r.notFollowed)
		return b.String()
	}
	if !statusOnly {
		if msg := errorMessage(r.body, r.mediaType(), reasonPath); msg != "" {
			b.WriteString(": ")
			b.WriteString(msg)
		}
	}
	if ra := r.header.Get("Retry-After"); ra != "" && (r.status == 429 || r.status == 503) {
		if len(ra) > 64 {
			ra = ra[:64]
		}
		fmt.Fprintf(&b, " (retry after %s)", strings.ToValidUTF8(ra, "?"))
	}
	return b.String()
}

// maxErrorMessage bounds what an upstream's error message contributes.
const maxErrorMessage = 300

// Bounds on the work a reason costs: how much of a text or HTML body is
// read for it, and how much cleaned text is kept before the final cut.
const (
	maxReasonScan   = 64 << 10
	maxReasonWindow = 4 << 10
)

// errorMessage finds a short reason in an error body of the given media
// type, tried in this order:
//
//   - JSON, whatever the content type: the tool's reasonPath when it finds
//     a string, number or boolean; a bare JSON string; else the first two
//     distinct strings among RFC 9457 detail and title, message,
//     error.message, error and errors.0.message, joined by ": ".
//   - text/html: the page's <title>, nothing of the page itself.
//   - any other text/*: the text.
//
// Whatever its source, the reason is cleaned (see cleanReason) and at most
// maxErrorMessage bytes long.
func errorMessage(body []byte, mediaType, reasonPath string) string {
	switch {
	case gjson.ValidBytes(body):
		return cleanReason(jsonReason(gjson.ParseBytes(body), reasonPath), false)
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return cleanReason(htmlTitle(body), false)
	case strings.HasPrefix(mediaType, "text/"):
		cut := len(body) > maxReasonScan
		return cleanReason(string(body[:min(len(body), maxReasonScan)]), cut)
	}
	return ""
}

func jsonReason(root gjson.Result, reasonPath string) string {
	if reasonPath != "" {
		switch v := root.Get(reasonPath); v.Type {
		case gjson.String, gjson.Number, gjson.True, gjson.False:
			if s := v.String(); strings.TrimSpace(s) != "" {
				return s
			}
		}
	}
	if root.Type == gjson.String {
		return root.Str
	}
	var parts []string
	for _, r := range root.Get(`[detail,title,message,error.message,error,errors.0.message]`).Array() {
		if r.Type == gjson.String && strings.TrimSpace(r.Str) != "" && len(parts) < 2 && !slices.Contains(parts, r.Str) {
			parts = append(parts, r.Str)
		}
	}
	return strings.Join(parts, ": ")
}

// htmlTitle is the text of an HTML page's <title> ("502 Bad Gateway"
// from a proxy), or "".
func htmlTitle(body []byte) string {
	head := body[:min(len(body), maxReasonScan)]
	lower := bytes.ToLower(head) // ASCII case folding keeps offsets for these tags
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	return html.UnescapeString(string(head[start : start+end]))
}

// cleanReason makes an upstream's reason safe to show: invalid UTF-8
// becomes U+FFFD; control characters and invisible format characters
// (bidi overrides, zero-width) are removed; runs of white space, CR and LF
// included, become one space; URL credentials are stripped; and the result
// is cut to maxErrorMessage bytes. cut says s is a prefix of the reason:
// its last word, which a credential may straddle, is dropped.
func cleanReason(s string, cut bool) string {
	var b strings.Builder
	pending := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			pending = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if b.Len() >= maxReasonWindow {
			cut = true
			break
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError: U+FFFD
	}
	msg := b.String()
	if cut {
		// The window or the scan ended inside the text: its last word may
		// be half a credential, which stripping would not recognise.
		msg = msg[:max(strings.LastIndexByte(msg, ' '), 0)]
	}
	// Before the cut, so a cut cannot leave half a password unmatched.
	msg = stripURLCredentials(msg)
	if len(msg) > maxErrorMessage {
		n := maxErrorMessage
		for n > 0 && !utf8Start(msg[n]) {
			n--
		}
		msg = msg[:n] + "…"
	}
	return msg
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// urlStart finds where a URL's user information may begin in free text:
// after "scheme://" (group 1), or after "scheme:" in a bare
// "scheme:user:password@host" (group 2, the user and its colon matched).
var urlStart = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)|([A-Za-z][A-Za-z0-9+.\-]*:)[^\s/?#@:]+:`)

// stripURLCredentials removes the credentials of every URL in an
// upstream's message, "postgres://app:secret@db/x" becoming
// "postgres://db/x": upstreams quote connection strings in their errors,
// and agents must not see them.
//
// Passwords are quoted as they were set, not percent-encoded, so one may
// hold "/", "?", "#" or "@" ("postgres://app:p/ss@db"), where a URL parser
// would end the authority early and leave the rest of the password in the
// text. So the user information runs to the last "@" of the URL's run of
// non-space text whenever it can be read as credentials (see userinfoEnd);
// when a URL could be either, more is removed, never less.
func stripURLCredentials(s string) string {
	// Each pass removes at least one "@"; repeat until none is left to
	// remove, so what is returned has nothing more to strip.
	for strings.Contains(s, "@") {
		out := stripPass(s)
		if out == s {
			break
		}
		s = out
	}
	return s
}

func stripPass(s string) string {
	var b strings.Builder
	for {
		loc := urlStart.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		from := loc[3] // after "scheme://"
		if loc[2] < 0 {
			from = loc[5] // after "scheme:" of a bare URL
		}
		run := s[from:]
		if i := strings.IndexFunc(run, unicode.IsSpace); i >= 0 {
			run = run[:i]
		}
		end := -1
		if loc[2] >= 0 {
			end = userinfoEnd(run)
		} else {
			end = strings.LastIndexByte(run, '@')
		}
		if end < 0 {
			next := loc[1]
			b.WriteString(s[:next])
			s = s[next:]
			continue
		}
		b.WriteString(s[:from])
		s = s[from+end+1:]
	}
}

// userinfoEnd returns the index in run (the text after "scheme://" up to
// white space) of the "@" that ends the URL's user information, or -1
// when the URL has none. A URL whose authority (up to the first "/", "?"
// or "#") holds an "@" has credentials; so does one whose authority is
// "user:x" where x is not a port ("app:p" of "app:p/ss@db", whose
// password holds a "/"), or "name:digits" where name is no host name
// ("app:1234/5@db"). Only a host name (dotted, localhost or an IP
// literal), with or without a port, keeps an "@" further on as part of
// the path or query ("https://example.com/users/@me").
func userinfoEnd(run string) int {
	at := strings.LastIndexByte(run, '@')
	if at < 0 {
		return -1
	}
	if !strings.ContainsAny(run[:at], "/?#") {
		return at
	}
	auth := run[:strings.IndexAny(run, "/?#")]
	if strings.Contains(auth, "@") {
		return at
	}
	if strings.HasPrefix(auth, "[") {
		return -1 // an IPv6 literal
	}
	host, port, hasPort := strings.Cut(auth, ":")
	switch {
	case !hasPort:
		return -1
	case port == "" || strings.Trim(port, "0123456789") != "":
		return at
	case host == "localhost" || strings.Contains(host, "."):
		return -1
	}
	return at
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
	ctx, span := startSpan(ctx, u.tracer, "upstream "+u.name, trace.SpanKindClient)
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
		resp, notFollowed, err = u.retryUnauthorized(ctx, req, pol, b, tok, resp, notFollowed)
	}
	if err != nil {
		u.judge(caller, ctx, probe, err)
		u.metrics.Upstream(u.name, 0, time.Since(start))
		terr := u.transportError(ctx, err)
		span.SetStatus(codes.Error, terr.Error())
		return nil, terr
	}
	defer resp.Body.Close()
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	resp2, err := u.read(ctx, resp, keep)
	if resp2 != nil {
		// A redirect not followed is an answer: the breaker counts it as one.
		resp2.notFollowed = notFollowed
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
func (u *upstream) retryUnauthorized(ctx context.Context, req *http.Request, pol redirectPolicy, b binding, tok string, resp *http.Response, notFollowed string) (*http.Response, string, error) {
	again := resend(ctx, req)
	if again == nil {
		return resp, notFollowed, nil
	}
	u.auth.invalidate(b, tok)
	fresh, err := u.auth.token(ctx, b)
	if err != nil {
		// No fresh token: the upstream's 401 is the answer.
		return resp, notFollowed, nil
	}
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	again.Header.Set("Authorization", "Bearer "+fresh)
	return u.send(again, pol)
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
	return fmt.Errorf("upstream %s could not be reached", u.name)
}

// probeFunc answers prerequisite probes with real upstream calls carrying
// the workspace binding and the upstream's own credentials.
func (c *Core) probeFunc(ups map[string]*upstream) func(ctx context.Context, pr *catalog.Prerequisite, ws string) (bool, error) {
	// Compiled once: the path, and the method with its default applied.
	type probe struct {
		path   []pathPart
		method string
	}
	probes := make(map[string]probe, len(c.cat.Prerequisites))
	for name, pr := range c.cat.Prerequisites {
		if pr.Probe != nil {
			probes[name] = probe{compilePath(pr.Probe.PathTemplate, nil), or(pr.Probe.Method, http.MethodGet)}
		}
	}
	return func(ctx context.Context, pr *catalog.Prerequisite, ws string) (bool, error) {
		u := ups[pr.Probe.Upstream]
		if u == nil {
			return false, fmt.Errorf("unknown upstream %q", pr.Probe.Upstream)
		}
		method := probes[pr.Name].method
		b := binding{workspace: ws}
		path, err := buildPath(probes[pr.Name].path, nil, b)
		if err != nil {
			return false, err
		}
		req, err := u.newUpstreamRequest(method, u.prefix+path.escaped, nil)
		if err != nil {
			return false, err
		}
		if err := u.bind(req, url.Values{}, b, false); err != nil {
			return false, err
		}
		write := method != http.MethodGet && method != http.MethodHead
		resp, err := u.do(ctx, req, u.redirects(write, path), ws, 64<<10)
		if err != nil {
			c.logger.Warn("prerequisite probe failed", "prerequisite", pr.Name, "upstream", u.name, "error", err)
			return false, err
		}
		switch {
		case resp.status == http.StatusTooManyRequests || resp.status >= 500:
			// An outage, not an answer about the workspace: kept only
			// briefly, like a transport failure.
			return false, fmt.Errorf("upstream %s answered %d to the probe", u.name, resp.status)
		case resp.status < 200 || resp.status > 299:
			return false, nil
		}
		if pr.Probe.TrueWhen == "" {
			return true, nil
		}
		return gjson.ValidBytes(resp.body) && authz.TruthyAt(resp.body, pr.Probe.TrueWhen), nil
	}
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

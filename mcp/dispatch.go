package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// Cache hints on modern results (CACHE). The list is filtered per caller,
// so it is private; the TTL stands in for list_changed notifications,
// which this server does not send.
const (
	// ListTTLMillis is the ttlMs of tools/list results.
	ListTTLMillis = 60000
	// DiscoverTTLMillis is the ttlMs of server/discover results.
	DiscoverTTLMillis = 60000
)

// Request is one JSON-RPC message as a transport received it.
type Request struct {
	// Body is the message, exactly as received.
	Body []byte
	// Principal is the verified caller. Calls run with it in their context.
	Principal *authz.Principal
	// Headers are the transport's headers to check against the body. Nil
	// means the transport has none (stdio): header checks are skipped and a
	// legacy request is taken as LatestLegacyVersion.
	Headers *Headers
	// RequestID names the request in logs, in internal-error answers and,
	// through the core's context, in audit records. Empty: one is made
	// when an answer needs it.
	RequestID string
	// Logger receives diagnostics. Nil: discard.
	Logger *slog.Logger
}

// Reply is what a transport sends back for one message.
type Reply struct {
	// Status is the HTTP status: 200, 202 (accepted notification or
	// response; Body is nil) or an error status (see errors.go).
	Status int
	// Body is the JSON-RPC response, or nil.
	Body []byte
	// Challenge is set, with Status 403, when a gate with on_deny:
	// challenge denied a call; an HTTP transport sends it as
	// WWW-Authenticate: Bearer error="insufficient_scope".
	Challenge *proxy.ChallengeError

	code       int     // the JSON-RPC error code in Body, 0 for a result: for the access log
	retryAfter int64   // Retry-After seconds with a 429, else 0
	pooled     *[]byte // Body's buffer, from pageBufs; see release
}

// pageBufs recycles tools/list and tools/call reply buffers: a page of a
// large catalog is hundreds of KiB, and allocating one per request made
// garbage collection the largest cost of listing.
var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

// release returns Body's buffer to its pool once the transport has
// written it. Body must not be used afterwards. Replies that were not
// pooled ignore it.
func (r *Reply) release() {
	if r.pooled != nil {
		*r.pooled = r.Body[:0]
		pageBufs.Put(r.pooled)
		r.pooled, r.Body = nil, nil
	}
}

// Dispatch answers one JSON-RPC message for core, independently of the
// transport: it decodes the envelope strictly, tells the protocol era from
// params._meta, checks the headers against the body and serves
// server/discover, initialize, ping, tools/list and tools/call.
// Notifications and responses are accepted (202) and dropped. Dispatch is
// safe for concurrent use; ctx should end when the client goes away, so
// upstream work stops with it. A non-empty req.RequestID travels in the
// core's context ([proxy.WithRequestID]), so audit records carry it.
func Dispatch(ctx context.Context, core *proxy.Core, req *Request) Reply {
	msg, derr := decode(req.Body)
	if derr != nil {
		return decodeErrorReply(req.Logger, derr)
	}
	return dispatch(ctx, core, req, msg)
}

func decodeErrorReply(log *slog.Logger, derr *decodeError) Reply {
	logger(log).Debug("refused message", "code", derr.code, "reason", derr.msg)
	return Reply{Status: http.StatusBadRequest, Body: appendError(nil, derr.id, derr.code, derr.msg, nil), code: derr.code}
}

// dispatch is Dispatch after decoding, for transports that decode first to
// learn the method (rate limits, the access log).
func dispatch(ctx context.Context, core *proxy.Core, req *Request, msg *message) Reply {
	if msg.kind != kindRequest {
		// Notifications (initialized, cancelled: nothing to cancel on a
		// stateless node, unknown ones: ignored) and legacy responses.
		return Reply{Status: http.StatusAccepted}
	}
	if core == nil {
		return errorReply(msg.id, rpcError{status: http.StatusServiceUnavailable, code: codeInternal, msg: "mcp server not initialised"})
	}
	if req.RequestID != "" {
		ctx = proxy.WithRequestID(ctx, req.RequestID)
	}
	ctx = metaTraceContext(ctx, msg)
	d := &dispatcher{
		ctx:  authz.WithPrincipal(ctx, req.Principal),
		core: core,
		req:  req,
		msg:  msg,
		log:  logger(req.Logger),
	}
	if e := d.negotiate(); e != nil {
		d.log.Debug("refused request", "method", msg.method, "code", e.code, "reason", e.msg)
		return errorReply(msg.id, *e)
	}
	var (
		body []byte
		e    *rpcError
	)
	var pooled *[]byte
	switch {
	case msg.method == "tools/list":
		pooled = pageBufs.Get().(*[]byte)
		body, e = d.toolsList((*pooled)[:0])
	case msg.method == "tools/call":
		return d.toolsCall()
	case msg.method == "server/discover" && d.modern:
		body = d.discover()
	case msg.method == "initialize" && !d.modern:
		body, e = d.initialize()
	case msg.method == "ping" && !d.modern:
		body = append(appendResultStart(nil, msg.id), "}}"...)
	default:
		// Unknown, removed in this era (ping, initialize in modern;
		// server/discover in legacy), or a feature this server does not
		// declare (prompts/*, resources/*, logging/setLevel,
		// completion/*, subscriptions/listen).
		e = d.methodNotFound()
	}
	if e != nil {
		if pooled != nil {
			pageBufs.Put(pooled)
		}
		d.log.Debug("refused request", "method", msg.method, "code", e.code, "reason", e.msg)
		return errorReply(msg.id, *e)
	}
	return Reply{Status: http.StatusOK, Body: body, pooled: pooled}
}

// dispatcher carries one request through Dispatch.
type dispatcher struct {
	ctx  context.Context
	core *proxy.Core
	req  *Request
	msg  *message
	log  *slog.Logger

	modern  bool
	version string // the revision the answer is shaped for; "" for initialize
}

// negotiate decides the era and revision and checks the headers against
// the body (mcp-spec-notes §1.3, §2.2).
func (d *dispatcher) negotiate() *rpcError {
	m, hdr := d.msg, d.req.Headers
	if m.meta != nil && m.meta[0] != '{' {
		return badParams("params._meta must be an object")
	}
	if m.metaVersion == nil {
		if hdr != nil && modernOrLater(hdr.ProtocolVersion) {
			return badParams("missing params._meta[\"" + metaProtocolVersion + "\"]: required with MCP-Protocol-Version " + hdr.ProtocolVersion)
		}
		switch {
		case m.method == "initialize":
			// Negotiated from the body; never needs the header (L-HTTP).
		case hdr == nil:
			d.version = LatestLegacyVersion
		case hdr.ProtocolVersion == "":
			d.version = DefaultLegacyVersion
		case legacyVersion(hdr.ProtocolVersion):
			d.version = hdr.ProtocolVersion
		default:
			return unsupportedVersion(hdr.ProtocolVersion)
		}
		return nil
	}

	d.modern = true
	v, ok := stringValue(m.metaVersion)
	if !ok {
		return badParams("params._meta[\"" + metaProtocolVersion + "\"] must be a string")
	}
	if hdr != nil {
		switch hdr.ProtocolVersion {
		case "":
			return headerMismatch("missing MCP-Protocol-Version header")
		case v:
		default:
			return headerMismatch("MCP-Protocol-Version header does not match params._meta")
		}
	}
	if v != ModernVersion {
		return unsupportedVersion(v)
	}
	d.version = v
	if m.metaCaps == nil {
		return badParams("missing params._meta[\"" + metaClientCapabilities + "\"]")
	}
	if m.metaCaps[0] != '{' {
		return badParams("params._meta[\"" + metaClientCapabilities + "\"] must be an object")
	}
	if hdr == nil {
		return nil
	}
	if hdr.Method == "" {
		return headerMismatch("missing Mcp-Method header")
	}
	if hm, err := decodeHeaderValue(hdr.Method); err != nil || hm != m.method {
		return headerMismatch("Mcp-Method header does not match the method")
	}
	if m.method == "tools/call" {
		if hdr.Name == "" {
			return headerMismatch("missing Mcp-Name header")
		}
		hn, err := decodeHeaderValue(hdr.Name)
		if err != nil {
			return headerMismatch("Mcp-Name header is not valid =?base64?…?=")
		}
		// A body without a string name is -32602 from tools/call.
		if name, ok := stringValue(m.name); ok && hn != name {
			return headerMismatch("Mcp-Name header does not match params.name")
		}
	}
	return nil
}

func (d *dispatcher) methodNotFound() *rpcError {
	status := http.StatusOK // legacy: see errors.go
	// subscriptions/listen exists only in the modern era; we offer no
	// notification types, so it is 404 (mcp-spec-notes §3.6, option b)
	// however it arrives.
	if d.modern || d.msg.method == "subscriptions/listen" {
		status = http.StatusNotFound
	}
	return &rpcError{status: status, code: codeMethodNotFound, msg: "method not found: " + truncate(d.msg.method, 64)}
}

func (d *dispatcher) serverInfo() serverInfo { return serverInfoOf(d.core.Catalog()) }

// discover answers server/discover (DISC).
func (d *dispatcher) discover() []byte {
	b := appendResultStart(make([]byte, 0, 512), d.msg.id)
	b = append(b, `"supportedVersions":[`...)
	for i, v := range SupportedVersions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	b = append(b, `],"capabilities":{"tools":{"listChanged":false}}`...)
	if ins := d.core.Instructions(); ins != "" {
		b = append(b, `,"instructions":`...)
		b = appendString(b, ins)
	}
	b = append(b, `,"ttlMs":`...)
	b = strconv.AppendInt(b, DiscoverTTLMillis, 10)
	b = append(b, `,"cacheScope":"private"`...)
	b = appendModernTail(b, d.serverInfo())
	return append(b, "}}"...)
}

// initialize answers the legacy handshake statelessly (L-LIFE): it echoes
// a supported requested revision or offers LatestLegacyVersion, and issues
// no session.
func (d *dispatcher) initialize() ([]byte, *rpcError) {
	requested, ok := stringValue(d.msg.protocolVersion)
	if !ok {
		return nil, badParamsCall("params.protocolVersion must be a string")
	}
	v := LatestLegacyVersion
	if legacyVersion(requested) {
		v = requested
	}
	b := appendResultStart(make([]byte, 0, 512), d.msg.id)
	b = append(b, `"protocolVersion":`...)
	b = appendString(b, v)
	b = append(b, `,"capabilities":{"tools":{"listChanged":false}},"serverInfo":`...)
	b = appendServerInfo(b, d.serverInfo())
	if ins := d.core.Instructions(); ins != "" {
		b = append(b, `,"instructions":`...)
		b = appendString(b, ins)
	}
	return append(b, "}}"...), nil
}

// toolsList answers tools/list: the tools the principal may see, in
// catalog order, ListPageSize at a time, each object copied as proxy
// encoded it at load.
func (d *dispatcher) toolsList(buf []byte) ([]byte, *rpcError) {
	cat := d.core.Catalog()
	offset := 0
	if c := d.msg.cursor; c != nil && string(c) != "null" {
		s, ok := stringValue(c)
		if !ok {
			return nil, badParamsCall("invalid cursor")
		}
		n, err := decodeCursor(cat.Hash, s)
		if err != nil {
			return nil, badParamsCall("invalid cursor")
		}
		offset = n
	}
	tools := d.core.List(d.ctx, d.req.Principal)
	// A cursor past the end (the caller's list shrank since) is an empty
	// last page, not an error.
	page := tools[min(offset, len(tools)):min(offset+ListPageSize, len(tools))]

	size := 256
	for _, t := range page {
		size += len(t.MCP) + 1
	}
	b := appendResultStart(slices.Grow(buf, size), d.msg.id)
	b = append(b, `"tools":[`...)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.MCP...)
	}
	b = append(b, ']')
	if offset+ListPageSize < len(tools) {
		b = append(b, `,"nextCursor":`...)
		b = appendString(b, encodeCursor(cat.Hash, offset+ListPageSize))
	}
	if d.modern {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, ListTTLMillis, 10)
		b = append(b, `,"cacheScope":"private"`...)
		b = appendModernTail(b, d.serverInfo())
	}
	return append(b, "}}"...), nil
}

// toolsCall answers tools/call through core.Call.
func (d *dispatcher) toolsCall() Reply {
	m := d.msg
	name, ok := stringValue(m.name)
	if !ok {
		return errorReply(m.id, *badParamsCall("params.name must be a string naming a tool"))
	}
	var args []byte
	if m.arguments != nil {
		if m.arguments[0] != '{' {
			return errorReply(m.id, *badParamsCall("params.arguments must be an object"))
		}
		// The schema check and the upstream request see the arguments
		// through encoding/json, where the last duplicate wins; another
		// parser in front of us may have read the first. Refuse the
		// ambiguity, as the envelope decoder does for its own members.
		if dup := duplicateMember(m.arguments); dup != nil {
			return errorReply(m.id, *badParamsCall("duplicate member " + quoteForMsg(dup) + " in params.arguments"))
		}
		args = m.arguments
	}
	d.withAsking()
	res, err := d.core.Call(d.ctx, d.req.Principal, name, args)
	if err == nil && res == nil {
		err = errNilResult
	}
	if err == nil && res.InputRequired != nil && d.modern {
		return d.inputRequiredReply(res.InputRequired)
	}
	if err != nil {
		e, challenge := d.callError(name, err)
		r := errorReply(m.id, e)
		r.Challenge = challenge
		return r
	}

	// The text is escaped into a JSON string: leave room for the quotes
	// of the JSON it usually holds.
	size := 128 + len(res.Text) + len(res.Text)/4 + len(res.Structured)
	pooled := pageBufs.Get().(*[]byte)
	b := appendResultStart(slices.Grow((*pooled)[:0], size), m.id)
	b = append(b, `"content":[{"type":"text","text":`...)
	b = appendString(b, res.Text)
	b = append(b, "}]"...)
	// structuredContent exists since 2025-06-18; older clients get the
	// text block only.
	if res.Structured != nil && (d.modern || d.version >= "2025-06-18") {
		b = append(b, `,"structuredContent":`...)
		b = append(b, res.Structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if d.modern {
		b = appendModernTail(b, d.serverInfo())
	}
	return Reply{Status: http.StatusOK, Body: append(b, "}}"...), pooled: pooled}
}

// serverInfo is the Implementation object, from catalog.server.
type serverInfo struct{ Name, Version, Title string }

func serverInfoOf(cat *catalog.Catalog) serverInfo {
	si := serverInfo{Name: cat.Server.Name, Version: cat.Server.Version, Title: cat.Server.Title}
	if si.Version == "" {
		si.Version = "unknown" // required by the schema; the catalog leaves it optional
	}
	return si
}

func errorReply(id []byte, e rpcError) Reply {
	return Reply{Status: e.status, Body: appendError(nil, id, e.code, e.msg, e.data), code: e.code}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// truncate caps s at n bytes for messages that echo caller input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// metaTraceContext continues a trace named in params._meta when the
// transport carried none (stdio never does; HTTP may send a traceparent
// header, which wins). The upstream calls then join the caller's trace.
func metaTraceContext(ctx context.Context, msg *message) context.Context {
	if msg.metaTraceparent == nil || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	var tp, ts string
	if json.Unmarshal(msg.metaTraceparent, &tp) != nil {
		return ctx
	}
	if msg.metaTracestate != nil {
		json.Unmarshal(msg.metaTracestate, &ts)
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts != "" {
		carrier["tracestate"] = ts
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

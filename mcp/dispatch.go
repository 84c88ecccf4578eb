package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	"github.com/mcpgw/gateway/internal/strictjson"
	"github.com/mcpgw/gateway/proxy"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/internal/text"
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

// capabilities is the one capability this server declares.
var capabilities = raw(`{"tools":{"listChanged":false}}`)

// decodeMessage decodes body into x.msg, or returns the refusal.
func (x *exchange) decodeMessage(body []byte) *failure {
	msg, derr := decode(body)
	if derr != nil {
		x.method = MethodInvalid
		x.log.Debug("refused message", "code", derr.code, "reason", derr.msg)
		k := failInvalidRequest
		if derr.code == codeParseError {
			k = failParse
		}
		x.msg = &message{id: derr.id}
		return fail(k, derr.msg)
	}
	x.msg, x.method = msg, msg.method
	return nil
}

// decodeAndServe is the JSON-RPC part of a verified request: decode,
// then serveRPC.
func (pl *pipeline) decodeAndServe(x *exchange, body []byte) (int, value, *failure) {
	if f := x.decodeMessage(body); f != nil {
		return x.rpcFailure(f)
	}
	return pl.serveRPC(x)
}

// serveRPC answers one decoded JSON-RPC message of a verified caller: the
// limits, then the era and header checks, then the method. It returns the
// HTTP status and the response, nil for an accepted notification or
// response (202, no body), and the failure the response renders, if any.
// The transport is stateless; notifications (initialized, cancelled:
// nothing to cancel on a stateless node) are dropped, and so are legacy
// responses, except those answering a live confirmation (elicit.go).
func (pl *pipeline) serveRPC(x *exchange) (int, value, *failure) {
	m := x.msg
	if m.kind == kindResponse && pl.live != nil {
		return pl.live.deliver(x)
	}
	if m.kind != kindRequest {
		return 202, nil, nil
	}
	call := m.method == "tools/call"
	name, named := stringValue(m.name)
	if call && named {
		name = x.callTarget(name, &m.arguments)
	}
	s, f := pl.admit(x, call && named, name)
	defer s.release()
	if f == nil {
		x.ctx = metaTraceContext(x.ctx, m)
		f = x.negotiate()
	}
	var res value
	if f == nil {
		switch {
		case call:
			res, f = x.toolsCall(name, named)
		case m.method == "tools/list":
			res, f = x.toolsList()
		case m.method == "server/discover" && x.modern:
			res = x.discover()
		case m.method == "initialize" && !x.modern:
			res, f = x.initialize()
		case m.method == "ping" && !x.modern:
			res = object{}
		default:
			// Unknown, removed in this era (ping, initialize in modern;
			// server/discover in legacy), or a feature this server does
			// not declare (prompts/*, resources/*, logging/setLevel,
			// completion/*, subscriptions/listen).
			f = x.methodNotFound()
		}
	}
	if f != nil {
		if x.msg.method != "" && f.kind != failInternal {
			x.log.Debug("refused request", "method", m.method, "code", rpcErrors[f.kind].code, "reason", f.text)
		}
		return x.rpcFailure(f)
	}
	return 200, &response{id: m.id, result: res}, nil
}

// rpcFailure renders f as the JSON-RPC error answering x.msg (id null
// when there is none).
func (x *exchange) rpcFailure(f *failure) (int, value, *failure) {
	var id []byte
	if x.msg != nil {
		id = x.msg.id
	}
	if f.rid == "" {
		f.rid = x.rid
	}
	status, v := rpcError(id, f)
	x.rpcCode = rpcErrors[f.kind].code
	return status, v, f
}

// negotiate decides the era and revision and checks the headers against
// the body (mcp-spec-notes §1.3, §2.2).
func (x *exchange) negotiate() *failure {
	m, hdr := x.msg, x.hdr
	if m.meta != nil && m.meta[0] != '{' {
		return fail(failBadMeta, "params._meta must be an object")
	}
	if m.metaVersion == nil {
		if hdr != nil && modernOrLater(hdr.ProtocolVersion) {
			return fail(failBadMeta, "missing params._meta[\""+metaProtocolVersion+"\"]: required with MCP-Protocol-Version "+hdr.ProtocolVersion)
		}
		switch {
		case m.method == "initialize":
			// Negotiated from the body; never needs the header (L-HTTP).
		case hdr == nil:
			x.version = LatestLegacyVersion
		case hdr.ProtocolVersion == "":
			x.version = DefaultLegacyVersion
		case legacyVersion(hdr.ProtocolVersion):
			x.version = hdr.ProtocolVersion
		default:
			return fail(failUnsupportedVersion, hdr.ProtocolVersion)
		}
		return nil
	}

	x.modern = true
	v, ok := stringValue(m.metaVersion)
	if !ok {
		return fail(failBadMeta, "params._meta[\""+metaProtocolVersion+"\"] must be a string")
	}
	if hdr != nil {
		switch hdr.ProtocolVersion {
		case "":
			return fail(failHeaderMismatch, "missing MCP-Protocol-Version header")
		case v:
		default:
			return fail(failHeaderMismatch, "MCP-Protocol-Version header does not match params._meta")
		}
	}
	if v != ModernVersion {
		return fail(failUnsupportedVersion, v)
	}
	x.version = v
	if m.metaCaps == nil {
		return fail(failBadMeta, "missing params._meta[\""+metaClientCapabilities+"\"]")
	}
	if m.metaCaps[0] != '{' {
		return fail(failBadMeta, "params._meta[\""+metaClientCapabilities+"\"] must be an object")
	}
	if hdr == nil {
		return nil
	}
	if hdr.Method == "" {
		return fail(failHeaderMismatch, "missing Mcp-Method header")
	}
	if hm, err := decodeHeaderValue(hdr.Method); err != nil || hm != m.method {
		return fail(failHeaderMismatch, "Mcp-Method header does not match the method")
	}
	if m.method == "tools/call" {
		if hdr.Name == "" {
			return fail(failHeaderMismatch, "missing Mcp-Name header")
		}
		hn, err := decodeHeaderValue(hdr.Name)
		if err != nil {
			return fail(failHeaderMismatch, "Mcp-Name header is not valid =?base64?…?=")
		}
		// A body without a string name is -32602 from tools/call.
		if name, ok := stringValue(m.name); ok && hn != name {
			return fail(failHeaderMismatch, "Mcp-Name header does not match params.name")
		}
	}
	return nil
}

func (x *exchange) methodNotFound() *failure {
	k := failMethodNotFoundOld // legacy: see errors.go
	// subscriptions/listen exists only in the modern era; we offer no
	// notification types, so it is 404 (mcp-spec-notes §3.6, option b)
	// however it arrives.
	if x.modern || x.msg.method == "subscriptions/listen" {
		k = failMethodNotFound
	}
	return fail(k, "method not found: "+text.Clip(x.msg.method, 64))
}

// modernTail is the tail of a result in the exchange's era: nil for legacy.
func (x *exchange) modernTail() *modernTail {
	if x.modern {
		return x.st.tail
	}
	return nil
}

// discover answers server/discover (DISC).
func (x *exchange) discover() value {
	o := object{
		{"supportedVersions", strs(supportedVersions[:])},
		{"capabilities", capabilities},
	}
	if ins := x.st.cfg.Instructions; ins != "" {
		o = append(o, member{"instructions", str(ins)})
	}
	o = append(o, member{"ttlMs", num(DiscoverTTLMillis)}, member{"cacheScope", str("private")})
	return append(o, x.st.tail.members()...)
}

// initialize answers the legacy handshake statelessly (L-LIFE): it echoes
// a supported requested revision or offers LatestLegacyVersion, and issues
// no session.
func (x *exchange) initialize() (value, *failure) {
	requested, ok := stringValue(x.msg.protocolVersion)
	if !ok {
		return nil, fail(failBadParams, "params.protocolVersion must be a string")
	}
	v := LatestLegacyVersion
	if legacyVersion(requested) {
		v = requested
	}
	o := object{
		{"protocolVersion", str(v)},
		{"capabilities", capabilities},
		{"serverInfo", x.st.info},
	}
	if ins := x.st.cfg.Instructions; ins != "" {
		o = append(o, member{"instructions", str(ins)})
	}
	return o, nil
}

// toolsList answers tools/list: the tools the principal may see, in
// catalog order, ListPageSize at a time, each object copied as proxy
// encoded it at load.
func (x *exchange) toolsList() (value, *failure) {
	offset := 0
	if c := x.msg.cursor; c != nil && string(c) != "null" {
		s, ok := stringValue(c)
		if !ok {
			return nil, fail(failBadParams, "invalid cursor")
		}
		n, err := decodeCursor(x.st.cfg.Hash, s)
		if err != nil {
			return nil, fail(failBadParams, "invalid cursor")
		}
		offset = n
	}
	tools, err := x.st.core.ListIn(x.ctx, x.principal, x.toolset)
	if err != nil {
		return nil, x.classify("", err)
	}
	// A cursor past the end (the caller's list shrank since) is an empty
	// last page, not an error.
	rest := tools[min(offset, len(tools)):]
	r := &listResult{tools: make([][]byte, 0, min(len(rest), ListPageSize)), cache: x.modern, tail: x.modernTail()}
	// outputSchema and structuredContent exist since 2025-06-18: an older
	// client is offered neither (see toolsCall).
	before := !x.modern && x.version < "2025-06-18"
	size := 0
	for _, t := range rest {
		b := t.MCP
		if before && t.MCPBefore20250618 != nil {
			b = t.MCPBefore20250618
		}
		if len(r.tools) == ListPageSize || len(r.tools) > 0 && size+len(b) > ListPageBytes {
			break
		}
		r.tools = append(r.tools, b)
		size += len(b)
	}
	if next := offset + len(r.tools); next < len(tools) {
		r.nextCursor = encodeCursor(x.st.cfg.Hash, next)
	}
	return r, nil
}

// toolsCall answers tools/call through the pipeline's last step.
func (x *exchange) toolsCall(name string, named bool) (value, *failure) {
	m := x.msg
	if !named {
		return nil, fail(failBadParams, "params.name must be a string naming a tool")
	}
	args, f := callArguments(m.arguments, "params.arguments")
	if f != nil {
		return nil, f
	}
	x.withAsking()
	if !x.modern && x.version < "2025-06-18" {
		x.ctx = proxy.WithoutOutputSchemas(x.ctx) // for search_tools' answer
	}
	res, f := x.call(name, args)
	if f != nil {
		return nil, f
	}
	if res.InputRequired != nil && x.modern {
		return x.inputRequired(res.InputRequired), nil
	}
	r := &callResult{text: res.Text, isError: res.IsError, tail: x.modernTail()}
	// structuredContent exists since 2025-06-18; older clients get the
	// text block only.
	if x.modern || x.version >= "2025-06-18" {
		r.structured = res.Structured
	}
	return r, nil
}

// callTarget unwraps a discovery call_tool before anything else sees the
// call, so that rate limits, logs, metrics, approval and audit all name
// the real tool: it returns the tool's name and replaces *args with the
// tool's own arguments. Arguments that are not an object, or have a
// duplicate member, are left for callArguments to refuse: which name they
// meant is ambiguous.
func (x *exchange) callTarget(name string, args *[]byte) string {
	if name != proxy.CallToolName {
		return name // the common case: no second scan of the arguments
	}
	if a := *args; x.st == nil || a != nil && (a[0] != '{' || strictjson.FirstDuplicate(a) != nil) {
		return name
	}
	inner, innerArgs, ok := x.st.core.CallTarget(x.toolset, name, *args)
	if ok {
		*args = innerArgs
	}
	return inner
}

// callArguments checks a call's raw arguments (nil: absent): an object
// without duplicate member names. The schema check and the upstream
// request see the arguments through encoding/json, where the last
// duplicate wins; another parser in front of us may have read the first.
// The ambiguity is refused, as the envelope decoder does for its own
// members. what names the member in messages.
func callArguments(args []byte, what string) ([]byte, *failure) {
	if args == nil {
		return nil, nil
	}
	if args[0] != '{' {
		return nil, fail(failBadParams, what+" must be an object")
	}
	if dup := strictjson.FirstDuplicate(args); dup != nil {
		return nil, fail(failBadParams, "duplicate member "+quoteForMsg(dup)+" in "+what)
	}
	return args, nil
}

// sizeHint is a first buffer size for a response: the pre-encoded parts
// it copies, plus room for escaping.
func sizeHint(v value) int {
	r, ok := v.(*response)
	if !ok {
		return 256
	}
	switch res := r.result.(type) {
	case *callResult:
		return 128 + len(res.text) + len(res.text)/4 + len(res.structured)
	case *listResult:
		n := 256
		for _, t := range res.tools {
			n += len(t) + 1
		}
		return n
	}
	return 512
}

// grow returns buf with room for v.
func grow(buf []byte, v value) []byte { return slices.Grow(buf[:0], sizeHint(v)) }

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

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

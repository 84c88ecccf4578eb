package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/gateway/rendering"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
)

// Options configures a [Core]. The zero value is usable.
type Options struct {
	// Transport carries upstream requests. Nil: a shared pooled transport.
	Transport http.RoundTripper
	// Logger receives operational logs. Nil: discard.
	Logger *slog.Logger
	// Getenv reads the environment (the kill switch). Nil: os.Getenv.
	Getenv func(string) string
	// Audit receives one record per write call. Nil: the Logger.
	Audit AuditSink
	// Now is the clock for caches and for computed times in templates
	// ({now}, {now+ttl}). Nil: time.Now.
	Now func() time.Time
	// Metrics receives call and upstream observations. Nil: none.
	Metrics Metrics
	// Tracer records a span per call and per upstream exchange. Nil: no
	// spans, but a caller's trace context still reaches the upstreams.
	Tracer trace.Tracer
	// Approvals asks a human before writes whose tool has an approval
	//. Nil: such writes are refused.
	Approvals *Approvals
	// BreakerCooldown is how long an upstream's open circuit fails calls
	// fast before letting a probe through. Zero: 5s.
	BreakerCooldown time.Duration
	// Fleet, when it counts in Redis, holds the upstreams' max_concurrent
	// and max_concurrent_per_workspace caps for the whole fleet, as
	// leases. Nil or local: each process holds its own.
	Fleet *fleet.Limiter
}

// Core serves one loaded catalog. It is immutable after New and safe for
// concurrent use; a reload builds a new Core.
type Core struct {
	tracer  trace.Tracer
	metrics Metrics
	cat     *catalog.Catalog
	logger  *slog.Logger
	audit   AuditSink
	policy  *authz.Policy
	prereqs *authz.Prerequisites
	now     func() time.Time
	tools   map[string]*tool
	ups     map[string]*upstream // by name, for Breakers
	order   []*tool

	config    *Config
	approvals *Approvals
	// pendingCaps are approval.max_pending, resolved when the core is
	// built.
	pendingCaps approval.Limits

	lists     sync.Map // listKey → *view
	listCount atomic.Int64

	// index ranks tools for search; meta lists search_tools and
	// call_tool, nil when no endpoint has discovery.
	index *searchIndex
	meta  []*Listed

	// toolsets maps each catalog toolset to the tools it selects.
	toolsets map[string]map[*tool]bool
}

// Catalog returns the catalog c serves.
func (c *Core) Catalog() *catalog.Catalog { return c.cat }

// Listed is one tool as a surface publishes it, encoded once at load.
type Listed struct {
	Tool *catalog.Tool
	// MCP is the MCP Tool object (name, title, description, inputSchema,
	// annotations) as compact JSON.
	MCP []byte
	// MCPBefore20250618 is MCP without outputSchema, for clients on a
	// revision older than 2025-06-18, which has neither outputSchema nor
	// structuredContent; nil when the tool declares no output schema.
	MCPBefore20250618 []byte
	// REST is {name, description, input_schema} as compact JSON.
	REST []byte
}

// Result is the outcome of a call that reached a decision. A tool failure
// (a gate, bad arguments, an upstream fault) is a Result with IsError set,
// not an error: the model should read it.
type Result struct {
	// Structured is the shaped result as a compact JSON object; nil when
	// IsError.
	Structured []byte
	// Text is the text content block: the same result as compact JSON
	// (fenced where untrusted), or the error message when IsError.
	Text    string
	IsError bool
	// Outcome is a bounded label for metrics and audit: ok, tool_error,
	// denied, not_found, truncated, refused, awaiting_approval,
	// output_invalid.
	Outcome string
	// InputRequired is set when the call needs the client's input first
	// (a confirmation); the surface answers resultType input_required.
	InputRequired *InputRequired
}

// msgAuditUnavailable refuses a write whose started record could not be
// written.
const msgAuditUnavailable = "write refused: auditing is unavailable (the audit record could not be written), so nothing was sent upstream; reads still work"

// Outcome labels.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeDenied    = "denied"
	OutcomeNotFound  = "not_found"
	OutcomeTruncated = "truncated"
	OutcomeRefused   = "refused"
	// OutcomeOutputInvalid: the upstream's answer broke the tool's
	// output_schema, and the caller got a tool error saying where.
	OutcomeOutputInvalid = "output_invalid"
	// OutcomeOutputDeparted: a write the upstream performed answered in
	// a shape other than the catalog expects; the caller got the answer
	// with a note saying where it departs. Audited as ok.
	OutcomeOutputDeparted = "output_departed"
	// OutcomeUnknownTool labels calls to a name no tool has, under the tool
	// label UnknownToolLabel, so caller-chosen names never become labels.
	OutcomeUnknownTool = "unknown_tool"
	UnknownToolLabel   = "_unknown"
)

// Metrics receives what the core observes. Labels it is given are bounded
// by the catalog. Implementations must be safe for concurrent use.
type Metrics interface {
	// ToolCall is one finished call with its outcome label.
	ToolCall(tool, outcome string, d time.Duration)
	// Upstream is one upstream exchange; status 0 is a transport failure.
	Upstream(upstream string, status int, d time.Duration)
}

type noMetrics struct{}

func (noMetrics) ToolCall(string, string, time.Duration) {}
func (noMetrics) Upstream(string, int, time.Duration)    {}

// ErrUnknownTool: no enabled tool has that name. Surfaces answer it as a
// protocol error (-32602, REST 404), never as a tool result.
var ErrUnknownTool = errors.New("unknown tool")

// UnknownToolError names the tool that does not exist.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string { return fmt.Sprintf("unknown tool %q", e.Name) }
func (e *UnknownToolError) Unwrap() error { return ErrUnknownTool }

// OutputTooLargeError: a read's result cannot fit its bounds even with its
// list emptied. Surfaces answer HTTP 413 AGENT_OUTPUT_TOO_LARGE.
type OutputTooLargeError struct {
	Tool  string
	Bytes int // size of the smallest rendering tried
	Limit int
}

func (e *OutputTooLargeError) Error() string {
	return fmt.Sprintf("output of %q too large: %d bytes over a %d byte bound", e.Tool, e.Bytes, e.Limit)
}

// ChallengeError: a gate with on_deny: challenge denied the call. Surfaces
// answer HTTP 403 with WWW-Authenticate error="insufficient_scope".
type ChallengeError struct {
	Gate   string
	Scopes []string // every scope the call needs
}

func (e *ChallengeError) Error() string {
	return fmt.Sprintf("gate %q denied: insufficient scope", e.Gate)
}

// tool is a catalog tool with what the core precomputes for it.
type tool struct {
	index        int // in Core.order, and the search index's document number
	def          *catalog.Tool
	up           *upstream
	listed       *Listed
	shape        rendering.ShapeOptions
	render       *rendering.Compiled
	renderItems  *rendering.Compiled // for a wrapped array when no list is named
	path         []pathPart          // the request path, compiled
	redact       []string            // writeOnly arguments, redacted in audit records
	secrets      *secretSet          // what an answer must not echo: the upstream's and the tool's (echo.go)
	notFound     map[int]bool
	notFoundJSON []byte
	// pageDefault and pageMax are the resolved page size bounds of a
	// paged tool (pageArg != "").
	pageArg              string
	pageDefault, pageMax int
	inline               int           // limits.inline_bytes
	auditMax             int           // audit.max_argument_bytes
	keep                 int64         // bytes of a payload answer worth reading; 0: max_response_bytes
	approval             *toolApproval // nil: the tool needs no approval
}

// New builds a Core for cat: it compiles everything a call needs, so a
// call does no parsing of the catalog.
func New(cat *catalog.Catalog, opts *Options) (*Core, error) {
	if opts == nil {
		opts = &Options{}
	}
	c := &Core{cat: cat, logger: opts.Logger, now: opts.Now, tools: make(map[string]*tool, len(cat.Tools))}
	if c.now == nil {
		c.now = time.Now
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	rt := opts.Transport
	if rt == nil {
		rt = sharedTransport
	}
	c.tracer = opts.Tracer
	c.approvals = opts.Approvals
	c.pendingCaps = approval.Limits{PerRequester: cat.ApprovalSettings.MaxPending.PerRequester, PerWorkspace: cat.ApprovalSettings.MaxPending.PerWorkspace}
	c.metrics = opts.Metrics
	if c.metrics == nil {
		c.metrics = noMetrics{}
	}
	switch a := opts.Audit.(type) {
	case *AuditTrail:
		c.audit = a
	case nil:
		c.audit = NewAuditTrail(&LogAudit{Logger: c.logger}, c.logger, nil)
	default:
		// The trail logs a failing sink once, not once per call.
		c.audit = NewAuditTrail(a, c.logger, nil)
	}
	ups := make(map[string]*upstream, len(cat.Upstreams))
	for name, def := range cat.Upstreams {
		cooldown := opts.BreakerCooldown
		if cooldown <= 0 {
			cooldown = breakerCooldown
		}
		u, err := newUpstream(name, def, rt, cooldown)
		if u != nil {
			u.metrics, u.tracer = c.metrics, c.tracer
			if opts.Fleet != nil && opts.Fleet.Mode() == fleet.ModeRedis {
				u.fleet = opts.Fleet
			}
		}
		if err != nil {
			return nil, err
		}
		if def.Auth.Tokens() {
			if u.auth, err = newTokenSource(name, def.Auth, rt, c.now, c.logger); err != nil {
				return nil, err
			}
		}
		ups[name] = u
	}
	c.ups = ups
	c.prereqs = authz.NewPrerequisites(cat.Prerequisites, c.probeFunc(ups), opts.Now)
	c.policy = authz.NewPolicy(cat, &authz.PolicyOptions{Getenv: opts.Getenv, Prerequisites: c.prereqs})
	fenced := false
	for _, def := range cat.Tools {
		t := &tool{def: def, up: ups[def.Request.Upstream]}
		if t.up == nil {
			return nil, fmt.Errorf("tool %q: unknown upstream %q", def.Name, def.Request.Upstream)
		}
		t.redact = writeOnlyArgs(def.Input)
		t.secrets = toolSecrets(def, t.up.secrets)
		t.path = compilePath(def.Request.PathTemplate, def.Request.MultiSegment)
		always := cat.Discovery.AlwaysListed(def)
		t.listed = &Listed{Tool: def, MCP: encodeMCPTool(def, true, always), REST: encodeRESTTool(def)}
		if def.OutputJSON != nil {
			t.listed.MCPBefore20250618 = encodeMCPTool(def, false, always)
		}
		t.shape = shapeOptions(def)
		t.pageArg, t.pageDefault, t.pageMax = pageBounds(def, &cat.Limits)
		t.inline = int(cat.Limits.InlineBytes)
		t.auditMax = int(cat.Audit.MaxArgumentBytes) // 0: auditArgs' default
		if def.Response.Render == catalog.RenderPayload {
			// Enough to judge the cut's encoding, and to see whole a
			// secret that starts before the cut.
			t.keep = int64(t.inline) + utf8.UTFMax + t.echoReach()
		}
		ro := rendering.Options{
			List:            def.Response.List,
			Untrusted:       def.Response.Untrusted,
			Sensitive:       def.Response.Sensitive,
			NoteField:       def.Response.SensitiveNoteField,
			StructuredBytes: int(cat.Limits.StructuredBytes),
			TextBytes:       int(cat.Limits.TextBytes),
		}
		if len(def.Response.Sensitive) > 0 {
			ro.Note = "detail withheld: " + sensitiveNote(cat)
		}
		t.render = rendering.Compile(ro)
		if ro.List == "" {
			ro.List = "items"
			t.renderItems = rendering.Compile(ro)
		}
		// not_found maps a read's answer: a write answered 404 did not
		// happen, and must not read as done. A catalog may still set it
		// on a write (imports did); it is ignored there.
		if nf := def.Response.NotFound; nf != nil && def.Kind != catalog.KindWrite {
			t.notFound = make(map[int]bool, len(nf.Status))
			for _, s := range nf.Status {
				t.notFound[s] = true
			}
			res := nf.Result
			if res == nil {
				res = map[string]any{"found": false}
			}
			t.notFoundJSON, _ = json.Marshal(res)
		}
		t.index = len(c.order)
		c.tools[def.Name] = t
		c.order = append(c.order, t)
		if len(def.Response.Untrusted) > 0 {
			fenced = true
		}
	}
	c.toolsets = make(map[string]map[*tool]bool, len(cat.Toolsets))
	for name, ts := range cat.Toolsets {
		members := map[*tool]bool{}
		for _, t := range c.order {
			if ts.Selects(t.def) {
				members[t] = true
			}
		}
		c.toolsets[name] = members
	}
	// The index serves search_tools and the REST mirror's ?q=; statistics
	// per caller are computed on a view's first search.
	c.index = newSearchIndex(c.order)
	if anyDiscovery(cat) {
		c.meta = metaTools()
	}
	instructions := cat.Server.Instructions
	if fenced {
		instructions = withFenceNotice(instructions)
	}
	c.config = resolveConfig(cat, instructions)
	// The loader refuses these too; a Core is never built with an
	// approval that cannot end or a URL that leads nowhere.
	for _, t := range c.order {
		a := resolveApproval(t)
		switch {
		case a == nil:
		case a.ttl <= 0:
			return nil, fmt.Errorf("tool %q: approval ttl must be greater than 0", t.def.Name)
		case !a.confirm && cat.Gates[a.approvers] == nil:
			return nil, fmt.Errorf("tool %q: approvers names %q, which is not a declared gate", t.def.Name, a.approvers)
		case !a.confirm && c.config.Approvals.Base == "":
			return nil, fmt.Errorf("tool %q: four-eyes approval needs server.admin_path, where approvers decide", t.def.Name)
		}
		t.approval = a
	}
	return c, nil
}

// shapeOptions says how def's answers are shaped, and which of its paths
// must match. A paged tool's nextCursor is optional: the last page has
// none.
func shapeOptions(def *catalog.Tool) rendering.ShapeOptions {
	r := &def.Response
	optional := make(map[string]bool, len(r.Optional))
	for _, o := range r.Optional {
		optional[o] = true
	}
	o := rendering.ShapeOptions{
		Select:         r.Select,
		SelectOptional: optional["select"],
		List:           r.List,
		ListOptional:   optional["list"],
		Paged:          def.Paging != nil && def.Paging.CursorArgument != "",
	}
	for _, f := range r.Fields {
		opt := optional[f.Name] || (f.Name == r.List && optional["list"]) || (o.Paged && f.Name == "nextCursor")
		o.Fields = append(o.Fields, rendering.Field{Name: f.Name, Path: f.Path, Optional: opt})
	}
	return o
}

// Instructions is the server's instructions for the model: the catalog's,
// with the fence notice added when any tool fences untrusted text.
func (c *Core) Instructions() string { return c.config.Instructions }

// Config is c's catalog resolved for the surfaces; see [Config].
func (c *Core) Config() *Config { return c.config }

// List returns the tools tools/list shows p, in catalog order: every tool
// p may see or, where discovery is on for p, the always-listed ones and
// the meta tools search_tools and call_tool. It asks the same question as
// Call, through the same policy.
//
// The result is shared between callers with the same authorization
// signature and must not be modified.
func (c *Core) List(ctx context.Context, p *authz.Principal) []*Listed {
	l, _ := c.ListIn(ctx, p, "")
	return l
}

// ListIn is [Core.List] within the toolset set ("" for the whole
// catalog): the tools p may see that the set selects. An unknown set is
// an [*UnknownToolsetError].
func (c *Core) ListIn(ctx context.Context, p *authz.Principal, set string) ([]*Listed, error) {
	v, err := c.view(ctx, p, set)
	if err != nil {
		return nil, err
	}
	return v.listed, nil
}

// listKey keys the list cache: one list per toolset and signature.
type listKey struct {
	set string
	sig authz.Signature
}

// maxListSignatures caps the per-signature list cache.
const maxListSignatures = 4096

// Call calls the tool name for p with args (a JSON object, or empty).
func (c *Core) Call(ctx context.Context, p *authz.Principal, name string, args []byte) (*Result, error) {
	return c.CallIn(ctx, p, "", name, args)
}

// CallIn is [Core.Call] within the toolset set ("" for the whole
// catalog): a tool the set does not select is an unknown tool, exactly as
// a name no tool has. An unknown set is an [*UnknownToolsetError].
func (c *Core) CallIn(ctx context.Context, p *authz.Principal, set, name string, args []byte) (*Result, error) {
	members, err := c.toolset(set)
	if err != nil {
		return nil, err
	}
	if discoveryEnabled(c.cat.DiscoveryFor(set)) {
		switch name {
		case catalog.SearchToolsName:
			// A call like any other: a caller the view gate turns away is
			// refused (challenged, when the gate says so), not answered
			// with an empty list.
			if d := c.policy.Decide(ctx, p, &catalog.Tool{Name: name}); !d.Allowed {
				c.metrics.ToolCall(catalog.SearchToolsName, OutcomeDenied, 0)
				if d.Challenge != nil {
					return &Result{IsError: true, Text: d.Reason, Outcome: OutcomeDenied}, &ChallengeError{Gate: d.ChallengeGate, Scopes: d.Challenge.Scopes}
				}
				return toolError(OutcomeDenied, d.Reason), nil
			}
			res := c.searchTools(ctx, p, set, args)
			c.metrics.ToolCall(catalog.SearchToolsName, res.Outcome, 0)
			return res, nil
		case catalog.CallToolName:
			inner, innerArgs, err := unwrapCallTool(args)
			if err != nil {
				c.metrics.ToolCall(catalog.CallToolName, OutcomeToolError, 0)
				return toolError(OutcomeToolError, "invalid arguments: "+err.Error()), nil
			}
			name, args = inner, innerArgs
		}
	}
	t := c.inSet(members, name)
	if t == nil {
		c.metrics.ToolCall(UnknownToolLabel, OutcomeUnknownTool, 0)
		return nil, &UnknownToolError{Name: name}
	}
	ctx, span := startSpan(ctx, c.tracer, "tools/call", t.def.Name, trace.SpanKindServer)
	if c.tracer != nil {
		defer span.End()
	}
	start := time.Now()
	var ae *auditEntry
	if t.def.Kind == catalog.KindWrite {
		ae = c.newAuditEntry(p, t, args, start)
	}
	res, status, err := c.call(ctx, p, t, args, ae)
	d := time.Since(start)
	if ae != nil {
		ae.completed(ctx, status, res, err)
	}
	outcome := outcomeOf(res, err)
	c.metrics.ToolCall(t.def.Name, outcome, d)
	if c.tracer != nil {
		span.SetAttributes(attribute.String("gateway.tool", t.def.Name), attribute.String("gateway.outcome", outcome))
	}
	return res, err
}

// Counted returns the tool a call of name in set counts against for rate
// limits: name when p may call that tool there (it is in set, and its
// gates and prerequisites let p call it), "" otherwise. Limits keyed by
// a tool or its upstream then count only calls of tools the caller can
// see: someone who cannot call a tool can neither spend its budget, which
// others share, nor learn from a 429 that it exists. The call itself is
// answered as before (unknown tool, or denied). The discovery meta tools
// count as themselves.
func (c *Core) Counted(ctx context.Context, p *authz.Principal, set, name string) string {
	members, err := c.toolset(set)
	if err != nil || p == nil {
		return ""
	}
	if name == catalog.SearchToolsName || name == catalog.CallToolName {
		if discoveryEnabled(c.cat.DiscoveryFor(set)) {
			return name
		}
		return ""
	}
	if t := c.inSet(members, name); t == nil || !c.policy.Decide(ctx, p, t.def).Allowed {
		return ""
	}
	return name
}

// inSet returns the tool called name when members (a toolset's, nil for
// the whole catalog) select it, else nil: a tool outside the set is
// unknown there.
func (c *Core) inSet(members map[*tool]bool, name string) *tool {
	t := c.tools[name]
	if t != nil && members != nil && !members[t] {
		return nil
	}
	return t
}

func outcomeOf(res *Result, err error) string {
	switch {
	case err == nil:
		return res.Outcome
	case errors.As(err, new(*ChallengeError)):
		return OutcomeDenied
	}
	return OutcomeRefused
}

// call decides, validates, builds and sends. ae is the audit entry of a
// write call (nil for reads): its started record is written just before
// the upstream is called, and a call whose record cannot be written is
// refused with nothing sent.
func (c *Core) call(ctx context.Context, p *authz.Principal, t *tool, raw []byte, ae *auditEntry) (*Result, int, error) {
	d := c.policy.Decide(ctx, p, t.def)
	if !d.Allowed {
		if d.Challenge != nil {
			return &Result{IsError: true, Text: d.Reason, Outcome: OutcomeDenied}, 0, &ChallengeError{Gate: d.ChallengeGate, Scopes: d.Challenge.Scopes}
		}
		return toolError(OutcomeDenied, d.Reason), 0, nil
	}
	args, err := decodeArgs(raw)
	if err != nil {
		return toolError(OutcomeToolError, err.Error()), 0, nil
	}
	// A client that left gets no more work done for it: not the schema's,
	// not the upstream's.
	if err := ctx.Err(); err != nil {
		return abandoned(err), 0, nil
	}
	if err := t.def.Schema.Validate(args); err != nil {
		return toolError(OutcomeToolError, "invalid arguments: "+err.Error()), 0, nil
	}
	applyDefaults(t.def, args)
	applyPaging(t, args)
	dropComputed(t.def.Request.Times, args)
	// What a human approves is what is sent: the arguments after defaults,
	// paging and the canonical number spelling, the same map the request
	// is built from (computed times are the send's own, and not shown).
	var resolved []byte
	if t.approval != nil {
		if resolved, err = json.Marshal(args); err != nil {
			return toolError(OutcomeToolError, "invalid arguments: "+err.Error()), 0, nil
		}
	}
	if err := computeTimes(t.def.Request.Times, args, c.now()); err != nil {
		return toolError(OutcomeToolError, err.Error()), 0, nil
	}
	b := binding{workspace: p.Workspace, actor: p.Actor, subject: p.Subject, queryBound: t.up.queryBound}
	if t.def.Kind == catalog.KindWrite && b.actor == "" {
		return toolError(OutcomeRefused, "write refused: no actor could be resolved from the token"), 0, nil
	}
	if err := ctx.Err(); err != nil {
		return abandoned(err), 0, nil
	}
	req, redirects, err := t.up.buildRequest(t, args, b)
	if err != nil {
		if be := (*bindingError)(nil); errors.As(err, &be) {
			return toolError(OutcomeRefused, err.Error()), 0, nil
		}
		return toolError(OutcomeToolError, err.Error()), 0, nil
	}
	// The started record comes before anything is spent or sent: for a
	// write under approval, before its approval is claimed (so a failed
	// record leaves the approval for the retry), otherwise here.
	begun := false
	begin := func(id, approver string) error {
		if ae == nil {
			return nil
		}
		ae.approvalID, ae.approver = id, approver
		if err := ae.started(ctx); err != nil {
			return err
		}
		begun = true
		return nil
	}
	// A write that needs a human's yes stops here until it has one.
	if res := c.gateApproval(ctx, p, t, resolved, req, begin); res != nil {
		return res, 0, nil
	}
	if ae != nil {
		if !begun && begin("", "") != nil {
			return toolError(OutcomeRefused, msgAuditUnavailable), 0, nil
		}
		// Once sent, a write runs to its answer (within the upstream's
		// timeout) even if the caller leaves: its record must say what
		// the upstream did, not that the call was cut off.
		ctx = context.WithoutCancel(ctx)
		if t.up.auth != nil {
			ctx = withBodyAgain(ctx, req.GetBody)
		}
		sendOnce(req)
		ctx = ae.traceSent(ctx)
	}
	resp, err := t.up.doFor(ctx, req, redirects, b, t.keep)
	if err != nil {
		status := answeredStatus(err)
		if ae != nil && status == 0 && ae.sent.Load() {
			return toolError(OutcomeToolError, err.Error()+" after the request was sent: the upstream may have acted on it, and the gateway did not send it again"), 0, nil
		}
		return toolError(OutcomeToolError, err.Error()), status, nil
	}
	res, err := c.render(t, p, resp)
	if err == nil {
		res = c.checkOutput(t, resp.status, res)
	}
	return res, resp.status, err
}

func toolError(outcome, msg string) *Result {
	return &Result{IsError: true, Text: msg, Outcome: outcome}
}

// abandoned is the result of a call whose client went away before it was
// sent: nothing more is done for it.
func abandoned(err error) *Result {
	return toolError(OutcomeToolError, "call abandoned: the client went away ("+err.Error()+"); nothing was sent upstream")
}

// pageBounds resolves a paged tool's page size argument, default and
// ceiling once, at load.
func pageBounds(def *catalog.Tool, l *catalog.Limits) (arg string, dflt, ceiling int) {
	pg := def.Paging
	if pg == nil || pg.PageSizeArgument == "" {
		return "", 0, 0
	}
	dflt, ceiling = l.PageSize.Default, l.PageSize.Max
	if dflt <= 0 {
		dflt = catalog.DefaultPageSize
	}
	if ceiling <= 0 {
		ceiling = catalog.DefaultMaxPageSize
	}
	if pg.Max > 0 && pg.Max < ceiling {
		ceiling = pg.Max
	}
	return pg.PageSizeArgument, min(dflt, ceiling), ceiling
}

// applyPaging fills a missing page size with the default and clamps a
// larger one to the ceiling.
func applyPaging(t *tool, args map[string]any) {
	if t.pageArg == "" {
		return
	}
	v, ok := args[t.pageArg]
	if !ok || v == nil {
		args[t.pageArg] = json.Number(strconv.Itoa(t.pageDefault))
		return
	}
	// The schema has accepted the value; whatever its spelling (1e9, 20.0,
	// beyond int64), the upstream gets a plain integer no larger than max.
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		switch {
		case err != nil || f > float64(t.pageMax):
			args[t.pageArg] = json.Number(strconv.Itoa(t.pageMax))
		case f == math.Trunc(f) && f >= 1:
			args[t.pageArg] = json.Number(strconv.FormatInt(int64(f), 10))
		}
	}
}

// render turns an upstream answer into the result: shaped, sensitive
// fields withheld unless the triple lock is open, bounded and fenced.
func (c *Core) render(t *tool, p *authz.Principal, r *upstreamResponse) (*Result, error) {
	switch {
	case t.notFound[r.status]:
		return &Result{Structured: t.notFoundJSON, Text: string(t.notFoundJSON), Outcome: OutcomeNotFound}, nil
	case r.status < 200 || r.status > 299:
		return toolError(OutcomeToolError, r.failure(t.up, t.secrets, t.def.Response.ErrorMessage)), nil
	}
	body, ok := r.bodyWithoutSecrets(t.secrets)
	if !ok {
		return toolError(OutcomeToolError, fmt.Sprintf("upstream %s answered %d with a credential the gateway sent it, which could not be taken out of the answer; it is not shown", t.up.name, r.status)), nil
	}
	r.body = body
	var (
		shaped  []byte
		wrapped bool
	)
	switch {
	case t.def.Response.Render == catalog.RenderPayload:
		shaped = rendering.Payload(r.body, r.total, t.inline)
	case rendering.IsEmpty(r.body):
		// 204, or a 200 with no body (Alertmanager's DELETE): the upstream
		// did what was asked and had nothing to say. No path applies.
		e := rendering.Empty(r.status)
		return &Result{Structured: e, Text: string(e), Outcome: OutcomeOK}, nil
	default:
		var err error
		shaped, wrapped, err = rendering.Shape(r.body, t.shape)
		if err != nil {
			// me is declared here, so that a call whose answer shapes
			// well allocates no error target.
			var me *rendering.MissingError
			switch {
			case errors.As(err, &me) && t.def.Kind == catalog.KindWrite:
				// The write was performed: say so, and where the answer
				// departs, never that it failed.
				e := rendering.Empty(r.status)
				return c.departed(t, r.status, &Result{Structured: e, Text: string(e)}, me.Error()+", so only its status is shown"), nil
			case errors.As(err, &me):
				return toolError(OutcomeToolError, fmt.Sprintf("upstream %s answered %d but %v", t.up.name, r.status, me)), nil
			case r.isText():
				// A text answer is data too, bounded like a payload.
				shaped = rendering.Text(r.body, r.total, t.inline)
			case errors.As(err, new(*rendering.UnreadableError)) && t.def.Kind == catalog.KindWrite:
				e := rendering.Empty(r.status)
				return c.departed(t, r.status, &Result{Structured: e, Text: string(e)}, err.Error()+", so only its status is shown"), nil
			case errors.As(err, new(*rendering.UnreadableError)):
				return toolError(OutcomeToolError, fmt.Sprintf("upstream %s answered %d but %v", t.up.name, r.status, err)), nil
			case t.def.Kind == catalog.KindWrite:
				e := rendering.Empty(r.status)
				return c.departed(t, r.status, &Result{Structured: e, Text: string(e)}, fmt.Sprintf("its body is not JSON (%s), so only its status is shown", r.contentType())), nil
			default:
				return toolError(OutcomeToolError, fmt.Sprintf("upstream %s answered %d with a body that is not JSON (%s)", t.up.name, r.status, r.contentType())), nil
			}
		}
	}
	rd := t.render
	if t.renderItems != nil && wrapped {
		rd = t.renderItems
	}
	withhold := false
	if len(t.def.Response.Sensitive) > 0 {
		withhold = !c.policy.Sensitive(p).Open()
	}
	out, err := rd.Render(shaped, withhold, "")
	if err != nil {
		var tl *rendering.TooLargeError
		if !errors.As(err, &tl) {
			return nil, err
		}
		if t.def.Kind == catalog.KindWrite {
			// The upstream has acted: never refuse, or the agent retries a
			// non-idempotent call. Say what happened instead.
			d := rendering.Degraded(r.status)
			return &Result{Structured: d, Text: string(d), Outcome: OutcomeTruncated}, nil
		}
		return nil, &OutputTooLargeError{Tool: t.def.Name, Bytes: tl.Bytes, Limit: tl.Limit}
	}
	res := &Result{Structured: out.Structured, Text: string(out.Text), Outcome: OutcomeOK}
	if out.Dropped > 0 {
		res.Outcome = OutcomeTruncated
	}
	return res, nil
}

// sensitiveNote explains withheld fields without judging a caller: which
// locks must open for the detail to be shown.
func sensitiveNote(cat *catalog.Catalog) string {
	sd := cat.SensitiveData
	gate := "a sensitive_data.gate (none is named)"
	if sd.Gate != "" {
		gate = fmt.Sprintf("the %q gate", sd.Gate)
	}
	env := sd.KillSwitchEnv
	if env == "" {
		env = catalog.DefaultKillSwitchEnv
	}
	return fmt.Sprintf("sensitive data is shown only when the caller passes %s, sensitive_data.expose is true and %s is not set", gate, env)
}

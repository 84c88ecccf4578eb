package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/proxy"

	"github.com/mcpgw/gateway/internal/text"
)

// One pipeline serves every surface (HTTP-MCP in both eras, the REST
// mirror, stdio):
//
//	verify the caller → rate limit (tools/call) → in-flight slot →
//	request id into the core's context → proxy.Core.Call → one outcome
//
// A surface only frames: it reads its input into an [exchange], runs the
// steps below in order, and renders the outcome (a result value, or a
// [failure] through its table in errors.go). The exchange is the one
// per-request value; the principal lives in it and nowhere else.

// state is what serves requests for one installed core: the core, its
// verifier, and everything the wire derives from the core's resolved
// [proxy.Config], built once per core and read-only after.
type state struct {
	core      *proxy.Core
	ver       authz.Verifier
	cfg       *proxy.Config
	hosts     *hostPolicy
	viewScope string // the 401 challenge's scope auth-param, or ""
	tail      *modernTail
	info      object // the Implementation object
}

func newState(core *proxy.Core, ver authz.Verifier) *state {
	cfg := core.Config()
	st := &state{core: core, ver: ver, cfg: cfg, hosts: newHostPolicy(cfg)}
	if len(cfg.ViewScopes) > 0 {
		st.viewScope = "scope=" + quoteParam(strings.Join(cfg.ViewScopes, " "))
	}
	st.info = object{{"name", str(cfg.Server.Name)}, {"version", str(cfg.Server.Version)}}
	if cfg.Server.Title != "" {
		st.info = append(st.info, member{"title", str(cfg.Server.Title)})
	}
	st.tail = &modernTail{info: st.info}
	return st
}

// pipeline is one surface set's shared machinery: the state source, the
// limits and the observers. Every surface of one handler (MCP, REST), or
// one ServeStdio, shares one.
type pipeline struct {
	source  func() (*proxy.Core, authz.Verifier)
	log     *slog.Logger
	metrics Metrics
	limits  *limits
	cur     atomic.Pointer[state]
	live    *liveHub // HTTP only: calls waiting for an elicitation answer (elicit.go)
}

func newPipeline(source func() (*proxy.Core, authz.Verifier), log *slog.Logger, m Metrics, wait time.Duration, fl *fleet.Limiter) *pipeline {
	m = metricsOrNop(m)
	return &pipeline{source: source, log: logger(log), metrics: m, limits: newLimits(wait, m, fl)}
}

// state returns the state of the current core, or nil when there is no
// core or no verifier: the server is not initialised.
func (pl *pipeline) state() *state {
	if pl.source == nil {
		return nil
	}
	core, ver := pl.source()
	if core == nil || ver == nil {
		return nil
	}
	if st := pl.cur.Load(); st != nil && st.core == core && st.ver == ver {
		return st
	}
	st := newState(core, ver)
	pl.cur.Store(st)
	return st
}

// exchange is one request on its way through the pipeline: what the
// surface read, what the steps learned, and what the access log says.
type exchange struct {
	ctx context.Context
	st  *state // nil: not initialised
	rid string
	log *slog.Logger // adds request_id

	ridLog ridHandler  // log's handler
	logv   slog.Logger // what log points to

	principal *authz.Principal // set by verify
	toolset   string           // the toolset the endpoint serves; "" for the whole catalog

	// The access log line and the request metric.
	surface string
	method  string // JSON-RPC method or "VERB /route"; caller input, truncated
	tool    string // tools/call only
	status  int
	rpcCode int // JSON-RPC error code, 0 when none
	start   time.Time

	// JSON-RPC surfaces.
	msg     *message
	hdr     *Headers // nil on stdio: header checks are skipped
	hdrv    Headers  // what hdr points to on HTTP
	modern  bool
	version string      // the revision the answer is shaped for; "" for initialize
	live    *liveStream // HTTP POST that may turn into an SSE stream (elicit.go); nil elsewhere
}

// begin starts an exchange on surface.
func (pl *pipeline) begin(ctx context.Context, surface, method string) *exchange {
	rid := newRequestID()
	x := &exchange{ctx: ctx, st: pl.state(), rid: rid, ridLog: ridHandler{pl.log.Handler(), rid}, surface: surface, method: method, start: time.Now()}
	// The logger and its handler live in the exchange, which saves two
	// allocations a request.
	x.logv = *slog.New(&x.ridLog)
	x.log = &x.logv
	return x
}

// verify is the first step: the bearer token (present false: none was
// sent) becomes the exchange's principal, or a failure.
func (pl *pipeline) verify(x *exchange, token string, present bool) *failure {
	var (
		p   *authz.Principal
		err = authz.ErrNoToken
	)
	if present {
		p, err = x.st.ver.Verify(x.ctx, token)
		if err == nil && p == nil {
			x.log.Error("verifier returned no principal and no error")
			err = authz.ErrInvalidToken
		}
	}
	switch {
	case err == nil:
		x.principal = p
		return nil
	case errors.Is(err, authz.ErrNoToken):
		pl.metrics.AuthFailure(authz.Reason(err))
		return &failure{kind: failNoToken}
	case errors.Is(err, authz.ErrInvalidToken):
		pl.metrics.AuthFailure(authz.Reason(err))
		x.log.Debug("token refused", "error", err, "reason", authz.Reason(err))
		// The reason class, never the token or what was expected of it
		// (RFC 6750 §3).
		return fail(failInvalidToken, authz.Description(err))
	case x.ctx.Err() != nil:
		x.log.Debug("token verification abandoned", "error", err)
		return &failure{kind: failCancelled}
	default:
		// Not the caller's fault (a key set that cannot be fetched, say):
		// no 401, which would send the client to re-authorize for nothing.
		x.log.Error("token verification failed", "error", err)
		return &failure{kind: failAuthUnavailable, rid: x.rid}
	}
}

// admit runs the limits: for a tools/call (call true) the rate limits of
// the principal and, when the caller may call it, the tool (see
// proxy.Core.Counted), then, for every request, an in-flight slot.
// Releasing the slot, even a nil one, gives it back.
func (pl *pipeline) admit(x *exchange, call bool, tool string) (s *slot, f *failure) {
	if call {
		x.tool = tool
		counted := tool // no limit reads it unless ToolKeyed
		if x.st.cfg.ToolKeyed {
			counted = x.st.core.Counted(x.ctx, x.principal, x.toolset, tool)
		}
		if rl := pl.limits.checkRate(x.ctx, x.st.cfg, x.principal, counted); rl != nil {
			x.log.Debug("rate limited", "tool", text.Clip(tool, 128), "limit", rl.kind, "retry_after", rl.retry)
			msg := "rate limited"
			if rl.rule {
				msg = rl.message()
			}
			return nil, &failure{kind: failRateLimited, rate: rl, text: msg}
		}
	}
	s, ok := pl.limits.acquire(x.ctx, x.st.cfg.MaxInFlight, x.log)
	if !ok {
		return nil, &failure{kind: failCancelled}
	}
	return s, nil
}

// call is the last step: the core calls the tool with the request id in
// its context (audit records carry it), and its answer becomes one
// outcome. A tool failure is a result; only what the core reports as an
// error is a failure.
//
// This is the one place every surface's tools/call passes through before
// anything is sent upstream: a decision to hold a write (for approval,
// say) belongs here or in proxy.Core.Call, which decides and audits
// writes before building the upstream request.
func (x *exchange) call(name string, args []byte) (*proxy.Result, *failure) {
	res, err := x.st.core.CallIn(proxy.WithRequestID(x.ctx, x.rid), x.principal, x.toolset, name, args)
	if err == nil && res == nil {
		err = errNilResult
	}
	if err != nil {
		return nil, x.classify(name, err)
	}
	return res, nil
}

// finish writes the access log line, one per request at Info with the
// constant message "request", and records the request metric. It never
// logs tokens, credentials or bodies: only the principal's subject and
// workspace.
func (pl *pipeline) finish(x *exchange) {
	d := time.Since(x.start)
	if x.status == 0 {
		x.status = 200
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("request_id", x.rid),
		slog.String("surface", x.surface),
		slog.String("method", text.Clip(x.method, 64)),
	)
	if x.tool != "" {
		attrs = append(attrs, slog.String("tool", text.Clip(x.tool, 128)))
	}
	attrs = append(attrs, slog.Int("status", x.status))
	if x.rpcCode != 0 {
		attrs = append(attrs, slog.Int("rpc_code", x.rpcCode))
	}
	attrs = append(attrs, slog.Duration("duration", d))
	if p := x.principal; p != nil {
		attrs = append(attrs, slog.String("subject", p.Subject), slog.String("workspace", p.Workspace))
	}
	// The record is handed to the handler as LogAttrs would, less the
	// caller's program counter (runtime.Callers, a tenth of the line's
	// cost): the line's source is always here.
	if h := pl.log.Handler(); h.Enabled(x.ctx, slog.LevelInfo) {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		r.AddAttrs(attrs...)
		_ = h.Handle(x.ctx, r)
	}
	label := x.method
	if x.surface == SurfaceNone {
		label = MethodOther
	}
	pl.metrics.Request(x.surface, MethodLabel(label), x.status, d)
}

// newRequestID returns 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

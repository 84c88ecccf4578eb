package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// The stdio surface serves local agent harnesses that start the gateway
// as a subprocess: newline-delimited JSON-RPC on stdin and stdout (the MCP
// stdio transport), both protocol eras, through the same Dispatch as HTTP,
// so gates, the sensitive-data lock, fences and bounds apply unchanged.
//
// There are no HTTP headers: the header checks of the modern era are
// skipped (a legacy request is shaped for LatestLegacyVersion), and the
// identity comes from one token, given once, verified on every request
// with the verifier of the state serving it. A reload that rotates keys or
// changes the audience therefore applies at once, and a token that
// expires mid-session stops working when it expires. Verifiers cache
// verified tokens (authz token cache), so this costs a hash lookup.
//
// Requests are answered one at a time, in order: a harness's session is
// one agent, and sequential answers keep stdout trivially well-formed.
// notifications/cancelled is therefore never useful and is ignored, like
// every notification; notifications get no output.

// StdioOptions configures [ServeStdio].
type StdioOptions struct {
	// State returns the core and the token verifier for the next message;
	// it is called once per message, so a reload swaps both. Nil, or a nil
	// core or verifier: requests are answered -32603 "mcp server not
	// initialised".
	State func() (*proxy.Core, authz.Verifier)
	// Token is the caller's bearer token (cmd/gateway reads it from
	// GATEWAY_TOKEN). Empty, invalid or expired: every request is answered
	// -31401 "unauthorized"; notifications are still ignored. It is never
	// logged.
	Token string
	// Logger receives diagnostics and the access log (one Info line per
	// request, message "request", surface "stdio"). It must not write to
	// ServeStdio's out. Nil: discard.
	Logger *slog.Logger
	// Metrics receives request, auth, in-flight and rate-limit
	// observations. Nil: none.
	Metrics Metrics
}

// ServeStdio serves newline-delimited JSON-RPC messages read from in,
// writing one response line per request to out, in order; it is the MCP
// stdio transport. Each line is one message: a line longer than
// limits.request_bytes is answered -32600 (id null) and skipped, invalid
// JSON -32700, and reading goes on; blank lines are ignored. Calls run
// with ctx, so cancelling it stops upstream work.
//
// ServeStdio returns nil at the end of in or when ctx ends, and the error
// when reading in or writing out fails. It does not close in or out. A
// goroutine reads in ahead of the answers (one line at most); when ctx
// ends while it is blocked in a Read, it exits after that Read returns.
//
// Errors without HTTP (see errors.go): -31401 unauthorized, -31503 token
// verification unavailable, -31429 rate limited (data {retryAfterMs}),
// -31413 output too large, -31403 insufficient scope.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts *StdioOptions) error {
	sv := &stdioServer{}
	if opts != nil {
		sv.state, sv.token, sv.log, sv.metrics = opts.State, opts.Token, opts.Logger, opts.Metrics
	}
	sv.log = logger(sv.log)
	sv.metrics = metricsOrNop(sv.metrics)
	sv.limits = newLimits(0, sv.metrics)

	lines := make(chan stdioLine)
	done := make(chan struct{})
	defer close(done)
	errc := make(chan error, 1)
	go func() {
		errc <- readLines(in, sv.requestLimit, lines, done)
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case l, ok := <-lines:
			if !ok {
				if err := <-errc; err != nil {
					return fmt.Errorf("reading stdio input: %w", err)
				}
				return nil
			}
			b := sv.serveLine(ctx, l)
			if b == nil {
				continue
			}
			if _, err := out.Write(append(b, '\n')); err != nil {
				return fmt.Errorf("writing stdio output: %w", err)
			}
		}
	}
}

type stdioServer struct {
	state   func() (*proxy.Core, authz.Verifier)
	token   string
	log     *slog.Logger
	metrics Metrics
	limits  *limits
}

func (sv *stdioServer) current() (*proxy.Core, authz.Verifier) {
	if sv.state == nil {
		return nil, nil
	}
	core, ver := sv.state()
	if core == nil || core.Catalog() == nil || ver == nil {
		return nil, nil
	}
	return core, ver
}

// requestLimit is the current limits.request_bytes.
func (sv *stdioServer) requestLimit() int64 {
	if core, _ := sv.current(); core != nil && core.Catalog().Limits.RequestBytes > 0 {
		return int64(core.Catalog().Limits.RequestBytes)
	}
	return int64(catalog.DefaultRequestBytes)
}

// stdioLine is one line of input without its line ending.
type stdioLine struct {
	data     []byte // nil when oversize
	oversize bool
	limit    int64
}

// readLines reads in line by line and sends each line on lines until EOF
// (nil), a read error (returned) or done. A line longer than limit() is
// not kept: it is read through to its end and sent as oversize, so the
// reader stays in step with the framing.
func readLines(in io.Reader, limit func() int64, lines chan<- stdioLine, done <-chan struct{}) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		maxLen := limit()
		var (
			buf  []byte
			over bool
			rerr error
		)
		for {
			frag, err := br.ReadSlice('\n')
			if !over {
				// Two bytes of slack for the "\r\n" trimmed below.
				if int64(len(buf)+len(frag)) > maxLen+2 {
					over, buf = true, nil
				} else {
					buf = append(buf, frag...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			rerr = err
			break
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if int64(len(buf)) > maxLen {
			over, buf = true, nil
		}
		if over || len(buf) > 0 {
			select {
			case lines <- stdioLine{data: buf, oversize: over, limit: maxLen}:
			case <-done:
				return nil
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// serveLine answers one line; nil means no output (a notification, a
// blank line).
func (sv *stdioServer) serveLine(ctx context.Context, l stdioLine) []byte {
	if !l.oversize && len(bytes.TrimSpace(l.data)) == 0 {
		return nil
	}
	rid := newRequestID()
	acc := &access{rid: rid, surface: SurfaceStdio, method: MethodInvalid, start: time.Now()}
	log := withRequestID(sv.log, rid)
	reply := sv.answer(ctx, l, rid, acc, log)
	acc.status, acc.rpcCode = reply.Status, reply.code
	acc.finish(ctx, sv.log, sv.metrics)
	return reply.Body
}

func (sv *stdioServer) answer(ctx context.Context, l stdioLine, rid string, acc *access, log *slog.Logger) Reply {
	if l.oversize {
		log.Debug("refused message", "code", codeInvalidRequest, "reason", "line over limits.request_bytes", "limit", l.limit)
		e := rpcError{status: http.StatusRequestEntityTooLarge, code: codeInvalidRequest, msg: "request over " + strconv.FormatInt(l.limit, 10) + " bytes (limits.request_bytes)"}
		return errorReply(nil, e)
	}
	msg, derr := decode(l.data)
	if derr != nil {
		return decodeErrorReply(log, derr)
	}
	acc.method = msg.method
	if msg.kind != kindRequest {
		return Reply{Status: http.StatusAccepted}
	}
	core, ver := sv.current()
	if core == nil || !core.Catalog().Server.Enabled {
		return errorReply(msg.id, rpcError{status: http.StatusServiceUnavailable, code: codeInternal, msg: "mcp server not initialised"})
	}
	p, e := sv.verify(ctx, ver, rid, log)
	if e != nil {
		return errorReply(msg.id, *e)
	}
	acc.principal = p
	req := &Request{Body: l.data, Principal: p, RequestID: rid, Logger: log}
	return sv.limits.serve(ctx, core, req, msg, acc, log)
}

// verify checks the token with the current verifier; its error answers
// mirror the HTTP surface's 401 and 503.
func (sv *stdioServer) verify(ctx context.Context, ver authz.Verifier, rid string, log *slog.Logger) (*authz.Principal, *rpcError) {
	var (
		p   *authz.Principal
		err = authz.ErrNoToken
	)
	if sv.token != "" {
		p, err = ver.Verify(ctx, sv.token)
		if err == nil && p == nil {
			log.Error("verifier returned no principal and no error")
			err = authz.ErrInvalidToken
		}
	}
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, authz.ErrNoToken):
		sv.metrics.AuthFailure(authz.Reason(err))
		return nil, &rpcError{status: http.StatusUnauthorized, code: codeUnauthorized, msg: "unauthorized: a bearer token is required", data: []byte(`{"error":"unauthorized"}`)}
	case errors.Is(err, authz.ErrInvalidToken):
		sv.metrics.AuthFailure(authz.Reason(err))
		log.Debug("token refused", "error", err, "reason", authz.Reason(err))
		data := appendString([]byte(`{"error":"unauthorized","error_description":`), authz.Description(err))
		return nil, &rpcError{status: http.StatusUnauthorized, code: codeUnauthorized, msg: "unauthorized: the bearer token is invalid or expired", data: append(data, '}')}
	}
	if ctx.Err() != nil {
		log.Debug("token verification abandoned", "error", err)
	} else {
		log.Error("token verification failed", "error", err)
	}
	data := appendString([]byte(`{"error":"unavailable","request_id":`), rid)
	return nil, &rpcError{status: http.StatusServiceUnavailable, code: codeUnavailable, msg: "token verification is unavailable", data: append(data, '}')}
}

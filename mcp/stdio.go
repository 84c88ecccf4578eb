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

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/proxy"
)

// The stdio surface serves local agent harnesses that start the gateway
// as a subprocess: newline-delimited JSON-RPC on stdin and stdout (the MCP
// stdio transport), both protocol eras, through the same pipeline as HTTP,
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
	// Toolset serves one toolset of the catalog, as {mcp_path}/{toolset}
	// does over HTTP; "" serves every tool. A toolset that the current
	// catalog does not declare (a reload removed it) answers every
	// tools/list and tools/call with -32600 "unknown toolset"; callers
	// check it exists before serving (see [proxy.Core.HasToolset]).
	Toolset string
	// Limiter is as [Options.Limiter].
	Limiter *fleet.Limiter
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
	if opts == nil {
		opts = &StdioOptions{}
	}
	sv := &stdioServer{pl: newPipeline(opts.State, opts.Logger, opts.Metrics, 0, opts.Limiter), token: opts.Token, toolset: opts.Toolset}

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
	pl      *pipeline
	token   string
	toolset string
}

// requestLimit is the current limits.request_bytes.
func (sv *stdioServer) requestLimit() int64 {
	if st := sv.pl.state(); st != nil {
		return st.cfg.RequestBytes
	}
	return proxy.DefaultRequestBytes
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
	x := sv.pl.begin(ctx, SurfaceStdio, MethodInvalid)
	x.toolset = sv.toolset
	status, v, _ := sv.answer(x, l)
	x.status = status
	sv.pl.finish(x)
	if v == nil {
		return nil
	}
	return encode(make([]byte, 0, sizeHint(v)+1), v)
}

// answer runs the pipeline for one line: the framing, then the caller's
// token (verified on every request, with the verifier of the state
// serving it), then the message.
func (sv *stdioServer) answer(x *exchange, l stdioLine) (int, value, *failure) {
	if l.oversize {
		x.log.Debug("refused message", "code", codeInvalidRequest, "reason", "line over limits.request_bytes", "limit", l.limit)
		return x.rpcFailure(fail(failLineTooLarge, "request over "+strconv.FormatInt(l.limit, 10)+" bytes (limits.request_bytes)"))
	}
	if f := x.decodeMessage(l.data); f != nil {
		return x.rpcFailure(f)
	}
	if x.msg.kind != kindRequest {
		return http.StatusAccepted, nil, nil
	}
	if x.st == nil || !x.st.cfg.Enabled {
		return x.rpcFailure(&failure{kind: failNotInitialised})
	}
	if f := sv.pl.verify(x, sv.token, sv.token != ""); f != nil {
		return x.rpcFailure(f)
	}
	return sv.pl.serveRPC(x)
}

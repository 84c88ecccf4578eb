package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcpgw/gateway/mcp"
)

// runStdio serves newline-delimited JSON-RPC on stdin/stdout for a local
// agent harness. The identity is the token in GATEWAY_TOKEN, verified like
// a bearer token; logs go to stderr only, so stdout carries nothing but
// protocol.
func runStdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	watch := fs.Bool("watch", true, "reload the catalog when its file changes")
	toolset := fs.String("toolset", "", "serve only this toolset of the catalog (toolsets:)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	logger, auditLog, closeLogs := newLogs(stderr, env)
	defer closeLogs()
	rt, cat, err := loadRuntime(*path, env, logger, auditLog)
	if err != nil {
		return err
	}
	tracer, shutdownTracing, err := setupTracing(ctx, env)
	if err != nil {
		return err
	}
	defer shutdownTracing(context.WithoutCancel(ctx))
	rt.tracer = tracer
	defer rt.closeFleet()
	if err := rt.installFirst(ctx, cat); err != nil {
		return err
	}
	if core, _ := rt.snapshot(); *toolset != "" && (core == nil || !core.HasToolset(*toolset)) {
		return fmt.Errorf("--toolset %q: the catalog declares no such toolset", *toolset)
	}
	if *watch {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go rt.watch(wctx, 250*time.Millisecond)
	}
	token := env.get("GATEWAY_TOKEN")
	if token == "" {
		logger.Warn("GATEWAY_TOKEN is empty: every request will be refused as unauthorized")
	}
	return mcp.ServeStdio(ctx, stdin, stdout, &mcp.StdioOptions{State: rt.snapshot, Token: token, Logger: logger, Metrics: rt.metrics.surfaces(), Toolset: *toolset, Limiter: rt.fleet})
}

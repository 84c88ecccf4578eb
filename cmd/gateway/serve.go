package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// shutdownGrace is how long in-flight calls may finish after a signal.
const shutdownGrace = 25 * time.Second

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	listen := fs.String("listen", envOr(env, "GATEWAY_LISTEN", ""), "listen address (env GATEWAY_LISTEN; default: the catalog's server.listen)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	logger := newLogger(stderr, env)
	cat, err := loadCatalog(*path, env, logger)
	if err != nil {
		return err
	}
	addr := *listen
	if addr == "" {
		addr = cat.Server.Listen
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	st, err := newState(cat, env, logger)
	if err != nil {
		ln.Close()
		return err
	}
	return serve(ctx, ln, st, logger)
}

func newLogger(w io.Writer, env lookupEnv) *slog.Logger {
	level := slog.LevelInfo
	if env.get("GATEWAY_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// loadCatalog loads and logs every problem with its position.
func loadCatalog(path string, env lookupEnv, logger *slog.Logger) (*catalog.Catalog, error) {
	cat, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		var le *catalog.LoadError
		if errors.As(err, &le) {
			for _, p := range le.Problems {
				logger.Error("catalog problem", "problem", p.String())
			}
			return nil, fmt.Errorf("catalog %s has %d problem(s)", path, len(le.Problems))
		}
		return nil, err
	}
	for _, w := range cat.Warnings {
		logger.Warn("catalog warning", "warning", w)
	}
	return cat, nil
}

// state is what serves requests: swapped whole on reload.
type state struct {
	core     *proxy.Core
	verifier authz.Verifier
}

func newState(cat *catalog.Catalog, env lookupEnv, logger *slog.Logger) (*state, error) {
	v, err := authz.NewVerifier(cat.Auth, &authz.VerifierOptions{Getenv: env.get})
	if err != nil {
		return nil, err
	}
	opts := &proxy.Options{Logger: logger, Getenv: env.get}
	if cat.Audit.Path != "" {
		a, err := proxy.OpenFileAudit(cat.Audit.Path)
		if err != nil {
			return nil, fmt.Errorf("audit.path: %w", err)
		}
		opts.Audit = a
	}
	core, err := proxy.New(cat, opts)
	if err != nil {
		return nil, err
	}
	return &state{core: core, verifier: v}, nil
}

// serve runs the HTTP server on ln until ctx is done, then drains.
func serve(ctx context.Context, ln net.Listener, st *state, logger *slog.Logger) error {
	var cur atomic.Pointer[state]
	cur.Store(st)
	handler := mcp.NewHandler(&mcp.Options{
		State: func() (*proxy.Core, authz.Verifier) {
			s := cur.Load()
			return s.core, s.verifier
		},
		Logger: logger,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		s := cur.Load()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"ready","catalog":%q,"tools":%d}`, s.core.Catalog().Hash, len(s.core.Catalog().Tools))
	})
	mux.Handle("/", handler)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	cat := st.core.Catalog()
	logger.Info("serving", "url", "http://"+ln.Addr().String()+cat.Server.MCPPath, "tools", len(cat.Tools), "catalog", cat.File)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", shutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

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
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/mcp"
)

// shutdownGrace is how long in-flight calls may finish after a signal.
const shutdownGrace = 25 * time.Second

// serveOptions are the process-level settings of a running gateway.
type serveOptions struct {
	watch         bool
	metricsListen string
	ready         func() // called once the catalog is installed; may be nil
	// tls serves HTTPS with this certificate, reloaded on SIGHUP; nil
	// serves plain HTTP.
	tls *certificate
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, env lookupEnv) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", envOr(env, "GATEWAY_CATALOG", "catalog.yaml"), "catalog file (env GATEWAY_CATALOG)")
	listen := fs.String("listen", envOr(env, "GATEWAY_LISTEN", ""), "listen address (env GATEWAY_LISTEN; default: the catalog's server.listen)")
	var o serveOptions
	fs.BoolVar(&o.watch, "watch", true, "reload the catalog when its file changes (SIGHUP always reloads)")
	fs.StringVar(&o.metricsListen, "metrics-listen", envOr(env, "GATEWAY_METRICS_LISTEN", ""), "address for Prometheus /metrics, e.g. 127.0.0.1:9464 (env GATEWAY_METRICS_LISTEN; default off)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	logger, auditLog, closeLogs := newLogs(stderr, env)
	defer closeLogs()
	rt, cat, err := loadRuntime(*path, env, logger, auditLog)
	if err != nil {
		return err
	}
	addr := *listen
	if addr == "" {
		addr = cat.Server.Listen
	}
	// server.tls, like listen, is read at start; SIGHUP reloads the files.
	if t := cat.Server.TLS; t != nil {
		if o.tls, err = loadCertificate(t.CertFile, t.KeyFile); err != nil {
			return fmt.Errorf("server.tls: %w", err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serve(ctx, ln, rt, cat, o)
}

func newLogger(w io.Writer, env lookupEnv) *slog.Logger {
	level := slog.LevelInfo
	if env.get("GATEWAY_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(newLineHandler(w, level))
}

// serve runs the gateway on ln until ctx is done, then drains in-flight
// requests. The listener answers at once: the MCP routes say 503 "mcp
// server not initialised" and /readyz 503 until first is installed,
// which waits for the identity provider up to auth.jwt.start_deadline
// (see installFirst).
func serve(ctx context.Context, ln net.Listener, rt *runtime, first *catalog.Catalog, o serveOptions) error {
	logger := rt.logger
	defer paceGC(rt.env.get)()
	if _, err := rt.openFleet(); err != nil {
		return err
	}
	defer rt.closeFleet()
	mux := rt.routes()
	tracer, shutdownTracing, err := setupTracing(ctx, rt.env)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	rt.tracer = tracer
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdownTracing(sctx)
	}()
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 2)
	scheme := "http"
	if o.tls != nil {
		scheme = "https"
		srv.TLSConfig = o.tls.config()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}

	var metricsSrv *http.Server
	if o.metricsListen != "" {
		mln, err := net.Listen("tcp", o.metricsListen)
		if err != nil {
			srv.Close()
			return fmt.Errorf("metrics listener: %w", err)
		}
		metricsSrv = &http.Server{Handler: rt.metricsRoutes(), ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- metricsSrv.Serve(mln) }()
		logger.Info("metrics", "url", "http://"+mln.Addr().String()+"/metrics")
	}

	if addr := rt.env.get("GATEWAY_PPROF_LISTEN"); addr != "" {
		startPprof(addr, logger)
	}
	hup := make(chan os.Signal, 1)
	if rt.load != nil || o.tls != nil {
		// Before the first install, which may wait for the identity
		// provider: a SIGHUP meanwhile waits its turn instead of killing
		// the process.
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	if err := rt.installFirst(ctx, first); err != nil {
		srv.Close()
		if ctx.Err() != nil {
			logger.Info("stopped before the catalog was installed")
			return nil
		}
		return err
	}
	warnListener(logger, ln.Addr(), &first.Server)
	logger.Info("serving", "url", scheme+"://"+ln.Addr().String()+first.Server.MCPPath, "tools", len(first.Tools), "catalog", first.File, "hash", first.Hash)
	if o.ready != nil {
		o.ready()
	}

	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if rt.load != nil && o.watch && rt.path != "" {
		go func() {
			if err := rt.watch(wctx, 250*time.Millisecond); err != nil {
				logger.Warn("catalog watching is off", "error", err)
			}
		}()
	}
	for {
		select {
		case err := <-errc:
			if errors.Is(err, http.ErrServerClosed) {
				continue
			}
			return err
		case <-hup:
			if o.tls != nil {
				o.tls.reload(logger)
			}
			rt.reload("SIGHUP", true)
			continue
		case <-ctx.Done():
		}
		break
	}
	logger.Info("shutting down", "grace", shutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if metricsSrv != nil {
		metricsSrv.Shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// routes is the main listener's handler. chi wires the few routes the
// process owns; everything else is the MCP surface's, which routes by the
// current catalog's paths itself.
func (rt *runtime) routes() http.Handler {
	mux := chi.NewRouter()
	mux.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	})
	// Readiness only: the catalog's path, hash and tool count are for
	// operators, on the metrics listener's /status.
	mux.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if core, _ := rt.snapshot(); core == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"status":"not ready"}`)
			return
		}
		io.WriteString(w, `{"status":"ready"}`)
	})
	mux.Handle("/*", rt.withOAuthServer(traced(mcp.NewHandler(&mcp.Options{State: rt.snapshot, Logger: rt.logger, Metrics: rt.metrics.surfaces(), ApprovalPage: &approvalPage{}, Limiter: rt.fleet}))))
	return mux
}

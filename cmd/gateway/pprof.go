package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves Go's profiler on addr, for operators chasing a CPU or
// memory question (GATEWAY_PPROF_LISTEN; keep it on loopback). It is off
// unless asked for, never on the main listener, and a failure to listen is
// logged, not fatal.
func startPprof(addr string, logger *slog.Logger) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Warn("pprof listener failed", "addr", addr, "error", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("pprof", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	go srv.Serve(ln)
}

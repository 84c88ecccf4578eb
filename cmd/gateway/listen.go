package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mcpgw/gateway/catalog"
)

// certificate is the main listener's TLS certificate, server.tls's pair
// of PEM files, swapped whole on reload: a handshake reads one pointer, so
// it sees the old pair or the new one, never half of each.
type certificate struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// loadCertificate reads the pair; an error names both files.
func loadCertificate(certFile, keyFile string) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certificate) load() error {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("loading certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cur.Store(&pair)
	return nil
}

// reload reads the pair again (SIGHUP, for certificate rotation). A pair
// that does not load leaves the current one serving and is logged.
func (c *certificate) reload(logger *slog.Logger) {
	if err := c.load(); err != nil {
		logger.Error("TLS certificate reload failed; keeping the current certificate", "error", err)
		return
	}
	attrs := []any{"cert_file", c.certFile}
	if leaf := c.cur.Load().Leaf; leaf != nil {
		attrs = append(attrs, "not_after", leaf.NotAfter)
	}
	logger.Info("TLS certificate reloaded", attrs...)
}

// config is the listener's TLS configuration: the current pair for every
// handshake, TLS 1.2 at least.
func (c *certificate) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}
}

// warnListener logs, once at start, what leaves a listener on a
// non-loopback address exposed: no Host check (a DNS-rebinding page can
// reach it under any name) and plain HTTP.
func warnListener(logger *slog.Logger, addr net.Addr, srv *catalog.Server) {
	if addrIsLoopback(addr) {
		return
	}
	if srv.PublicURL == "" && len(srv.AllowedHosts) == 0 {
		logger.Warn("no DNS-rebinding guard on a non-loopback listener: set server.public_url or server.allowed_hosts", "listen", addr.String())
	}
	if srv.TLS == nil {
		logger.Warn("plain HTTP on a non-loopback listener: set server.tls or terminate TLS in front", "listen", addr.String())
	}
}

func addrIsLoopback(addr net.Addr) bool {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// statusDoc is the metrics listener's /status when a catalog serves.
type statusDoc struct {
	Status     string         `json:"status"`
	Catalog    string         `json:"catalog"`
	Hash       string         `json:"hash"`
	DiskHash   string         `json:"disk_hash,omitempty"` // the file on disk, when it differs from hash
	Reloads    int64          `json:"reloads"`
	Tools      int            `json:"tools"`
	LastReload *lastReloadDoc `json:"last_reload,omitempty"`
}

type lastReloadDoc struct {
	OK    bool   `json:"ok"`
	Time  string `json:"time"` // RFC 3339, UTC
	Error string `json:"error,omitempty"`
}

// metricsRoutes is the metrics listener's handler, for operators only:
// Prometheus /metrics and /status, which says what /readyz on the main
// listener does not: the catalog's path and hash, its tool
// count and the reloads so far.
func (rt *runtime) metricsRoutes() http.Handler {
	mm := chi.NewRouter()
	mm.Method(http.MethodGet, "/metrics", rt.metrics.handler())
	mm.Get("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		core, _ := rt.snapshot()
		if core == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"status":"not ready"}`)
			return
		}
		cat := core.Catalog()
		st := statusDoc{Status: "ready", Catalog: cat.File, Hash: cat.Hash, Reloads: rt.reloads.Load(), Tools: len(cat.Tools)}
		if o := rt.lastReload.Load(); o != nil {
			st.LastReload = &lastReloadDoc{OK: o.ok, Time: o.at.UTC().Format(time.RFC3339), Error: o.err}
		}
		// The file on disk, when it is not the one serving (a failed
		// reload, or a change not yet picked up).
		if rt.path != "" {
			if h := fileHash(rt.path); h != "" && h != cat.Hash {
				st.DiskHash = h
			}
		}
		b, _ := json.Marshal(st)
		w.Write(b)
	})
	return mm
}

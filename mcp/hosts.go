package mcp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/mcpgw/gateway/proxy"
)

// hostPolicy is the DNS-rebinding guard (HTTP §Security): which Origin
// and Host headers a request to the MCP and REST routes may carry. It is
// built once per core from its resolved server settings and read-only after.
//
// The gateway's own origin is server.public_url's when set. Without it,
// the request's scheme and Host stand in, which proves nothing on a
// non-loopback listener (the Host is the attacker's choice there), so
// server.allowed_hosts and public_url also turn on a Host check on every
// listener.
type hostPolicy struct {
	// ownOrigin is public_url's origin, normalized; "": the request's.
	ownOrigin string
	// origins are server.allowed_origins, normalized.
	origins []string
	// hosts are the Host values allowed, in lower case: allowed_hosts,
	// and public_url's host with and without its default port. nil:
	// neither is set, and only a loopback listener checks Host.
	hosts map[string]bool
}

func newHostPolicy(srv *proxy.Config) *hostPolicy {
	p := &hostPolicy{}
	for _, a := range srv.AllowedOrigins {
		if n, ok := normalizeOrigin(a); ok {
			p.origins = append(p.origins, n)
		}
	}
	if len(srv.AllowedHosts) > 0 || srv.PublicURL != "" {
		p.hosts = map[string]bool{}
	}
	for _, h := range srv.AllowedHosts {
		p.hosts[strings.ToLower(h)] = true
	}
	if u, err := url.Parse(srv.PublicURL); err == nil && u.Host != "" && srv.PublicURL != "" {
		scheme := strings.ToLower(u.Scheme)
		if n, ok := normalizeOrigin(scheme + "://" + u.Host); ok {
			p.ownOrigin = n
		}
		host, port := strings.ToLower(u.Hostname()), u.Port()
		def := "80"
		if scheme == "https" {
			def = "443"
		}
		if port == "" || port == def {
			// Clients omit a default port, and some send it anyway.
			p.hosts[bracketIPv6(host)] = true
			p.hosts[net.JoinHostPort(host, def)] = true
		} else {
			p.hosts[net.JoinHostPort(host, port)] = true
		}
	}
	return p
}

func bracketIPv6(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// originAllowed implements the Origin check: a request without Origin
// passes (non-browser clients send none); one with Origin passes when it
// is the gateway's own origin (public_url's, else the request's scheme
// and Host) or listed in server.allowed_origins. Comparison ignores case
// and default ports; there is no wildcard. Behind a TLS-terminating proxy
// without public_url the own origin is http://, so the public https://
// origin must be set as public_url or listed.
func (p *hostPolicy) originAllowed(r *http.Request) bool {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true
	}
	if len(vals) > 1 {
		return false
	}
	origin, ok := normalizeOrigin(vals[0])
	if !ok {
		return false // "null", paths, garbage
	}
	own := p.ownOrigin
	if own == "" {
		own, _ = normalizeOrigin(requestScheme(r) + "://" + r.Host)
	}
	if own != "" && own == origin {
		return true
	}
	for _, a := range p.origins {
		if a == origin {
			return true
		}
	}
	return false
}

// normalizeOrigin returns scheme://host[:port] in lower case, without a
// default port, or false when s is not an origin.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := bracketIPv6(strings.ToLower(u.Hostname()))
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// hostAllowed is the Host check. With server.allowed_hosts or public_url
// set, on every listener the Host must be one of them (host:port as
// listed; a Host without a port matches an entry without one; case
// ignored). Without either, on a loopback listener the Host must name
// loopback (localhost, 127.0.0.1 or [::1], any port), so a browser page
// on an attacker's domain that resolves to 127.0.0.1 cannot reach the
// gateway; other listeners are not restricted, and the gateway warns at
// start that they are not.
func (p *hostPolicy) hostAllowed(r *http.Request) bool {
	if p.hosts != nil {
		return p.hosts[strings.ToLower(r.Host)]
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	if !localIsLoopback(la) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	return strings.EqualFold(host, "localhost") || host == "127.0.0.1" || host == "::1"
}

// localIsLoopback reports whether the listener's address is loopback,
// without formatting it on the common TCP path (this runs per request).
func localIsLoopback(la net.Addr) bool {
	if tcp, ok := la.(*net.TCPAddr); ok {
		return tcp.IP.IsLoopback()
	}
	ap, err := netip.ParseAddrPort(la.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

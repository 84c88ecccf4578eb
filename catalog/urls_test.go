package catalog

import (
	"fmt"
	"testing"
)

// TestAllowedOrigins: an origin is scheme://host[:port] with scheme http
// or https and nothing after; the Origin guard compares the header with
// these strings, so anything else could never match or would match what
// the operator did not mean.
func TestAllowedOrigins(t *testing.T) {
	const notOrigin = "must be an origin: scheme://host[:port], http or https, with nothing after"
	for _, tt := range []struct {
		origin string
		want   string // the rule broken, "" when accepted
	}{
		{"http://localhost", ""},
		{"http://localhost:8080", ""},
		{"https://app.example.com", ""},
		{"https://app.example.com:8443", ""},
		{"http://127.0.0.1:65535", ""},
		{"http://[::1]:3000", ""},
		{"http://h:0", ""},
		{"ftp://app.example.com", notOrigin},
		{"ws://app.example.com", notOrigin},
		{"wss://app.example.com", notOrigin},
		{"file:///etc/passwd", notOrigin},
		{"file://host", notOrigin},
		{"javascript:alert(1)", notOrigin},
		{"null", notOrigin},
		{"app.example.com", notOrigin},
		{"//app.example.com", notOrigin},
		{"HTTP://app.example.com", ""}, // url.Parse lowers the scheme
		{"https://app.example.com/", notOrigin},
		{"https://app.example.com/path", notOrigin},
		{"https://app.example.com?q=1", notOrigin},
		{"https://app.example.com?", notOrigin},
		{"https://app.example.com#f", notOrigin},
		{"https://user@app.example.com", notOrigin},
		{"https://user:pw@app.example.com", notOrigin},
		{"https:app.example.com", notOrigin},
		{"https://", notOrigin},
		{"https://:8443", notOrigin},
		{"https://app.example.com:65536", "has an invalid port"},
		{"https://app.example.com:99999", "has an invalid port"},
		{"https://app.example.com:x", notOrigin},
		{"", notOrigin},
	} {
		if got := originRule(tt.origin); got != tt.want {
			t.Errorf("originRule(%q) = %q, want %q", tt.origin, got, tt.want)
		}
	}
	// The rule is wired to every entry, at its own position.
	runProblems(t, []problemCase{
		{"origins", doc{"server": `{ name: t, allowed_origins: ["https://ok.example", "ftp://x.example", "http://y.example/", "http://ok2.example:80"] }`}, []string{
			`server: allowed_origins entry "ftp://x.example" ` + notOrigin,
			`server: allowed_origins entry "http://y.example/" ` + notOrigin,
		}},
	})
}

// TestAllowedHosts: an allowed_hosts entry is what a Host header carries:
// a name or address with an optional port, IPv6 in brackets.
func TestAllowedHosts(t *testing.T) {
	const want = "must be a host name or address with an optional port, like mcp.example.com or mcp.example.com:8443"
	const brackets = "must write an IPv6 address in brackets, like [::1] (the form a Host header carries)"
	for _, tt := range []struct{ host, want string }{
		{"mcp.example.com", ""},
		{"mcp.example.com:8443", ""},
		{"mcp.example.com:65535", ""},
		{"mcp.example.com:0", ""},
		{"127.0.0.1", ""},
		{"127.0.0.1:8080", ""},
		{"[::1]", ""},
		{"[::1]:8443", ""},
		{"localhost", ""},
		{"mcp.example.com:65536", "has an invalid port"},
		{"mcp.example.com:-1", "has an invalid port"},
		{"mcp.example.com:http", "has an invalid port"},
		{"::1", brackets},
		{"fe80::1:8443", brackets},
		{"a:b:c", brackets},
		{"https://mcp.example.com", want},
		{"mcp.example.com/", want},
		{"mcp.example.com?x", want},
		{"mcp.example.com#x", want},
		{"user@mcp.example.com", want},
		{"", want},
		{"[]", want},
		{"[]:80", want},
		{":8443", want},
		{"mcp example.com", want},
		{"mcp.example.com\t", want},
		{"mcp.example.com\r\nX-Evil", want},
		{"mcp.example.com:80\r\n", "has an invalid port"},
		{"mcp\x00.example.com", want},
		{"[[::1]]", want},
	} {
		if got := hostRule(tt.host); got != tt.want {
			t.Errorf("hostRule(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
	runProblems(t, []problemCase{
		{"hosts", doc{"server": `{ name: t, allowed_hosts: ["ok.example", "::1", "x.example:99999", "[::1]:1"] }`}, []string{
			`server: allowed_hosts entry "::1" ` + brackets,
			`server: allowed_hosts entry "x.example:99999" has an invalid port`,
		}},
	})
}

// TestHTTPURLs: public_url, base_url, jwks_url, resource and the
// authorization servers are absolute http(s) URLs with a host, without
// credentials, query or fragment.
func TestHTTPURLs(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://mcp.example.com", ""},
		{"https://mcp.example.com/mcp", ""},
		{"http://127.0.0.1:8080/", ""},
		{"http://[::1]:8080/x", ""},
		{"", "is required"},
		{"http://[::1", "is not a URL"},
		{"ftp://mcp.example.com", "must be an absolute http:// or https:// URL"},
		{"mcp.example.com/mcp", "must be an absolute http:// or https:// URL"},
		{"/mcp", "must be an absolute http:// or https:// URL"},
		{"ws://mcp.example.com", "must be an absolute http:// or https:// URL"},
		{"https://", "must name a host"},
		{"https://:443/mcp", "must name a host"},
		{"https:mcp.example.com", "must name a host"},
		{"https://u:p@mcp.example.com", "must not hold credentials (set them under headers)"},
		{"https://u@mcp.example.com", "must not hold credentials (set them under headers)"},
		{"https://mcp.example.com/?a=1", "must not hold a query or fragment"},
		{"https://mcp.example.com/?", "must not hold a query or fragment"},
		{"https://mcp.example.com/#top", "must not hold a query or fragment"},
	} {
		if got := httpURLRule(tt.url); got != tt.want {
			t.Errorf("httpURLRule(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	runProblems(t, []problemCase{
		{"public_url-ok", doc{"server": `{ name: t, public_url: "https://mcp.example.com/mcp" }`}, nil},
		{"public_url-ftp", doc{"server": `{ name: t, public_url: "ftp://mcp.example.com" }`}, one("server: public_url must be an absolute http:// or https:// URL")},
		{"public_url-query", doc{"server": `{ name: t, public_url: "https://mcp.example.com/?x" }`}, one("server: public_url must not hold a query or fragment")},
		{"base_url-credentials", doc{"upstreams": `{ svc: { base_url: "http://u:p@127.0.0.1:1" } }`},
			one(`upstream "svc": base_url must not hold credentials (set them under headers)`)},
		{"base_url-missing", doc{"upstreams": `{ svc: { timeout: 1s } }`}, one(`upstream "svc": base_url is required`)},
		{"resource_metadata", doc{"auth": `{ resource_metadata: { resource: "mcp.example.com", authorization_servers: ["https://idp.example.com", "https://idp.example.com/#x"] }, jwt: { jwks_url: "https://idp.example.com/jwks", algorithms: [RS256], issuer: i, audience: a } }`}, []string{
			"auth.resource_metadata: resource must be an absolute http:// or https:// URL",
			`auth.resource_metadata: authorization server "https://idp.example.com/#x" must not hold a query or fragment`,
		}},
	})
}

// TestJWKSURLLoopbackRule: plain http for the key source is allowed only
// on a loopback host (or when the operator says the network is trusted);
// a name that merely starts or ends like one is not loopback.
func TestJWKSURLLoopbackRule(t *testing.T) {
	insecure := func(u string) []string {
		return one(fmt.Sprintf(`auth.jwt: jwks_url %q is plain http on a non-loopback host: anyone on the path could serve their own keys; use https (or set allow_insecure_jwks_url: true on a network you trust)`, u))
	}
	var cases []problemCase
	for _, tt := range []struct {
		url   string
		allow bool
		want  []string
	}{
		{"http://127.0.0.1/jwks", false, nil},
		{"http://127.255.255.254:81/jwks", false, nil},
		{"http://localhost:8081/jwks", false, nil},
		{"http://LocalHost/jwks", false, nil},
		{"http://[::1]/jwks", false, nil},
		{"http://[::ffff:127.0.0.1]/jwks", false, nil},
		{"https://idp.example.com/jwks", false, nil},
		{"https://10.0.0.5/jwks", false, nil},
		{"http://10.0.0.5/jwks", true, nil},
		{"http://10.0.0.5/jwks", false, insecure("http://10.0.0.5/jwks")},
		{"http://128.0.0.1/jwks", false, insecure("http://128.0.0.1/jwks")},
		{"http://localhost.evil.example/jwks", false, insecure("http://localhost.evil.example/jwks")},
		{"http://127.0.0.1.nip.io/jwks", false, insecure("http://127.0.0.1.nip.io/jwks")},
		{"http://[::2]/jwks", false, insecure("http://[::2]/jwks")},
		{"http://0.0.0.0/jwks", false, insecure("http://0.0.0.0/jwks")},
		{"ftp://127.0.0.1/jwks", false, one("auth.jwt: jwks_url must be an absolute http:// or https:// URL")},
		{"ftp://127.0.0.1/jwks", true, one("auth.jwt: jwks_url must be an absolute http:// or https:// URL")},
	} {
		cases = append(cases, problemCase{fmt.Sprintf("%s-allow-%t", tt.url, tt.allow),
			doc{"auth": fmt.Sprintf(`{ jwt: { jwks_url: %q, allow_insecure_jwks_url: %t, algorithms: [RS256], issuer: i, audience: a } }`, tt.url, tt.allow)}, tt.want})
	}
	runProblems(t, cases)
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"localhost.": false, "localhost.example": false, "127.0.0.1.example": false, "::": false, "": false, "[::1]": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %t, want %t", host, got, want)
		}
	}
}

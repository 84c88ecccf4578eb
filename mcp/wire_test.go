package mcp

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// modernBody builds a modern request with the given method, params members
// (without braces) and _meta members.
func modernBody(method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta += "," + params
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + `}}`
}

func modernHeaders(method, name string) *Headers {
	return &Headers{ProtocolVersion: "2026-07-28", Method: method, Name: name}
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		hdr     *Headers
		code    int // 0: accepted
		status  int
		modern  bool
		version string
	}{
		{"modern-tools-list", modernBody("tools/list", ""), modernHeaders("tools/list", ""), 0, 0, true, "2026-07-28"},
		{"modern-tools-call", modernBody("tools/call", `"name":"get_item"`), modernHeaders("tools/call", "get_item"), 0, 0, true, "2026-07-28"},
		{"modern-base64-name", modernBody("tools/call", `"name":"caf\u00e9"`), modernHeaders("tools/call", "=?base64?Y2Fmw6k=?="), 0, 0, true, "2026-07-28"},
		{"modern-without-transport-headers", modernBody("tools/list", ""), nil, 0, 0, true, "2026-07-28"},
		{"modern-missing-version-header", modernBody("tools/list", ""), &Headers{Method: "tools/list"}, codeHeaderMismatch, 400, true, ""},
		{"modern-version-header-mismatch", modernBody("tools/list", ""), &Headers{ProtocolVersion: "2025-11-25", Method: "tools/list"}, codeHeaderMismatch, 400, true, ""},
		{"modern-missing-mcp-method", modernBody("tools/list", ""), modernHeaders("", ""), codeHeaderMismatch, 400, true, ""},
		{"modern-wrong-mcp-method", modernBody("tools/list", ""), modernHeaders("tools/call", ""), codeHeaderMismatch, 400, true, ""},
		{"modern-mcp-method-is-case-sensitive", modernBody("tools/list", ""), modernHeaders("Tools/List", ""), codeHeaderMismatch, 400, true, ""},
		{"modern-missing-mcp-name", modernBody("tools/call", `"name":"get_item"`), modernHeaders("tools/call", ""), codeHeaderMismatch, 400, true, ""},
		{"modern-wrong-mcp-name", modernBody("tools/call", `"name":"get_item"`), modernHeaders("tools/call", "cancel_item"), codeHeaderMismatch, 400, true, ""},
		{"modern-broken-base64-name", modernBody("tools/call", `"name":"get_item"`), modernHeaders("tools/call", "=?base64?***?="), codeHeaderMismatch, 400, true, ""},
		{"modern-unsupported-version", strings.Replace(modernBody("tools/list", ""), "2026-07-28", "2099-01-01", 1), &Headers{ProtocolVersion: "2099-01-01", Method: "tools/list"}, codeUnsupportedVersion, 400, true, ""},
		{"modern-version-not-a-string", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, nil, codeInvalidParams, 400, true, ""},
		{"modern-missing-client-capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders("tools/list", ""), codeInvalidParams, 400, true, ""},
		{"meta-not-an-object", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":7}}`, nil, codeInvalidParams, 400, false, ""},
		{"modern-header-without-meta-version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, modernHeaders("tools/list", ""), codeInvalidParams, 400, false, ""},
		{"later-header-without-meta-version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "2027-01-01"}, codeInvalidParams, 400, false, ""},
		{"legacy-without-header-assumes-2025-03-26", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{}, 0, 0, false, "2025-03-26"},
		{"legacy-with-header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "2025-06-18"}, 0, 0, false, "2025-06-18"},
		{"legacy-2024-11-05-header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "2024-11-05"}, 0, 0, false, "2024-11-05"},
		{"legacy-unsupported-header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "2023-01-01"}, codeUnsupportedVersion, 400, false, ""},
		{"legacy-garbage-header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "latest"}, codeUnsupportedVersion, 400, false, ""},
		{"initialize-ignores-missing-header", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, &Headers{}, 0, 0, false, ""},
		{"legacy-skips-mcp-method-check", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &Headers{ProtocolVersion: "2025-11-25", Method: "nonsense"}, 0, 0, false, "2025-11-25"},
		{"stdio-legacy-is-latest-legacy", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 0, 0, false, "2025-11-25"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, de := decode([]byte(tc.body))
			if de != nil {
				t.Fatalf("decode(%s): %s", tc.body, de.msg)
			}
			d := &exchange{ctx: context.Background(), hdr: tc.hdr, msg: m, log: logger(nil)}
			f := d.negotiate()
			if tc.code == 0 {
				if f != nil {
					t.Fatalf("negotiate = %d %q, want accepted", rpcErrors[f.kind].code, f.text)
				}
				if d.modern != tc.modern || d.version != tc.version {
					t.Fatalf("negotiate = modern %v version %q, want %v %q", d.modern, d.version, tc.modern, tc.version)
				}
				return
			}
			if f == nil {
				t.Fatalf("negotiate accepted, want %d", tc.code)
			}
			if e := rpcErrors[f.kind]; e.code != tc.code || e.status != tc.status {
				t.Fatalf("negotiate = %d/%d %q, want %d/%d", e.code, e.status, f.text, tc.code, tc.status)
			}
		})
	}
}

func TestUnsupportedVersionListsSupported(t *testing.T) {
	_, v := rpcError(nil, fail(failUnsupportedVersion, "2099-01-01"))
	data := encode(nil, v.(*response).err.data)
	want := `{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"requested":"2099-01-01"}`
	if string(data) != want {
		t.Fatalf("data = %s, want %s", data, want)
	}
}

func TestCursor(t *testing.T) {
	const hash = "0123456789abcdef0123456789abcdef"
	for _, off := range []int{ListPageSize, 2 * ListPageSize, 10 * ListPageSize} {
		c := encodeCursor(hash, off)
		got, err := decodeCursor(hash, c)
		if err != nil || got != off {
			t.Errorf("decodeCursor(encodeCursor(%d)) = %d, %v", off, got, err)
		}
	}
	bad := map[string]string{
		"empty":              "",
		"not-base64":         "!!!",
		"other-catalog":      encodeCursor("fedcba98", 100),
		"other-format-tag":   b64("v2.01234567.100"),
		"zero":               b64("v1.01234567.0"),
		"leading-zero":       b64("v1.01234567.0100"),
		"negative":           b64("v1.01234567.-100"),
		"plus-sign":          b64("v1.01234567.+100"),
		"no-offset":          b64("v1.01234567."),
		"huge":               b64("v1.01234567.99999999999999999999"),
		"too-long":           strings.Repeat("A", 100),
		"padded-base64":      b64("v1.01234567.100") + "==",
		"missing-separators": b64("v101234567100"),
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			if n, err := decodeCursor(hash, c); err == nil {
				t.Fatalf("decodeCursor(%q) = %d, want an error", c, n)
			}
		})
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestOriginAllowed(t *testing.T) {
	allowed := []string{"https://app.example.com", "http://localhost:3000/"}
	cases := []struct {
		name, host, origin string
		tls                bool
		want               bool
	}{
		{"no-origin-passes", "gw.example.com", "", false, true},
		{"own-origin", "gw.example.com:8080", "http://gw.example.com:8080", false, true},
		{"own-origin-any-case", "GW.example.com:8080", "http://gw.EXAMPLE.com:8080", false, true},
		{"own-origin-default-port", "gw.example.com", "http://gw.example.com:80", false, true},
		{"own-origin-tls", "gw.example.com", "https://gw.example.com", true, true},
		{"scheme-must-match", "gw.example.com", "https://gw.example.com", false, false},
		{"port-must-match", "gw.example.com:8080", "http://gw.example.com:9090", false, false},
		{"listed-origin", "gw.example.com", "https://app.example.com", false, true},
		{"listed-with-trailing-slash", "gw.example.com", "http://localhost:3000", false, true},
		{"foreign-origin", "127.0.0.1:8080", "http://evil.example", false, false},
		{"null-origin", "127.0.0.1:8080", "null", false, false},
		{"origin-with-path", "gw.example.com", "http://gw.example.com/x", false, false},
		{"subdomain-is-not-listed", "gw.example.com", "https://evil.app.example.com", false, false},
		{"ipv6-own-origin", "[::1]:8080", "http://[::1]:8080", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := newHostPolicy(&proxy.Config{AllowedOrigins: allowed}).originAllowed(r); got != tc.want {
				t.Fatalf("originAllowed(host %q, origin %q) = %v, want %v", tc.host, tc.origin, got, tc.want)
			}
		})
	}
	t.Run("two-origin-headers", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Add("Origin", "https://app.example.com")
		r.Header.Add("Origin", "http://evil.example")
		if newHostPolicy(&proxy.Config{AllowedOrigins: allowed}).originAllowed(r) {
			t.Fatal("originAllowed with two Origin headers = true, want false")
		}
	})
}

func TestHostAllowed(t *testing.T) {
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
	loop6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	public := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8080}
	cases := []struct {
		name  string
		local net.Addr
		host  string
		want  bool
	}{
		{"loopback-localhost", loop, "localhost:8080", true},
		{"loopback-localhost-any-case", loop, "LocalHost:1", true},
		{"loopback-127", loop, "127.0.0.1:8080", true},
		{"loopback-127-no-port", loop, "127.0.0.1", true},
		{"loopback-ipv6", loop6, "[::1]:8080", true},
		{"loopback-ipv6-no-port", loop6, "[::1]", true},
		{"rebinding-name-on-loopback", loop, "evil.example:8080", false},
		{"other-127-address", loop, "127.0.0.2:8080", false},
		{"empty-host-on-loopback", loop, "", false},
		{"public-listener-any-host", public, "gw.example.com", true},
		{"no-local-addr", nil, "anything", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = tc.host
			if tc.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
			}
			if got := newHostPolicy(&proxy.Config{}).hostAllowed(r); got != tc.want {
				t.Fatalf("hostAllowed(local %v, host %q) = %v, want %v", tc.local, tc.host, got, tc.want)
			}
		})
	}
}

func TestAcceptsJSON(t *testing.T) {
	cases := []struct {
		name   string
		accept []string
		want   bool
	}{
		{"absent", nil, true},
		{"empty", []string{""}, true},
		{"spec-pair", []string{"application/json, text/event-stream"}, true},
		{"json-only", []string{"application/json"}, true},
		{"json-with-charset", []string{"application/json; charset=utf-8"}, true},
		{"wildcard", []string{"*/*"}, true},
		{"application-wildcard", []string{"application/*"}, true},
		{"two-header-lines", []string{"text/event-stream", "application/json"}, true},
		{"sse-only", []string{"text/event-stream"}, false},
		{"html-only", []string{"text/html"}, false},
		{"json-refused-by-q0", []string{"application/json;q=0, */*"}, false},
		{"wildcard-q0", []string{"*/*;q=0"}, false},
		{"json-preferred-over-q0-wildcard", []string{"*/*;q=0, application/json"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := acceptsJSON(tc.accept); got != tc.want {
				t.Fatalf("acceptsJSON(%q) = %v, want %v", tc.accept, got, tc.want)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	cases := []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER  abc ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic abc", "", false},
		{"", "", false},
		{"abc", "", false},
	}
	for _, tc := range cases {
		token, ok := bearerToken(tc.header)
		if token != tc.token || ok != tc.ok {
			t.Errorf("bearerToken(%q) = %q, %v, want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"get_item", "get_item", true},
		{"=?base64?Y2Fmw6k=?=", "caf\u00e9", true},
		{"=?base64?Z2V0X2l0ZW0=?=", "get_item", true},
		{"=?base64?Y2Fmw6k=", "", false},
		{"=?base64?@@@?=", "", false},
	}
	for _, tc := range cases {
		got, err := decodeHeaderValue(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %v, want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

package oauthserver_test

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgw/gateway/oauthserver"
)

var clientSeeds = []string{
	`{"client_name":"Claude Code","redirect_uris":["http://localhost:54321/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
	`{"redirect_uris":["https://app.example/cb","com.example.app:/oauth"]}`,
	`{"redirect_uris":["javascript:alert(1)"]}`,
	`{"redirect_uris":["http://evil.example/cb"]}`,
	`{"redirect_uris":[]}`, `{}`, `[]`, `null`, `{"redirect_uris":"x"}`,
	`{"client_id":"x","redirect_uris":["https://a/cb"],"client_secret":"s"}`,
	`{"redirect_uris":["https://a/cb#f"],"jwks_uri":"https://a/jwks"}`,
}

// checkClientResult holds what every accepted client must be: redirect
// URIs that are absolute, without fragment or credentials, https or
// loopback http or a private-use scheme; the code grant; a clean name.
// A refusal is a ClientError with an RFC 7591 code.
func checkClientResult(t *testing.T, md *oauthserver.Metadata, err error) {
	if err != nil {
		var ce *oauthserver.ClientError
		if !errors.As(err, &ce) || (ce.Code != "invalid_client_metadata" && ce.Code != "invalid_redirect_uri") || ce.Description == "" {
			t.Fatalf("refusal %v is not an RFC 7591 error with a description", err)
		}
		if !utf8.ValidString(ce.Description) && len(ce.Description) > 400 {
			t.Fatalf("description too long: %d", len(ce.Description))
		}
		return
	}
	if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > 16 {
		t.Fatalf("accepted %d redirect URIs", len(md.RedirectURIs))
	}
	for _, r := range md.RedirectURIs {
		u, perr := url.Parse(r)
		if perr != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(r, "#") || u.User != nil {
			t.Fatalf("accepted redirect URI %q", r)
		}
		switch strings.ToLower(u.Scheme) {
		case "javascript", "data", "file", "vbscript":
			t.Fatalf("accepted redirect URI %q", r)
		case "http":
			if !isLoopbackHost(u.Hostname()) {
				t.Fatalf("accepted http redirect URI off loopback %q", r)
			}
		}
	}
	hasCode := false
	for _, g := range md.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			t.Fatalf("accepted grant %q", g)
		}
		hasCode = hasCode || g == "authorization_code"
	}
	if !hasCode {
		t.Fatalf("accepted grants %v without authorization_code", md.GrantTypes)
	}
	if strings.ContainsFunc(md.ClientName, func(r rune) bool { return r < 0x20 }) || len(md.ClientName) > 200 {
		t.Fatalf("accepted client name %q", md.ClientName)
	}
}

// isLoopbackHost reports whether host names this machine: localhost in
// any case (host names are case-insensitive), or a loopback address in
// any spelling: 127.0.0.0/8, ::1 written out ([0:0:0:0:0:0:0:1]) or
// 127.0.0.1 IPv4-mapped ([::ffff:127.0.0.1]). It is netip's reading, not
// the code's (catalog.IsLoopbackHost), and without a zone, which the
// code's net.ParseIP refuses.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

func FuzzParseRegistration(f *testing.F) {
	for _, s := range clientSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		md, err := oauthserver.ParseRegistration(body)
		checkClientResult(t, md, err)
	})
}

func FuzzParseMetadataDocument(f *testing.F) {
	const doc = "https://app.example/oauth/client.json"
	for _, s := range clientSeeds {
		f.Add(doc, []byte(strings.Replace(s, "{", `{"client_id":"`+doc+`",`, 1)))
		f.Add(doc, []byte(s))
	}
	f.Add("http://127.0.0.1:8/c.json", []byte(`{"client_id":"http://127.0.0.1:8/c.json","redirect_uris":["http://127.0.0.1/cb"]}`))
	f.Fuzz(func(t *testing.T, docURL string, body []byte) {
		md, err := oauthserver.ParseMetadataDocument(docURL, body)
		checkClientResult(t, md, err)
		if err == nil && (md.ClientID != docURL || !md.Document) {
			t.Fatalf("document for %q accepted as client %q", docURL, md.ClientID)
		}
	})
}

func FuzzCheckClientIDURL(f *testing.F) {
	for _, s := range []string{"https://app.example/c.json", "https://app.example", "http://evil.example/c", "https://u:p@a.example/c",
		"https://a.example/../c", "https://a.example/c?x=1", "http://127.0.0.1:9/c", "https://a.example/c#f", "ftp://a/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if oauthserver.CheckClientIDURL(s, nil) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted client_id URL %q", s)
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
			t.Fatalf("accepted client_id URL %q with scheme %s", s, u.Scheme)
		}
	})
}

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

// replaceEcho replaces a secret where it stands, not where its first
// letter belongs to an escape ("\n" then the rest), and a body whose
// cleaning would break its JSON (a credential that is a number) is not
// shown at all.
func TestReplaceEcho(t *testing.T) {
	for _, c := range []struct{ body, secret, want string }{
		{`{"a":"x nk3y-abcdef y"}`, "nk3y-abcdef", `{"a":"x [redacted] y"}`},
		{`{"a":"line\nk3y-abcdef"}`, "nk3y-abcdef", `{"a":"line\nk3y-abcdef"}`},
		{`{"a":"line\\nk3y-abcdef"}`, "nk3y-abcdef", `{"a":"line\\[redacted]"}`},
		{`{"a":"s3cr3t-1 s3cr3t-1"}`, "s3cr3t-1", `{"a":"[redacted] [redacted]"}`},
		{`{"a":"none"}`, "s3cr3t-1", `{"a":"none"}`},
	} {
		if got := string(replaceEcho([]byte(c.body), []byte(c.secret))); got != c.want {
			t.Errorf("replaceEcho(%s, %s) = %s, want %s", c.body, c.secret, got, c.want)
		}
	}
	numeric := upstreamSecrets([][2]string{{"Authorization", "Bearer 104827310042"}})
	r := &upstreamResponse{body: []byte(`{"owner":104827310042}`)}
	if body, ok := r.bodyWithoutSecrets(numeric); ok {
		t.Errorf("a credential that is a number in the answer: %s, want the answer withheld", body)
	}
	r.body = []byte(`{"owner":"104827310042"}`)
	if body, ok := r.bodyWithoutSecrets(numeric); !ok || !json.Valid(body) || bytes.Contains(body, []byte("1048273")) {
		t.Errorf("a credential in a string: %s %v, want it redacted", body, ok)
	}
}

// What counts as a secret: the credential after an Authorization scheme
// or in a workspace's credential whatever its shape; other parts of a
// credential header only when they look secret; a query parameter by its
// whole name.
func TestSecretSets(t *testing.T) {
	body := func(s *secretSet) []string {
		var out []string
		for _, b := range s.body {
			out = append(out, string(b))
		}
		return out
	}
	up := upstreamSecrets([][2]string{{"Authorization", "token plainword"}, {"Cookie", "sid=0f3a9c2d7e1b4a6c; region=us-east-1"}, {"X-Auth-Email", "ops@example.com"}})
	got := strings.Join(body(up), " ")
	for _, want := range []string{"plainword", "0f3a9c2d7e1b4a6c"} {
		if !strings.Contains(got, want) {
			t.Errorf("body secrets %q lack %q", got, want)
		}
	}
	for _, not := range []string{"us-east-1", "ops@example.com", "token"} {
		for _, v := range body(up) {
			if v == not {
				t.Errorf("body secrets %q hold the setting %q", got, not)
			}
		}
	}
	if !strings.Contains(strings.Join(up.reason, " "), "ops@example.com") {
		t.Errorf("reason secrets %q lack the header's whole value", up.reason)
	}
	key := upstreamSecrets([][2]string{{"X-Api-Key", "lettersonlykey"}, {"Private-Token", "glpat-abcdefgh"}})
	if got := strings.Join(body(key), " "); !strings.Contains(got, "lettersonlykey") || !strings.Contains(got, "glpat-abcdefgh") {
		t.Errorf("a key header's value, whatever its shape: body secrets %q", got)
	}
	ws := credentialSecrets(catalog.NewSecret("acmetoken"), "{credential}")
	if len(ws.body) == 0 || string(ws.body[0]) != "acmetoken" {
		t.Errorf("a workspace's bare credential: %q, want it in the body list", body(ws))
	}
	for name, want := range map[string]bool{"api_key": true, "access-token": true, "sig": true, "sort_key": false, "author": false, "tokenizer": false} {
		if catalog.CredentialQuery(name) != want {
			t.Errorf("CredentialQuery(%q) = %v, want %v", name, !want, want)
		}
	}
}

// The cost of cleaning a small answer that holds no secret: a scan per
// secret form, no allocation.
func BenchmarkBodyWithoutSecrets(b *testing.B) {
	s := upstreamSecrets([][2]string{{"Authorization", "Bearer " + strings.Repeat("a", 40) + "/x+y"}, {"X-Api-Key", strings.Repeat("k", 48)}})
	body := []byte(`{"id":"item-000001","name":"Item 1","state":"Succeeded","queue":"default","attempt":1,"maxAttempts":3}`)
	for _, tok := range []string{"", strings.Repeat("t", 900)} {
		b.Run(fmt.Sprintf("token=%d", len(tok)), func(b *testing.B) {
			r := &upstreamResponse{body: body, token: tok}
			b.ReportAllocs()
			for b.Loop() {
				r.bodyWithoutSecrets(s)
			}
		})
	}
}

// A Basic credential or a base64 token ending in one '=' (its padding,
// when len(user:pass) % 3 == 2) is the credential, not a name=value pair.
func TestBase64PaddingIsNoSetting(t *testing.T) {
	const b64 = "dXNlcjpzZWNyZXQxMjM=" // user:secret123
	for name, c := range map[string]struct {
		s    *secretSet
		cred string
	}{
		"upstream header":  {upstreamSecrets([][2]string{{"Authorization", "Basic " + b64}}), b64},
		"workspace cred":   {credentialSecrets(catalog.NewSecret("Basic "+b64), "Basic {credential}"), b64},
		"bearer b64 token": {upstreamSecrets([][2]string{{"Authorization", "Bearer abcdefghijklmnopq="}}), "abcdefghijklmnopq="},
	} {
		s := c.s
		r := &upstreamResponse{status: 200, body: []byte(`{"received":"` + c.cred + `"}`)}
		body, _ := r.bodyWithoutSecrets(s)
		if !strings.Contains(string(body), catalog.Redacted) {
			t.Errorf("%s: 2xx body keeps the credential: %s (body list %q)", name, body, s.body)
		}
		if msg := r.withoutSecrets("bad credentials "+c.cred, s); !strings.Contains(msg, catalog.Redacted) {
			t.Errorf("%s: reason keeps the credential: %s (reason list %q)", name, msg, s.reason)
		}
	}
}

// A workspace credential inside a format such as PagerDuty's
// "Token token={credential}" is a credential beyond doubt, which a 2xx
// body loses whatever its shape.
func TestCredentialInsideItsFormat(t *testing.T) {
	s := credentialSecrets(catalog.NewSecret("Token token=yNbAkKcryYTWUXYEuPqRs, realm=x"), "Token token={credential}, realm=x")
	r := &upstreamResponse{status: 200, cred: s, body: []byte(`{"api_key":"yNbAkKcryYTWUXYEuPqRs"}`)}
	body, _ := r.bodyWithoutSecrets(nil)
	if strings.Contains(string(body), "yNbAkKcryYTWUXYEuPqRs") {
		t.Errorf("workspace credential reaches the agent: %s (body list %q)", body, s.body)
	}
}

// An e-mail address in a credential header (X-Auth-Email) is a setting,
// even with a digit or at 24 bytes or more: a 2xx body keeps it.
func TestAuthEmailStays(t *testing.T) {
	for _, email := range []string{"ops2@example.com", "firstname.lastname@example.com"} {
		s := upstreamSecrets([][2]string{{"X-Auth-Email", email}, {"X-Auth-Key", "c2547eb745079dac9320b638f5e225cf483cc5cfdda41"}})
		r := &upstreamResponse{status: 200, body: []byte(`{"result":{"email":"` + email + `"}}`)}
		body, _ := r.bodyWithoutSecrets(s)
		if !strings.Contains(string(body), email) {
			t.Errorf("legitimate answer corrupted: %s", body)
		}
	}
}

package authz_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

func hashHex(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// apiKeyVerifier builds a verifier over file, served as keys.yaml.
func apiKeyVerifier(t *testing.T, file string, now func() time.Time) (authz.Verifier, error) {
	t.Helper()
	read := func(name string) ([]byte, error) {
		if name != "keys.yaml" {
			return nil, fs.ErrNotExist
		}
		return []byte(file), nil
	}
	auth := catalog.Auth{APIKeysFile: "keys.yaml", Principal: catalog.Principal{Subject: "sub", Workspace: "ws"}}
	return authz.NewVerifier(auth, &authz.VerifierOptions{ReadFile: read, Now: now})
}

func TestAPIKeys(t *testing.T) {
	clk := newClock()
	file := `keys:
  - sha256: ` + hashHex("ci-key") + `
    subject: ci-bot
    workspace: acme
    scopes: [jobs:read, jobs:operate]
    actor: ci@example.com
  - sha256: ` + strings.ToUpper(hashHex("ops-key")) + `
    subject: ops
    workspace: acme-ops
    scopes: "jobs:read  jobs:sensitive"
    expires: ` + clk.Now().Add(time.Hour).Format(time.RFC3339) + `
`
	v, err := apiKeyVerifier(t, file, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.(authz.ClosableVerifier).Close() })

	p, err := v.Verify(context.Background(), "ci-key")
	if err != nil {
		t.Fatalf("Verify(ci-key) = %v", err)
	}
	if p.Subject != "ci-bot" || p.Workspace != "acme" || p.Actor != "ci@example.com" || !p.HasScope("jobs:operate") || p.HasScope("jobs:sensitive") {
		t.Errorf("ci-key principal = %+v", p)
	}
	if got := gjson.GetBytes(p.Claims, "scopes.#").Int(); got != 2 || gjson.GetBytes(p.Claims, "workspace").Str != "acme" {
		t.Errorf("ci-key claims = %s, want a JSON object of the key's claims", p.Claims)
	}

	p, err = v.Verify(context.Background(), "ops-key")
	if err != nil {
		t.Fatalf("Verify(ops-key) = %v", err)
	}
	if p.Actor != "ops" || !p.HasScope("jobs:sensitive") || len(p.Scopes) != 2 {
		t.Errorf("ops-key principal = %+v; want the subject as actor and two scopes from the string", p)
	}

	cases := []struct {
		name, key, reason string
	}{
		{"unknown-key", "guess", authz.ReasonAPIKey},
		{"the-hash-itself", hashHex("ci-key"), authz.ReasonAPIKey},
		{"empty", "", authz.ReasonMissing},
		{"oversized", strings.Repeat("k", authz.MaxTokenBytes+1), authz.ReasonOversize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tc.key)
			if !errors.Is(err, authz.ErrInvalidToken) && !errors.Is(err, authz.ErrNoToken) {
				t.Fatalf("Verify = %v, want ErrInvalidToken or ErrNoToken", err)
			}
			if got := authz.Reason(err); got != tc.reason {
				t.Errorf("Reason(%v) = %q, want %q", err, got, tc.reason)
			}
			if strings.Contains(err.Error(), "ci-key") || (tc.key != "" && strings.Contains(err.Error(), tc.key)) {
				t.Errorf("error %q repeats the presented key", err)
			}
		})
	}

	clk.Advance(time.Hour)
	_, err = v.Verify(context.Background(), "ops-key")
	if got := authz.Reason(err); got != authz.ReasonExpired {
		t.Errorf("ops-key at its expiry: Verify = %v (reason %q), want %q", err, got, authz.ReasonExpired)
	}
}

func TestAPIKeysFileErrors(t *testing.T) {
	h := hashHex("k")
	cases := []struct {
		name, file string
		want       []string
	}{
		{"empty-file", "", []string{"keys.yaml: empty file; want a keys list"}},
		{"two-documents", "keys: []\n---\nkeys: []\n", []string{"keys.yaml: want one YAML document"}},
		{"not-a-mapping", "- a\n", []string{"keys.yaml:1:1: want a mapping with a keys list"}},
		{"unknown-top-field", "key:\n  - sha256: x\n", []string{`keys.yaml:1:1: unknown field "key"; want keys`}},
		{"no-keys", "keys: []\n", []string{"keys.yaml:1:7: keys must list at least one key"}},
		{"unknown-field", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: w\n    scope: x\n",
			[]string{`keys.yaml:5:5: keys[0]: unknown field "scope"; want one of sha256, subject, workspace, scopes, actor, expires`}},
		{"bad-hex", "keys:\n  - sha256: zz" + h[2:] + "\n    subject: a\n    workspace: w\n",
			[]string{"keys.yaml:2:13: keys[0]: sha256 must be 64 hex digits (the SHA-256 of the key, not the key)"}},
		{"the-key-not-its-hash", "keys:\n  - sha256: my-secret-key\n    subject: a\n    workspace: w\n",
			[]string{"keys.yaml:2:13: keys[0]: sha256 must be 64 hex digits"}},
		{"missing-subject-and-workspace", "keys:\n  - sha256: " + h + "\n",
			[]string{"keys.yaml:2:5: keys[0]: subject is required", "keys.yaml:2:5: keys[0]: workspace is required"}},
		{"empty-subject", "keys:\n  - sha256: " + h + "\n    subject: ''\n    workspace: w\n",
			[]string{"keys.yaml:3:14: keys[0]: subject must not be empty"}},
		{"workspace-pattern", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: ../w\n",
			[]string{`keys.yaml:4:16: keys[0]: workspace "../w" does not match the workspace pattern`}},
		{"workspace-not-a-string", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: [w]\n",
			[]string{"keys.yaml:4:16: keys[0]: workspace must be a string"}},
		{"duplicate-hash", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: w\n  - sha256: " + strings.ToUpper(h) + "\n    subject: b\n    workspace: w\n",
			[]string{"keys.yaml:5:5: keys[1]: sha256 duplicates keys[0] (line 2)"}},
		{"duplicate-field", "keys:\n  - sha256: " + h + "\n    subject: a\n    subject: b\n    workspace: w\n",
			[]string{`keys.yaml:4:5: keys[0]: duplicate field "subject" (first at line 3)`}},
		{"bad-expires", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: w\n    expires: tomorrow\n",
			[]string{`keys.yaml:5:14: keys[0]: expires "tomorrow" is not an RFC 3339 time`}},
		{"scope-with-space", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: w\n    scopes: [a, 'b c']\n",
			[]string{"keys.yaml:5:17: keys[0]: each scope must be a non-empty string without spaces"}},
		{"scopes-mapping", "keys:\n  - sha256: " + h + "\n    subject: a\n    workspace: w\n    scopes: {a: b}\n",
			[]string{"keys.yaml:5:13: keys[0]: scopes must be a list or a space-separated string"}},
		{"yaml-syntax", "keys:\n  - sha256: [\n", []string{"keys.yaml: yaml: line"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apiKeyVerifier(t, tc.file, nil)
			if err == nil {
				t.Fatalf("NewVerifier(%q) succeeded, want %q", tc.file, tc.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("NewVerifier error =\n%v\nwant %d line(s) starting %q", err, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error line %d = %q, want it to start %q", i, lines[i], w)
				}
			}
		})
	}
}

func TestAPIKeysFileMissing(t *testing.T) {
	auth := catalog.Auth{APIKeysFile: "nope.yaml"}
	_, err := authz.NewVerifier(auth, &authz.VerifierOptions{ReadFile: func(string) ([]byte, error) { return nil, fs.ErrNotExist }})
	if err == nil || !strings.Contains(err.Error(), "api_keys_file") {
		t.Errorf("NewVerifier with a missing keys file = %v, want an error naming api_keys_file", err)
	}
}

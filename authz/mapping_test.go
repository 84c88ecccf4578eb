package authz_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// TestPrincipalMapping: the principal is read from the verified claims
// with the catalog's gjson paths (auth.principal), and nothing else. The
// subject and workspace must be non-empty strings, the workspace must
// match the pattern, scopes are a space-separated string or an array of
// strings (absent or null: none), and the actor falls back to the
// subject (design/catalog.md, "auth").
func TestPrincipalMapping(t *testing.T) {
	type want struct {
		subject, workspace, actor string
		scopes                    []string
		detail                    string // a refusal's log text holds this; "" when accepted
	}
	null := json.RawMessage("null")
	base := func(kv ...any) jwt.MapClaims {
		c := with(with(with(with(good(), "email", nil), "scope", nil), "sub", nil), "ws", nil)
		for i := 0; i < len(kv); i += 2 {
			c = with(c, kv[i].(string), kv[i+1])
		}
		return c
	}
	custom := catalog.Principal{Subject: "user.id", Workspace: "org.slug", Scopes: "perms", Actor: "user.mail", WorkspacePattern: `^[a-z]*$`}
	user := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	rows := []struct {
		name      string
		principal catalog.Principal
		optional  bool // a tenantless catalog
		claims    jwt.MapClaims
		want      want
	}{
		// The defaults: sub, ws, scope; the actor is the subject.
		{"defaults", catalog.Principal{}, false, base("sub", "alice", "ws", "acme", "scope", "a b", "email", "x@y"),
			want{subject: "alice", workspace: "acme", actor: "alice", scopes: []string{"a", "b"}}},
		{"defaults-array-scopes", catalog.Principal{}, false, base("sub", "alice", "ws", "acme", "scope", []string{"a", "b"}),
			want{subject: "alice", workspace: "acme", actor: "alice", scopes: []string{"a", "b"}}},
		{"defaults-no-scopes", catalog.Principal{}, false, base("sub", "alice", "ws", "acme"),
			want{subject: "alice", workspace: "acme", actor: "alice"}},
		{"defaults-null-scopes", catalog.Principal{}, false, base("sub", "alice", "ws", "acme", "scope", null),
			want{subject: "alice", workspace: "acme", actor: "alice"}},
		{"defaults-empty-scope-string", catalog.Principal{}, false, base("sub", "alice", "ws", "acme", "scope", "  "),
			want{subject: "alice", workspace: "acme", actor: "alice"}},
		{"default-pattern-128-bytes", catalog.Principal{}, false, base("sub", "alice", "ws", strings.Repeat("w", 128)),
			want{subject: "alice", workspace: strings.Repeat("w", 128), actor: "alice"}},
		{"default-pattern-129-bytes", catalog.Principal{}, false, base("sub", "alice", "ws", strings.Repeat("w", 129)),
			want{detail: "workspace does not match the workspace pattern"}},
		{"default-pattern-slash", catalog.Principal{}, false, base("sub", "alice", "ws", "a/b"),
			want{detail: "workspace does not match the workspace pattern"}},

		// Custom nested paths; claims named like the defaults are ignored.
		{"custom", custom, false, base("sub", "mallory", "ws", "evil", "scope", "admin", "user", user("id", "u1", "mail", "u1@x"), "org", user("slug", "acme"), "perms", []string{"r"}),
			want{subject: "u1", workspace: "acme", actor: "u1@x", scopes: []string{"r"}}},
		{"custom-default-claims-do-not-stand-in", custom, false, base("sub", "mallory", "ws", "evil", "user", user("mail", "u1@x"), "org", user("slug", "acme")),
			want{detail: `claim "user.id" is not a non-empty string`}},
		{"custom-no-workspace", custom, false, base("ws", "evil", "user", user("id", "u1"), "org", user("name", "acme")),
			want{detail: `no workspace in claim "org.slug"`}},
		{"custom-actor-not-a-string", custom, false, base("user", user("id", "u1", "mail", 7), "org", user("slug", "acme")),
			want{subject: "u1", workspace: "acme", actor: "u1"}},
		{"custom-numeric-subject", custom, false, base("user", user("id", 7), "org", user("slug", "acme")),
			want{detail: `claim "user.id" is not a non-empty string`}},
		{"custom-object-workspace", custom, false, base("user", user("id", "u1"), "org", user("slug", user("a", "b"))),
			want{detail: `no workspace in claim "org.slug"`}},
		{"custom-boolean-workspace", custom, false, base("user", user("id", "u1"), "org", user("slug", true)),
			want{detail: `no workspace in claim "org.slug"`}},
		// The custom pattern admits "", but an empty workspace is refused
		// by the mapping itself.
		{"custom-pattern-admits-empty-mapping-does-not", custom, false, base("user", user("id", "u1"), "org", user("slug", "")),
			want{detail: `no workspace in claim "org.slug"`}},
		{"custom-pattern-refuses", custom, false, base("user", user("id", "u1"), "org", user("slug", "ACME")),
			want{detail: "workspace does not match the workspace pattern"}},

		// A tenantless catalog: no workspace, or null, is accepted as "";
		// one that is there is held to the rules.
		{"tenantless-absent", catalog.Principal{}, true, base("sub", "alice"),
			want{subject: "alice", actor: "alice"}},
		{"tenantless-null", catalog.Principal{}, true, base("sub", "alice", "ws", null),
			want{subject: "alice", actor: "alice"}},
		{"tenantless-present", catalog.Principal{}, true, base("sub", "alice", "ws", "acme"),
			want{subject: "alice", workspace: "acme", actor: "alice"}},
		{"tenantless-empty", catalog.Principal{}, true, base("sub", "alice", "ws", ""),
			want{detail: `no workspace in claim "ws"`}},
		{"tenantless-number", catalog.Principal{}, true, base("sub", "alice", "ws", 3),
			want{detail: `no workspace in claim "ws"`}},
		{"tenantless-pattern", catalog.Principal{}, true, base("sub", "alice", "ws", "a b"),
			want{detail: "workspace does not match the workspace pattern"}},
		{"tenantless-still-needs-a-subject", catalog.Principal{}, true, base("ws", "acme"),
			want{detail: `claim "sub" is not a non-empty string`}},
		{"tenant-null", catalog.Principal{}, false, base("sub", "alice", "ws", null),
			want{detail: `no workspace in claim "ws"`}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			auth := hsAuth()
			auth.Principal = r.principal
			auth.Principal.WorkspaceOptional = r.optional
			v := newVerifier(t, auth, &authz.VerifierOptions{Getenv: func(string) string { return secret }})
			p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, []byte(secret), "", r.claims, nil))
			if r.want.detail != "" {
				if err == nil || authz.Reason(err) != authz.ReasonClaims || !strings.Contains(err.Error(), r.want.detail) {
					t.Fatalf("Verify = %+v, %v (reason %q); want a %q refusal holding %q", p, err, authz.Reason(err), authz.ReasonClaims, r.want.detail)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify = %v, want a principal", err)
			}
			if p.Subject != r.want.subject || p.Workspace != r.want.workspace || p.Actor != r.want.actor || !slices.Equal(p.Scopes, r.want.scopes) {
				t.Errorf("principal = subject %q, workspace %q, actor %q, scopes %q; want %q, %q, %q, %q",
					p.Subject, p.Workspace, p.Actor, p.Scopes, r.want.subject, r.want.workspace, r.want.actor, r.want.scopes)
			}
			for _, s := range r.want.scopes {
				if !p.HasScope(s) {
					t.Errorf("HasScope(%q) = false", s)
				}
			}
			if p.HasScope("") || p.HasScope("admin") {
				t.Errorf("principal holds a scope it was not given: %q", p.Scopes)
			}
		})
	}
}

package approvalpage_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approvalpage"
	"github.com/mcpgw/gateway/authz"
)

// The provider's redirect back is a link anyone can craft: its error and
// error_description never reach the approver as page text (content
// spoofing under the gateway's name); the page says sign-in failed in its
// own words and the log keeps what the provider said.
func TestSignInCallbackNeverEchoesTheProvidersError(t *testing.T) {
	core, _ := pageCore(t)
	const spoof = "Your account is locked. Call +1 555 0100 to verify your identity"
	for name, q := range map[string]url.Values{
		"description": {"error": {"access_denied"}, "error_description": {spoof}},
		"error-only":  {"error": {spoof}},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			r := httptest.NewRequest(http.MethodGet, "/admin/mcp/approvals/signin/callback?"+q.Encode(), nil)
			w := httptest.NewRecorder()
			(&approvalpage.Page{}).Serve(w, r, &approvalpage.Request{Core: core, Rest: "/signin/callback", Log: slog.New(slog.NewJSONHandler(&logs, nil)),
				Context: func(*authz.Principal) context.Context { return context.Background() },
				Guard:   func(http.ResponseWriter, *http.Request) bool { return true }})
			body := w.Body.String()
			if w.Code != http.StatusUnauthorized || !strings.Contains(body, "Sign-in failed") {
				t.Errorf("callback with error = %d, want 401 Sign-in failed\n%s", w.Code, body)
			}
			for _, leak := range []string{"Your account is locked", "555 0100", "access_denied"} {
				if strings.Contains(body, leak) {
					t.Errorf("the page shows the provider's text %q:\n%s", leak, body)
				}
			}
			if !strings.Contains(logs.String(), "555 0100") {
				t.Errorf("the log does not keep the provider's error: %s", logs.String())
			}
		})
	}
}

// The page reads the settings resolved when the core was built, never
// the catalog itself: changing the catalog afterwards changes nothing.
func TestPageReadsOnlyTheResolvedConfig(t *testing.T) {
	core, sealer := pageCore(t)
	res, err := core.Call(context.Background(), authz.NewPrincipal("alice", "acme", "alice", []string{"op"}, nil), "cancel", []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Text[strings.Index(res.Text, "apr_"):][:36]
	cat := core.Catalog()
	cat.ApprovalPage.ClientID, cat.ApprovalPage.Issuer = "evil", "https://evil.example"
	cat.Auth.Principal.Workspace = "nope"
	cat.Server.AdminPath = "/elsewhere"
	r := httptest.NewRequest(http.MethodGet, "/admin/mcp/approvals/"+id, nil)
	r.Header.Set("Accept", "text/html")
	r.AddCookie(&http.Cookie{Name: approvalpage.SessionCookie, Value: sessionCookie(t, sealer, `{"sub":"bob","ws":"acme","scope":"approve"}`)})
	w := httptest.NewRecorder()
	(&approvalpage.Page{}).Serve(w, r, &approvalpage.Request{Core: core, Rest: "/" + id, Log: slog.New(slog.DiscardHandler),
		Context: func(*authz.Principal) context.Context { return context.Background() },
		Guard:   func(http.ResponseWriter, *http.Request) bool { return true }})
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `action="/admin/mcp/approvals/`+id+`/decide"`) {
		t.Errorf("GET %s after the catalog changed = %d, want the page under /admin/mcp/approvals as resolved\n%s", id, w.Code, body)
	}
}

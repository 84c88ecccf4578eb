package approvalpage_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approvalpage"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// Which requests the page takes from the REST API: only browsers' GETs
// without a bearer token, its callback and its form, and only when the
// catalog configures it.
func TestHandlesOnlyBrowsersAndThePagesOwnRoutes(t *testing.T) {
	on := &proxy.ApprovalPage{Issuer: "https://idp.example.com", ClientID: "g"}
	var off *proxy.ApprovalPage
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	const id = "/apr_0123456789abcdef0123456789abcdef"
	cases := []struct {
		name, method, rest, accept, auth string
		page                             *proxy.ApprovalPage
		want                             bool
	}{
		{"browser opens an approval", "GET", id, browser, "", on, true},
		{"browser opens the list", "GET", "", browser, "", on, true},
		{"page off", "GET", id, browser, "", off, false},
		{"api client", "GET", id, "application/json", "", on, false},
		{"any type", "GET", id, "*/*", "", on, false},
		{"no accept", "GET", id, "", "", on, false},
		{"bearer token wins", "GET", id, browser, "Bearer x", on, false},
		{"callback", "GET", "/signin/callback", "", "", on, true},
		{"the form", "POST", id + "/decide", "", "", on, true},
		{"REST approve", "POST", id + "/approve", browser, "", on, false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "/admin/mcp/approvals"+c.rest, nil)
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if got := approvalpage.Handles(c.page, r, c.rest); got != c.want {
			t.Errorf("%s: Handles = %v, want %v", c.name, got, c.want)
		}
	}
}

// Accept headers come from anyone: Handles never panics, and never takes
// a request that carries a bearer token.
func FuzzHandlesAccept(f *testing.F) {
	on := &proxy.ApprovalPage{Issuer: "https://idp.example.com", ClientID: "g"}
	for _, seed := range []string{"text/html", "*/*", "", ";;,", "text/html;q=0, application/json", "application/xhtml+xml"} {
		f.Add(seed, "/apr_0123456789abcdef0123456789abcdef")
	}
	f.Fuzz(func(t *testing.T, accept, rest string) {
		r := httptest.NewRequest("GET", "/admin/mcp/approvals", nil)
		r.Header.Set("Accept", accept)
		approvalpage.Handles(on, r, rest)
		r.Header.Set("Authorization", "Bearer x")
		if approvalpage.Handles(on, r, rest) && rest != catalog.ApprovalCallbackPath && !strings.HasSuffix(strings.Trim(rest, "/"), "/decide") {
			t.Fatalf("Handles took a bearer request: Accept %q rest %q", accept, rest)
		}
	})
}

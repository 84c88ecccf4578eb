package web_test

import (
	"net/http/httptest"
	"testing"

	"github.com/mcpgw/gateway/approval/web"
	"github.com/mcpgw/gateway/catalog"
)

// Which requests the page takes from the REST API: only browsers' GETs
// without a bearer token, its callback and its form, and only when the
// catalog configures it.
func TestHandlesOnlyBrowsersAndThePagesOwnRoutes(t *testing.T) {
	on := &catalog.Catalog{ApprovalPage: &catalog.ApprovalPage{Issuer: "https://idp.example.com", ClientID: "g"}}
	off := &catalog.Catalog{}
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	const id = "/apr_0123456789abcdef0123456789abcdef"
	cases := []struct {
		name, method, rest, accept, auth string
		cat                              *catalog.Catalog
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
		if got := web.Handles(c.cat, r, c.rest); got != c.want {
			t.Errorf("%s: Handles = %v, want %v", c.name, got, c.want)
		}
	}
}

package proxy_test

import (
	"net/http"
	"strings"
	"testing"
)

// Review of issue 9: attacks the first round of fixes still let through.

// A redirect the upstream opted into following is still a request the
// gateway sends for the caller: it carries the token's workspace binding,
// whatever the Location's query says.
func TestFollowedRedirectKeepsTheWorkspaceQuery(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/items/old": // http.Redirect drops the query
			http.Redirect(w, r, "/v1/items/new", http.StatusFound)
			return
		case "/v1/items/other": // a Location naming another workspace
			http.Redirect(w, r, "/v1/items/new?ws=globex", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ws":"` + r.URL.Query().Get("ws") + `"}`))
	})
	src := strings.Replace(testCatalog, "    workspace: { header: X-Workspace-Id }\n", "    workspace: { query: ws }\n    follow_redirects: true\n", 1)
	c := parseCore(t, src, rec.srv.URL, nil)
	for _, id := range []string{"old", "other"} {
		res := call(t, c, reader, "get_item", `{"id":"`+id+`"}`)
		if res.IsError {
			t.Fatalf("get_item %s: %s", id, res.Text)
		}
		if !strings.Contains(res.Text, `"ws":"acme"`) {
			t.Errorf("get_item %s answered %s: the followed hop was sent without workspace acme", id, res.Text)
		}
	}
	for _, s := range rec.all() {
		if s.Query != "ws=acme" {
			t.Errorf("%s %s?%s: want the query ws=acme on every hop", s.Method, s.Path, s.Query)
		}
	}
}

package test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The approver's REST list comes in pages: ?limit=N pages of the pending
// approvals, oldest first, each naming the next in a Link header (and
// X-Next-Cursor) until the last; a cursor the gateway did not issue, or
// a limit out of range, is a 400 saying so.
func TestApprovalListIsPaged(t *testing.T) {
	up := startUpstream(t)
	store := filepath.Join(t.TempDir(), "approvals.json")
	g := startGateway(t, up, "", approvalKeys(), "GATEWAY_APPROVAL_STORE=file:"+store)
	op := token(t, "operator", "acme", operatorScopes...)
	approver := token(t, "approver", "acme", approverScopes...)
	var want []string
	for i := range 5 {
		a := restCall(t, g, op, "cancel_workflow", map[string]any{"workflow_id": fmt.Sprintf("wf-%d", i), "reason": "paging"})
		id := approvalID.FindString(a.Content)
		if !a.IsError || id == "" {
			t.Fatalf("call %d = %+v, want an isError naming a pending approval", i, a)
		}
		want = append(want, id)
	}
	link := regexp.MustCompile(`^<(/admin/mcp/approvals\?[^>]+)>; rel="next"$`)
	var got []string
	next := "/admin/mcp/approvals?limit=2"
	for page := 0; next != ""; page++ {
		if page > 3 {
			t.Fatal("more than 3 pages of 2 for 5 approvals")
		}
		req, _ := http.NewRequest("GET", g.URL+next, nil)
		req.Header.Set("Authorization", "Bearer "+approver)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct{ ID string }
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || len(list) > 2 || len(list) == 0 {
			t.Fatalf("GET %s = %d with %d approvals (%v), want 1 or 2", next, resp.StatusCode, len(list), err)
		}
		for _, e := range list {
			got = append(got, e.ID)
		}
		next = ""
		if l := resp.Header.Get("Link"); l != "" {
			m := link.FindStringSubmatch(l)
			if m == nil || !strings.Contains(m[1], "cursor="+resp.Header.Get("X-Next-Cursor")) || !strings.Contains(m[1], "limit=2") {
				t.Fatalf("Link = %q, X-Next-Cursor = %q; want the next page's URL with its cursor and limit", l, resp.Header.Get("X-Next-Cursor"))
			}
			next = m[1]
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages listed %v, want %v, oldest first", got, want)
	}
	for _, q := range []string{"?cursor=forged", "?limit=0", "?limit=201", "?limit=two"} {
		if code, body, _ := rest(t, "GET", g.URL+"/admin/mcp/approvals"+q, approver); code != 400 || !strings.Contains(fmt.Sprint(body["message"]), "invalid cursor or limit") {
			t.Errorf("GET /admin/mcp/approvals%s = %d %v, want 400 naming the cursor or limit", q, code, body)
		}
	}
}

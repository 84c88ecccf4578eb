package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpgw/gateway/demo"
)

const token = "test-service-token"

var clock = time.Date(2025, 3, 14, 10, 30, 0, 0, time.UTC)

// harness is a demo server behind a real listener.
type harness struct {
	t   *testing.T
	srv *demo.Server
	url string
}

func newHarness(t *testing.T, opts demo.Options) *harness {
	t.Helper()
	if opts.ServiceToken == "" {
		opts.ServiceToken = token
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return clock }
	}
	srv := demo.New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &harness{t: t, srv: srv, url: ts.URL}
}

type req struct {
	method, path, body string
	headers            map[string]string // "" value deletes the default
}

// do sends r with the service token, workspace acme and actor
// ops@acme.example unless r's headers override them.
func (h *harness) do(r req) (int, http.Header, []byte) {
	h.t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	hr, err := http.NewRequest(r.method, h.url+r.path, strings.NewReader(r.body))
	if err != nil {
		h.t.Fatal(err)
	}
	defaults := map[string]string{"Authorization": "Bearer " + token, "X-Workspace-Id": "acme"}
	if r.method == http.MethodPost {
		defaults["X-Actor"] = "ops@acme.example"
		defaults["Content-Type"] = "application/json"
	}
	for k, v := range r.headers {
		defaults[k] = v
	}
	for k, v := range defaults {
		if v != "" {
			hr.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// json sends r, wants status and decodes the answer.
func (h *harness) json(r req, status int) map[string]any {
	h.t.Helper()
	got, hdr, b := h.do(r)
	if got != status {
		h.t.Fatalf("%s %s = %d %s, want %d", r.method, r.path, got, b, status)
	}
	if ct := hdr.Get("Content-Type"); !strings.Contains(ct, "json") {
		h.t.Fatalf("%s %s: Content-Type %q, want JSON", r.method, r.path, ct)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		h.t.Fatalf("%s %s: %v in %s", r.method, r.path, err, b)
	}
	return v
}

func TestAuthAndWorkspace(t *testing.T) {
	h := newHarness(t, demo.Options{})
	tests := []struct {
		name    string
		r       req
		status  int
		errCode string
	}{
		{"no-token-401", req{path: "/v1/jobs", headers: map[string]string{"Authorization": ""}}, 401, "unauthorized"},
		{"wrong-token-401", req{path: "/v1/jobs", headers: map[string]string{"Authorization": "Bearer nope"}}, 401, "unauthorized"},
		{"basic-scheme-401", req{path: "/v1/jobs", headers: map[string]string{"Authorization": "Basic " + token}}, 401, "unauthorized"},
		{"missing-workspace-400", req{path: "/v1/jobs", headers: map[string]string{"X-Workspace-Id": ""}}, 400, "workspace required"},
		{"unknown-workspace-404", req{path: "/v1/jobs", headers: map[string]string{"X-Workspace-Id": "initech"}}, 404, "unknown workspace"},
		{"token-checked-before-workspace", req{path: "/kb/status", headers: map[string]string{"Authorization": "", "X-Workspace-Id": ""}}, 401, "unauthorized"},
		{"unknown-route-json-404", req{path: "/v2/nothing"}, 404, "not found"},
		{"wrong-method-json-405", req{method: http.MethodDelete, path: "/v1/jobs/job-acme-0001"}, 405, "method not allowed"},
		{"write-without-actor-400", req{method: http.MethodPost, path: "/v1/queues/email/pause", headers: map[string]string{"X-Actor": ""}}, 400, "actor required"},
		{"unknown-job-404", req{path: "/v1/jobs/job-acme-9999"}, 404, "not found"},
		{"ok", req{path: "/v1/queues"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := h.json(tt.r, tt.status)
			if v["error"] != nil && v["error"] != tt.errCode || tt.errCode != "" && v["error"] != tt.errCode {
				t.Errorf("error = %v, want %q", v["error"], tt.errCode)
			}
			if tt.errCode != "" && v["message"] == nil {
				t.Errorf("error body %v has no message", v)
			}
		})
	}
	_, hdr, _ := h.do(req{path: "/v1/jobs", headers: map[string]string{"Authorization": ""}})
	if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("401 WWW-Authenticate = %q, want Bearer", hdr.Get("WWW-Authenticate"))
	}
	if got := h.srv.AuditRecords("acme"); len(got) != 4 {
		t.Errorf("refused write was audited: %d records, want the 4 seeded", len(got))
	}
}

func TestEmptyServiceTokenRefusesEverything(t *testing.T) {
	ts := httptest.NewServer(demo.New(demo.Options{}))
	defer ts.Close()
	r, _ := http.NewRequest(http.MethodGet, ts.URL+"/v1/jobs", nil)
	r.Header.Set("Authorization", "Bearer ")
	r.Header.Set("X-Workspace-Id", "acme")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("status = %d, want 401", resp.StatusCode)
	}
	if _, _, err := demo.Start(context.Background(), demo.Options{}); err == nil {
		t.Error("Start with no token succeeded, want an error")
	}
}

func TestPagingVisitsEveryJobOnce(t *testing.T) {
	h := newHarness(t, demo.Options{})
	for _, order := range []string{"newest_first", "oldest_first"} {
		t.Run(order, func(t *testing.T) {
			seen := map[string]bool{}
			var ids []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatal("paging does not terminate")
				}
				q := url.Values{"limit": {"7"}, "sort": {order}}
				if cursor != "" {
					q.Set("after", cursor)
				}
				v := h.json(req{path: "/v1/jobs?" + q.Encode()}, 200)
				for _, it := range v["items"].([]any) {
					id := it.(map[string]any)["jobId"].(string)
					if seen[id] {
						t.Fatalf("job %s seen twice", id)
					}
					seen[id] = true
					ids = append(ids, id)
				}
				next, _ := v["next"].(string)
				if more := v["more"].(bool); more != (next != "") {
					t.Fatalf("more = %v with next %q", more, next)
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if len(ids) != 60 {
				t.Fatalf("paged %d jobs, want 60", len(ids))
			}
			first, last := "job-acme-0060", "job-acme-0001"
			if order == "oldest_first" {
				first, last = last, first
			}
			if ids[0] != first || ids[59] != last {
				t.Errorf("order %s: first %s last %s, want %s and %s", order, ids[0], ids[59], first, last)
			}
		})
	}
}

func TestSearchLimitAndCursorErrors(t *testing.T) {
	h := newHarness(t, demo.Options{})
	v := h.json(req{path: "/v1/jobs?limit=500"}, 200)
	if n := len(v["items"].([]any)); n != 60 || v["more"] != false || v["next"] != nil {
		t.Errorf("limit=500: %d items, more %v, next %v; want all 60 on one page (cap 100)", n, v["more"], v["next"])
	}
	if n := len(h.json(req{path: "/v1/jobs"}, 200)["items"].([]any)); n != 20 {
		t.Errorf("default page has %d items, want 20", n)
	}
	for _, bad := range []string{"limit=0", "limit=x", "after=bm9wZQ", "after=%25%25", "state=Stuck", "sort=random", "tag==x", "tag=k="} {
		if v := h.json(req{path: "/v1/jobs?" + bad}, 400); v["error"] == nil {
			t.Errorf("%s: no error in %v", bad, v)
		}
	}
}

// TestBigPage: all of acme's jobs on one page make a 30-60 KiB answer,
// the size the gateway's truncation demos rely on.
func TestBigPage(t *testing.T) {
	h := newHarness(t, demo.Options{})
	_, _, b := h.do(req{path: "/v1/jobs?limit=100"})
	if len(b) < 30<<10 || len(b) > 60<<10 {
		t.Errorf("full page is %d bytes, want 30-60 KiB", len(b))
	}
}

func TestTagGrammar(t *testing.T) {
	h := newHarness(t, demo.Options{})
	count := func(query string) int {
		return int(h.json(req{path: "/v1/jobs?limit=100&" + query}, 200)["total"].(float64))
	}
	tests := []struct {
		query string
		want  int
	}{
		{"tag=region%3Deu", 20},
		{"tag=region%3D*", 60},
		{"tag=priority%3D*", 24},
		{"tag=priority%3Dhigh", 12},
		{"tag=vip", 7},
		{"tag=backfill", 9},
		{"tag=region%3Deu&tag=vip", 2},           // AND
		{"tag=eu", 0},                            // a bare value is a plain label, not a keyed value
		{"tag=region", 0},                        // nor a key
		{"tag=needs-triage&state=Failed", 5},     // with a state filter
		{"tag=priority%3Dhigh&queue=billing", 2}, // with a queue filter
		{"state=Running", 4},
		{"state=Enqueued", 8},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := count(tt.query); got != tt.want {
				t.Errorf("total = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTagFacet(t *testing.T) {
	h := newHarness(t, demo.Options{})
	v := h.json(req{path: "/v1/tags/facet?key=region&max=2"}, 200)
	b := v["buckets"].([]any)
	if len(b) != 2 || v["distinctValues"].(float64) != 3 {
		t.Fatalf("facet region max 2 = %v", v)
	}
	if first := b[0].(map[string]any); first["count"].(float64) != 20 || first["value"] != "apac" {
		t.Errorf("top bucket = %v, want apac 20 (ties by value)", first)
	}
	labels := h.json(req{path: "/v1/tags/facet?key="}, 200)["buckets"].([]any)
	var got []string
	for _, l := range labels {
		got = append(got, l.(map[string]any)["value"].(string))
	}
	if want := []string{"backfill", "vip", "needs-triage"}; !slices.Equal(got, want) {
		t.Errorf("label facet = %v, want %v", got, want)
	}
}

func TestConcurrencyLimitAbsentNullValue(t *testing.T) {
	h := newHarness(t, demo.Options{})
	limit := func() any { return h.json(req{path: "/v1/queues/billing"}, 200)["concurrencyLimit"] }
	if got := limit(); got != 4.0 {
		t.Fatalf("seeded billing limit = %v, want 4", got)
	}
	steps := []struct {
		name, body string
		status     int
		want       any
	}{
		{"set-7", `{"limit": 7}`, 200, 7.0},
		{"null-removes", `{"limit": null}`, 200, nil},
		{"set-3", `{"limit": 3, "reason": "psp throttling"}`, 200, 3.0},
		{"absent-removes", `{"reason": "back to normal"}`, 200, nil},
		{"set-2", `{"limit": 2}`, 200, 2.0},
		{"empty-body-removes", ``, 200, nil},
		{"zero-refused", `{"limit": 0}`, 400, nil},
		{"fraction-refused", `{"limit": 1.5}`, 400, nil},
		{"string-refused", `{"limit": "5"}`, 400, nil},
		{"unknown-field-refused", `{"cap": 5}`, 400, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			h.json(req{method: http.MethodPost, path: "/v1/queues/billing/concurrency", body: st.body}, st.status)
			if got := limit(); got != st.want {
				t.Errorf("limit after %s = %v, want %v", st.body, got, st.want)
			}
		})
	}
	var actions []string
	for _, a := range h.srv.AuditRecords("acme")[4:] {
		actions = append(actions, a.Action+" "+a.Detail)
	}
	want := []string{
		"queue.concurrency_limit.set limit=7", "queue.concurrency_limit.remove ",
		"queue.concurrency_limit.set limit=3", "queue.concurrency_limit.remove ",
		"queue.concurrency_limit.set limit=2", "queue.concurrency_limit.remove ",
	}
	if !slices.Equal(actions, want) {
		t.Errorf("audit = %q, want %q", actions, want)
	}
}

func TestWritesAreAuditedWithActor(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := newHarness(t, demo.Options{Record: func(r *http.Request, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Actor")+" "+string(body))
	}})
	writes := []struct {
		path, body string
		status     int
		action     string
		target     string
	}{
		{"/v1/jobs/job-acme-0009/requeue", `{"reason":"card updated"}`, 200, "job.requeue", "job-acme-0009"},
		{"/v1/jobs/job-acme-0055/cancel", `{}`, 200, "job.cancel", "job-acme-0055"},
		{"/v1/jobs/job-acme-0049/cancel", ``, 200, "job.cancel", "job-acme-0049"},
		{"/v1/schedules/sch-acme-invoice-sweep/trigger", `{"reason":"catch up"}`, 201, "schedule.trigger", "sch-acme-invoice-sweep"},
		{"/v1/queues/email/pause", ``, 200, "queue.pause", "email"},
		{"/v1/queues/reports/resume", ``, 200, "queue.resume", "reports"},
		{"/v1/workflows/wf-acme-0012/cancel", `{"reason":"duplicate batch"}`, 200, "workflow.cancel", "wf-acme-0012"},
	}
	for i, w := range writes {
		actor := "agent-" + string(rune('a'+i)) + "@acme.example"
		h.json(req{method: http.MethodPost, path: w.path, body: w.body, headers: map[string]string{"X-Actor": actor}}, w.status)
		recs := h.srv.AuditRecords("acme")
		got := recs[len(recs)-1]
		if got.Actor != actor || got.Action != w.action || got.Target != w.target || got.Workspace != "acme" || !got.Time.Equal(clock) {
			t.Errorf("POST %s: audit %+v, want actor %s action %s target %s", w.path, got, actor, w.action, w.target)
		}
	}
	if n := len(h.srv.AuditRecords("acme")); n != 4+len(writes) {
		t.Errorf("%d audit records, want %d", n, 4+len(writes))
	}
	if got := h.srv.AuditRecords("globex"); len(got) != 1 {
		t.Errorf("globex trail changed: %v", got)
	}
	mu.Lock()
	if len(seen) < len(writes) || seen[0] != `POST /v1/jobs/job-acme-0009/requeue agent-a@acme.example {"reason":"card updated"}` {
		t.Errorf("Record saw %q", seen)
	}
	mu.Unlock()

	// The state changed.
	if v := h.json(req{path: "/v1/jobs/job-acme-0009"}, 200); v["state"] != "Enqueued" || v["attempt"] != 0.0 {
		t.Errorf("requeued job = %v %v, want Enqueued attempt 0", v["state"], v["attempt"])
	}
	if v := h.json(req{path: "/v1/jobs/job-acme-0049"}, 200); v["state"] != "Running" || v["cancelRequested"] != true {
		t.Errorf("cancelled running job = %v %v, want Running with cancelRequested", v["state"], v["cancelRequested"])
	}
	if v := h.json(req{path: "/v1/workflows/wf-acme-0012"}, 200); v["status"] != "Cancelled" {
		t.Errorf("cancelled workflow status = %v", v["status"])
	}
	if v := h.json(req{path: "/v1/jobs/job-acme-0061"}, 200); v["scheduleId"] != "sch-acme-invoice-sweep" || v["state"] != "Enqueued" {
		t.Errorf("triggered job = %v", v)
	}
	audit := h.json(req{path: "/v1/audit?target=email"}, 200)["records"].([]any)
	if len(audit) != 1 || audit[0].(map[string]any)["actor"] != "agent-e@acme.example" {
		t.Errorf("audit for email = %v", audit)
	}
}

func TestConflictsAreProblems(t *testing.T) {
	h := newHarness(t, demo.Options{})
	for _, path := range []string{
		"/v1/jobs/job-acme-0001/cancel",                 // Succeeded
		"/v1/jobs/job-acme-0053/requeue",                // Enqueued
		"/v1/schedules/sch-acme-legacy-digest/trigger",  // unresolvable
		"/v1/schedules/sch-acme-nightly-rollup/trigger", // no overlap, run live
		"/v1/workflows/wf-acme-0001/cancel",             // Succeeded
	} {
		status, hdr, b := h.do(req{method: http.MethodPost, path: path})
		if status != 409 || hdr.Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s = %d %s, want 409 problem+json", path, status, hdr.Get("Content-Type"))
		}
		var p map[string]any
		if json.Unmarshal(b, &p) != nil || p["status"] != 409.0 || p["title"] == nil || p["error"] == nil || p["message"] == nil {
			t.Errorf("POST %s: problem %s", path, b)
		}
	}
	if n := len(h.srv.AuditRecords("acme")); n != 4 {
		t.Errorf("refused writes were audited: %d records", n)
	}
}

func TestWorkspaceIsolation(t *testing.T) {
	h := newHarness(t, demo.Options{})
	globex := map[string]string{"X-Workspace-Id": "globex"}
	for _, path := range []string{
		"/v1/jobs/job-acme-0001", "/v1/jobs/job-acme-0001/history", "/v1/jobs/job-acme-0007/payload",
		"/v1/queues/billing", "/v1/schedules/sch-acme-invoice-sweep", "/v1/workflows/wf-acme-0001",
	} {
		h.json(req{path: path, headers: globex}, 404)
	}
	h.json(req{method: http.MethodPost, path: "/v1/jobs/job-acme-0053/cancel", headers: globex}, 404)
	if v := h.json(req{path: "/v1/jobs/job-acme-0053"}, 200); v["state"] != "Enqueued" {
		t.Errorf("globex write reached acme: %v", v["state"])
	}
	v := h.json(req{path: "/v1/jobs?limit=100", headers: globex}, 200)
	if v["total"] != 15.0 {
		t.Errorf("globex total = %v, want 15", v["total"])
	}
	for _, it := range v["items"].([]any) {
		if id := it.(map[string]any)["jobId"].(string); !strings.HasPrefix(id, "job-globex-") {
			t.Errorf("globex sees %s", id)
		}
	}
	if v := h.json(req{path: "/kb/status", headers: globex}, 200); v["enabled"] != false {
		t.Errorf("globex kb = %v", v)
	}
	h.json(req{path: "/kb/search?q=retry", headers: globex}, 409)
	if v := h.json(req{path: "/kb/status"}, 200); v["enabled"] != true {
		t.Errorf("acme kb = %v", v)
	}
}

func TestReadShapes(t *testing.T) {
	h := newHarness(t, demo.Options{})
	hist := h.json(req{path: "/v1/jobs/job-acme-0018/history"}, 200)["transitions"].([]any)
	failed := 0
	for _, tr := range hist {
		m := tr.(map[string]any)
		if m["state"] == "Failed" {
			failed++
			if d, _ := m["failureDetail"].(string); !strings.Contains(d, "@customers.example") {
				t.Errorf("failed transition without sensitive detail: %v", m)
			}
		} else if m["failureDetail"] != nil {
			t.Errorf("non-failed transition with detail: %v", m)
		}
	}
	if failed != 5 {
		t.Errorf("job-acme-0018 has %d failed transitions, want 5 (billing max attempts)", failed)
	}

	deps := h.json(req{path: "/v1/jobs/job-acme-0056/dependencies"}, 200)
	if g := deps["gatingParents"].([]any); len(g) != 2 || g[0].(map[string]any)["jobId"] != "job-acme-0050" {
		t.Errorf("gating parents = %v, want 0050 and 0051 (0040 finished)", g)
	}

	scheds := h.json(req{path: "/v1/schedules"}, 200)["schedules"].([]any)
	broken := 0
	for _, s := range scheds {
		if s.(map[string]any)["error"] != nil {
			broken++
		}
	}
	if len(scheds) != 4 || broken != 1 {
		t.Errorf("%d schedules, %d with error; want 4 and 1", len(scheds), broken)
	}

	obs := h.json(req{path: "/v1/observers"}, 200)["observers"].([]any)
	if o := obs[0].(map[string]any); o["cursor"] != -1.0 {
		t.Errorf("first observer = %v, want cursor -1", o)
	}

	statuses := map[string]bool{}
	wfs := h.json(req{path: "/v1/workflows?limit=100"}, 200)["items"].([]any)
	for _, w := range wfs {
		statuses[w.(map[string]any)["status"].(string)] = true
	}
	if len(wfs) != 12 || len(statuses) != 4 {
		t.Errorf("%d workflows with statuses %v; want 12 covering all four", len(wfs), statuses)
	}
	if v := h.json(req{path: "/v1/workflows/wf-acme-0003"}, 200); v["restartedFrom"] != "wf-acme-0002" || v["memberCount"] != 6.0 {
		t.Errorf("wf-acme-0003 = %v", v)
	}
	h.json(req{path: "/v1/audit"}, 400)
}

func TestPayloadsAndOutputs(t *testing.T) {
	h := newHarness(t, demo.Options{})
	tests := []struct {
		path       string
		status     int
		utf8       bool
		minBytes   int
		maxBytes   int
		wantPrefix string
	}{
		{"/v1/jobs/job-acme-0001/payload", 200, true, 50, 400, `{"invoiceId"`},
		{"/v1/jobs/job-acme-0007/payload", 200, false, 300, 400, "\x1f\x8b"},
		{"/v1/jobs/job-acme-0020/payload", 200, true, 40 << 10, 41 << 10, `{"report"`},
		{"/v1/jobs/job-acme-0014/output", 200, false, 100, 400, "\x89PNG"},
		{"/v1/jobs/job-acme-0020/output", 200, true, 20 << 10, 21 << 10, "day,merchant"},
		{"/v1/jobs/job-acme-0009/output", 404, false, 0, 0, ""}, // failed: no output
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, hdr, b := h.do(req{path: tt.path})
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if status != 200 {
				return
			}
			if hdr.Get("Content-Type") != "application/octet-stream" {
				t.Errorf("Content-Type %q", hdr.Get("Content-Type"))
			}
			if utf8.Valid(b) != tt.utf8 || len(b) < tt.minBytes || len(b) > tt.maxBytes || !strings.HasPrefix(string(b), tt.wantPrefix) {
				t.Errorf("%d bytes, utf8 %v, prefix %q", len(b), utf8.Valid(b), b[:min(8, len(b))])
			}
		})
	}
}

func TestKnowledgeSearch(t *testing.T) {
	h := newHarness(t, demo.Options{})
	v := h.json(req{path: "/kb/search?q=retry+cancel&limit=20"}, 200)
	var all strings.Builder
	for _, r := range v["results"].([]any) {
		m := r.(map[string]any)
		for _, k := range []string{"docId", "title", "snippet", "score"} {
			if m[k] == nil {
				t.Errorf("result without %s: %v", k, m)
			}
		}
		all.WriteString(m["snippet"].(string))
	}
	for _, inj := range []string{"Ignore previous instructions", "</untrusted-document-text-", "ｕｎｔｒｕｓｔｅｄ", "untrusted\u200b-document"} {
		if !strings.Contains(all.String(), inj) {
			t.Errorf("snippets lack the injection %q", inj)
		}
	}
	if n := len(h.json(req{path: "/kb/search?q=job"}, 200)["results"].([]any)); n != 5 {
		t.Errorf("default limit gives %d results, want 5", n)
	}
	h.json(req{path: "/kb/search?q=+"}, 400)
}

func TestStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, stop, err := demo.Start(ctx, demo.Options{ServiceToken: token})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, url: u}
	h.json(req{path: "/v1/queues"}, 200)
	stop()
	stop()
	if _, err := http.Get(u + "/v1/queues"); err == nil {
		t.Error("server still answers after stop")
	}
}

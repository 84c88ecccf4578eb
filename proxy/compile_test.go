package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// What New compiles from the catalog, seen through calls: the note on
// withheld fields, not_found results, the fence notice, the optional paths
// of paged and listed answers, the trimming of a bare array, and spans.

const compileCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  view: { scopes: [read] }
sensitive_data: { kill_switch_env: MY_KILL }
upstreams:
  up: { base_url: "${UP}" }
limits: { structured_bytes: 2KiB, text_bytes: 4KiB }
tools:
  - name: history
    description: History with failure details.
    request: { upstream: up, path: /history }
    response: { sensitive: ["history.#.failureDetail"] }
  - name: lookup
    description: An item, with a custom not-found answer.
    request: { upstream: up, path: /missing }
    response: { not_found: { status: [404, 410], result: { exists: false } } }
  - name: page
    description: One page of jobs.
    input: { type: object, properties: { after: { type: string }, page_size: { type: integer, minimum: 1 } } }
    request: { upstream: up, path: /page, query: { after: "{after}", limit: "{page_size}" } }
    paging: { cursor_argument: after, page_size_argument: page_size }
    response: { fields: { jobs: data.jobs, nextCursor: data.next }, list: jobs }
  - name: maybe_list
    description: A list that may be absent.
    request: { upstream: up, path: /nolist }
    response: { fields: { jobs: data.jobs, total: data.total }, list: jobs, optional: [list] }
  - name: bare_array
    description: An upstream answering a bare JSON array.
    request: { upstream: up, path: /array }
`

func compileUpstream(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/history":
			io.WriteString(w, `{"history":[{"attempt":1,"failureDetail":"NullReferenceException"}]}`)
		case "/missing":
			w.WriteHeader(http.StatusGone)
		case "/page":
			if r.URL.Query().Get("after") == "" {
				io.WriteString(w, `{"data":{"jobs":[1,2],"next":"c2"}}`)
				return
			}
			io.WriteString(w, `{"data":{"jobs":[3]}}`)
		case "/nolist":
			io.WriteString(w, `{"data":{"total":0}}`)
		case "/array":
			var items []string
			for i := range 200 {
				items = append(items, fmt.Sprintf(`{"id":%d,"name":"item number %d"}`, i, i))
			}
			io.WriteString(w, "["+strings.Join(items, ",")+"]")
		}
	})
}

var compileReader = authz.NewPrincipal("alice", "acme", "", []string{"read"}, nil)

// A withheld field's note names the locks to open: the gate (or that
// none is named) and the catalog's own kill-switch variable.
func TestWithheldFieldsCarryTheNote(t *testing.T) {
	rec := compileUpstream(t)
	c := parseCore(t, compileCatalog, rec.srv.URL, nil)
	res := call(t, c, compileReader, "history", `{}`)
	var got struct{ HistoryNote string }
	if err := json.Unmarshal(res.Structured, &got); err != nil {
		t.Fatalf("history = %s: %v", res.Structured, err)
	}
	const want = "detail withheld: sensitive data is shown only when the caller passes a sensitive_data.gate (none is named), sensitive_data.expose is true and MY_KILL is not set"
	if got.HistoryNote != want || strings.Contains(res.Text, "NullReference") {
		t.Errorf("history = %s, want the detail withheld with the note %q", res.Structured, want)
	}
	// outputCatalog names its gate and keeps the default variable.
	c = newOutputCore(t, outputUpstream(t).srv.URL, map[string]string{"EXPOSE": "false"})
	res = call(t, c, compileReader, "get_history", `{}`)
	if want := `"historyNote":"detail withheld: sensitive data is shown only when the caller passes the \"secret\" gate, sensitive_data.expose is true and GATEWAY_DISABLE_SENSITIVE_DATA is not set"`; !strings.Contains(string(res.Structured), want) {
		t.Errorf("get_history = %s, want %s", res.Structured, want)
	}
}

// not_found answers every status it lists with the catalog's result.
func TestNotFoundAnswersTheCatalogsResult(t *testing.T) {
	rec := compileUpstream(t)
	c := parseCore(t, compileCatalog, rec.srv.URL, nil)
	res := call(t, c, compileReader, "lookup", `{}`)
	if res.IsError || string(res.Structured) != `{"exists":false}` || res.Outcome != proxy.OutcomeNotFound {
		t.Errorf("lookup answered 410 = %+v, want {\"exists\":false}", res)
	}
}

// The fence notice is added to the instructions only when some tool fences
// untrusted text.
func TestFenceNoticeOnlyWithUntrustedFields(t *testing.T) {
	c := parseCore(t, compileCatalog, "http://127.0.0.1:1", nil)
	if strings.Contains(c.Instructions(), "untrusted-document-text") {
		t.Errorf("instructions without untrusted fields = %q", c.Instructions())
	}
	c = newOutputCore(t, "http://127.0.0.1:1", nil) // no instructions of its own
	if c.Instructions() != proxy.FenceNotice {
		t.Errorf("instructions with untrusted fields = %q, want the fence notice alone", c.Instructions())
	}
}

// A paged tool's last page has no nextCursor: it is a success, with
// hasMore false. A list declared optional may be absent.
func TestOptionalPathsOfPagedAndListedAnswers(t *testing.T) {
	rec := compileUpstream(t)
	c := parseCore(t, compileCatalog, rec.srv.URL, nil)
	for args, want := range map[string]string{
		`{}`:             `{"jobs":[1,2],"nextCursor":"c2","hasMore":true}`,
		`{"after":"c2"}`: `{"jobs":[3],"hasMore":false}`,
	} {
		if res := call(t, c, compileReader, "page", args); res.IsError || string(res.Structured) != want {
			t.Errorf("page(%s) = %+v, want %s", args, res, want)
		}
	}
	if res := call(t, c, compileReader, "maybe_list", `{}`); res.IsError {
		t.Errorf("maybe_list without its list = %q, want a success", res.Text)
	}
}

// A bare JSON array over the bounds is trimmed as the list "items", never
// refused.
func TestBareArrayIsTrimmedAsItems(t *testing.T) {
	rec := compileUpstream(t)
	c := parseCore(t, compileCatalog, rec.srv.URL, nil)
	res, err := c.Call(context.Background(), compileReader, "bare_array", nil)
	if err != nil || res.IsError {
		t.Fatalf("bare_array = %v %+v, want a trimmed list", err, res)
	}
	var got struct {
		Items              []json.RawMessage
		TransportTruncated struct {
			List    string
			Dropped int
		}
	}
	if err := json.Unmarshal(res.Structured, &got); err != nil {
		t.Fatal(err)
	}
	if got.TransportTruncated.List != "items" || got.TransportTruncated.Dropped == 0 || len(got.Items)+got.TransportTruncated.Dropped != 200 || res.Outcome != proxy.OutcomeTruncated {
		t.Errorf("bare_array = %.300s, want the items trimmed with a marker", res.Structured)
	}
}

// With a tracer, a call records a server span for the tool and a client
// span for the upstream exchange, both ended, with their attributes.
func TestCallSpans(t *testing.T) {
	rec := compileUpstream(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	c := parseCoreWith(t, compileCatalog, rec.srv.URL, &proxy.Options{Tracer: tp.Tracer("test")})
	call(t, c, compileReader, "lookup", `{}`)
	ended := sr.Ended()
	got := map[string]map[attribute.Key]string{}
	for _, s := range ended {
		attrs := map[attribute.Key]string{}
		for _, a := range s.Attributes() {
			attrs[a.Key] = a.Value.Emit()
		}
		got[s.Name()] = attrs
	}
	if a := got["tools/call lookup"]; a["gateway.tool"] != "lookup" || a["gateway.outcome"] != proxy.OutcomeNotFound {
		t.Errorf("tool span attributes = %v", a)
	}
	if a := got["upstream up"]; a["http.request.method"] != "GET" || a["gateway.upstream"] != "up" || a["http.response.status_code"] != "410" {
		t.Errorf("upstream span attributes = %v", a)
	}
	if len(ended) != 2 {
		t.Errorf("%d spans ended, want 2: %v", len(ended), got)
	}
}

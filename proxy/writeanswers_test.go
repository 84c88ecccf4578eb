package proxy_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// writeAnswersCatalog: a read and writes whose answers the upstream
// chooses by path. Each write sets response.not_found, which the bundled
// catalog and imports do on writes too, and which writes ignore.
const writeAnswersCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", timeout: 2s, actor_header: X-Actor }
limits: { structured_bytes: 1KiB, text_bytes: 2KiB }
tools:
  - name: get_repo
    description: Read a repository.
    input: { type: object, properties: { repo: { type: string } }, required: [repo], additionalProperties: false }
    request: { upstream: up, path: "/repos/{repo}" }
    response: { not_found: { status: [404] } }
    output_schema: { type: object, properties: { name: { type: string } }, required: [name] }
  - name: delete_repo
    description: Delete a repository.
    kind: write
    gate: write
    input: { type: object, properties: { repo: { type: string } }, required: [repo], additionalProperties: false }
    request: { upstream: up, method: DELETE, path: "/repos/{repo}" }
    response: { not_found: { status: [404] } }
  - name: create_issue
    description: Open an issue.
    kind: write
    gate: write
    input: { type: object, properties: { repo: { type: string } }, required: [repo], additionalProperties: false }
    request: { upstream: up, method: POST, path: "/repos/{repo}/issues", body: {} }
    response: { select: issue, not_found: { status: [404] } }
    output_schema: { type: object, properties: { number: { type: integer } }, required: [number] }
`

func writeAnswersUpstream(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/repos/missing"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"repository does not exist"}`)
	case r.URL.Path == "/repos/plain/issues":
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "\x00\x01created")
	case r.URL.Path == "/repos/huge/issues":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"issue":{"number":3,"body":"`+strings.Repeat("b", 4000)+`"}}`)
	case r.URL.Path == "/repos/bare/issues":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"issue":{}}`) // an empty object: the note is its only member
	case r.URL.Path == "/repos/unwrapped/issues":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"number":3}`) // no "issue" member for select
	case strings.HasSuffix(r.URL.Path, "/issues"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"issue":{"number":"3"}}`) // a string where the schema says integer
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":7}`)
	}
}

func TestWriteAnswers(t *testing.T) {
	rec := newRecorder(t, writeAnswersUpstream)
	audit := &memAudit{}
	var logs bytes.Buffer
	c := parseCoreWith(t, writeAnswersCatalog, rec.srv.URL, &proxy.Options{Audit: audit, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, tc := range []struct {
		name, tool, args string
		isError          bool
		outcome          string // the result's
		audited          string // the completed audit record's ("" for a read)
		text             []string
	}{
		{"read-answered-404-maps-to-not-found", "get_repo", `{"repo":"missing"}`, false, proxy.OutcomeNotFound, "", []string{`{"found":false}`}},
		{"write-answered-404-is-an-upstream-error", "delete_repo", `{"repo":"missing"}`, true, proxy.OutcomeToolError, proxy.OutcomeToolError,
			[]string{"upstream up answered 404 Not Found: repository does not exist"}},
		{"write-with-an-output-schema-answered-404-is-an-upstream-error", "create_issue", `{"repo":"missing"}`, true, proxy.OutcomeToolError, proxy.OutcomeToolError,
			[]string{"answered 404 Not Found"}},
		{"read-departing-from-its-schema-is-an-error", "get_repo", `{"repo":"site"}`, true, proxy.OutcomeOutputInvalid, "",
			[]string{`does not match the output schema of tool "get_repo" at name: want string, got number`}},
		{"write-departing-from-its-schema-succeeds-with-a-note", "create_issue", `{"repo":"site"}`, false, proxy.OutcomeOutputDeparted, proxy.OutcomeOK,
			[]string{`{"outputSchemaDeparture":"upstream up answered 201 and performed the write, but its answer does not match the output schema at number: want integer, got string","number":"3"}`}},
		{"write-answered-with-an-empty-object-succeeds-with-the-note-alone", "create_issue", `{"repo":"bare"}`, false, proxy.OutcomeOutputDeparted, proxy.OutcomeOK,
			[]string{`{"outputSchemaDeparture":"upstream up answered 201 and performed the write, but its answer does not match the output schema at the top level: missing required member \"number\""}`}},
		{"write-whose-select-finds-nothing-succeeds-with-a-note", "create_issue", `{"repo":"unwrapped"}`, false, proxy.OutcomeOutputDeparted, proxy.OutcomeOK,
			[]string{`"outputSchemaDeparture":"upstream up answered 201 and performed the write, but response.select \"issue\" matched nothing in the answer, so only its status is shown"`, `"ok":true,"upstreamStatus":201`}},
		{"write-too-large-to-show-degrades-with-a-note", "create_issue", `{"repo":"huge"}`, false, proxy.OutcomeOutputDeparted, proxy.OutcomeOK,
			[]string{`{"outputSchemaDeparture":"upstream up answered 201 and performed the write, but its answer does not match the output schema at the top level: missing required member \"number\"","upstreamStatus":201,"transportTruncated":{`}},
		{"write-answered-with-a-body-that-is-not-json-succeeds-with-a-note", "create_issue", `{"repo":"plain"}`, false, proxy.OutcomeOutputDeparted, proxy.OutcomeOK,
			[]string{`its body is not JSON (application/octet-stream), so only its status is shown`, `"upstreamStatus":201`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(audit.all())
			res := call(t, c, writer, tc.tool, tc.args)
			if res.IsError != tc.isError || res.Outcome != tc.outcome {
				t.Errorf("%s(%s) = %q (isError %v, outcome %s), want isError %v, outcome %s", tc.tool, tc.args, res.Text, res.IsError, res.Outcome, tc.isError, tc.outcome)
			}
			for _, want := range tc.text {
				if !strings.Contains(res.Text, want) {
					t.Errorf("text = %q, want it to hold %q", res.Text, want)
				}
			}
			if strings.Contains(res.Text, "retry") {
				t.Errorf("text = %q tells the agent about retrying", res.Text)
			}
			if !tc.isError && string(res.Structured) != res.Text {
				t.Errorf("structuredContent %s differs from the text %s", res.Structured, res.Text)
			}
			recs := audit.all()[before:]
			switch {
			case tc.audited == "" && len(recs) != 0:
				t.Errorf("a read wrote audit records: %+v", recs)
			case tc.audited != "" && (len(recs) != 2 || recs[1].Outcome != tc.audited):
				t.Errorf("audit records %+v, want started then completed with outcome %s", recs, tc.audited)
			}
		})
	}
	if !strings.Contains(logs.String(), `level=WARN msg="write answer departs from its tool's expected shape" tool=create_issue`) {
		t.Errorf("no Warn line for the departing writes in:\n%s", logs.String())
	}
}

package mcp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeOutputCatalog has a write whose output_schema its upstream's
// answer departs from, as imported schemas often do (Swagger 2.0 cannot
// say nullable: Gitea answers closed_at: null on a new issue).
const writeOutputCatalog = `
version: 1
server: { name: test-gw, version: 1.2.3 }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
gates:
  write: { scopes: [write] }
upstreams:
  up: { base_url: "${UP}", timeout: 2s }
tools:
  - name: create_issue
    description: Open an issue.
    kind: write
    gate: write
    input: { type: object, properties: { title: { type: string } }, required: [title], additionalProperties: false }
    request: { upstream: up, method: POST, path: /issues, body: { title: "{title}" } }
    output_schema:
      type: object
      properties:
        number: { type: integer }
        closed_at: { type: string, format: date-time }
      required: [number, closed_at]
      additionalProperties: false
`

// A performed write whose answer departs from the schema is a success
// that a client checking structuredContent against the advertised
// outputSchema (the Go SDK's validator) accepts, with the answer and the
// departure beside it: never "failed, do not retry".
func TestWriteAnswerDepartingFromItsSchemaIsStillASuccess(t *testing.T) {
	var created atomic.Int32
	e := newEnvWith(t, writeOutputCatalog, envConfig{upstream: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		created.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"number":7,"closed_at":null}`)
	})})
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := sdkSession(t, e.srv.URL+"/mcp", token(t, "write"), era.opts)
			schemas := resolvedSchemas(t, cs)
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "t"}})
			if err != nil || res.IsError {
				t.Fatalf("CallTool = %+v, %v; want a success", res, err)
			}
			m, _ := res.StructuredContent.(map[string]any)
			if m == nil || m["number"] != float64(7) {
				t.Fatalf("structuredContent = %#v, want the upstream's answer", res.StructuredContent)
			}
			note, _ := m["outputSchemaDeparture"].(string)
			if !strings.Contains(note, "answered 201 and performed the write") || !strings.Contains(note, "at closed_at: want string, got null") {
				t.Errorf("outputSchemaDeparture = %q", note)
			}
			if err := schemas["create_issue"].Validate(m); err != nil {
				t.Errorf("structuredContent %v breaks the advertised outputSchema: %v", m, err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if strings.Contains(text, "retry") || !strings.Contains(text, `"number":7`) {
				t.Errorf("text = %q", text)
			}
		})
	}
	if n := created.Load(); n != int32(len(eras)) {
		t.Errorf("the upstream created %d issues, want %d", n, len(eras))
	}
}

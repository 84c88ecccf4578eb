package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// strictTools are demo routes with an output_schema their answers break:
// the schema admits nothing but the not_found result.
const strictTools = `
  - name: get_job_strict
    description: get_job held to a schema the demo's answer breaks.
    input: { type: object, properties: { job_id: { type: string } }, required: [job_id], additionalProperties: false }
    request: { upstream: monitor, path: "/v1/jobs/{job_id}" }
    response: { not_found: { status: [404] } }
    output_schema: { type: object, properties: { found: { type: boolean } }, additionalProperties: false }
  - name: cancel_job_strict
    description: cancel_job held to a schema the demo's answer breaks.
    kind: write
    gate: cancel
    input: { type: object, properties: { job_id: { type: string } }, required: [job_id], additionalProperties: false }
    request: { upstream: operator, method: POST, path: "/v1/jobs/{job_id}/cancel" }
    response: { not_found: { status: [404] } }
    output_schema: { type: object, properties: { found: { type: boolean } }, additionalProperties: false }
`

// A broken shape is counted per tool. A read's becomes a tool error; a
// write's answer comes back as a success with the departure beside it,
// and its audit record says ok: the upstream performed it.
func TestOutputSchemaViolationMetricAndAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	rt, url, tok := auditGateway(t, strictTools+"\naudit:\n  path: "+path+"\n", nil)
	text, isErr := callTool(t, url, tok, "get_job_strict", `{"job_id":"job-acme-0001"}`)
	if !isErr || !strings.Contains(text, "does not match the output schema") {
		t.Fatalf("get_job_strict = %q (isError %v)", text, isErr)
	}
	if text, isErr := callTool(t, url, tok, "get_job_strict", `{"job_id":"job-acme-9999"}`); isErr || text != `{"found":false}` {
		t.Fatalf("get_job_strict(unknown) = %q (isError %v), want the not_found result", text, isErr)
	}
	text, isErr = callTool(t, url, tok, "cancel_job_strict", `{"job_id":"job-acme-0053"}`)
	if isErr || !strings.Contains(text, `"outputSchemaDeparture":"upstream operator answered 200 and performed the write, but its answer does not match the output schema at `) ||
		!strings.Contains(text, `"state":"Cancelled"`) || strings.Contains(text, "do not retry") {
		t.Fatalf("cancel_job_strict = %q (isError %v), want the answer with the departure beside it", text, isErr)
	}
	m := metricsText(t, rt)
	for _, want := range []string{
		`gateway_output_schema_violations_total{tool="get_job_strict"} 1`,
		`gateway_output_schema_violations_total{tool="cancel_job_strict"} 1`,
		`gateway_tool_calls_total{outcome="output_invalid",tool="get_job_strict"} 1`,
		`gateway_tool_calls_total{outcome="not_found",tool="get_job_strict"} 1`,
		`gateway_tool_calls_total{outcome="output_departed",tool="cancel_job_strict"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(m, "_strict"))
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"outcome":"ok"`) || strings.Contains(string(b), `"outcome":"output_invalid"`) {
		t.Fatalf("audit trail = %s, %v; want the write's completed record with outcome ok", b, err)
	}
}

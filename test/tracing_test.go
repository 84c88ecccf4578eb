package test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestTraceparentReachesTheUpstreamAndSpansAreExported(t *testing.T) {
	var exported atomic.Int32
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			b, _ := io.ReadAll(r.Body)
			if len(b) > 0 {
				exported.Add(1)
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)

	up := startUpstream(t)
	g := launch(t, launchConfig{upstreamURL: up.URL, env: []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=50",
	}})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tok := token(t, "viewer", "acme", viewerScopes...)
	resp, body := post(t, g.MCP, tok, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_queues","arguments":{}}}`,
		map[string]string{"MCP-Protocol-Version": "2025-11-25", "traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"})
	if resp.StatusCode != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	var seen string
	for _, r := range up.requests() {
		if strings.HasPrefix(r.Path, "/v1/queues") {
			seen = r.Header.Get("traceparent")
		}
	}
	if !strings.HasPrefix(seen, "00-"+traceID+"-") || strings.Contains(seen, "00f067aa0ba902b7") {
		t.Errorf("upstream traceparent = %q, want the caller's trace with the gateway's own span", seen)
	}
	eventually(t, "spans at the OTLP collector", func() bool { return exported.Load() > 0 })
}

func TestNoTraceparentInventedWithoutTracing(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	tok := token(t, "viewer", "acme", viewerScopes...)
	rpc(t, g.MCP, tok, "tools/call", `{"name":"list_queues","arguments":{}}`)
	for _, r := range up.requests() {
		if tp := r.Header.Get("traceparent"); tp != "" {
			t.Errorf("upstream received traceparent %q although the caller sent none and no exporter is set", tp)
		}
	}
}

func TestTraceparentFromMeta(t *testing.T) {
	up := startUpstream(t)
	g := startGateway(t, up, "")
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	tok := token(t, "viewer", "acme", viewerScopes...)
	status, body := rpc(t, g.MCP, tok, "tools/call", `{"name":"list_queues","arguments":{},"_meta":{"traceparent":"00-`+traceID+`-b7ad6b7169203331-01"}}`)
	if status != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("call: %d %s", status, body)
	}
	found := false
	for _, r := range up.requests() {
		if strings.HasPrefix(r.Header.Get("traceparent"), "00-"+traceID+"-") {
			found = true
		}
	}
	if !found {
		t.Errorf("the _meta traceparent did not reach the upstream")
	}
}

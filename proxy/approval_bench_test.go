package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// BenchmarkWrite measures what a confirmation adds to a write: the plain
// write against the same loopback upstream is the same-run baseline;
// "confirmed" is both round trips of a confirmed call (the prompt with
// its sealed state, then the retry that opens it, spends its nonce in the
// file store and sends); "four-eyes" is a call held for a second person:
// the first call files the approval, the approver decides it, the retry
// claims it and sends (each iteration a new approval, arguments differing).
// Run:
//
//	go test ./proxy -run '^$' -bench BenchmarkWrite -benchtime 500x
func BenchmarkWrite(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(srv.Close)
	yaml := `version: 1
server: { name: bench }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "` + srv.URL + `", workspace: none }
tools:
  - name: plain
    description: Pause.
    kind: write
    gate: op
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, path: /pause }
  - name: confirmed
    description: Pause.
    kind: write
    gate: op
    approval: confirm
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, path: /pause }
  - name: reviewed
    description: Pause.
    kind: write
    gate: op
    approval: { approvers: approver, ttl: 10m }
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, path: /pause }
`
	cat, err := catalog.Parse("bench.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		b.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	store, _ := approval.OpenFileStore(filepath.Join(b.TempDir(), "approvals.json"))
	c, err := proxy.New(cat, &proxy.Options{Audit: discardAudit{}, Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		b.Fatal(err)
	}
	p := authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil)
	reviewer := authz.NewPrincipal("bob", "", "bob", []string{"approve"}, nil)
	args := []byte(`{"q":"billing"}`)
	accept := json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if res, err := c.Call(context.Background(), p, "plain", args); err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("confirmed", func(b *testing.B) {
		for b.Loop() {
			ctx := proxy.WithAsking(context.Background(), &proxy.Asking{Modern: true, Elicitation: true})
			res, err := c.Call(ctx, p, "confirmed", args)
			if err != nil || res.InputRequired == nil {
				b.Fatalf("%v %+v", err, res)
			}
			ctx = proxy.WithAsking(context.Background(), &proxy.Asking{Modern: true, Elicitation: true, RequestState: res.InputRequired.State, Responses: accept})
			if res, err := c.Call(ctx, p, "confirmed", args); err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("four-eyes", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			args := fmt.Appendf(nil, `{"q":"billing %d"}`, n)
			res, err := c.Call(context.Background(), p, "reviewed", args)
			i := strings.Index(res.Text, "apr_")
			if err != nil || !res.IsError || i < 0 {
				b.Fatalf("want an awaiting answer: %v %+v", err, res)
			}
			if _, err := c.DecideApproval(context.Background(), reviewer, res.Text[i:i+36], true); err != nil {
				b.Fatal(err)
			}
			if res, err := c.Call(context.Background(), p, "reviewed", args); err != nil || res.IsError {
				b.Fatalf("approved retry: %v %+v", err, res)
			}
		}
	})
}

type discardAudit struct{}

func (discardAudit) Write(context.Context, *proxy.AuditRecord) error { return nil }

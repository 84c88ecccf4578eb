package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// approvalRig is a core with a four-eyes tool and a confirm tool against
// a counting upstream, its approvals in a real file store.
type approvalRig struct {
	core      *proxy.Core
	replica   *proxy.Core // another node sharing core's store file
	storePath string
	sent      atomic.Int64
	mu        sync.Mutex
	bodies    []string
	keys      []string
	now       time.Time
	yaml      string // the catalog the cores were built from
	sealer    *approval.Sealer
}

// reload returns the core a reload builds from the rig's catalog with
// edits (old, new, old, new, …) made, sharing the rig's store file and
// keys: what a gateway serves after an operator edits catalog.yaml.
func (rig *approvalRig) reload(t *testing.T, edits ...string) *proxy.Core {
	t.Helper()
	y := rig.yaml
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(y, edits[i]) {
			t.Fatalf("the rig's catalog has no %q", edits[i])
		}
		y = strings.Replace(y, edits[i], edits[i+1], 1)
	}
	cat, err := catalog.Parse("t.yaml", []byte(y), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	store, err := approval.OpenFileStore(rig.storePath)
	if err != nil {
		t.Fatal(err)
	}
	core, err := proxy.New(cat, &proxy.Options{Audit: discardAudit{}, Now: func() time.Time { return rig.now },
		Approvals: &proxy.Approvals{Sealer: rig.sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	return core
}

func newApprovalRig(t *testing.T) *approvalRig {
	t.Helper()
	return newApprovalRigAudit(t, discardAudit{})
}

// newApprovalRigAudit is newApprovalRig with its audit records going to
// sink.
func newApprovalRigAudit(t *testing.T, sink proxy.AuditSink) *approvalRig {
	t.Helper()
	return newApprovalRigWith(t, sink, "")
}

// newApprovalRigWith is newApprovalRigAudit with extra top-level catalog
// YAML (an approval section, say).
func newApprovalRigWith(t *testing.T, sink proxy.AuditSink, extra string) *approvalRig {
	t.Helper()
	return newApprovalRigServer(t, sink, "{ name: t }", extra)
}

// newApprovalRigServer is newApprovalRigWith with the catalog's server
// section (a flow mapping).
func newApprovalRigServer(t *testing.T, sink proxy.AuditSink, server, extra string) *approvalRig {
	t.Helper()
	// The real time, moved by hand: a store prunes spent nonces by the
	// real clock, and a fixed date would make them look fresh again.
	rig := &approvalRig{now: time.Now().UTC().Truncate(time.Second)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.sent.Add(1)
		b := make([]byte, 4096)
		n, _ := r.Body.Read(b)
		rig.mu.Lock()
		rig.bodies = append(rig.bodies, string(b[:n]))
		rig.keys = append(rig.keys, r.Header.Get("Idempotency-Key"))
		rig.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	yaml := `version: 1
server: ` + server + `
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
gates:
  op: { scopes: [op] }
  approver: { scopes: [approve] }
upstreams:
  up: { base_url: "` + srv.URL + `", workspace: none }
tools:
  - name: cancel
    description: Cancel.
    kind: write
    gate: op
    approval: { approvers: approver, ttl: 10m }
    input: { type: object, properties: { q: { type: string }, n: { type: number } } }
    request: { upstream: up, method: POST, path: /cancel, body: { q: "{q}", n: "{n}" } }
  - name: pause
    description: Pause.
    kind: write
    gate: op
    approval: confirm
    input: { type: object, properties: { q: { type: string } } }
    request: { upstream: up, method: POST, path: /pause, body: { q: "{q}" } }
` + extra
	cat, err := catalog.Parse("t.yaml", []byte(yaml), &catalog.LoadOptions{Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := approval.NewSealer(approval.RandomKey())
	rig.yaml, rig.sealer = yaml, sealer
	rig.storePath = filepath.Join(t.TempDir(), "approvals.json")
	store, err := approval.OpenFileStore(rig.storePath)
	if err != nil {
		t.Fatal(err)
	}
	rig.core, err = proxy.New(cat, &proxy.Options{Audit: sink, Now: func() time.Time { return rig.now },
		Approvals: &proxy.Approvals{Sealer: sealer, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	// A second replica: its own core and store client on the same file.
	store2, err := approval.OpenFileStore(rig.storePath)
	if err != nil {
		t.Fatal(err)
	}
	rig.replica, err = proxy.New(cat, &proxy.Options{Audit: sink, Now: func() time.Time { return rig.now },
		Approvals: &proxy.Approvals{Sealer: sealer, Store: store2}})
	if err != nil {
		t.Fatal(err)
	}
	return rig
}

var (
	requester = authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil)
	approver  = authz.NewPrincipal("bob", "", "bob", []string{"approve"}, nil)
)

// idOf returns the approval id an awaiting answer names.
func idOf(t *testing.T, res *proxy.Result) string {
	t.Helper()
	i := strings.Index(res.Text, "apr_")
	if !res.IsError || i < 0 {
		t.Fatalf("want an awaiting isError naming an approval, got %+v", res)
	}
	return res.Text[i : i+36]
}

// A broken approval store refuses the write with a clear isError and
// sends nothing: a corrupt file, a file that cannot be read.
func TestApprovalStoreFailureFailsClosed(t *testing.T) {
	for name, breakIt := range map[string]func(path string) error{
		"corrupt":    func(p string) error { return os.WriteFile(p, []byte(`{"requests":`), 0o600) },
		"unreadable": func(p string) error { os.Remove(p); return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			rig := newApprovalRig(t)
			ctx := context.Background()
			args := []byte(`{"q":"x"}`)
			res, err := rig.core.Call(ctx, requester, "cancel", args)
			if err != nil {
				t.Fatal(err)
			}
			id := idOf(t, res)
			if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
				t.Fatal(err)
			}
			askCtx := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
			p, err := rig.core.Call(askCtx, requester, "pause", args)
			if err != nil || p.InputRequired == nil {
				t.Fatalf("confirm prompt = %+v, %v", p, err)
			}
			if err := breakIt(rig.storePath); err != nil {
				t.Fatal(err)
			}
			res, err = rig.core.Call(ctx, requester, "cancel", args)
			if err != nil || !res.IsError || !strings.Contains(res.Text, "approval store is unavailable") || !strings.Contains(res.Text, "nothing was sent") {
				t.Errorf("four-eyes retry with a %s store = %+v, %v; want an isError saying the store is unavailable", name, res, err)
			}
			// A prompt needs the store's epoch: none is given.
			if q, err := rig.core.Call(askCtx, requester, "pause", args); err != nil || !q.IsError || q.InputRequired != nil || !strings.Contains(q.Text, "approval store is unavailable") {
				t.Errorf("confirm prompt with a %s store = %+v, %v; want an isError saying the store is unavailable", name, q, err)
			}
			askCtx = proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State,
				Responses: json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)})
			res, err = rig.core.Call(askCtx, requester, "pause", args)
			if err != nil || !res.IsError || !strings.Contains(res.Text, "approval store is unavailable") {
				t.Errorf("confirmed retry with a %s store = %+v, %v; want an isError saying the store is unavailable", name, res, err)
			}
			if n := rig.sent.Load(); n != 0 {
				t.Errorf("the upstream received %d requests with a %s store, want 0", n, name)
			}
		})
	}
}

// Arguments the approver saw are the arguments the upstream receives:
// duplicate keys, key order, escapes and number spellings never let an
// approval for one call release another. Spellings the gateway sends
// alike (1, 1.0, 1e0) are one call: the approval binds what is sent.
func TestApprovalArgumentsAreWhatTheUpstreamGets(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	raw := []byte(`{"q":"safe","n":1,"q":"\u0064rop"}`)
	id := idOf(t, rig.call(t, raw))
	got, err := rig.core.GetApproval(ctx, approver, id)
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]any
	json.Unmarshal(got.Arguments, &shown)
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	// Other spellings of other values do not release it.
	for _, other := range []string{`{"q":"safe","n":1}`, `{"q":"drop","n":1.5}`, `{"q":"drop","n":10e0}`, `{"n":1,"q":"drop","q":"safe"}`} {
		res := rig.call(t, []byte(other))
		if !res.IsError || rig.sent.Load() != 0 {
			t.Fatalf("%s released approval %s for %s: %+v", other, id, got.Arguments, res)
		}
	}
	// The same call in another key order, spacing and number spelling does.
	res := rig.call(t, []byte(` { "n" : 1.0 , "q" : "drop" } `))
	if res.IsError || rig.sent.Load() != 1 {
		t.Fatalf("the approved call did not run: %+v", res)
	}
	var sent map[string]any
	json.Unmarshal([]byte(rig.bodies[0]), &sent)
	if shown["q"] != sent["q"] || shown["q"] != "drop" {
		t.Errorf("approver was shown q=%v, upstream received q=%v", shown["q"], sent["q"])
	}
	if rig.keys[0] != "mcpgw-"+id {
		t.Errorf("Idempotency-Key = %q, want mcpgw-%s", rig.keys[0], id)
	}
	// A second retry does not run again.
	if res := rig.call(t, raw); !res.IsError || rig.sent.Load() != 1 {
		t.Errorf("second retry: %+v, sent %d", res, rig.sent.Load())
	}
}

// At its expiry an approved approval no longer releases the call.
func TestApprovedApprovalExpiresAtItsBoundary(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	args := []byte(`{"q":"x"}`)
	id := idOf(t, rig.call(t, args))
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	rig.now = rig.now.Add(10 * time.Minute)
	res := rig.call(t, args)
	if !res.IsError || !strings.Contains(res.Text, "expired") || rig.sent.Load() != 0 {
		t.Errorf("retry at the expiry = %+v, sent %d; want refused as expired", res, rig.sent.Load())
	}
}

// call calls the four-eyes tool as the requester.
func (rig *approvalRig) call(t *testing.T, args []byte) *proxy.Result {
	t.Helper()
	res, err := rig.core.Call(context.Background(), requester, "cancel", args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An approved write whose started record cannot be written is refused
// (nothing sent) and its approval is not spent: once the disk recovers,
// the retry runs, once. The same holds for a confirmation's state.
func TestAuditFailureLeavesTheApprovalUnspent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.Symlink(devFull(t), path); err != nil {
		t.Fatal(err)
	}
	sink := openAudit(t, path, nil)
	trail := proxy.NewAuditTrail(sink, nil, nil)
	rig := newApprovalRigAudit(t, trail)
	ctx := context.Background()
	args := []byte(`{"q":"x"}`)

	// The request record fails too, but the request is held, not sent.
	res, err := rig.core.Call(ctx, requester, "cancel", args)
	if err != nil {
		t.Fatal(err)
	}
	id := idOf(t, res)
	// A decision needs its record: the disk recovers for it, then fills
	// again.
	os.Remove(path)
	sink.Reopen()
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if err := os.Symlink(devFull(t), path); err != nil {
		t.Fatal(err)
	}
	sink.Reopen()
	askCtx := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
	p, err := rig.core.Call(askCtx, requester, "pause", args)
	if err != nil || p.InputRequired == nil {
		t.Fatalf("confirm prompt = %+v, %v", p, err)
	}
	confirmed := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: p.InputRequired.State,
		Responses: json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)})

	for _, c := range []struct {
		tool string
		ctx  context.Context
	}{{"cancel", ctx}, {"pause", confirmed}} {
		res, err := rig.core.Call(c.ctx, requester, c.tool, args)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "auditing is unavailable") {
			t.Fatalf("%s with a full audit disk = %+v, %v; want refused: auditing is unavailable", c.tool, res, err)
		}
	}
	if n := rig.sent.Load(); n != 0 {
		t.Fatalf("upstream received %d requests while audit records could not be written", n)
	}

	if err := os.Remove(path); err != nil { // the disk recovers
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		ctx  context.Context
	}{{"cancel", ctx}, {"pause", confirmed}} {
		res, err := rig.core.Call(c.ctx, requester, c.tool, args)
		if err != nil || res.IsError {
			t.Fatalf("%s after the disk recovered = %+v, %v; want it to run on the unspent approval", c.tool, res, err)
		}
	}
	if n := rig.sent.Load(); n != 2 {
		t.Fatalf("upstream received %d requests, want the two approved writes once each", n)
	}
	recs := readAudit(t, path)
	if len(recs) != 4 || recs[0].Stage != proxy.StageStarted || recs[0].ApprovalID != id || recs[0].Approver != "bob" {
		t.Errorf("records after recovery = %+v, want started (naming %s and bob) and completed for each write", recs, id)
	}
}

// Who may see and decide an approval, at the core: the requester and
// holders of the approvers gate in its workspace see it; another
// workspace, or a caller of the same workspace without the gate, get "no
// approval" (never a hint that it exists); the requester cannot decide it.
func TestApprovalVisibility(t *testing.T) {
	rig := newApprovalRig(t)
	ctx := context.Background()
	res, err := rig.core.Call(ctx, requester, "cancel", []byte(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	id := idOf(t, res)
	outsider := authz.NewPrincipal("carol", "globex", "carol", []string{"approve"}, nil)
	nogate := authz.NewPrincipal("dave", "", "dave", []string{"op"}, nil)
	for _, c := range []struct {
		name string
		p    *authz.Principal
		sees bool
	}{{"requester", requester, true}, {"approver", approver, true}, {"other-workspace", outsider, false}, {"no-gate", nogate, false}} {
		r, err := rig.core.GetApproval(ctx, c.p, id)
		if c.sees != (err == nil && r != nil && r.ID == id) {
			t.Errorf("%s: GetApproval = %v, %v; want seen %v", c.name, r, err, c.sees)
		}
		if !c.sees && (err == nil || !errors.Is(err, proxy.ErrApprovalNotFound)) {
			t.Errorf("%s: GetApproval error = %v, want not found", c.name, err)
		}
		list, err := rig.core.PendingApprovals(ctx, c.p)
		if err != nil || c.sees != (len(list) == 1) {
			t.Errorf("%s: PendingApprovals = %d, %v; want listed %v", c.name, len(list), err, c.sees)
		}
	}
	if _, err := rig.core.DecideApproval(ctx, requester, id, true); err == nil || !errors.Is(err, proxy.ErrApprovalForbidden) {
		t.Errorf("the requester deciding their own approval = %v, want forbidden", err)
	}
	if _, err := rig.core.DecideApproval(ctx, outsider, id, true); err == nil || !errors.Is(err, proxy.ErrApprovalNotFound) {
		t.Errorf("another workspace deciding = %v, want not found", err)
	}
	if r, err := rig.core.DecideApproval(ctx, approver, id, true); err != nil || r.Status != approval.StatusApproved || r.Approver != "bob" {
		t.Errorf("the approver deciding = %+v, %v; want approved by bob", r, err)
	}
}

// A tenantless catalog's principal has the workspace "": the approval and
// confirmation messages leave the workspace out instead of saying
// `in workspace ""`; a principal with a workspace still sees it named.
func TestApprovalMessagesOfATenantlessCatalog(t *testing.T) {
	rig := newApprovalRig(t)
	inAcme := authz.NewPrincipal("carol", "acme", "carol", []string{"op"}, nil)
	for _, tc := range []struct {
		name string
		p    *authz.Principal
		want string // "": no workspace named
	}{
		{"no-workspace", requester, ""},
		{"workspace-acme", inAcme, `in workspace "acme"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			held, err := rig.core.Call(ctx, tc.p, "cancel", []byte(`{"q":"x"}`))
			if err != nil {
				t.Fatal(err)
			}
			ask, err := rig.core.Call(proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true}), tc.p, "pause", []byte(`{"q":"x"}`))
			if err != nil || ask.InputRequired == nil {
				t.Fatalf("confirm prompt = %+v, %v", ask, err)
			}
			for what, text := range map[string]string{"four-eyes answer": held.Text, "confirmation": ask.InputRequired.Message} {
				switch {
				case strings.Contains(text, `workspace ""`):
					t.Errorf("%s says workspace \"\": %s", what, text)
				case tc.want == "" && strings.Contains(text, "workspace"):
					t.Errorf("%s names a workspace for a principal without one: %s", what, text)
				case tc.want != "" && !strings.Contains(text, tc.want):
					t.Errorf("%s = %s, want it to say %s", what, text, tc.want)
				}
			}
		})
	}
}

// A decision that cannot be audited is not made: with the audit file on
// a full disk, approve and reject are refused saying auditing is
// unavailable, the approval stays pending, and nothing runs. Once the
// disk recovers, the decision is made and recorded.
func TestDecisionIsRefusedWhenItCannotBeAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink := openAudit(t, path, nil)
	rig := newApprovalRigAudit(t, proxy.NewAuditTrail(sink, nil, nil))
	ctx := context.Background()
	args := []byte(`{"q":"x"}`)
	id := idOf(t, rig.call(t, args))

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(devFull(t), path); err != nil {
		t.Fatal(err)
	}
	if err := sink.Reopen(); err != nil {
		t.Fatal(err)
	}
	for _, approve := range []bool{false, true} {
		r, err := rig.core.DecideApproval(ctx, approver, id, approve)
		if err == nil || !errors.Is(err, proxy.ErrApprovalUnaudited) || !strings.Contains(err.Error(), "auditing is unavailable") || !strings.Contains(err.Error(), "stays pending") {
			t.Errorf("DecideApproval(approve=%v) with a full audit disk = %+v, %v; want refused: auditing is unavailable", approve, r, err)
		}
	}
	if r, err := rig.core.GetApproval(ctx, approver, id); err != nil || r.Status != approval.StatusPending {
		t.Fatalf("approval after the refused decisions = %+v, %v; want still pending", r, err)
	}
	if res := rig.call(t, args); !res.IsError || rig.sent.Load() != 0 {
		t.Fatalf("retry after the refused decisions = %+v, sent %d; want still held", res, rig.sent.Load())
	}

	os.Remove(path) // the disk recovers
	if err := sink.Reopen(); err != nil {
		t.Fatal(err)
	}
	if r, err := rig.core.DecideApproval(ctx, approver, id, false); err != nil || r.Status != approval.StatusRejected {
		t.Fatalf("rejection after recovery = %+v, %v", r, err)
	}
	recs := readAudit(t, path)
	if len(recs) != 1 || recs[0].Stage != proxy.StageRejected || recs[0].ApprovalID != id || recs[0].Approver != "bob" {
		t.Errorf("records = %+v, want the rejection by bob", recs)
	}
	// Deciding a decided approval is a conflict, and records nothing.
	if _, err := rig.core.DecideApproval(ctx, approver, id, true); !errors.Is(err, approval.ErrConflict) {
		t.Errorf("deciding a rejected approval = %v, want a conflict", err)
	}
	if recs := readAudit(t, path); len(recs) != 1 {
		t.Errorf("records after deciding a decided approval = %+v, want none added", recs)
	}
}

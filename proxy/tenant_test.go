package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// One tenant must not break another: what one workspace sends
// or holds must not make an upstream unavailable to another.

// tenantB is a caller in another workspace than reader and writer (acme).
var tenantB = authz.NewPrincipal("carol", "globex", "carol@example.com", []string{"read"}, nil)

func TestControlCharacterInHeaderArgumentCannotOpenTheBreakerForOthers(t *testing.T) {
	rec := newRecorder(t, nil)
	c := coreWith(t, rec.srv.URL, nil, "")
	// The attack: a header-bound argument Go's transport refuses. Ten
	// calls used to count as ten connection failures and open the breaker
	// for every workspace of the upstream.
	for i := 0; i < 10; i++ {
		res := call(t, c, reader, "get_item", `{"id":"a","h":"x\u0001y"}`)
		if !res.IsError {
			t.Fatalf("call %d = %q, want a tool error", i, res.Text)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests with a control character", n)
	}
	res := call(t, c, tenantB, "get_item", `{"id":"b"}`)
	if res.IsError {
		t.Fatalf("workspace globex after ten bad calls from acme: %s", res.Text)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("the upstream received %d requests, want globex's one", n)
	}
}

func TestHeaderValuesAreCheckedAsNetHTTPWould(t *testing.T) {
	rec := newRecorder(t, nil)
	c := coreWith(t, rec.srv.URL, nil, "")
	refused := []string{"\u0000", "\u0001", "\u0008", "\n", "\r", "\u000b", "\u001b[31m", "\u001f", "\u007f"}
	for _, v := range refused {
		args, _ := json.Marshal(map[string]string{"id": "a", "h": "ok" + v})
		res := call(t, c, reader, "get_item", string(args))
		if !res.IsError || !strings.Contains(res.Text, "header X-Trace") || strings.Contains(res.Text, v) {
			t.Errorf("get_item with h=%q = %q, want a tool error naming the header, not its bytes", v, res.Text)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests with control characters", n)
	}
	for _, v := range []string{"a\tb", "a b", "café ☕", "\u0080\u00ff"} {
		args, _ := json.Marshal(map[string]string{"id": "a", "h": v})
		if res := call(t, c, reader, "get_item", string(args)); res.IsError {
			t.Errorf("get_item with h=%q = %q, want it sent", v, res.Text)
			continue
		}
		reqs := rec.all()
		if got := reqs[len(reqs)-1].Header.Get("X-Trace"); got != v {
			t.Errorf("X-Trace = %q, want %q", got, v)
		}
	}
}

func TestControlCharacterInTokenValuesIsRefusedAndSendsNothing(t *testing.T) {
	rec := newRecorder(t, nil)
	c := coreWith(t, rec.srv.URL, nil, "")
	badWorkspace := authz.NewPrincipal("mallory", "acme\u0001", "mallory@example.com", []string{"read", "write"}, nil)
	badActor := authz.NewPrincipal("mallory", "acme", "mallory\u007f@example.com", []string{"read", "write"}, nil)
	for i := 0; i < 12; i++ {
		if res := call(t, c, badWorkspace, "get_item", `{"id":"a"}`); !res.IsError || !strings.Contains(res.Text, "workspace") {
			t.Fatalf("read with a control character in the workspace = %q, want a tool error naming the workspace", res.Text)
		}
		if res := call(t, c, badActor, "set_limit", `{"id":"a"}`); !res.IsError || !strings.Contains(res.Text, "actor") || res.Outcome != proxy.OutcomeRefused {
			t.Fatalf("write with a control character in the actor = %+v, want a refusal naming the actor", res)
		}
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("the upstream received %d requests", n)
	}
	// Reads carry no actor header: the bad actor's reads still work, and
	// nothing above touched the breaker.
	if res := call(t, c, badActor, "get_item", `{"id":"a"}`); res.IsError {
		t.Fatalf("read by a caller whose actor cannot be a header: %s", res.Text)
	}
	if res := call(t, c, tenantB, "get_item", `{"id":"b"}`); res.IsError {
		t.Fatalf("workspace globex: %s", res.Text)
	}
}

func TestPerWorkspaceShareOfConcurrentCalls(t *testing.T) {
	// In a bubble: the waits below run on the bubble's clock.
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var acmeNow, acmePeak atomic.Int32
		rec, tr := newMemRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Workspace-Id") == "acme" {
				n := acmeNow.Add(1)
				defer acmeNow.Add(-1)
				for p := acmePeak.Load(); n > p && !acmePeak.CompareAndSwap(p, n); p = acmePeak.Load() {
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
			io.WriteString(w, `{"ok":true}`)
		})
		// The timeout is long enough that acme's slow calls hold their
		// slots until the test releases them.
		src := strings.Replace(testCatalog, "    max_response_bytes: 64KiB\n", "    max_response_bytes: 64KiB\n    max_concurrent: 3\n    max_concurrent_per_workspace: 2\n", 1)
		c := parseCoreOver(t, src, rec.srv.URL, map[string]string{"TIMEOUT": "10s"}, tr)
		results := make(chan *proxy.Result, 3)
		for i := 0; i < 3; i++ {
			go func() {
				res, _ := c.Call(context.Background(), reader, "get_item", []byte(`{"id":"slow"}`))
				results <- res
			}()
		}
		synctest.Wait()
		if n := acmeNow.Load(); n != 2 {
			t.Fatalf("%d of acme's slow calls reached the upstream, want its share of 2", n)
		}

		// A further acme call waits for acme's share, not for the
		// upstream, and fails with the per-workspace limit when its time
		// is up.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		res, err := c.Call(ctx, reader, "get_item", []byte(`{"id":"extra"}`))
		cancel()
		if err != nil || !res.IsError || !strings.Contains(res.Text, "max_concurrent_per_workspace") {
			t.Fatalf("acme's extra call = %+v, %v; want a tool error naming max_concurrent_per_workspace", res, err)
		}

		// Another workspace gets the slot acme may not take, at once.
		start := time.Now()
		if res := call(t, c, tenantB, "get_item", `{"id":"b"}`); res.IsError {
			t.Fatalf("workspace globex while acme holds its share: %s", res.Text)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("workspace globex waited %v", d)
		}

		close(release)
		for i := 0; i < 3; i++ {
			if res := <-results; res == nil || res.IsError {
				t.Errorf("acme's slow call %d = %+v", i, res)
			}
		}
		if p := acmePeak.Load(); p != 2 {
			t.Errorf("acme had %d calls at the upstream at once, want its share of 2", p)
		}
	})
}

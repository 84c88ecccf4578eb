package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// TestPropertyNoWriteWithoutApprovalNorTwiceThroughTheCore drives random
// sequences through the core against an upstream that, at random, reads
// a write whole and then resets the kept-alive connection, while the
// approval store's file is deleted now and then: four-eyes calls,
// approvals and rejections, confirmation prompts and replays of accepted
// confirmations (old and new), reads that pool connections. Whatever the
// sequence, every write the upstream receives carries the key of an
// approval someone else approved or of a confirmation the user accepted,
// and no key ever arrives twice: not through a resend after a reset, not
// through a replay after the store was lost.
func TestPropertyNoWriteWithoutApprovalNorTwiceThroughTheCore(t *testing.T) {
	ctx := context.Background()
	alice := authz.NewPrincipal("alice", "", "alice", []string{"op"}, nil)
	bob := authz.NewPrincipal("bob", "", "bob", []string{"approve"}, nil)
	accept := json.RawMessage(`{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	var arrived, resetAfterReuse, losses, refusedReplays int
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 18))
		up := newResetUpstream(t)
		serverRng := rand.New(rand.NewPCG(seed, 81))
		up.resetIf = func(a arrival) bool {
			if a.method != "POST" || serverRng.IntN(2) == 0 {
				return false
			}
			if a.nth > 1 {
				resetAfterReuse++
			}
			return true
		}
		c, storePath := newResetCore(t, up, &memAudit{})
		approved := map[string]bool{} // approval ids bob approved
		var pending []string
		var states []string // accepted confirmation states, replayed at will
		for step := range 40 {
			q := fmt.Sprintf(`{"q":"%c"}`, 'a'+rng.IntN(3))
			switch op := rng.IntN(7); op {
			case 0, 1: // the four-eyes call, or its retry
				res, err := c.Call(ctx, alice, "approved_write", []byte(q))
				if err != nil {
					t.Fatal(err)
				}
				if i := strings.Index(res.Text, "apr_"); res.IsError && i >= 0 && strings.Contains(res.Text, "awaits approval") {
					pending = append(pending, res.Text[i:i+36])
				}
			case 2: // bob decides one
				if len(pending) == 0 {
					continue
				}
				id := pending[rng.IntN(len(pending))]
				approve := rng.IntN(4) != 0
				if r, err := c.DecideApproval(ctx, bob, id, approve); err == nil && approve && r.Approver == "bob" {
					approved[id] = true
				}
			case 3: // a new confirmation, accepted
				ask := proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true})
				p, err := c.Call(ask, alice, "confirmed_write", []byte(q))
				if err != nil || p.InputRequired == nil {
					t.Fatalf("seed %d step %d: prompt = %+v, %v", seed, step, p, err)
				}
				states = append(states, p.InputRequired.State)
				fallthrough
			case 4: // an accepted confirmation is sent (again)
				if len(states) == 0 {
					continue
				}
				st := states[rng.IntN(len(states))]
				if op == 3 {
					st = states[len(states)-1]
				}
				// The state is bound to its arguments: replay with each.
				for _, arg := range []string{"a", "b", "c"} {
					res, err := c.Call(proxy.WithAsking(ctx, &proxy.Asking{Modern: true, Elicitation: true, RequestState: st, Responses: accept}),
						alice, "confirmed_write", []byte(fmt.Sprintf(`{"q":"%s"}`, arg)))
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(res.Text, "store was lost or recreated") {
						refusedReplays++
					}
				}
			case 5: // the store's file is lost
				if err := os.Remove(storePath); err == nil {
					losses++
				}
			case 6: // a read pools a connection
				c.Call(ctx, alice, "ping", nil)
			}
		}
		seen := map[string]int{}
		confirmed := 0
		for _, a := range up.arrivals("/reset-once/approved") {
			arrived++
			seen[a.key]++
			id := strings.TrimPrefix(a.key, "mcpgw-")
			if !approved[id] {
				t.Errorf("seed %d: the upstream received a four-eyes write with key %q, not of an approval bob approved", seed, a.key)
			}
		}
		for _, path := range []string{"a", "b", "c"} {
			for _, a := range up.arrivals("/reset-once/confirmed/" + path) {
				arrived++
				confirmed++
				seen[a.key]++
				if !strings.HasPrefix(a.key, "mcpgw-cfm_") {
					t.Errorf("seed %d: a confirmed write arrived with key %q", seed, a.key)
				}
			}
		}
		if confirmed > len(states) {
			t.Errorf("seed %d: %d confirmed writes arrived from %d accepted confirmations", seed, confirmed, len(states))
		}
		for k, n := range seen {
			if n > 1 {
				t.Errorf("seed %d: write with key %q arrived %d times", seed, k, n)
			}
		}
	}
	// The property must not hold vacuously.
	if arrived == 0 || resetAfterReuse == 0 || losses == 0 || refusedReplays == 0 {
		t.Errorf("%d writes arrived, %d resets on reused connections, %d store losses, %d replays refused for a lost store: the sequences exercise too little",
			arrived, resetAfterReuse, losses, refusedReplays)
	}
}

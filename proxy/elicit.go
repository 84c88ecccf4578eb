package proxy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
)

// Live confirmation (legacy eras): a client of 2025-06-18 or
// 2025-11-25 cannot retry with a sealed state, but it can answer an
// elicitation/create request the server sends on the POST's response
// stream. The surface that can do so (mcp, HTTP) puts an [AskFunc] into
// [Asking]; the core asks once, waits, and decides on the answer. Nothing
// about the call is stored: the wait is the call's own request.

// AskFunc asks the user a form elicitation (message, requestedSchema)
// and waits at most wait for the answer. An error means there is no
// answer (the client went away, the wait ran out, the client answered
// with a JSON-RPC error); its text completes "confirmation refused: ".
type AskFunc func(ctx context.Context, message string, schema json.RawMessage, wait time.Duration) (*ElicitAnswer, error)

// ElicitAnswer is an elicitation result: action accept, decline or
// cancel, and the form's content on accept.
type ElicitAnswer struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// LiveConfirmWait caps how long a live confirmation waits for the user:
// the tool's approval ttl, or this when the ttl is longer. The POST and an
// in-flight slot are held meanwhile.
const LiveConfirmWait = 5 * time.Minute

// confirmLive asks now and decides on the answer: accept with confirm
// ticked releases the call (once: the answer belongs to this request and
// nothing else); anything else refuses it, and nothing is sent upstream.
func (c *Core) confirmLive(ctx context.Context, p *authz.Principal, t *tool, raw []byte, ask AskFunc, begin beginFunc) (*Result, string) {
	wait := t.approval.liveWait
	msg := confirmMessage(p, t, raw, c.now().Add(wait))
	refuse := func(why string) (*Result, string) {
		return toolError(OutcomeRefused, "confirmation refused: "+why+"; nothing was sent upstream"), ""
	}
	ans, err := ask(ctx, msg, confirmSchema, wait)
	if err != nil {
		return refuse(err.Error())
	}
	if why := judgeAnswer(ans.Action, ans.Content); why != "" {
		return refuse(why)
	}
	id := "cfm_" + approval.NewNonce()
	if err := begin(id, p.Subject); err != nil {
		return toolError(OutcomeRefused, msgAuditUnavailable), ""
	}
	return nil, approval.IdempotencyKey(id)
}

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
)

// This file is the human in the loop for writes. The one
// decision is [Core.gateApproval], called where a write's request has been
// built and is about to be audited and sent; everything else here serves
// it or the approvers.

// Approvals is what the core needs to ask a human before a write.
type Approvals struct {
	// Sealer seals confirmation request state. Nil: confirmations are
	// refused.
	Sealer *approval.Sealer
	// Store keeps pending approvals and spent confirmations. Nil: writes
	// that need approval are refused.
	Store approval.Store
}

// Asking is what the surface knows about the client's ability to ask its
// user, and what a retried call brought back. Surfaces put it in the
// call's context with [WithAsking].
type Asking struct {
	// Modern: the request speaks 2026-07-28 (multi round-trip requests).
	Modern bool
	// Elicitation: the client declared the form elicitation capability.
	Elicitation bool
	// URLElicitation: the client declared the url elicitation capability
	// (modern era); a four-eyes call then offers the approval page's URL.
	URLElicitation bool
	// RequestState is params.requestState of a retry, or "".
	RequestState string
	// Responses is params.inputResponses of a retry (a JSON object), or nil.
	Responses json.RawMessage
	// Ask, when set, asks the user now over the live connection (a legacy
	// era client that declared elicitation, on a stream the surface keeps
	// open; see elicit.go) and returns the answer.
	Ask AskFunc
}

type askingKey struct{}

// WithAsking returns ctx carrying a.
func WithAsking(ctx context.Context, a *Asking) context.Context {
	return context.WithValue(ctx, askingKey{}, a)
}

func askingFrom(ctx context.Context) *Asking {
	a, _ := ctx.Value(askingKey{}).(*Asking)
	return a
}

// InputRequired is a result that asks the client for input first: one
// elicitation under Key (a form with Schema, or, when URL is set, a url
// elicitation with ElicitationID), and the sealed state to echo on the
// retry.
type InputRequired struct {
	Key           string
	Message       string
	Schema        json.RawMessage
	URL           string
	ElicitationID string
	State         string
}

// ApprovalURLKey is the inputRequests key of a four-eyes call's url
// elicitation.
const ApprovalURLKey = "approval"

// offerURL adds to res, a four-eyes call held for approval r, a url
// elicitation of the approval page when the client can open one (modern
// era, url elicitation declared, approval_page configured) and this is
// not already the retry of such an offer. The retry, whatever the user
// answered, is decided like any call: the store, not the answer, says
// whether r is approved.
func (c *Core) offerURL(ctx context.Context, p *authz.Principal, r *approval.Request, res *Result) *Result {
	ask := askingFrom(ctx)
	if ask == nil || !ask.Modern || !ask.URLElicitation || ask.RequestState != "" || c.config.Approvals.Page == nil || c.approvals.Sealer == nil {
		return res
	}
	st := approval.NewState(r.Key(), r.Expires, r.ID)
	plain, _ := json.Marshal(st)
	sealed, err := c.approvals.Sealer.SealData("four-eyes-url", plain)
	if err != nil {
		return res
	}
	res.InputRequired = &InputRequired{Key: ApprovalURLKey, Message: res.Text, URL: c.ApprovalURL(r.ID), ElicitationID: r.ID, State: sealed}
	return res
}

// toolApproval is a tool's approval, resolved when the Core is built.
type toolApproval struct {
	confirm           bool
	approvers         string        // the gate; four-eyes only
	allowSelf         bool          // four-eyes only
	ttl               time.Duration // how long a prompt or a pending approval lasts
	liveWait          time.Duration // how long a live confirmation waits: ttl, at most LiveConfirmWait
	idempotencyHeader string        // the upstream's header for the key
	title             string        // the tool's title, or its name, for the prompt
}

func resolveApproval(t *tool) *toolApproval {
	a := t.def.Approval
	if a == nil {
		return nil
	}
	ta := &toolApproval{confirm: a.Confirm, approvers: a.Approvers, allowSelf: a.AllowSelf, ttl: a.TTL.D(),
		idempotencyHeader: t.up.def.IdempotencyHeader, title: or(t.def.Title, t.def.Name)}
	ta.liveWait = min(ta.ttl, LiveConfirmWait)
	return ta
}

// ConfirmKey is the inputRequests key of a confirmation.
const ConfirmKey = "confirm"

// OutcomeAwaiting labels a write held for a confirmation or an approval.
const OutcomeAwaiting = "awaiting_approval"

// Audit stages of approvals.
const (
	StageApprovalRequested = "approval_requested"
	StageApproved          = "approved"
	StageRejected          = "rejected"
)

// confirmSchema is the form: one boolean the user ticks.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Run this call","description":"Tick to let the gateway send this call once."}},"required":["confirm"]}`)

// beginFunc writes a write's started audit record, naming the approval
// (id) and who gave it; it is called once the call is cleared to go and
// before its approval is spent, so a record that cannot be written leaves
// the approval unspent.
type beginFunc func(id, approver string) error

// gateApproval decides whether the write t, built into req for p, may be
// sent now. It returns a result to answer instead (a prompt, a pending
// approval, a refusal), or nil after begin and setting req's idempotency
// header. raw is the arguments req was built from, resolved (defaults
// applied, numbers canonical) and encoded canonically: what approvers are
// shown and what the approval's digest binds.
func (c *Core) gateApproval(ctx context.Context, p *authz.Principal, t *tool, raw []byte, req *http.Request, begin beginFunc) *Result {
	a := t.approval
	if a == nil {
		return nil
	}
	name := t.def.Name
	if c.approvals == nil || c.approvals.Store == nil {
		return toolError(OutcomeRefused, name+" needs a human's approval, and approvals are not configured on this gateway; nothing was sent upstream")
	}
	digest, err := approval.Digest(raw)
	if err != nil {
		return toolError(OutcomeToolError, err.Error())
	}
	k := approval.CallKey{Workspace: p.Workspace, Subject: p.Subject, Actor: p.Actor, Tool: name, Digest: digest}
	var res *Result
	var key string
	if a.confirm {
		res, key = c.confirm(ctx, p, t, raw, k, begin)
	} else {
		res, key = c.fourEyes(ctx, p, t, raw, k, begin)
	}
	if res != nil {
		return res
	}
	req.Header.Set(a.idempotencyHeader, key)
	return nil
}

// confirm is the requester's own yes, through their client: a sealed
// state out, the acceptance and the same state back, once.
func (c *Core) confirm(ctx context.Context, p *authz.Principal, t *tool, raw []byte, k approval.CallKey, begin beginFunc) (*Result, string) {
	name := t.def.Name
	ask := askingFrom(ctx)
	if ask != nil && !ask.Modern && ask.Ask != nil {
		return c.confirmLive(ctx, p, t, raw, ask.Ask, begin)
	}
	if ask == nil || !ask.Modern || !ask.Elicitation {
		return toolError(OutcomeRefused, fmt.Sprintf("%s needs the user's confirmation, and this client cannot ask its user: it must speak MCP 2026-07-28 and declare the elicitation capability, or speak 2025-06-18 or later, declare elicitation in params._meta[\"io.modelcontextprotocol/clientCapabilities\"] of the call and accept text/event-stream. Arguments cannot carry a confirmation. Nothing was sent upstream.", name)), ""
	}
	if c.approvals.Sealer == nil {
		return toolError(OutcomeRefused, name+" needs the user's confirmation, and no sealing key is configured on this gateway; nothing was sent upstream"), ""
	}
	now := c.now()
	if ask.RequestState == "" {
		return c.prompt(ctx, p, t, raw, k, now), ""
	}
	refuse := func(why string) (*Result, string) {
		return toolError(OutcomeRefused, "confirmation refused: "+why+"; nothing was sent upstream"), ""
	}
	st, err := c.approvals.Sealer.Open(ask.RequestState)
	if err != nil {
		return refuse("the request state is not one this gateway issued, or it was altered (tampered)")
	}
	switch st.Check(k, now) {
	case approval.MismatchPrincipal:
		return refuse("the confirmation was issued to another principal (replayed by another principal)")
	case approval.MismatchWorkspace:
		return refuse("the confirmation was issued in another workspace")
	case approval.MismatchTool:
		return refuse("the confirmation was issued for another tool")
	case approval.MismatchArguments:
		return refuse("the arguments differ from the ones the user confirmed (changed arguments)")
	case approval.MismatchExpired:
		return refuse("the confirmation expired at " + time.Unix(st.Expires, 0).UTC().Format(time.RFC3339))
	}
	var responses map[string]struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if len(ask.Responses) > 0 && json.Unmarshal(ask.Responses, &responses) != nil {
		return refuse("inputResponses is not an object of elicitation results")
	}
	r, ok := responses[ConfirmKey]
	if !ok {
		// The answer is missing: ask again (MRTR §Error Handling).
		return c.prompt(ctx, p, t, raw, k, now), ""
	}
	if why := judgeAnswer(r.Action, r.Content); why != "" {
		return refuse(why)
	}
	id := "cfm_" + st.Nonce
	if err := begin(id, p.Subject); err != nil {
		return toolError(OutcomeRefused, msgAuditUnavailable), ""
	}
	fresh, err := c.approvals.Store.Spend(ctx, st.Nonce, st.Epoch, time.Unix(st.Expires, 0))
	if errors.Is(err, approval.ErrEpoch) {
		return refuse("the approval store was lost or recreated since this confirmation was issued, so whether it was already used cannot be checked; call the tool again to be asked anew")
	}
	if err != nil {
		c.logger.Error("approval store failed", "error", err)
		return refuse("the approval store is unavailable")
	}
	if !fresh {
		return refuse("this confirmation was already used; a confirmed call runs once (replayed)")
	}
	return nil, approval.IdempotencyKey(id)
}

// prompt seals a new confirmation state, bound to the store's epoch, and
// asks the user.
func (c *Core) prompt(ctx context.Context, p *authz.Principal, t *tool, raw []byte, k approval.CallKey, now time.Time) *Result {
	epoch, err := c.approvals.Store.Epoch(ctx)
	if err != nil {
		c.logger.Error("approval store failed", "error", err)
		return toolError(OutcomeRefused, t.def.Name+" needs the user's confirmation and the approval store is unavailable; nothing was sent upstream")
	}
	st := approval.NewState(k, now.Add(t.approval.ttl), approval.NewNonce())
	st.Epoch = epoch
	sealed, err := c.approvals.Sealer.Seal(st)
	if err != nil {
		return toolError(OutcomeRefused, "confirmation could not be prepared; nothing was sent upstream")
	}
	msg := confirmMessage(p, t, raw, time.Unix(st.Expires, 0))
	return &Result{IsError: false, Outcome: OutcomeAwaiting, Text: msg,
		InputRequired: &InputRequired{Key: ConfirmKey, Message: msg, Schema: confirmSchema, State: sealed}}
}

// confirmMessage is the text a confirmation shows the user: the
// arguments as they will be sent, hidden characters and long runs of
// spaces made visible (a client renders the message as it is).
func confirmMessage(p *authz.Principal, t *tool, raw []byte, until time.Time) string {
	return fmt.Sprintf("Confirm: %s (%s)%s with arguments %s. Nothing is sent until you confirm; the confirmation is valid until %s and runs the call once.",
		t.approval.title, t.def.Name, inWorkspace(p.Workspace), approval.Shown(raw), until.UTC().Format(time.RFC3339))
}

// inWorkspace is ` in workspace "acme"`, or nothing for a principal of a
// tenantless catalog, whose workspace is "" (a message saying
// `in workspace ""` reads as a bug, or as a workspace of that name).
func inWorkspace(ws string) string {
	if ws == "" {
		return ""
	}
	return fmt.Sprintf(" in workspace %q", approval.ShownText(ws))
}

// judgeAnswer says why an elicitation answer does not confirm the call,
// or "" when it does (accept with confirm ticked).
func judgeAnswer(action string, content json.RawMessage) string {
	switch action {
	case "accept":
	case "decline":
		return "the user declined"
	case "cancel":
		return "the user cancelled"
	default:
		return fmt.Sprintf("the elicitation action %q is not accept, decline or cancel", action)
	}
	var c struct {
		Confirm *bool `json:"confirm"`
	}
	if json.Unmarshal(content, &c) != nil || c.Confirm == nil || !*c.Confirm {
		return "the user accepted the form without ticking confirm (declined)"
	}
	return ""
}

// fourEyes finds this call's approval by requester, tool and exact
// arguments: none yet (or the last one finished) creates one; an approved
// one is claimed once and released.
func (c *Core) fourEyes(ctx context.Context, p *authz.Principal, t *tool, raw []byte, k approval.CallKey, begin beginFunc) (res *Result, key string) {
	name, store, now := t.def.Name, c.approvals.Store, c.now()
	unavailable := func(err error) (*Result, string) {
		c.logger.Error("approval store failed", "error", err)
		return toolError(OutcomeRefused, name+" needs approval and the approval store is unavailable; nothing was sent upstream"), ""
	}
	r, err := store.Latest(ctx, k)
	if err != nil && !errors.Is(err, approval.ErrNotFound) {
		return unavailable(err)
	}
	note := ""
	if r != nil {
		switch r.StatusAt(now) {
		case approval.StatusPending:
			c.currentRules(r)
			return c.offerURL(ctx, p, r, c.awaiting(r, "still awaits approval")), ""
		case approval.StatusRejected:
			if now.Before(r.Expires) {
				return toolError(OutcomeRefused, fmt.Sprintf("%s was rejected: approval %s was rejected by %s at %s; nothing was sent upstream. The same call is refused until %s.",
					name, r.ID, r.Approver, r.Decided.UTC().Format(time.RFC3339), r.Expires.UTC().Format(time.RFC3339))), ""
			}
		case approval.StatusExpired:
			note = fmt.Sprintf("approval %s expired at %s without being used; nothing was sent upstream. ", r.ID, r.Expires.UTC().Format(time.RFC3339))
		case approval.StatusApproved:
			if err := begin(r.ID, r.Approver); err != nil {
				return toolError(OutcomeRefused, msgAuditUnavailable), ""
			}
			got, err := approval.Release(ctx, store, r.ID, k, now)
			var re *approval.ReleaseError
			switch {
			case errors.As(err, &re):
				return toolError(OutcomeRefused, fmt.Sprintf("%s was not run: approval %s is %s (another retry used it); nothing was sent upstream again", name, r.ID, re.Reason)), ""
			case err != nil:
				return unavailable(err)
			}
			return nil, approval.IdempotencyKey(got.ID)
		}
		// Executed, or rejected and past its expiry: a new request.
	}
	canon, _ := approval.Canonical(raw)
	// The approver must see the whole call, and the store must stay
	// small: arguments too large for the audit record are too large to
	// hold for approval.
	// The store keeps, and the approver sees, the arguments as the audit
	// trail records them: writeOnly values (a password, a key) are
	// "[redacted]", since an approver cannot judge a secret and the store
	// is no place to keep one. The digest, taken of the arguments as
	// sent, still holds the retry to these exact values. The bound is on
	// the arguments as sent; "[redacted]" may lengthen a short secret a
	// little, never into a digest the approver cannot read.
	if limit := auditMax(t); len(canon) > limit {
		return toolError(OutcomeRefused, fmt.Sprintf("%s needs approval, and its arguments (%d bytes) are over the %d bytes an approval can hold (audit.max_argument_bytes); nothing was stored or sent upstream", name, len(canon), limit)), ""
	}
	shown := auditArgs(canon, t, math.MaxInt)
	nr := &approval.Request{ID: approval.NewID(), Tool: k.Tool, Workspace: k.Workspace, Requester: k.Subject, Actor: k.Actor,
		Arguments: shown, Digest: k.Digest, Approvers: t.approval.approvers, AllowSelf: t.approval.allowSelf,
		Created: now, Expires: now.Add(t.approval.ttl), Status: approval.StatusPending}
	err = store.Create(ctx, nr, c.pendingCaps)
	if pe, ok := errors.AsType[*approval.PendingError](err); ok {
		// A racing first call of the same call made it: wait on that one.
		return c.offerURL(ctx, p, pe.Request, c.awaiting(pe.Request, "still awaits approval")), ""
	}
	if le, ok := errors.AsType[*approval.LimitError](err); ok {
		who := fmt.Sprintf("you (%s) already have", p.Subject)
		key := "per_requester"
		if le.Scope == "workspace" {
			who, key = fmt.Sprintf("workspace %q already has", p.Workspace), "per_workspace"
		}
		return toolError(OutcomeRefused, fmt.Sprintf("%s needs approval, and %s %d approvals awaiting a decision, the most allowed (approval.max_pending.%s); wait until some are decided, or until %s after they expire. Nothing was stored or sent upstream.", name, who, le.Max, key, approval.KeepUndecided)), ""
	}
	if err != nil {
		return unavailable(err)
	}
	c.auditApproval(ctx, StageApprovalRequested, nr, nil)
	res = c.awaiting(nr, "awaits approval")
	res.Text = note + res.Text
	return c.offerURL(ctx, p, nr, res), ""
}

// awaiting says a call is held, with the approval's id and URL.
func (c *Core) awaiting(r *approval.Request, state string) *Result {
	who := "someone else"
	if r.AllowSelf {
		who = "anyone"
	}
	return &Result{IsError: true, Outcome: OutcomeAwaiting, Text: fmt.Sprintf(
		"%s %s: approval %s must be approved by %s who passes the %q gate%s, before %s, at %s. Nothing was sent upstream. Once it is approved, call %s again with the same arguments; it then runs once.",
		r.Tool, state, r.ID, who, r.Approvers, inWorkspace(r.Workspace), r.Expires.UTC().Format(time.RFC3339), c.ApprovalURL(r.ID), r.Tool)}
}

// ApprovalURL is where an approver finds approval id: the REST API under
// the admin path, absolute when server.public_url is set.
func (c *Core) ApprovalURL(id string) string { return c.config.Approvals.URL + id }

// auditApproval writes one approval record through the audit trail;
// decider is who decided (nil for the request itself), named by subject
// and actor.
func (c *Core) auditApproval(ctx context.Context, stage string, r *approval.Request, decider *authz.Principal) error {
	return c.auditApprovalOutcome(ctx, stage, "", r, decider)
}

// auditApprovalOutcome is auditApproval with an outcome: refused on the
// second record of a decision the store did not take.
func (c *Core) auditApprovalOutcome(ctx context.Context, stage, outcome string, r *approval.Request, decider *authz.Principal) error {
	rec := &AuditRecord{
		Time: c.now().UTC().Format(time.RFC3339Nano), RequestID: RequestID(ctx), Stage: stage, Outcome: outcome,
		Tool: r.Tool, Arguments: r.Arguments, Workspace: r.Workspace, Subject: r.Requester, Actor: r.Actor,
		ApprovalID: r.ID,
	}
	if decider != nil {
		rec.Approver, rec.ApproverActor = decider.Subject, decider.Actor
	}
	if t := c.tools[r.Tool]; t != nil {
		rec.Arguments = auditArgs(r.Arguments, t, t.auditMax)
	}
	return c.audit.Write(context.WithoutCancel(ctx), rec)
}

// Errors of the approver surface.
var (
	ErrApprovalsOff      = errors.New("approvals are not configured on this gateway")
	ErrApprovalNotFound  = errors.New("no such approval in your workspace")
	ErrApprovalForbidden = errors.New("forbidden")
	// ErrApprovalUnaudited: the decision's audit record could not be
	// written, so the decision was not made.
	ErrApprovalUnaudited = errors.New("auditing is unavailable")
)

// ApprovalError is a refused approver action, with the reason to show.
type ApprovalError struct {
	Err    error // ErrApprovalNotFound, ErrApprovalForbidden or approval.ErrConflict
	Reason string
}

func (e *ApprovalError) Error() string { return e.Reason }
func (e *ApprovalError) Unwrap() error { return e.Err }

// PendingApprovals lists the approvals pending in p's workspace that p
// may decide (or, for their own requests, see).
func (c *Core) PendingApprovals(ctx context.Context, p *authz.Principal) ([]*approval.Request, error) {
	if c.approvals == nil || c.approvals.Store == nil {
		return nil, ErrApprovalsOff
	}
	all, err := c.approvals.Store.List(ctx, p.Workspace, c.now())
	if err != nil {
		return nil, err
	}
	out := []*approval.Request{}
	for _, r := range all {
		if !c.currentRules(r) {
			continue // no one can decide it now; it only waits to expire
		}
		if approval.CheckDecider(r, decider(p), c.policy.Passes(p, r.Approvers), false) == approval.RefusalNone || decider(p).Requested(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// GetApproval returns one approval p may see.
func (c *Core) GetApproval(ctx context.Context, p *authz.Principal, id string) (*approval.Request, error) {
	if c.approvals == nil || c.approvals.Store == nil {
		return nil, ErrApprovalsOff
	}
	if !approval.ValidID(id) {
		return nil, &ApprovalError{Err: ErrApprovalNotFound, Reason: "no approval " + id + " in your workspace"}
	}
	r, err := c.approvals.Store.Get(ctx, id)
	if errors.Is(err, approval.ErrNotFound) || (err == nil && r.Workspace != p.Workspace) {
		return nil, &ApprovalError{Err: ErrApprovalNotFound, Reason: "no approval " + id + " in your workspace"}
	}
	if err != nil {
		return nil, err
	}
	c.currentRules(r)
	if !decider(p).Requested(r) && !c.policy.Passes(p, r.Approvers) {
		return nil, &ApprovalError{Err: ErrApprovalNotFound, Reason: "no approval " + id + " in your workspace"}
	}
	r.Status = r.StatusAt(c.now())
	return r, nil
}

// DecideApproval approves or rejects approval id as p, under the
// four-eyes rules, and audits the decision with the approver.
func (c *Core) DecideApproval(ctx context.Context, p *authz.Principal, id string, approve bool) (*approval.Request, error) {
	r, err := c.GetApproval(ctx, p, id)
	if err != nil {
		return nil, err
	}
	switch approval.CheckDecider(r, decider(p), c.policy.Passes(p, r.Approvers), true) {
	case approval.RefusalNone:
	case approval.RefusalSelf:
		return nil, &ApprovalError{Err: ErrApprovalForbidden, Reason: "you requested this call (as this subject, or as the same person under another); someone else must decide it (the tool does not set allow_self)"}
	case approval.RefusalGate:
		return nil, &ApprovalError{Err: ErrApprovalForbidden, Reason: fmt.Sprintf("deciding this approval needs the %q gate", r.Approvers)}
	default:
		return nil, &ApprovalError{Err: ErrApprovalNotFound, Reason: "no approval " + id + " in your workspace"}
	}
	// The decision's record comes first, as a write's started record
	// does: a decision that cannot be audited is not made, so a
	// rejection (or an approval) never leaves the trail without a trace.
	// If the store then does not take it (someone decided first, it
	// expired, the store failed), a second record says it was refused.
	if r.Status != approval.StatusPending {
		return r, &ApprovalError{Err: approval.ErrConflict, Reason: fmt.Sprintf("approval %s is %s and can no longer be decided", id, r.Status)}
	}
	if !c.currentRules(r) {
		return r, &ApprovalError{Err: approval.ErrConflict, Reason: fmt.Sprintf("approval %s can no longer be decided: the catalog no longer has %s needing four-eyes approval (it was reloaded since); a retry of the call follows the catalog as it is now", id, r.Tool)}
	}
	stage := StageRejected
	if approve {
		stage = StageApproved
	}
	if err := c.auditApproval(ctx, stage, r, p); err != nil {
		return nil, &ApprovalError{Err: ErrApprovalUnaudited, Reason: fmt.Sprintf("the decision was not made: auditing is unavailable (its audit record could not be written); approval %s stays %s", id, r.Status)}
	}
	got, err := c.approvals.Store.Decide(ctx, id, p.Subject, approve, c.now())
	if err != nil {
		c.auditApprovalOutcome(ctx, stage, OutcomeRefused, r, p)
	}
	if errors.Is(err, approval.ErrConflict) {
		return got, &ApprovalError{Err: approval.ErrConflict, Reason: fmt.Sprintf("approval %s is %s and can no longer be decided", id, got.Status)}
	}
	if err != nil {
		return nil, err
	}
	return got, nil
}

// currentRules puts the catalog's current rules for deciding r on r: the
// approvers gate its tool names now, and allow_self only when both the
// request was made under it and the tool still sets it. A reload that
// tightens who may approve holds for the requests already pending, and
// one that loosens it does not let a requester approve their own. It
// reports false, changing nothing, when the tool is gone or no longer
// needs four-eyes approval: such a request cannot be decided.
func (c *Core) currentRules(r *approval.Request) bool {
	t := c.tools[r.Tool]
	if t == nil || t.approval == nil || t.approval.approvers == "" {
		return false
	}
	r.Approvers = t.approval.approvers
	r.AllowSelf = r.AllowSelf && t.approval.allowSelf
	return true
}

// decider is p as the four-eyes rules see them.
func decider(p *authz.Principal) approval.Decider {
	return approval.Decider{Subject: p.Subject, Actor: p.Actor, Workspace: p.Workspace}
}

// ApprovalSealer is the key set approvals are sealed with (the approval
// page seals its cookies with it too); nil when approvals are off.
func (c *Core) ApprovalSealer() *approval.Sealer {
	if c.approvals == nil {
		return nil
	}
	return c.approvals.Sealer
}

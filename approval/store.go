package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Status is where a pending approval stands.
type Status string

// Statuses. Pending moves to Approved or Rejected once; Approved moves to
// Executed once. Expired is reported for a Pending or Approved request past
// its expiry and is never stored.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusRejected Status = "rejected"
	StatusExecuted Status = "executed"
	StatusExpired  Status = "expired"
)

// CallKey names one call: who made it (the subject and the actor acting
// for them), in which workspace, to which tool, with which arguments (the
// digest of the arguments as sent). A retry finds its approval, and a
// sealed confirmation is held to its call, by this key; one type, so that
// two of its strings can never be passed in each other's place.
type CallKey struct {
	Workspace string
	Subject   string
	Actor     string
	Tool      string
	Digest    string
}

// Request is one four-eyes approval: a write call held until someone
// else says yes.
type Request struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Workspace string          `json:"workspace"`
	Requester string          `json:"requester"`       // subject
	Actor     string          `json:"requester_actor"` // actor at request time
	Arguments json.RawMessage `json:"arguments"`       // as sent upstream: defaults applied, canonical
	Digest    string          `json:"digest"`          // of the canonical arguments
	Approvers string          `json:"approvers"`       // the gate
	AllowSelf bool            `json:"allow_self"`
	Created   time.Time       `json:"created"`
	Expires   time.Time       `json:"expires"`
	Status    Status          `json:"status"`
	Approver  string          `json:"approver,omitempty"` // subject who decided
	Decided   time.Time       `json:"decided,omitzero"`
	Executed  time.Time       `json:"executed,omitzero"`
}

// Key is the call r holds.
func (r *Request) Key() CallKey {
	return CallKey{Workspace: r.Workspace, Subject: r.Requester, Actor: r.Actor, Tool: r.Tool, Digest: r.Digest}
}

// StatusAt is r's status as seen at now: pending or approved requests past
// their expiry are expired.
func (r *Request) StatusAt(now time.Time) Status {
	if (r.Status == StatusPending || r.Status == StatusApproved) && !now.Before(r.Expires) {
		return StatusExpired
	}
	return r.Status
}

// Errors stores return; callers branch on them with errors.Is.
var (
	ErrNotFound = errors.New("no such approval")
	// ErrConflict: the request is not in the state the change needs
	// (already decided, already executed, expired). The store returns the
	// request as it stands beside it.
	ErrConflict = errors.New("approval is not in the state this change needs")
	// ErrEpoch: a confirmation was issued by an earlier generation of the
	// store, whose record of spent confirmations is gone.
	ErrEpoch = errors.New("the approval store was recreated since this confirmation was issued")
)

// newEpoch returns a fresh store generation: "ep_" and 128 random bits.
func newEpoch() string { return "ep_" + NewNonce() }

// Store keeps pending approvals and spent confirmation nonces.
// Implementations are safe for concurrent use, also between processes
// sharing one store, and make each change atomically.
type Store interface {
	// Create stores r, which must be pending and have a new ID, unless a
	// request for the same call (workspace, requester, actor, tool,
	// digest) is pending at r.Created: then it stores nothing and
	// returns a *PendingError with that request. It also stores nothing,
	// and returns a *LimitError, when r would be over a cap of lim
	// (counting undecided requests, see [Limits]).
	// Both checks and the store are one atomic step, so racing calls
	// make one pending request.
	Create(ctx context.Context, r *Request, lim Limits) error
	// Get returns the request with id, or ErrNotFound.
	Get(ctx context.Context, id string) (*Request, error)
	// List returns the requests of workspace still pending at now,
	// oldest first.
	List(ctx context.Context, workspace string, now time.Time) ([]*Request, error)
	// Latest returns the newest request for the call k, whatever its
	// status, or ErrNotFound: the retry of a call finds its approval this
	// way.
	Latest(ctx context.Context, k CallKey) (*Request, error)
	// Decide moves a request pending at now to approved (approve) or
	// rejected, recording approver. Otherwise it changes nothing and
	// returns the request as it stands with ErrConflict.
	Decide(ctx context.Context, id, approver string, approve bool, now time.Time) (*Request, error)
	// Claim moves a request approved and unexpired at now to executed
	// and returns it: the one caller it returns nil error to may execute
	// the call. Otherwise ErrConflict with the request as it stands.
	Claim(ctx context.Context, id string, now time.Time) (*Request, error)
	// Epoch names this store's generation: made when the store is
	// created, and made anew when its data is lost (a deleted file, a
	// flushed Redis). A confirmation records the epoch it was issued in.
	Epoch(ctx context.Context) (string, error)
	// Spend records nonce, issued in epoch, as used until expires; it
	// reports false when the nonce was already spent. A nonce of another
	// epoch is refused with ErrEpoch and not recorded: the spent nonces
	// of that epoch may be lost, so whether it was used cannot be told.
	Spend(ctx context.Context, nonce, epoch string, expires time.Time) (bool, error)
	Close() error
}

// Limits caps the requests awaiting a decision. Zero: no cap.
//
// A request counts from when it is made until it is decided, or until
// [KeepUndecided] after it expires undecided, when the store drops it:
// so the caps bound what a store holds, not only what is pending at one
// instant (expired requests counted for nothing would let one requester
// pile up a day of them).
type Limits struct {
	// PerRequester caps the undecided requests of one requester
	// (subject) in one workspace.
	PerRequester int
	// PerWorkspace caps the undecided requests of one workspace.
	PerWorkspace int
}

// KeepUndecided is how long a request that expired undecided is kept (so
// a retry is told it expired) and counted against the caps.
const KeepUndecided = 10 * time.Minute

// PendingError is Create's answer when the same call already has a
// pending request: the caller waits on that one.
type PendingError struct{ Request *Request }

func (e *PendingError) Error() string {
	return "approval " + e.Request.ID + " for this call is pending"
}

// LimitError is Create's answer when a new request would be over a cap.
type LimitError struct {
	// Scope is "requester" or "workspace".
	Scope string
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d approvals await a decision for this %s, the most allowed", e.Max, e.Scope)
}

// admit decides whether r may join held, the undecided requests of r's
// workspace (pending, or expired undecided and not yet dropped), under
// lim: a request for r's call still pending at r.Created is waited on;
// one for r's call that expired is r's to replace, and counts no more;
// every other held request counts against the caps.
func admit(r *Request, held []*Request, lim Limits) error {
	mine, all := 0, 0
	for _, p := range held {
		if sameCall(p, r) {
			if p.StatusAt(r.Created) == StatusPending {
				return &PendingError{Request: p}
			}
			continue
		}
		all++
		if p.Requester == r.Requester {
			mine++
		}
	}
	switch {
	case lim.PerRequester > 0 && mine >= lim.PerRequester:
		return &LimitError{Scope: "requester", Max: lim.PerRequester}
	case lim.PerWorkspace > 0 && all >= lim.PerWorkspace:
		return &LimitError{Scope: "workspace", Max: lim.PerWorkspace}
	}
	return nil
}

func sameCall(a, b *Request) bool { return a.Key() == b.Key() }

// NewID returns a fresh approval id: "apr_" and 128 random bits.
func NewID() string { return "apr_" + NewNonce() }

// ValidID reports whether id has the shape NewID makes, so an id from a
// URL is checked before it reaches a store key.
func ValidID(id string) bool {
	if len(id) != 36 || id[:4] != "apr_" {
		return false
	}
	for _, c := range id[4:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Refusal is why a decider may not decide a request.
type Refusal string

// Refusals [CheckDecider] gives. An approver outside the workspace gets
// RefusalNotFound: they must not learn the request exists.
const (
	RefusalNone      Refusal = ""
	RefusalNotFound  Refusal = "not_found"
	RefusalGate      Refusal = "gate"
	RefusalSelf      Refusal = "self"
	RefusalNoSubject Refusal = "no_subject"
)

// Decider is who wants to see or decide a request: the person (the
// token's subject and actor) and their workspace.
type Decider struct{ Subject, Actor, Workspace string }

// Requested reports whether d is the person who requested r: a name d
// goes by (subject or actor) is a name the requester went by, compared
// as people read names (see [samePerson]). A second token of one person
// (another subject, the same actor, an email say), or the same email
// cased differently by another identity provider, is still that person:
// one person gets one say, whichever token they hold. Erring this way
// costs a colleague's click; erring the other way is self-approval.
func (d Decider) Requested(r *Request) bool {
	for _, mine := range [...]string{d.Subject, d.Actor} {
		if mine == "" {
			continue
		}
		if samePerson(mine, r.Requester) || samePerson(mine, r.Actor) {
			return true
		}
	}
	return false
}

// samePerson reports whether two names of people are the same name as a
// person reads them: Unicode case folded, spaces and hidden characters
// around and inside ignored ("Alice@Acme.com " is "alice@acme.com").
// Empty names are no one.
func samePerson(a, b string) bool {
	a, b = personName(a), personName(b)
	return a != "" && strings.EqualFold(a, b)
}

// personName is s without the characters a screen does not draw (see
// [hidden]) and without surrounding space.
func personName(s string) string {
	if strings.IndexFunc(s, hidden) >= 0 {
		s = strings.Map(func(r rune) rune {
			if hidden(r) {
				return -1
			}
			return r
		}, s)
	}
	return strings.TrimFunc(s, unicode.IsSpace)
}

// CheckDecider applies the four-eyes rules to d, who wants to see or
// decide r: same workspace, passes the approvers gate (passes, from the
// caller's policy), and not the requester unless r allows it (see
// [Decider.Requested]). forDecision false checks seeing only (the
// requester may see their own request).
func CheckDecider(r *Request, d Decider, passes, forDecision bool) Refusal {
	switch {
	case d.Subject == "":
		return RefusalNoSubject
	case d.Workspace != r.Workspace:
		return RefusalNotFound
	case !passes:
		return RefusalGate
	case forDecision && d.Requested(r) && !r.AllowSelf:
		return RefusalSelf
	}
	return RefusalNone
}

// IdempotencyKey is the key an approved write carries upstream, derived
// from the approval id (or a confirmation nonce), so a retry of the same
// approved write carries the same key.
func IdempotencyKey(id string) string { return "mcpgw-" + id }

func conflict(r *Request) error {
	return fmt.Errorf("%w (%s)", ErrConflict, r.Status)
}

// ReleaseError says why a retried call did not release its approval.
type ReleaseError struct {
	// Reason is a bounded label: not_found, other_requester, other_tool,
	// arguments, pending, rejected, expired, executed.
	Reason  string
	Request *Request // as it stands; nil for not_found
}

func (e *ReleaseError) Error() string { return "approval not released: " + e.Reason }

// Release is the one decision that lets an approved four-eyes call run:
// the request id must exist, belong to the call k (requester, workspace,
// tool and these exact arguments), and be approved and
// unexpired at now; then it is claimed, atomically, so only one retry
// (on any node sharing the store) ever gets it. Anything else is a
// *ReleaseError and nothing may be sent.
func Release(ctx context.Context, s Store, id string, k CallKey, now time.Time) (*Request, error) {
	r, err := s.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, &ReleaseError{Reason: "not_found"}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case r.Workspace != k.Workspace:
		return nil, &ReleaseError{Reason: "not_found"} // never confirm it exists elsewhere
	case r.Requester != k.Subject || r.Actor != k.Actor:
		return nil, &ReleaseError{Reason: "other_requester", Request: r}
	case r.Tool != k.Tool:
		return nil, &ReleaseError{Reason: "other_tool", Request: r}
	case r.Digest != k.Digest:
		return nil, &ReleaseError{Reason: "arguments", Request: r}
	}
	claimed, err := s.Claim(ctx, id, now)
	if errors.Is(err, ErrConflict) {
		return nil, &ReleaseError{Reason: string(claimed.Status), Request: claimed}
	}
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// newer reports whether a was created after b (ids break ties).
func newer(a, b *Request) bool {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

func matches(r *Request, k CallKey) bool { return r.Key() == k }

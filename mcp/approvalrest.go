package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"log/slog"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// ApprovalPage is the approval web page (package approvalpage, which
// cmd/gateway gives the handler in [Options]): a browser's GET of an
// approval without a bearer token, the page's form and the sign-in
// callback go there when the catalog configures approval_page.
type ApprovalPage interface {
	// Handles reports whether the page serves r for core; rest is the
	// path after {admin_path}/approvals.
	Handles(core *proxy.Core, r *http.Request, rest string) bool
	// Serve answers a request Handles took.
	Serve(w http.ResponseWriter, r *http.Request, req *PageRequest)
}

// PageRequest is what the surface gives the approval page of one request.
type PageRequest struct {
	Core *proxy.Core
	// Rest is the path after {admin_path}/approvals.
	Rest string
	// Context returns the context a decision by p runs in (request id,
	// principal), so the audit trail and the access log name them.
	Context func(p *authz.Principal) context.Context
	// Guard checks the method, Origin and Host of a POST, answering when
	// they are refused; it reports whether to go on.
	Guard func(w http.ResponseWriter, r *http.Request) bool
	Log   *slog.Logger
}

// The approver REST API, under {admin_path}/approvals, with the
// same guards and bearer tokens as the REST mirror:
//
//	GET  /approvals               pending approvals in the caller's workspace
//	                              that the caller may decide (and their own),
//	                              oldest first, a page at a time: ?limit=N
//	                              (default 50, at most 200) and ?cursor=C;
//	                              a further page is named by a Link header
//	                              (rel="next") and X-Next-Cursor
//	GET  /approvals/{id}          one approval, the call as the agent made it
//	POST /approvals/{id}/approve  approve it (not one's own, unless allow_self)
//	POST /approvals/{id}/reject   reject it
//
// Errors (one table for this surface):
//
//	unknown id, another workspace, or no      404 not_found (never says which)
//	  gate and not the requester
//	the requester, or without the gate        403 forbidden
//	a cursor or limit the list cannot use      400 bad_request
//	already decided, executed or expired      409 conflict, with the approval
//	approvals not configured, or the          503 unavailable
//	  decision cannot be audited
//	anything else                             500 internal_error; cause logged
func (h *handler) serveApprovals(w http.ResponseWriter, r *http.Request, x *exchange, rest string) {
	core := x.st.core
	if h.page != nil && h.page.Handles(core, r, rest) {
		x.method = r.Method + " /approvals (page)"
		h.page.Serve(w, r, &PageRequest{Core: core, Rest: rest, Log: x.log,
			Context: func(p *authz.Principal) context.Context {
				x.principal = p
				return proxy.WithRequestID(x.ctx, x.rid)
			},
			Guard: func(w http.ResponseWriter, r *http.Request) bool { return guard(w, r, x, http.MethodPost, false) },
		})
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if rest == "" || rest == "/" {
		parts = nil
	}
	method := http.MethodGet
	if len(parts) == 2 {
		method = http.MethodPost
	}
	if len(parts) > 2 || (len(parts) == 2 && parts[1] != "approve" && parts[1] != "reject") {
		writeFailure(w, fail(failNotFound, "no such endpoint"))
		return
	}
	// approve and reject read no body
	if !guard(w, r, x, method, false) || !h.authenticate(w, r, x) {
		return
	}
	p := x.principal
	ctx := proxy.WithRequestID(x.ctx, x.rid)
	var (
		out any
		err error
	)
	switch len(parts) {
	case 0:
		q := r.URL.Query()
		limit := 0
		if v := q.Get("limit"); v != "" {
			if limit, err = strconv.Atoi(v); err != nil || limit == 0 {
				limit = -1 // refused below, like any limit out of range
			}
		}
		var (
			l    []*approval.Request
			next string
		)
		l, next, err = core.PendingApprovalsPage(ctx, p, q.Get("cursor"), limit)
		if next != "" {
			nq := url.Values{"cursor": {next}}
			if limit > 0 {
				nq.Set("limit", strconv.Itoa(limit))
			}
			w.Header().Set("Link", "<"+r.URL.Path+"?"+nq.Encode()+`>; rel="next"`)
			w.Header().Set("X-Next-Cursor", next)
		}
		shown := make([]*shownApproval, len(l))
		for i, r := range l {
			shown[i] = showApproval(r)
		}
		out = shown
	case 1:
		var got *approval.Request
		got, err = core.GetApproval(ctx, p, parts[0])
		out = showApproval(got)
	case 2:
		var got *approval.Request
		got, err = core.DecideApproval(ctx, p, parts[0], parts[1] == "approve")
		out = showApproval(got)
	}
	ae, isApproval := errors.AsType[*proxy.ApprovalError](err)
	switch {
	case errors.Is(err, proxy.ErrApprovalCursor):
		writeFailure(w, fail(failBadRequest, err.Error()))
	case errors.Is(err, proxy.ErrApprovalsOff):
		writeFailure(w, fail(failUnavailable, err.Error()))
	case isApproval && errors.Is(err, proxy.ErrApprovalUnaudited):
		writeFailure(w, fail(failUnavailable, ae.Reason))
	case isApproval && errors.Is(err, proxy.ErrApprovalNotFound):
		writeFailure(w, fail(failNotFound, ae.Reason))
	case isApproval && errors.Is(err, proxy.ErrApprovalForbidden):
		writeFailure(w, fail(failForbidden, ae.Reason))
	case isApproval && errors.Is(err, approval.ErrConflict):
		b, _ := json.Marshal(out)
		writeFailure(w, &failure{kind: failConflict, text: ae.Reason, attached: raw(b)})
	case err != nil:
		x.log.Error("approval request failed", "error", err)
		writeFailure(w, &failure{kind: failInternal, rid: x.rid})
	default:
		b, _ := json.Marshal(out)
		writeJSON(w, http.StatusOK, b)
	}
}

// shownApproval is an approval as the REST API answers it: arguments is
// the same JSON value with hidden characters (bidi controls, zero-width
// characters) written as \u escapes, so a terminal shows rather than
// applies them, and arguments_shown is the text the approval page shows
// (approval.Shown: those characters as markers, long runs of spaces
// counted).
type shownApproval struct {
	*approval.Request
	Arguments      json.RawMessage `json:"arguments"`
	ArgumentsShown string          `json:"arguments_shown"`
}

func showApproval(r *approval.Request) *shownApproval {
	if r == nil {
		return nil
	}
	return &shownApproval{Request: r, Arguments: approval.EscapeHidden(r.Arguments), ArgumentsShown: approval.Shown(r.Arguments)}
}

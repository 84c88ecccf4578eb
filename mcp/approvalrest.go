package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/approval/web"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/proxy"
)

// approvalPage is the approval web page (approval/web): a browser's GET
// of an approval without a bearer token, the page's form and the sign-in
// callback go there when the catalog configures approval_page. It caches
// the provider's discovery and keys for the process.
var approvalPage = &web.Page{}

// The approver REST API (issue 14), under {admin_path}/approvals, with the
// same guards and bearer tokens as the REST mirror:
//
//	GET  /approvals               pending approvals in the caller's workspace
//	                              that the caller may decide (and their own)
//	GET  /approvals/{id}          one approval, the call as the agent made it
//	POST /approvals/{id}/approve  approve it (not one's own, unless allow_self)
//	POST /approvals/{id}/reject   reject it
//
// Errors (one table for this surface):
//
//	unknown id, another workspace, or no      404 not_found (never says which)
//	  gate and not the requester
//	the requester, or without the gate        403 forbidden
//	already decided, executed or expired      409 conflict, with the approval
//	approvals not configured                  503 unavailable
//	anything else                             500 internal_error; cause logged
func (s *serving) serveApprovals(w http.ResponseWriter, r *http.Request, rest string) {
	if web.Handles(s.cat, r, rest) {
		s.acc.method = r.Method + " /approvals (page)"
		approvalPage.Serve(w, r, &web.Request{Core: s.core, Rest: rest, Log: s.log,
			Context: func(p *authz.Principal) context.Context {
				s.acc.principal = p
				return proxy.WithRequestID(principalContext(r, p), s.rid)
			},
			Guard: func(w http.ResponseWriter, r *http.Request) bool { return s.guard(w, r, http.MethodPost, false) },
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
		writeHTTPError(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if !s.guard(w, r, method, false) { // approve and reject read no body
		return
	}
	p, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	ctx := proxy.WithRequestID(principalContext(r, p), s.rid)
	var (
		out any
		err error
	)
	switch len(parts) {
	case 0:
		var l []*approval.Request
		l, err = s.core.PendingApprovals(ctx, p)
		out = l
	case 1:
		out, err = s.core.GetApproval(ctx, p, parts[0])
	case 2:
		var got *approval.Request
		got, err = s.core.DecideApproval(ctx, p, parts[0], parts[1] == "approve")
		out = got
	}
	var ae *proxy.ApprovalError
	switch {
	case errors.Is(err, proxy.ErrApprovalsOff):
		writeHTTPError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	case errors.As(err, &ae) && errors.Is(err, proxy.ErrApprovalNotFound):
		writeHTTPError(w, http.StatusNotFound, "not_found", ae.Reason)
	case errors.As(err, &ae) && errors.Is(err, proxy.ErrApprovalForbidden):
		writeHTTPError(w, http.StatusForbidden, "forbidden", ae.Reason)
	case errors.As(err, &ae) && errors.Is(err, approval.ErrConflict):
		b, _ := json.Marshal(map[string]any{"error": "conflict", "message": ae.Reason, "approval": out})
		writeJSON(w, http.StatusConflict, b)
	case err != nil:
		s.log.Error("approval request failed", "error", err)
		writeHTTPError(w, http.StatusInternalServerError, "internal_error", "internal error (request id "+s.rid+")")
	default:
		b, _ := json.Marshal(out)
		writeJSON(w, http.StatusOK, b)
	}
}

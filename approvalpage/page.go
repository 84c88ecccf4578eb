// Package approvalpage is the approval web page: an approver opens the
// URL a four-eyes call answered with, signs in with the catalog's OpenID
// Connect provider (authorization code with PKCE), sees the call exactly
// as the agent made it, and approves or rejects it under the same rules as
// the REST API (the core's GetApproval and DecideApproval decide both).
//
// The page keeps no server-side state: the sign-in in progress (state,
// PKCE verifier, nonce) and the session (the ID token's claims and a CSRF
// token) live in short-lived cookies sealed with the approval keys
// (GATEWAY_APPROVAL_KEYS), so any node holding the keys serves any step.
//
// Routes, under {admin_path}/approvals (the mcp handler hands them here,
// through the mcp.ApprovalPage cmd/gateway gives it; the page uses the
// core, so the surface does not import the page):
//
//	GET  /                 the pending approvals the signed-in approver may
//	                       see (when the browser asks for text/html)
//	GET  /{id}             one approval (when the browser asks for text/html)
//	GET  /signin/callback  the provider's redirect back
//	POST /{id}/decide      the page's form: csrf, decision=approve|reject
package approvalpage

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcpgw/gateway/approval"
	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"

	"github.com/mcpgw/gateway/internal/text"
)

// Cookie names. Both are HttpOnly, SameSite=Lax, Secure over TLS, and
// scoped to {admin_path}/approvals.
const (
	SessionCookie = "mcpgw_approval_session"
	SignInCookie  = "mcpgw_approval_signin"
)

// Sealing purposes: a sign-in cookie never opens as a session.
const (
	purposeSession = "approval-page-session"
	purposeSignIn  = "approval-page-signin"
)

// signInTTL bounds how long a sign-in may take at the provider.
const signInTTL = 10 * time.Minute

// maxForm bounds the decide form's body.
const maxForm = 4 << 10

// maxClaims bounds the ID token claims a session carries (cookies hold
// about 4 KB).
const maxClaims = 2048

// Page serves the approval page. It caches each provider's discovery
// document and keys; it is safe for concurrent use, and one Page serves
// every catalog a reload installs.
type Page struct {
	// HTTPClient reaches the provider; nil: a client with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; nil: time.Now.
	Now func() time.Time

	mu        sync.Mutex
	providers map[string]*oidc.Provider // by issuer
}

// Request is one request's view: the core that decides, and what the
// surface knows.
type Request struct {
	Core *proxy.Core
	// Rest is the path after {admin_path}/approvals ("", "/", "/{id}", ...).
	Rest string
	// Context returns the context a decision runs in for p (request id,
	// principal), so the audit trail names the request.
	Context func(p *authz.Principal) context.Context
	// Guard checks the method, Origin and Host of a POST and answers when
	// they are refused; it reports whether to go on.
	Guard func(w http.ResponseWriter, r *http.Request) bool
	Log   *slog.Logger
}

// Handles reports whether the page serves r: the page is configured, and
// r is the provider's callback, the page's form, or a browser's GET of an
// approval (or the list) without a bearer token.
func Handles(page *proxy.ApprovalPage, r *http.Request, rest string) bool {
	if page == nil {
		return false
	}
	parts := split(rest)
	switch {
	case rest == catalog.ApprovalCallbackPath:
		return true
	case len(parts) == 2 && parts[1] == "decide":
		return true
	case len(parts) <= 1 && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		return r.Header.Get("Authorization") == "" && wantsHTML(r)
	}
	return false
}

func split(rest string) []string {
	rest = strings.Trim(rest, "/")
	if rest == "" {
		return nil
	}
	return strings.Split(rest, "/")
}

// wantsHTML: the Accept header names text/html before any JSON type (a
// browser's navigation does; an API client does not).
func wantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(mt) {
			case "text/html", "application/xhtml+xml":
				return true
			case "application/json", "*/*":
				return false
			}
		}
	}
	return false
}

// Serve answers one request that [Handles] accepted.
func (pg *Page) Serve(w http.ResponseWriter, r *http.Request, req *Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make the form's Origin "null", which the Origin check refuses
	h.Set("X-Content-Type-Options", "nosniff")
	cfg := &req.Core.Config().Approvals
	sealer := req.Core.ApprovalSealer()
	if sealer == nil || cfg.Page == nil {
		pg.render(w, http.StatusServiceUnavailable, &view{Title: "Approvals unavailable", Error: "approvals are not configured on this gateway"})
		return
	}
	x := &exchange{pg: pg, w: w, r: r, req: req, cfg: cfg, ap: cfg.Page, sealer: sealer, now: pg.now()}
	parts := split(req.Rest)
	switch {
	case req.Rest == catalog.ApprovalCallbackPath:
		x.callback()
	case len(parts) == 2:
		x.decide(parts[0])
	case len(parts) == 1:
		x.show(parts[0])
	default:
		x.list()
	}
}

func (pg *Page) now() time.Time {
	if pg.Now != nil {
		return pg.Now()
	}
	return time.Now()
}

func (pg *Page) client() *http.Client {
	if pg.HTTPClient != nil {
		return pg.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// provider returns the provider of issuer, discovering it on first use.
// A failed discovery is not cached: the next sign-in tries again.
func (pg *Page) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	pg.mu.Lock()
	p := pg.providers[issuer]
	pg.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// The provider's key set outlives this request: its fetches use the
	// page's client, not the request's context.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), pg.client()), issuer)
	if err != nil {
		return nil, err
	}
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.providers == nil {
		pg.providers = map[string]*oidc.Provider{}
	}
	if have := pg.providers[issuer]; have != nil {
		return have, nil
	}
	pg.providers[issuer] = p
	return p, nil
}

// signIn is the sealed sign-in cookie: what the callback checks.
type signIn struct {
	State    string `json:"state"`
	Verifier string `json:"verifier"`
	Nonce    string `json:"nonce"`
	Return   string `json:"return"`
	Issuer   string `json:"iss"`
	Expires  int64  `json:"exp"`
}

// session is the sealed session cookie.
type session struct {
	Claims   json.RawMessage `json:"claims"`
	CSRF     string          `json:"csrf"`
	Issuer   string          `json:"iss"`
	ClientID string          `json:"aud"`
	Expires  int64           `json:"exp"`
}

// exchange is one request to the page.
type exchange struct {
	pg     *Page
	w      http.ResponseWriter
	r      *http.Request
	req    *Request
	cfg    *proxy.ApprovalConfig // resolved when the core was built
	ap     *proxy.ApprovalPage
	sealer *approval.Sealer
	now    time.Time
	me     *authz.Principal // the signed-in approver, once known
}

func (x *exchange) base() string { return x.cfg.Base }

func (x *exchange) setCookie(name, value string, maxAge int) {
	http.SetCookie(x.w, &http.Cookie{
		Name: name, Value: value, Path: x.base(), MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: x.r.TLS != nil || x.ap.SecureCookies,
	})
}

func (x *exchange) fail(status int, title, msg string) {
	x.pg.render(x.w, status, &view{Title: title, Error: msg, Base: x.base(), Me: x.me})
}

func (x *exchange) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: x.ap.ClientID, ClientSecret: x.ap.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: x.ap.RedirectURL, Scopes: x.ap.Scopes}
}

// principal returns the signed-in approver and their session, or nil.
func (x *exchange) principal() (*authz.Principal, *session) {
	c, err := x.r.Cookie(SessionCookie)
	if err != nil {
		return nil, nil
	}
	plain, err := x.sealer.OpenData(purposeSession, c.Value)
	if err != nil {
		return nil, nil
	}
	var s session
	if json.Unmarshal(plain, &s) != nil || x.now.Unix() >= s.Expires || s.Issuer != x.ap.Issuer || s.ClientID != x.ap.ClientID || s.CSRF == "" {
		return nil, nil
	}
	p, err := authz.PrincipalFromClaims(x.ap.Principal, s.Claims)
	if err != nil {
		return nil, nil
	}
	x.me = p
	return p, &s
}

// startSignIn sends the browser to the provider, remembering where to
// come back to.
func (x *exchange) startSignIn() {
	ctx := x.r.Context()
	p, err := x.pg.provider(ctx, x.ap.Issuer)
	if err != nil {
		x.req.Log.Warn("approval page: provider discovery failed", "issuer", x.ap.Issuer, "error", err)
		x.fail(http.StatusBadGateway, "Sign-in unavailable", "the sign-in provider could not be reached; try again in a moment")
		return
	}
	si := signIn{State: approval.NewNonce(), Verifier: oauth2.GenerateVerifier(), Nonce: approval.NewNonce(),
		Return: x.r.URL.Path, Issuer: x.ap.Issuer, Expires: x.now.Add(signInTTL).Unix()}
	plain, _ := json.Marshal(si)
	sealed, err := x.sealer.SealData(purposeSignIn, plain)
	if err != nil {
		x.fail(http.StatusInternalServerError, "Sign-in unavailable", "the sign-in could not be prepared")
		return
	}
	x.setCookie(SignInCookie, sealed, int(signInTTL/time.Second))
	u := x.oauth(p).AuthCodeURL(si.State, oauth2.S256ChallengeOption(si.Verifier), oidc.Nonce(si.Nonce))
	http.Redirect(x.w, x.r, u, http.StatusFound)
}

// callback completes the sign-in: the state matches the sealed cookie, the
// code is exchanged with the PKCE verifier, the ID token is verified
// (signature, issuer, audience, expiry) and carries the nonce, and its
// claims map to a principal.
func (x *exchange) callback() {
	if x.r.Method != http.MethodGet {
		x.fail(http.StatusMethodNotAllowed, "Sign-in failed", "the sign-in callback takes GET")
		return
	}
	q := x.r.URL.Query()
	if e := q.Get("error"); e != "" {
		// Anyone can craft this link: what it says goes to the log, never
		// onto a page under the gateway's name.
		x.req.Log.Info("approval page: the provider refused the sign-in", "error", clip(e), "error_description", clip(q.Get("error_description")))
		x.fail(http.StatusUnauthorized, "Sign-in failed", "the sign-in provider did not sign you in; open the approval link again, or ask your administrator if this repeats")
		return
	}
	c, err := x.r.Cookie(SignInCookie)
	var si signIn
	if err == nil {
		var plain []byte
		if plain, err = x.sealer.OpenData(purposeSignIn, c.Value); err == nil {
			err = json.Unmarshal(plain, &si)
		}
	}
	if err != nil || x.now.Unix() >= si.Expires || si.Issuer != x.ap.Issuer {
		x.fail(http.StatusBadRequest, "Sign-in failed", "this sign-in expired or was started in another browser; open the approval link again")
		return
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(si.State)) != 1 {
		x.fail(http.StatusBadRequest, "Sign-in failed", "the sign-in state does not match this browser's; open the approval link again")
		return
	}
	x.setCookie(SignInCookie, "", -1)
	ctx := oidc.ClientContext(x.r.Context(), x.pg.client())
	p, err := x.pg.provider(ctx, x.ap.Issuer)
	if err != nil {
		x.fail(http.StatusBadGateway, "Sign-in unavailable", "the sign-in provider could not be reached; try again in a moment")
		return
	}
	tok, err := x.oauth(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(si.Verifier))
	if err != nil {
		x.req.Log.Info("approval page: code exchange failed", "error", err)
		x.fail(http.StatusUnauthorized, "Sign-in failed", "the provider did not accept the sign-in code")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		x.fail(http.StatusUnauthorized, "Sign-in failed", "the provider returned no ID token")
		return
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: x.ap.ClientID, Now: x.pg.now}).Verify(ctx, raw)
	if err != nil {
		x.req.Log.Info("approval page: ID token refused", "error", err)
		x.fail(http.StatusUnauthorized, "Sign-in failed", "the ID token did not verify")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(si.Nonce)) != 1 {
		x.fail(http.StatusUnauthorized, "Sign-in failed", "the ID token was not issued for this sign-in (nonce)")
		return
	}
	var claims json.RawMessage
	if err := idt.Claims(&claims); err != nil || len(claims) > maxClaims {
		x.fail(http.StatusUnauthorized, "Sign-in failed", fmt.Sprintf("the ID token's claims are unreadable or over %d bytes", maxClaims))
		return
	}
	if _, err := authz.PrincipalFromClaims(x.ap.Principal, claims); err != nil {
		x.fail(http.StatusForbidden, "Sign-in refused", "your sign-in does not map to a gateway identity: "+authz.Description(err))
		return
	}
	s := session{Claims: claims, CSRF: approval.NewNonce(), Issuer: x.ap.Issuer, ClientID: x.ap.ClientID,
		Expires: x.now.Add(x.ap.SessionTTL).Unix()}
	plain, _ := json.Marshal(s)
	sealed, err := x.sealer.SealData(purposeSession, plain)
	if err != nil {
		x.fail(http.StatusInternalServerError, "Sign-in failed", "the session could not be sealed")
		return
	}
	x.setCookie(SessionCookie, sealed, int(x.ap.SessionTTL/time.Second))
	http.Redirect(x.w, x.r, x.safeReturn(si.Return), http.StatusSeeOther)
}

// clip bounds a value from a request before it is logged.
func clip(s string) string { return text.Clip(s, 256) }

// safeReturn keeps the post-sign-in redirect on the page itself.
func (x *exchange) safeReturn(path string) string {
	if path == x.base() || path == x.base()+"/" {
		return x.base()
	}
	if id, ok := strings.CutPrefix(path, x.base()+"/"); ok && approval.ValidID(id) {
		return path
	}
	return x.base()
}

func (x *exchange) list() {
	p, _ := x.principal()
	if p == nil {
		x.startSignIn()
		return
	}
	l, next, err := x.req.Core.PendingApprovalsPage(x.req.Context(p), p, x.r.URL.Query().Get("cursor"), 0)
	if err != nil {
		x.decisionError(err)
		return
	}
	v := &view{Title: "Pending approvals", Base: x.base(), Me: p, Next: next}
	for _, r := range l {
		v.List = append(v.List, x.item(r, p))
	}
	x.pg.render(x.w, http.StatusOK, v)
}

func (x *exchange) show(id string) {
	p, s := x.principal()
	if p == nil {
		x.startSignIn()
		return
	}
	r, err := x.req.Core.GetApproval(x.req.Context(p), p, id)
	if err != nil {
		x.decisionError(err)
		return
	}
	// The notice states the decision decide redirected with; any other
	// text in a link's query is not shown as if the gateway said it.
	notice := x.r.URL.Query().Get("done")
	if notice != string(approval.StatusApproved) && notice != string(approval.StatusRejected) {
		notice = ""
	}
	x.pg.render(x.w, http.StatusOK, &view{Title: "Approval " + r.ID, Base: x.base(), Me: p, CSRF: s.CSRF, Item: x.item(r, p), Notice: notice})
}

// decide is the page's form: a session, its CSRF token, then the same
// decision as the REST API.
func (x *exchange) decide(id string) {
	if x.r.Method != http.MethodPost {
		x.w.Header().Set("Allow", http.MethodPost)
		x.fail(http.StatusMethodNotAllowed, "Not allowed", "decisions are POSTed by the approval page's form")
		return
	}
	if !x.req.Guard(x.w, x.r) {
		return
	}
	p, s := x.principal()
	if p == nil {
		x.fail(http.StatusUnauthorized, "Signed out", "your sign-in expired; open the approval link again")
		return
	}
	x.r.Body = http.MaxBytesReader(x.w, x.r.Body, maxForm)
	if err := x.r.ParseForm(); err != nil {
		x.fail(http.StatusBadRequest, "Bad form", "the form could not be read")
		return
	}
	if tok := x.r.PostForm.Get("csrf"); tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.CSRF)) != 1 {
		x.fail(http.StatusForbidden, "Refused", "the form's CSRF token is missing or does not belong to your session; nothing was decided")
		return
	}
	var approve bool
	switch x.r.PostForm.Get("decision") {
	case "approve":
		approve = true
	case "reject":
	default:
		x.fail(http.StatusBadRequest, "Bad form", "decision must be approve or reject")
		return
	}
	got, err := x.req.Core.DecideApproval(x.req.Context(p), p, id, approve)
	if err != nil {
		x.decisionError(err)
		return
	}
	http.Redirect(x.w, x.r, x.base()+"/"+url.PathEscape(got.ID)+"?done="+string(got.Status), http.StatusSeeOther)
}

// decisionError answers a refusal of the core with the REST API's
// statuses and reasons.
func (x *exchange) decisionError(err error) {
	var ae *proxy.ApprovalError
	switch {
	case errors.Is(err, proxy.ErrApprovalsOff):
		x.fail(http.StatusServiceUnavailable, "Approvals unavailable", err.Error())
	case errors.As(err, &ae) && errors.Is(err, proxy.ErrApprovalUnaudited):
		x.fail(http.StatusServiceUnavailable, "Not recorded", ae.Reason)
	case errors.Is(err, proxy.ErrApprovalCursor):
		x.fail(http.StatusBadRequest, "Bad link", "this page link is not one the gateway made; start again from the list")
	case errors.As(err, &ae) && errors.Is(err, proxy.ErrApprovalNotFound):
		x.fail(http.StatusNotFound, "Not found", ae.Reason)
	case errors.As(err, &ae) && errors.Is(err, proxy.ErrApprovalForbidden):
		x.fail(http.StatusForbidden, "Refused", ae.Reason)
	case errors.As(err, &ae) && errors.Is(err, approval.ErrConflict):
		x.fail(http.StatusConflict, "Already decided", ae.Reason)
	default:
		x.req.Log.Error("approval page failed", "error", err)
		x.fail(http.StatusInternalServerError, "Error", "internal error")
	}
}

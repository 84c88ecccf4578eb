package oauthserver

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// federation is the provider's leg of a sign-in: the consent page, the
// redirect to the provider, and the callback that maps the person.
type federation struct {
	s   *Server
	cfg catalog.OAuthProvider
	hc  *http.Client

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use
}

const browserCookie = "mcpgw_oauth"

func (f *federation) discover(ctx context.Context) (*oidc.Provider, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.provider != nil {
		return f.provider, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, f.hc), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, f.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	f.provider = p
	return p, nil
}

func (f *federation) oauth2(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: f.cfg.ClientID, ClientSecret: f.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: f.s.endpoint(catalog.OAuthCallbackPath), Scopes: f.cfg.Scopes,
	}
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in to {{.Server}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">
<h1>Connect {{.Client}}?</h1>
<p><strong>{{.Client}}</strong> wants to call the tools of <strong>{{.Server}}</strong> as you.
After you continue, you sign in at your company's identity provider.</p>
<p>It will be sent back to <code>{{.Redirect}}</code>.{{if .Document}} Its identity is vouched for by <code>{{.ClientID}}</code>.{{end}}</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="id" value="{{.ID}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="allow" id="allow">Continue</button>
<button type="submit" name="decision" value="deny" id="deny">Cancel</button>
</form></body></html>`))

// securePage keeps the sign-in pages out of frames (clickjacking a
// consent) and out of caches.
func securePage(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https: http:; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// serveLogin is where the library sends the browser after /authorize.
// The gateway asks the person first, on every sign-in: a client that
// registered itself must not get a code for someone who never saw its
// name (the MCP spec's confused deputy: the provider may sign the
// person in silently). GET shows the page and binds the sign-in to this
// browser with a cookie; POST, carrying the cookie's value, goes on to
// the provider.
func (f *federation) serveLogin(w http.ResponseWriter, r *http.Request) {
	securePage(w)
	ctx := r.Context()
	st := &storage{s: f.s}
	switch r.Method {
	case http.MethodGet:
		a, err := st.authRequest(ctx, r.URL.Query().Get("id"))
		if err != nil || a.SignedIn {
			http.Error(w, "This sign-in is unknown or over; start again from your MCP client.", http.StatusBadRequest)
			return
		}
		c, err := f.s.client(ctx, a.ClientID)
		if err != nil {
			http.Error(w, "The client of this sign-in is no longer known; start again from your MCP client.", http.StatusBadRequest)
			return
		}
		secret := randomToken(24)
		a.Browser = hashKey(secret)
		if err := st.putJSON(ctx, keyAuthRequest+a.ID, a, a.Created.Add(authRequestTTL)); err != nil {
			f.s.log.Error("storing a sign-in failed", "error", err)
			http.Error(w, "The sign-in cannot be stored now; try again.", http.StatusServiceUnavailable)
			return
		}
		f.setCookie(w, secret, int(authRequestTTL.Seconds()))
		name := c.md.ClientName
		if name == "" {
			name = "An MCP client"
		}
		redirect := a.RedirectURI
		if u, err := url.Parse(a.RedirectURI); err == nil && u.Host != "" {
			redirect = u.Scheme + "://" + u.Host
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		consentPage.Execute(w, map[string]any{
			"Server": f.s.resource, "Client": name, "ClientID": c.md.ClientID, "Document": c.md.Document,
			"Redirect": redirect, "Action": f.s.endpoint("/login"), "ID": a.ID, "CSRF": secret,
		})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "The form cannot be read.", http.StatusBadRequest)
			return
		}
		a, err := st.authRequest(ctx, r.PostForm.Get("id"))
		if err != nil || a.SignedIn {
			http.Error(w, "This sign-in is unknown or over; start again from your MCP client.", http.StatusBadRequest)
			return
		}
		ck, err := r.Cookie(browserCookie)
		csrf := r.PostForm.Get("csrf")
		if err != nil || a.Browser == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(csrf)) != 1 || hashKey(ck.Value) != a.Browser {
			http.Error(w, "This sign-in was not started in this browser; start again from your MCP client.", http.StatusForbidden)
			return
		}
		if r.PostForm.Get("decision") != "allow" {
			st.store().Delete(ctx, keyAuthRequest+a.ID)
			op.AuthRequestError(w, r, a, zoidc.ErrAccessDenied().WithDescription("the person declined"), f.s.op)
			return
		}
		p, err := f.discover(ctx)
		if err != nil {
			f.s.log.Error("the OpenID provider cannot be discovered", "issuer", f.cfg.Issuer, "error", err)
			http.Error(w, "The identity provider cannot be reached now; try again.", http.StatusBadGateway)
			return
		}
		a.UpstreamVerifier = oauth2.GenerateVerifier()
		a.UpstreamNonce = randomToken(18)
		state := randomToken(24)
		exp := a.Created.Add(authRequestTTL)
		if err := st.putJSON(ctx, keyAuthRequest+a.ID, a, exp); err != nil {
			http.Error(w, "The sign-in cannot be stored now; try again.", http.StatusServiceUnavailable)
			return
		}
		if err := st.store().Put(ctx, keyUpstream+state, []byte(a.ID), exp); err != nil {
			http.Error(w, "The sign-in cannot be stored now; try again.", http.StatusServiceUnavailable)
			return
		}
		http.Redirect(w, r, f.oauth2(p).AuthCodeURL(state, oauth2.S256ChallengeOption(a.UpstreamVerifier), oidc.Nonce(a.UpstreamNonce)), http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Use GET or POST.", http.StatusMethodNotAllowed)
	}
}

func (f *federation) setCookie(w http.ResponseWriter, v string, maxAge int) {
	u, _ := url.Parse(f.s.issuer)
	http.SetCookie(w, &http.Cookie{
		Name: browserCookie, Value: v, Path: f.s.basePath + catalog.OAuthPathPrefix, MaxAge: maxAge,
		HttpOnly: true, Secure: u.Scheme == "https", SameSite: http.SameSiteLaxMode,
	})
}

// serveCallback is where the provider sends the person back: the state
// is spent, the browser must be the one that consented, the code is
// exchanged with PKCE, the ID token is verified (signature, issuer,
// audience, expiry, nonce) and its claims mapped like a bearer JWT's.
// A person who maps to no principal is sent back to the client with
// access_denied and nothing is kept.
func (f *federation) serveCallback(w http.ResponseWriter, r *http.Request) {
	securePage(w)
	ctx := r.Context()
	st := &storage{s: f.s}
	q := r.URL.Query()
	id, err := st.store().Take(ctx, keyUpstream+q.Get("state"))
	if err != nil || q.Get("state") == "" {
		http.Error(w, "This sign-in is unknown, over or already used; start again from your MCP client.", http.StatusBadRequest)
		return
	}
	a, err := st.authRequest(ctx, string(id))
	if err != nil || a.SignedIn {
		http.Error(w, "This sign-in is over; start again from your MCP client.", http.StatusBadRequest)
		return
	}
	ck, err := r.Cookie(browserCookie)
	if err != nil || hashKey(ck.Value) != a.Browser {
		http.Error(w, "This sign-in was not started in this browser; start again from your MCP client.", http.StatusForbidden)
		return
	}
	f.setCookie(w, "", -1)
	deny := func(desc string) {
		st.store().Delete(ctx, keyAuthRequest+a.ID)
		op.AuthRequestError(w, r, a, zoidc.ErrAccessDenied().WithDescription("%s", desc), f.s.op)
	}
	if e := q.Get("error"); e != "" {
		deny("the identity provider refused the sign-in (" + clip(e) + ")")
		return
	}
	p, err := f.discover(ctx)
	if err != nil {
		f.s.log.Error("the OpenID provider cannot be discovered", "issuer", f.cfg.Issuer, "error", err)
		deny("the identity provider cannot be reached")
		return
	}
	xctx := oidc.ClientContext(ctx, f.hc)
	tok, err := f.oauth2(p).Exchange(xctx, q.Get("code"), oauth2.VerifierOption(a.UpstreamVerifier))
	if err != nil {
		f.s.log.Warn("the provider refused the code exchange", "error", err)
		deny("the identity provider refused the code")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		deny("the identity provider sent no ID token")
		return
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: f.cfg.ClientID}).Verify(xctx, raw)
	if err != nil {
		f.s.log.Warn("the provider's ID token does not verify", "error", err)
		deny("the identity provider's ID token does not verify")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(a.UpstreamNonce)) != 1 {
		deny("the identity provider's ID token is not for this sign-in")
		return
	}
	var claims json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		deny("the identity provider's ID token cannot be read")
		return
	}
	pr, err := authz.PrincipalFromClaims(f.s.principal, claims)
	if err != nil {
		f.s.log.Info("a person signed in but maps to no principal", "reason", authz.Reason(err), "error", err)
		desc := authz.Description(err)
		if errors.Is(err, authz.ErrInvalidToken) && desc != "" {
			deny("your identity cannot be used here: " + desc)
		} else {
			deny("your identity cannot be used here")
		}
		return
	}
	a.Person = &person{Subject: pr.Subject, Workspace: pr.Workspace, Scopes: pr.Scopes, Actor: pr.Actor}
	a.SignedIn = true
	a.AuthTime = f.s.now()
	if err := st.putJSON(ctx, keyAuthRequest+a.ID, a, a.Created.Add(authRequestTTL)); err != nil {
		http.Error(w, "The sign-in cannot be stored now; try again.", http.StatusServiceUnavailable)
		return
	}
	f.s.log.Info("person signed in for an MCP client", "subject", pr.Subject, "workspace", pr.Workspace, "client_id", a.ClientID)
	http.Redirect(w, r, f.s.endpoint("/authorize/callback")+"?id="+url.QueryEscape(a.ID), http.StatusSeeOther)
}

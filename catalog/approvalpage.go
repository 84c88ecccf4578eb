package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Approval page defaults.
const (
	// DefaultApprovalSessionTTL is how long an approver stays signed in
	// to the approval page.
	DefaultApprovalSessionTTL = Duration(10 * 60e9)
	// MaxApprovalSessionTTL bounds approval_page.session_ttl.
	MaxApprovalSessionTTL = Duration(60 * 60e9)
	// ApprovalCallbackPath, under {admin_path}/approvals, is where the
	// OpenID provider sends the approver back; the redirect URL to
	// register with the provider is [Catalog.ApprovalRedirectURL].
	ApprovalCallbackPath = "/signin/callback"
)

// ApprovalPage configures the approval web page: approvers sign in with
// an OpenID Connect provider (authorization code with PKCE) and approve or
// reject four-eyes calls in a browser. Nil: the page is off and approvers
// use the REST API only.
type ApprovalPage struct {
	Meta     `yaml:"-"`
	Issuer   string `yaml:"issuer"`    // the provider's issuer URL (discovery)
	ClientID string `yaml:"client_id"` // the gateway's client at the provider
	// ClientSecret is written as ${VAR}; "" for a public client (PKCE only).
	ClientSecret string `yaml:"client_secret"`
	// Scopes requested besides openid; the ID token must carry the claims
	// auth.principal names (subject, workspace, scopes, actor).
	Scopes []string `yaml:"scopes"`
	// SessionTTL is how long the sign-in lasts; default
	// DefaultApprovalSessionTTL, at most MaxApprovalSessionTTL.
	SessionTTL Duration `yaml:"session_ttl"`
}

// ApprovalRedirectURL is the redirect URL the gateway sends to the
// provider, derived from server.public_url and server.admin_path; ""
// without an approval page.
func (c *Catalog) ApprovalRedirectURL() string {
	if c.ApprovalPage == nil {
		return ""
	}
	return c.Server.PublicURL + c.Server.AdminPath + "/approvals" + ApprovalCallbackPath
}

func approvalPageDefaults(c *Catalog) {
	ap := c.ApprovalPage
	if ap == nil {
		return
	}
	if !ap.Has("session_ttl") {
		ap.SessionTTL = DefaultApprovalSessionTTL
	}
	if !slices.Contains(ap.Scopes, "openid") {
		ap.Scopes = append([]string{"openid"}, ap.Scopes...)
	}
}

// approvalPage checks the approval page: a provider, a client, and a
// gateway URL to come back to.
func (v *checker) approvalPage() {
	ap := v.c.ApprovalPage
	if ap == nil {
		return
	}
	const subj = "approval_page"
	outer := v.c.At("approval_page")
	if msg := httpURLRule(ap.Issuer); msg != "" {
		v.add(at(ap.Meta, "issuer", outer), subj, "issuer %s", msg)
	} else if u, _ := url.Parse(ap.Issuer); u.Scheme != "https" && !IsLoopbackHost(u.Hostname()) {
		v.add(ap.At("issuer"), subj, "issuer must be https:// (http:// is allowed on loopback only)")
	}
	if ap.ClientID == "" {
		v.add(at(ap.Meta, "client_id", outer), subj, "client_id is required: the gateway's client id at the provider")
	}
	s := &v.c.Server
	switch {
	case s.PublicURL == "":
		v.add(outer, subj, "needs server.public_url: the provider sends the approver back to {public_url}{admin_path}/approvals%s", ApprovalCallbackPath)
	case s.AdminPath == "":
		v.add(outer, subj, "needs server.admin_path: the page is served under {admin_path}/approvals")
	}
	if ap.SessionTTL <= 0 || ap.SessionTTL > MaxApprovalSessionTTL {
		v.add(at(ap.Meta, "session_ttl", outer), subj, "session_ttl must be greater than 0 and at most %s", MaxApprovalSessionTTL)
	}
	if ap.Issuer != "" && (v.c.Auth.JWT == nil || strings.TrimSuffix(v.c.Auth.JWT.Issuer, "/") != strings.TrimSuffix(ap.Issuer, "/")) {
		// Refusing would forbid a common setup (agents' tokens from one
		// issuer, people signing in at the company's); the rule stays
		// sound only if both map one person to one subject or actor.
		tokens := "API keys"
		if v.c.Auth.JWT != nil {
			tokens = fmt.Sprintf("auth.jwt.issuer %q", v.c.Auth.JWT.Issuer)
		}
		v.p.warn(ap.At("issuer"), "%s: issuer %q is not the issuer of the bearer tokens (%s): the four-eyes rule tells the requester from the approver by subject and actor, so auth.principal must map one person to the same actor (an email, say) at both, or a person with an identity at each could approve their own calls", subj, ap.Issuer, tokens)
	}
	for _, sc := range ap.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\n\"") {
			v.add(at(ap.Meta, "scopes", outer), subj, "scopes entry %q must be one scope token without spaces or quotes", clip(sc))
		}
	}
}

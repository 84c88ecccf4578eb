package oauthserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/fleet"
)

// ClientError is a client's metadata refused, with the RFC 7591 error
// code and a description that names what was wrong.
type ClientError struct {
	Code        string // invalid_client_metadata or invalid_redirect_uri
	Description string
	// Transient is set when the document could not be had now (its host
	// did not answer, answered 5xx or 429, or every fetch slot was
	// taken): the client is not known to be wrong, and may try again.
	Transient bool
}

func (e *ClientError) Error() string { return e.Code + ": " + e.Description }

func clientErr(code, format string, args ...any) error {
	return &ClientError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// transientErr is a client metadata document that cannot be had now.
func transientErr(desc string) error {
	return &ClientError{Code: "invalid_client_metadata", Description: desc, Transient: true}
}

// Metadata is what the server keeps of a client: from a registration
// (RFC 7591) or a Client ID Metadata Document.
type Metadata struct {
	ClientID     string   `json:"client_id"`
	ClientName   string   `json:"client_name,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	GrantTypes   []string `json:"grant_types"`
	// Document is true for a Client ID Metadata Document.
	Document bool      `json:"-"`
	Issued   time.Time `json:"issued,omitzero"`
}

// Bounds on what a client may send.
const (
	maxRegistrationBytes = 16 << 10
	maxRedirectURIs      = 16
	maxURILength         = 2048
	maxClientName        = 200
	// registrationTTL is how long a registered client id lasts; a client
	// told invalid_client registers again.
	registrationTTL = 90 * 24 * time.Hour
)

// clientRequest is the client metadata both a registration and a
// metadata document carry (RFC 7591 §2).
type clientRequest struct {
	ClientID                *string  `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            *string  `json:"client_secret"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at"`
	JWKS                    any      `json:"jwks"`
	JWKSURI                 string   `json:"jwks_uri"`
}

// ParseRegistration reads an RFC 7591 registration request. Every
// client of this server is public (PKCE, no secret) and uses the code
// and refresh grants.
func ParseRegistration(body []byte) (*Metadata, error) {
	var req clientRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, clientErr("invalid_client_metadata", "the body is not a JSON object of client metadata")
	}
	if req.ClientID != nil {
		return nil, clientErr("invalid_client_metadata", "client_id is chosen by the server, not sent")
	}
	return checkClient(&req)
}

// ParseMetadataDocument reads a Client ID Metadata Document fetched from
// docURL: its client_id must be docURL, character for character, and it
// may not carry a secret (it is public).
func ParseMetadataDocument(docURL string, body []byte) (*Metadata, error) {
	var req clientRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, clientErr("invalid_client_metadata", "the client metadata document is not a JSON object")
	}
	if req.ClientID == nil || *req.ClientID != docURL {
		return nil, clientErr("invalid_client_metadata", "the client metadata document's client_id must be its own URL")
	}
	if req.ClientSecret != nil || req.ClientSecretExpiresAt != nil {
		return nil, clientErr("invalid_client_metadata", "a client metadata document must not hold a client_secret")
	}
	md, err := checkClient(&req)
	if err != nil {
		return nil, err
	}
	md.ClientID = docURL
	md.Document = true
	return md, nil
}

func checkClient(req *clientRequest) (*Metadata, error) {
	switch req.TokenEndpointAuthMethod {
	case "", "none":
	default:
		return nil, clientErr("invalid_client_metadata", "token_endpoint_auth_method %q is not supported: clients here are public and use PKCE (none)", clip(req.TokenEndpointAuthMethod))
	}
	if req.JWKS != nil || req.JWKSURI != "" {
		return nil, clientErr("invalid_client_metadata", "jwks and jwks_uri are not supported: clients here are public")
	}
	if len(req.RedirectURIs) == 0 {
		return nil, clientErr("invalid_redirect_uri", "redirect_uris is required")
	}
	if len(req.RedirectURIs) > maxRedirectURIs {
		return nil, clientErr("invalid_redirect_uri", "at most %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, err
		}
	}
	grants := req.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, clientErr("invalid_client_metadata", "grant_types entry %q is not supported (authorization_code, refresh_token)", clip(g))
		}
	}
	if !slices.Contains(grants, "authorization_code") {
		return nil, clientErr("invalid_client_metadata", "grant_types must include authorization_code")
	}
	for _, rt := range req.ResponseTypes {
		if rt != "code" {
			return nil, clientErr("invalid_client_metadata", "response_types entry %q is not supported (code)", clip(rt))
		}
	}
	name := req.ClientName
	if len(name) > maxClientName || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, clientErr("invalid_client_metadata", "client_name must be at most %d characters without control characters", maxClientName)
	}
	return &Metadata{ClientName: name, RedirectURIs: slices.Clone(req.RedirectURIs), GrantTypes: slices.Clone(grants)}, nil
}

// checkRedirectURI allows https, http on a loopback host (native apps,
// RFC 8252 §7.3), and a private-use scheme (RFC 8252 §7.1); never a
// fragment, credentials, or a scheme that runs or reads in the browser.
func checkRedirectURI(s string) error {
	if len(s) > maxURILength {
		return clientErr("invalid_redirect_uri", "a redirect_uri is longer than %d characters", maxURILength)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || !u.IsAbs() {
		return clientErr("invalid_redirect_uri", "redirect_uri %q is not an absolute URI", clip(s))
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return clientErr("invalid_redirect_uri", "redirect_uri %q must not have a fragment", clip(s))
	}
	if u.User != nil {
		return clientErr("invalid_redirect_uri", "redirect_uri %q must not hold credentials", clip(s))
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "https":
		if u.Host == "" {
			return clientErr("invalid_redirect_uri", "redirect_uri %q has no host", clip(s))
		}
	case "http":
		if !catalog.IsLoopbackHost(u.Hostname()) {
			return clientErr("invalid_redirect_uri", "redirect_uri %q: http is allowed for a loopback host only (localhost, 127.0.0.1, [::1]); use https", clip(s))
		}
	case "javascript", "data", "file", "vbscript", "about", "blob", "ws", "wss", "ftp", "mailto":
		return clientErr("invalid_redirect_uri", "redirect_uri %q: the scheme %s is not allowed", clip(s), scheme)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// client is a [Metadata] as the op package sees it.
type client struct {
	md    *Metadata
	login string
}

func (s *Server) newClient(md *Metadata) *client {
	return &client{md: md, login: s.endpoint("/login")}
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string                       { return c.md.ClientID }
func (c *client) RedirectURIs() []string              { return c.md.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeNative }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodNone }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	out := make([]oidc.GrantType, len(c.md.GrantTypes))
	for i, g := range c.md.GrantTypes {
		out[i] = oidc.GrantType(g)
	}
	return out
}
func (c *client) LoginURL(id string) string            { return c.login + "?id=" + url.QueryEscape(id) }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return false }
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// registered returns a client registered with RFC 7591.
func (s *Server) registered(ctx context.Context, id string) (*Metadata, error) {
	b, err := s.store.Get(ctx, keyClient+id)
	if err != nil {
		return nil, err
	}
	md := &Metadata{}
	if err := json.Unmarshal(b, md); err != nil {
		return nil, err
	}
	return md, nil
}

// serveRegister is RFC 7591 dynamic registration: rate-limited by
// registration.per_minute (across the fleet when its limits are shared),
// answered 403 when turned off.
func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	if !allowCORS(w, r, "POST") {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	if !s.cfg.Registration.Enabled {
		writeOAuthError(w, http.StatusForbidden, "access_denied", "dynamic client registration is turned off here; use a Client ID Metadata Document")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBytes))
	if err != nil {
		writeOAuthError(w, http.StatusRequestEntityTooLarge, "invalid_client_metadata", fmt.Sprintf("the registration is larger than %d bytes", maxRegistrationBytes))
		return
	}
	md, err := ParseRegistration(body)
	if err != nil {
		var ce *ClientError
		errors.As(err, &ce)
		writeOAuthError(w, http.StatusBadRequest, ce.Code, ce.Description)
		return
	}
	// Only a registration that would be stored takes from the budget: a
	// malformed one stores nothing and must not spend everyone's.
	if !s.take(w, r, s.registrations(), "registrations", "registration.per_minute", s.cfg.Registration.PerMinute) {
		return
	}
	md.ClientID = "mcpgw_c_" + randomToken(18)
	md.Issued = s.now()
	b, _ := json.Marshal(md)
	if err := s.store.Put(r.Context(), keyClient+md.ClientID, b, md.Issued.Add(registrationTTL)); err != nil {
		s.log.Error("storing a client registration failed", "error", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "the registration cannot be stored now")
		return
	}
	s.log.Info("client registered", "client_id", md.ClientID, "client_name", md.ClientName)
	out := map[string]any{
		"client_id":                  md.ClientID,
		"client_id_issued_at":        md.Issued.Unix(),
		"redirect_uris":              md.RedirectURIs,
		"grant_types":                md.GrantTypes,
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if md.ClientName != "" {
		out["client_name"] = md.ClientName
	}
	writeJSON(w, http.StatusCreated, out)
}

// metadataFetcher fetches Client ID Metadata Documents under SSRF rules.
// Anyone may name any URL as a client_id, so what a stream of them can
// make the gateway do is bounded: a good document is kept a few minutes
// and a failure half a minute (a URL that fails is not fetched again per
// request), callers asking for one URL at once share one fetch, and at
// most metadataFetches run at a time (more are refused at once, never
// queued).
type metadataFetcher struct {
	cfg   *catalog.OAuthClientMetadata
	allow []netip.Prefix
	hc    *http.Client
	now   func() time.Time
	slots chan struct{} // one per fetch running

	mu       sync.Mutex
	cache    map[string]cachedMetadata
	inflight map[string]*metadataCall
}

type cachedMetadata struct {
	md  *Metadata
	err error
	exp time.Time
}

// metadataCall is one fetch, which callers of the same URL wait on.
type metadataCall struct {
	done chan struct{}
	md   *Metadata
	err  error
}

const (
	metadataCacheTTL   = 5 * time.Minute
	metadataFailureTTL = 30 * time.Second
	metadataCacheSize  = 1024
	metadataFetches    = 16
)

func newMetadataFetcher(cfg *catalog.OAuthClientMetadata, now func() time.Time) *metadataFetcher {
	f := &metadataFetcher{cfg: cfg, now: now, cache: map[string]cachedMetadata{},
		inflight: map[string]*metadataCall{}, slots: make(chan struct{}, metadataFetches)}
	for _, p := range cfg.AllowPrivateAddresses {
		if pr, err := netip.ParsePrefix(p); err == nil {
			f.allow = append(f.allow, pr.Masked())
		}
	}
	d := &net.Dialer{Timeout: cfg.Timeout.D(), Control: f.control}
	f.hc = &http.Client{
		Timeout: cfg.Timeout.D(),
		Transport: &http.Transport{
			Proxy:                  nil, // an egress proxy would dial for us, past the address check
			DialContext:            d.DialContext,
			TLSHandshakeTimeout:    cfg.Timeout.D(),
			ResponseHeaderTimeout:  cfg.Timeout.D(),
			MaxResponseHeaderBytes: 16 << 10,
			DisableKeepAlives:      true,
		},
		// A redirect is refused: the document must be at its URL, and a
		// redirect is how a public host points a fetch at a private one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

// control runs on the resolved address right before connecting, so the
// address checked is the address dialled (no DNS rebinding between a
// check and the use).
func (f *metadataFetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("client metadata: cannot read the address %q", address)
	}
	ip := ap.Addr().Unmap()
	if publicAddr(ip) {
		return nil
	}
	for _, p := range f.allow {
		if p.Contains(ip) {
			return nil
		}
	}
	return &privateAddressError{ip}
}

// privateAddressError is control's refusal of an address that is not
// public: a fact about the client's URL, not a passing failure.
type privateAddressError struct{ ip netip.Addr }

func (e *privateAddressError) Error() string {
	return fmt.Sprintf("client metadata: %s is not a public address (allow it with client_metadata.allow_private_addresses)", e.ip)
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// publicAddr reports whether ip is a public unicast address: not
// loopback, private (RFC 1918, fc00::/7), link-local (169.254.169.254
// is the cloud metadata service), CGNAT, unspecified or multicast.
func publicAddr(ip netip.Addr) bool {
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckClientIDURL holds a client_id URL to the rules of a Client ID
// Metadata Document: https with a path, no fragment, credentials, dot
// segments or query; http only for a loopback host.
func CheckClientIDURL(s string, allowedHosts []string) error {
	if len(s) > maxURILength {
		return clientErr("invalid_client_metadata", "client_id is longer than %d characters", maxURILength)
	}
	u, err := url.Parse(s)
	if err != nil {
		return clientErr("invalid_client_metadata", "client_id is not a URL")
	}
	switch {
	case u.Scheme == "http" && !catalog.IsLoopbackHost(u.Hostname()):
		return clientErr("invalid_client_metadata", "a client_id URL must be https (http only on loopback)")
	case u.Scheme != "https" && u.Scheme != "http":
		return clientErr("invalid_client_metadata", "a client_id URL must be https")
	case u.Host == "" || u.User != nil:
		return clientErr("invalid_client_metadata", "a client_id URL needs a host and no credentials")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return clientErr("invalid_client_metadata", "a client_id URL must not have a fragment")
	case u.RawQuery != "" || u.ForceQuery:
		return clientErr("invalid_client_metadata", "a client_id URL must not have a query")
	case u.Path == "" || u.Path == "/":
		return clientErr("invalid_client_metadata", "a client_id URL must have a path")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return clientErr("invalid_client_metadata", "a client_id URL must not have . or .. segments")
		}
	}
	if len(allowedHosts) > 0 && !slices.ContainsFunc(allowedHosts, func(h string) bool { return strings.EqualFold(h, u.Hostname()) }) {
		return clientErr("invalid_client_metadata", "the client_id's host %s is not among client_metadata.allowed_hosts", u.Hostname())
	}
	return nil
}

func (f *metadataFetcher) get(ctx context.Context, id string) (*Metadata, error) {
	if err := CheckClientIDURL(id, f.cfg.AllowedHosts); err != nil {
		return nil, err
	}
	f.mu.Lock()
	if c, ok := f.cache[id]; ok && f.now().Before(c.exp) {
		f.mu.Unlock()
		return c.md, c.err
	}
	if call := f.inflight[id]; call != nil {
		f.mu.Unlock()
		select {
		case <-call.done:
			return call.md, call.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case f.slots <- struct{}{}:
	default:
		f.mu.Unlock()
		return nil, transientErr("too many client metadata documents are being fetched at once; try again in a few seconds")
	}
	call := &metadataCall{done: make(chan struct{})}
	f.inflight[id] = call
	f.mu.Unlock()

	// The fetch is the URL's, not this caller's: one who goes away does
	// not fail the others waiting on it. It has its own timeout.
	call.md, call.err = f.fetch(context.WithoutCancel(ctx), id)
	<-f.slots
	f.mu.Lock()
	delete(f.inflight, id)
	ttl := metadataCacheTTL
	if call.err != nil {
		ttl = metadataFailureTTL
	}
	f.keep(id, cachedMetadata{md: call.md, err: call.err, exp: f.now().Add(ttl)})
	f.mu.Unlock()
	close(call.done)
	return call.md, call.err
}

// keep caches c under id, making room when the cache is full: first by
// dropping what has expired, then the entry closest to expiring. f.mu is
// held.
func (f *metadataFetcher) keep(id string, c cachedMetadata) {
	if len(f.cache) >= metadataCacheSize {
		now := f.now()
		soonest := ""
		for k, v := range f.cache {
			if !now.Before(v.exp) {
				delete(f.cache, k)
			} else if soonest == "" || v.exp.Before(f.cache[soonest].exp) {
				soonest = k
			}
		}
		if len(f.cache) >= metadataCacheSize {
			delete(f.cache, soonest)
		}
	}
	f.cache[id] = c
}

// fetch gets and checks the document at id.
func (f *metadataFetcher) fetch(ctx context.Context, id string) (*Metadata, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout.D())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, clientErr("invalid_client_metadata", "client_id is not a URL that can be fetched")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		msg, transient := fetchError(err)
		if !transient {
			return nil, clientErr("invalid_client_metadata", "the client metadata document cannot be fetched: %s", msg)
		}
		return nil, transientErr("the client metadata document cannot be fetched: " + msg)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return nil, transientErr(fmt.Sprintf("the client metadata document answered HTTP %d", resp.StatusCode))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, clientErr("invalid_client_metadata", "the client metadata document answered HTTP %d (redirects are not followed)", resp.StatusCode)
	}
	limit := int64(f.cfg.MaxBytes)
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, transientErr("the client metadata document cannot be read")
	}
	if int64(len(body)) > limit {
		return nil, clientErr("invalid_client_metadata", "the client metadata document is larger than %s", f.cfg.MaxBytes)
	}
	return ParseMetadataDocument(id, body)
}

// fetchError names the class of a fetch failure without echoing more of
// the network than the client already knows, and says whether it may
// pass (a timeout, a failed connection) or will not (a host that is not
// public).
func fetchError(err error) (msg string, transient bool) {
	var ne net.Error
	var private *privateAddressError
	switch {
	case errors.As(err, &private):
		return "its host is not a public address", false
	case errors.As(err, &ne) && ne.Timeout():
		return "it did not answer in time", true
	}
	return "the connection failed", true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeOAuthError writes an OAuth error response (RFC 6749 §5.2).
func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// allowCORS lets browser-based clients read the metadata and register:
// any origin, never with credentials. It answers a preflight itself and
// then returns false.
func allowCORS(w http.ResponseWriter, r *http.Request, methods string) bool {
	if r.Header.Get("Origin") == "" {
		return true
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", methods+", OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	return true
}

// registrations is the counter dynamic registrations take from: one
// per issuer, a burst of per_minute and per_minute a minute after it.
func (s *Server) registrations() fleet.Counter {
	n := s.cfg.Registration.PerMinute
	return fleet.Counter{Rule: "oauth_server.registration", Key: s.issuer, RPS: float64(n) / 60, Burst: n}
}

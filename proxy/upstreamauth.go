package proxy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
)

// Upstreams behind an OAuth 2.0 authorization server (upstreams.NAME.auth)
// are called with a bearer token the gateway obtains: as itself with the
// client-credentials grant (RFC 6749 §4.4), or for the person calling with
// a token exchange (RFC 8693) whose subject token the gateway signs
// (authz.AssertionSigner says why not the caller's own token). A token is
// kept until shortly before it expires and shared by every call it serves:
// one per upstream for client credentials, one per person (workspace,
// subject and actor) for an exchange. Calls that need a token at the same
// moment wait for one request. An upstream that answers 401 gets one more
// try with a fresh token: its authorization server may have revoked or
// rotated the old one.
//
// The client secret, the subject token and the tokens are secrets: none
// of them is put into an error, a log record, a metric or an audit record.
// What a failure shows is the authorization server's error code and its
// cleaned description, with any of those secrets removed from it.

// Token endpoint bounds.
const (
	// maxTokenResponse bounds a token endpoint's answer; a token response
	// is a few kilobytes at most.
	maxTokenResponse = 64 << 10
	// defaultTokenLifetime is how long a token whose response gave no
	// expires_in is used (a 401 still refreshes it sooner).
	defaultTokenLifetime = time.Minute
	// maxRefreshMargin is how long before expiry a token is replaced; a
	// short-lived token is replaced when a tenth of its life is left.
	maxRefreshMargin = 30 * time.Second
)

// RFC 8693 identifiers.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeJWT       = "urn:ietf:params:oauth:token-type:jwt"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// tokenSource obtains and caches the tokens of one upstream.
type tokenSource struct {
	upstream string
	def      *catalog.UpstreamAuth
	rt       http.RoundTripper
	signer   *authz.AssertionSigner // token_exchange only
	now      func() time.Time
	logger   *slog.Logger
	cache    *tokenCache
}

func newTokenSource(name string, a *catalog.UpstreamAuth, rt http.RoundTripper, now func() time.Time, logger *slog.Logger) (*tokenSource, error) {
	ts := &tokenSource{upstream: name, def: a, rt: rt, now: now, logger: logger, cache: newTokenCache(a.MaxCachedTokens)}
	if a.ClientSecret.Reveal() == "" {
		return nil, fmt.Errorf("upstream %q: auth.client_secret_env: no client secret was read", name)
	}
	if a.Type == catalog.AuthTokenExchange {
		st := a.SubjectToken
		data, err := os.ReadFile(st.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("upstream %q: auth.subject_token.key_file: %w", name, err)
		}
		if ts.signer, err = authz.NewAssertionSigner(data, st.KeyID); err != nil {
			return nil, fmt.Errorf("upstream %q: auth.subject_token.key_file %s: %w", name, st.KeyFile, err)
		}
	}
	return ts, nil
}

// key is the cache key of the caller b: one token for the whole upstream
// with client credentials, one per person with an exchange. The workspace
// is part of it: the same subject in another workspace is another caller.
func (ts *tokenSource) key(b binding) string {
	if ts.signer == nil {
		return ""
	}
	return b.workspace + "\x00" + b.subject + "\x00" + b.actor
}

// token returns a token for the caller b, from the cache or from the
// authorization server.
func (ts *tokenSource) token(ctx context.Context, b binding) (string, error) {
	return ts.cache.get(ctx, ts.key(b), ts.now, func() (string, time.Time, error) { return ts.fetch(b) })
}

// invalidate drops tok from the cache after the upstream refused it, so
// the next call for b fetches another; a newer token already cached stays.
func (ts *tokenSource) invalidate(b binding, tok string) { ts.cache.drop(ts.key(b), tok) }

// fetch asks the authorization server for a token. It does not take the
// caller's context: calls waiting for the same token share it, and one of
// them going away must not fail the others. The token timeout bounds it.
func (ts *tokenSource) fetch(b binding) (string, time.Time, error) {
	a := ts.def
	ctx, cancel := context.WithTimeout(context.Background(), a.Timeout.D())
	defer cancel()
	params := url.Values{}
	if a.Audience != "" {
		params.Set("audience", a.Audience)
	}
	if a.Resource != "" {
		params.Set("resource", a.Resource)
	}
	var subjectToken string
	if ts.signer != nil {
		st := a.SubjectToken
		var err error
		subjectToken, err = ts.signer.Sign(authz.Assertion{
			Issuer: st.Issuer, Audience: st.Audience, Lifetime: st.Lifetime.D(), Now: time.Now(),
			Principal: authz.NewPrincipal(b.subject, b.workspace, b.actor, nil, nil),
		})
		if err != nil {
			ts.logger.Error("upstream subject token not signed", "upstream", ts.upstream, "error", err)
			return "", time.Time{}, &tokenError{fmt.Sprintf("upstream %s: the gateway could not sign the subject token for its token exchange; nothing was sent to the upstream", ts.upstream)}
		}
		params.Set("grant_type", grantTokenExchange)
		params.Set("subject_token", subjectToken)
		params.Set("subject_token_type", tokenTypeJWT)
		params.Set("requested_token_type", tokenTypeAccess)
	}
	conf := clientcredentials.Config{
		ClientID:       a.ClientID,
		ClientSecret:   a.ClientSecret.Reveal(),
		TokenURL:       a.TokenURL,
		Scopes:         a.Scopes,
		EndpointParams: params,
		AuthStyle:      oauth2.AuthStyleInHeader,
	}
	if a.ClientAuth == catalog.ClientAuthPost {
		conf.AuthStyle = oauth2.AuthStyleInParams
	}
	body := &cappedBodies{rt: ts.rt}
	client := &http.Client{
		Transport: body,
		Timeout:   a.Timeout.D(),
		// The client secret and the subject token go to the configured
		// token_url only: a redirect is an answer, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	start := time.Now()
	tok, err := conf.Token(context.WithValue(ctx, oauth2.HTTPClient, client))
	if err != nil {
		msg := ts.failure(ctx, err, body.over, subjectToken)
		ts.logger.Warn("upstream token request failed", "upstream", ts.upstream, "grant", a.Type, "error", msg)
		return "", time.Time{}, &tokenError{fmt.Sprintf("upstream %s: %s; nothing was sent to the upstream", ts.upstream, msg)}
	}
	life := defaultTokenLifetime
	if !tok.Expiry.IsZero() {
		life = tok.Expiry.Sub(start)
	}
	margin := min(maxRefreshMargin, life/10)
	return tok.AccessToken, ts.now().Add(life - margin), nil
}

// echoable lists the forms in which an authorization server may echo
// what the token request carried, longest first: the client secret as
// sent in the form (URL-encoded) and in the Basic header (the base64 of
// id:secret, each URL-encoded first as RFC 6749 §2.3.1 says, or not),
// and the subject token.
func (ts *tokenSource) echoable(subjectToken string) []string {
	var out []string
	if secret := ts.def.ClientSecret.Reveal(); secret != "" {
		out = append(out, secretForms(secret)...)
		id := ts.def.ClientID
		for _, pair := range []string{url.QueryEscape(id) + ":" + url.QueryEscape(secret), id + ":" + secret} {
			out = append(out, base64.StdEncoding.EncodeToString([]byte(pair)))
		}
	}
	if subjectToken != "" {
		out = append(out, secretForms(subjectToken)...)
	}
	return sortSecrets(out)
}

// failure describes a failed token request without its secrets.
func (ts *tokenSource) failure(ctx context.Context, err error, over bool, subjectToken string) string {
	const as = "its authorization server"
	var re *oauth2.RetrieveError
	var ne interface{ Timeout() bool }
	switch {
	case over:
		return fmt.Sprintf("%s answered more than %d KiB to the token request", as, maxTokenResponse>>10)
	case errors.As(err, &re) && re.ErrorCode != "":
		msg := fmt.Sprintf("%s refused the token request: %s", as, oauthErrorCode(re.ErrorCode))
		desc := re.ErrorDescription
		for _, s := range ts.echoable(subjectToken) {
			desc = strings.ReplaceAll(desc, s, catalog.Redacted)
		}
		if desc = cleanReason(desc, false); desc != "" {
			msg += " (" + desc + ")"
		}
		return msg
	case errors.As(err, &re) && re.Response != nil && isRedirect(re.Response.StatusCode):
		return fmt.Sprintf("%s answered %d %s to the token request (a redirect, not followed)", as, re.Response.StatusCode, http.StatusText(re.Response.StatusCode))
	case errors.As(err, &re) && re.Response != nil:
		return fmt.Sprintf("%s answered %d %s to the token request, without an OAuth error", as, re.Response.StatusCode, http.StatusText(re.Response.StatusCode))
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("%s did not answer the token request within %s", as, ts.def.Timeout.D())
	case strings.Contains(err.Error(), "missing access_token"):
		return as + " answered without an access_token"
	case strings.Contains(err.Error(), "cannot parse"):
		return as + " answered with something that is not a token response"
	}
	return as + " could not be reached"
}

// oauthErrorCode keeps an error code to RFC 6749's characters (§5.2:
// %x20-21 / %x23-5B / %x5D-7E) and 64 bytes.
func oauthErrorCode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 64; i++ {
		if c := s[i]; c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tokenError is a token that could not be obtained: nothing was sent to
// the upstream, and the message is safe for the caller.
type tokenError struct{ msg string }

func (e *tokenError) Error() string { return e.msg }

// cappedBodies bounds every answer of the token endpoint to
// maxTokenResponse bytes, and remembers when one was over.
type cappedBodies struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	over bool
}

func (c *cappedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: maxTokenResponse, over: func() { c.mu.Lock(); c.over = true; c.mu.Unlock() }}
	return resp, nil
}

var errTokenResponseTooLarge = errors.New("token response too large")

type cappedBody struct {
	rc   io.ReadCloser
	left int64
	over func()
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTokenResponseTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.over()
		return 0, errTokenResponseTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// tokenCache keeps tokens by key until they are due for refresh, and
// makes the callers that need the same missing token wait for one fetch.
// It holds at most max keys: when full, stale keys go first, then the one
// fetched longest ago.
type tokenCache struct {
	mu   sync.Mutex
	m    map[string]*cachedToken
	max  int
	next uint64 // the seq of the next entry
}

type cachedToken struct {
	seq   uint64        // order of creation, for eviction
	ready chan struct{} // closed when the fetch has ended
	// Set before ready is closed, read only after.
	value string
	fresh time.Time // refreshed from this moment on
	err   error
}

func newTokenCache(max int) *tokenCache {
	if max <= 0 {
		max = catalog.DefaultMaxCachedTokens
	}
	return &tokenCache{m: map[string]*cachedToken{}, max: max}
}

func (e *cachedToken) done() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// get returns key's token, fetching it when it is missing or due. A fetch
// runs on its own (see tokenSource.fetch); ctx bounds only the wait.
func (c *tokenCache) get(ctx context.Context, key string, now func() time.Time, fetch func() (string, time.Time, error)) (string, error) {
	c.mu.Lock()
	e := c.m[key]
	if e != nil && e.done() && (e.err != nil || !now().Before(e.fresh)) {
		e = nil
	}
	if e == nil {
		if len(c.m) >= c.max {
			c.evict(now())
		}
		c.next++
		e = &cachedToken{seq: c.next, ready: make(chan struct{})}
		c.m[key] = e
		go func() {
			e.value, e.fresh, e.err = fetch()
			if e.err != nil {
				// A failure is not kept: the next call asks again.
				c.mu.Lock()
				if c.m[key] == e {
					delete(c.m, key)
				}
				c.mu.Unlock()
			}
			close(e.ready)
		}()
	}
	c.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return e.value, e.err
}

// drop removes key's token if it is still tok.
func (c *tokenCache) drop(key, tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil && e.done() && e.value == tok {
		delete(c.m, key)
	}
}

// evict makes room for one key. Called with c.mu held.
func (c *tokenCache) evict(now time.Time) {
	oldest, found := "", false
	var seq uint64
	for k, e := range c.m {
		if !e.done() {
			continue // a fetch under way is someone's wait
		}
		if e.err != nil || !now.Before(e.fresh) {
			delete(c.m, k)
			continue
		}
		if !found || e.seq < seq {
			oldest, seq, found = k, e.seq, true
		}
	}
	if len(c.m) >= c.max && found {
		delete(c.m, oldest)
	}
}

// bodyAgainKey carries how to read a write's body a second time: sendOnce
// made the request's own body one-shot, so that the transport never
// replays it, and a 401 answered with a fresh token needs it once more.
type bodyAgainKey struct{}

func withBodyAgain(ctx context.Context, get func() (io.ReadCloser, error)) context.Context {
	if get == nil {
		return ctx
	}
	return context.WithValue(ctx, bodyAgainKey{}, get)
}

// resend is req ready to be sent a second time, or nil when its body
// cannot be read again. A request sendOnce made one-shot stays one-shot.
func resend(ctx context.Context, req *http.Request) *http.Request {
	nreq := req.Clone(ctx)
	switch again, _ := ctx.Value(bodyAgainKey{}).(func() (io.ReadCloser, error)); {
	case req.Body == nil || req.Body == http.NoBody:
	case req.GetBody != nil:
		body, err := req.GetBody()
		if err != nil {
			return nil
		}
		nreq.Body = body
	case req.ContentLength == 0:
		nreq.Body = io.NopCloser(strings.NewReader("")) // sendOnce's empty one-shot body
	case again != nil:
		body, err := again()
		if err != nil {
			return nil
		}
		nreq.Body = body
	default:
		return nil
	}
	return nreq
}

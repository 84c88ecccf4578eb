package authz

// JWKS key source.
//
// Keys come only from the configured jwks_url: the jku, x5u, jwk and x5c
// headers of a token are never read, so a token cannot name the key that
// verifies it. The set is fetched when the verifier is built, then again
// every RefreshInterval, and on demand when a token names a kid the set
// lacks. On-demand fetches are rate limited (at most one per
// MinRefreshInterval, and concurrent callers share one fetch), so a flood of
// tokens with random kids costs a handful of requests to the identity
// provider, not one each.
//
// A fetch that fails, times out, is malformed or yields no usable key keeps
// the last good set: an identity provider outage does not log everyone out,
// and a bad deploy of its JWKS document does not either. A successful fetch
// replaces the set whole, so a removed key stops verifying at the next
// refresh; a set that differs from the current one gets a new generation,
// which invalidates the verified-token cache.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

// JWKS bounds and defaults.
const (
	// JWKSFetchTimeout bounds one fetch of the key set, connect to last byte.
	JWKSFetchTimeout = 3 * time.Second
	// MaxJWKSBytes bounds the key set document; a longer one is refused.
	MaxJWKSBytes = 1 << 20
	// DefaultJWKSRefreshInterval is how often the key set is fetched even
	// when every kid is known: the bound on how long a key the identity
	// provider removed keeps verifying.
	DefaultJWKSRefreshInterval = 30 * time.Second
	// DefaultJWKSMinRefreshInterval is the least time between two fetches
	// triggered by unknown kids.
	DefaultJWKSMinRefreshInterval = 10 * time.Second

	minRSABits = 2048
	maxRSABits = 16384
)

// ErrJWKSUnavailable marks a [NewVerifier] error caused by a key set that
// could not be fetched (no answer, an error status, a malformed or empty
// set), as opposed to a configuration the verifier refuses: the first may
// pass if retried, the second will not.
var ErrJWKSUnavailable = errors.New("key set unavailable")

// jwk is one usable verification key from a key set.
type jwk struct {
	kid string
	alg string // "" when the set does not pin one
	key crypto.PublicKey
}

// keySet is an immutable snapshot of the keys; the source swaps it whole.
type keySet struct {
	gen  uint64
	sum  [sha256.Size]byte // fingerprint, to tell a changed set from a refetched one
	keys []jwk
}

// lookup returns the key for a token's kid and alg, or nil. A token
// without a kid is accepted only when exactly one key fits its alg, so a
// kid-less token cannot make us try every key in turn.
func (s *keySet) lookup(kid, alg string) crypto.PublicKey {
	var found crypto.PublicKey
	n := 0
	for _, k := range s.keys {
		if (kid != "" && k.kid != kid) || (k.alg != "" && k.alg != alg) || !keyFits(k.key, alg) {
			continue
		}
		if kid != "" {
			return k.key
		}
		found = k.key
		n++
	}
	if n != 1 {
		return nil
	}
	return found
}

// keyFits reports whether key can verify a signature made with alg.
func keyFits(key crypto.PublicKey, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return k.Curve == elliptic.P256()
		case "ES384":
			return k.Curve == elliptic.P384()
		case "ES512":
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// jwksSource owns the key set and the goroutine that refreshes it. The
// mutex guards only the bookkeeping of fetches, never I/O.
type jwksSource struct {
	url        string
	client     *http.Client
	algs       []string
	now        func() time.Time
	refresh    time.Duration
	minRefresh time.Duration
	logger     *slog.Logger
	onFetch    func(ok bool)
	ownClient  bool // the client is ours: close drops its idle connections

	keys atomic.Pointer[keySet]

	ctx    context.Context // cancelled by close; parents every fetch
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	lastAttempt time.Time     // start of the latest fetch, for the rate limit
	inflight    chan struct{} // closed when the running fetch ends; nil when none runs
	closed      bool
	fetches     atomic.Int64 // for tests
}

type jwksConfig struct {
	url              string
	algs             []string
	opts             *VerifierOptions
	startWithoutKeys bool
}

// newJWKSSource fetches the key set once and starts the refresh loop.
// Unless startWithoutKeys, a failed first fetch is an error and nothing
// keeps running.
func newJWKSSource(c jwksConfig) (*jwksSource, error) {
	o := c.opts
	s := &jwksSource{
		url:        c.url,
		client:     o.HTTPClient,
		algs:       c.algs,
		now:        o.Now,
		refresh:    o.RefreshInterval,
		minRefresh: o.MinRefreshInterval,
		logger:     o.Logger,
		onFetch:    o.OnJWKSFetch,
	}
	if s.onFetch == nil {
		s.onFetch = func(bool) {}
	}
	if s.client == nil {
		s.client = &http.Client{
			Transport: newJWKSTransport(),
			Timeout:   JWKSFetchTimeout,
			// The configured URL is the key source; a redirect would make
			// some other URL one. Operators configure the final URL.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		s.ownClient = true
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.refresh <= 0 {
		s.refresh = DefaultJWKSRefreshInterval
	}
	if s.minRefresh <= 0 {
		s.minRefresh = DefaultJWKSMinRefreshInterval
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.keys.Store(&keySet{})
	s.ctx, s.cancel = context.WithCancel(context.Background())

	s.lastAttempt = s.now()
	ctx, cancel := context.WithTimeout(s.ctx, JWKSFetchTimeout)
	set, err := s.fetch(ctx)
	cancel()
	if err != nil {
		if !c.startWithoutKeys {
			s.cancel()
			if s.ownClient {
				s.client.CloseIdleConnections()
			}
			return nil, fmt.Errorf("auth.jwt.jwks_url: %w: %w", ErrJWKSUnavailable, err)
		}
		s.logger.Error("jwks fetch failed; starting without keys", "url", s.url, "error", err)
	} else {
		s.install(set)
	}
	s.wg.Add(1)
	go s.loop()
	return s, nil
}

// newJWKSTransport is the default client's transport. It is its own, not
// [http.DefaultTransport], because that one takes its proxy from
// HTTP_PROXY, HTTPS_PROXY and NO_PROXY: whoever can set a variable in the
// gateway's environment (or a proxy the host routes through) would then
// serve the keys that verify every token. Upstream calls do not
// use environment proxies either.
func newJWKSTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: JWKSFetchTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   JWKSFetchTimeout,
		ResponseHeaderTimeout: JWKSFetchTimeout,
	}
}

// checkJWKSURL refuses a key source other than https, or plain http on a
// loopback host, unless allowInsecure: over plain http anyone on the path
// serves the keys. Catalog validation says the same; this holds it for a
// caller that builds a verifier from a catalog.Auth of its own.
func checkJWKSURL(raw string, allowInsecure bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("auth.jwt.jwks_url: %w", err)
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("auth.jwt.jwks_url %q is not an absolute http(s) URL", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme != "http":
		return fmt.Errorf("auth.jwt.jwks_url %q: scheme %q; want https", raw, u.Scheme)
	case catalog.IsLoopbackHost(u.Hostname()) || allowInsecure:
		return nil
	}
	return fmt.Errorf("auth.jwt.jwks_url %q is plain http on a non-loopback host: anyone on the path could serve their own keys; use https (or set allow_insecure_jwks_url: true on a network you trust)", raw)
}

// current returns the key set in use.
func (s *jwksSource) current() *keySet { return s.keys.Load() }

// loop refreshes the set every refresh interval, or every minRefresh while
// it holds no key, until close.
func (s *jwksSource) loop() {
	defer s.wg.Done()
	t := time.NewTimer(s.nextDelay())
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.update(s.ctx, false)
		t.Reset(s.nextDelay())
	}
}

func (s *jwksSource) nextDelay() time.Duration {
	if len(s.current().keys) == 0 {
		return s.minRefresh
	}
	return s.refresh
}

// update fetches the key set and returns the set in use afterwards. When
// a fetch is already running it waits for that one instead of starting
// another; when limited, it starts none if the last one began less than
// minRefresh ago. The fetch runs on the source's context, not ctx, so a
// caller that gives up does not cancel it for the others; ctx only bounds
// the wait.
func (s *jwksSource) update(ctx context.Context, limited bool) *keySet {
	s.mu.Lock()
	done := s.inflight
	if done == nil {
		if s.closed || (limited && s.now().Before(s.lastAttempt.Add(s.minRefresh))) {
			s.mu.Unlock()
			return s.current()
		}
		done = make(chan struct{})
		s.inflight = done
		s.lastAttempt = s.now()
		s.wg.Add(1)
		go s.run(done)
	}
	s.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return s.current()
}

// run performs one fetch and installs its result.
func (s *jwksSource) run(done chan struct{}) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, JWKSFetchTimeout)
	set, err := s.fetch(ctx)
	cancel()
	if err != nil {
		s.logger.Error("jwks refresh failed; keeping the last good key set", "url", s.url, "error", err)
	} else {
		s.install(set)
	}
	s.mu.Lock()
	s.inflight = nil
	s.mu.Unlock()
	close(done)
}

// install makes set current unless it equals the current set, in which
// case the generation (and so the token cache) is kept.
func (s *jwksSource) install(set *keySet) {
	cur := s.current()
	if cur.sum == set.sum && len(cur.keys) > 0 {
		return
	}
	set.gen = cur.gen + 1
	s.keys.Store(set)
	kids := make([]string, len(set.keys))
	for i, k := range set.keys {
		kids[i] = k.kid
	}
	s.logger.Info("jwks key set changed", "url", s.url, "keys", len(set.keys), "kids", kids)
}

// fetch gets and parses the key set. Only the fetch counter and the
// immutable configuration are touched, so fetches need no lock.
func (s *jwksSource) fetch(ctx context.Context) (set *keySet, err error) {
	s.fetches.Add(1)
	defer func() { s.onFetch(err == nil) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		var ne net.Error
		if s.ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
			return nil, fmt.Errorf("GET %s: no answer within %s", s.url, JWKSFetchTimeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", s.url, resp.StatusCode)
	}
	// Read one byte past the cap to tell a document at the cap from one over it.
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading body: %w", s.url, err)
	}
	if len(body) > MaxJWKSBytes {
		return nil, fmt.Errorf("GET %s: key set over %d bytes", s.url, MaxJWKSBytes)
	}
	set, skipped, err := parseJWKS(body, s.algs)
	for _, msg := range skipped {
		s.logger.Debug("jwks key skipped", "url", s.url, "reason", msg)
	}
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", s.url, err)
	}
	return set, nil
}

// close stops the refresh loop and waits for any running fetch. It is
// idempotent. The last key set stays in use.
func (s *jwksSource) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	if s.ownClient {
		s.client.CloseIdleConnections()
	}
}

// rawJWK holds the members of RFC 7517 §4 and RFC 7518 §6 we read.
type rawJWK struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Alg    string   `json:"alg"`
	Use    string   `json:"use"`
	KeyOps []string `json:"key_ops"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	Crv    string   `json:"crv"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
}

// parseJWKS parses a JWK Set (RFC 7517 §5). Keys we cannot use (another
// kty or curve, "use" other than "sig", an "alg" outside algs, a weak RSA
// modulus, a point off its curve) are skipped and described in skipped;
// a document that is not a key set, or holds no usable key, is an error.
func parseJWKS(body []byte, algs []string) (set *keySet, skipped []string, err error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, nil, fmt.Errorf("malformed key set: %w", err)
	}
	set = &keySet{}
	h := sha256.New()
	for i, raw := range doc.Keys {
		k, err := parseJWK(raw, algs)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		der, err := x509.MarshalPKIXPublicKey(k.key)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		set.keys = append(set.keys, k)
		// Length-prefixed fields, so no two sets share a fingerprint by
		// shifting bytes between kid, alg and key.
		for _, b := range [][]byte{[]byte(k.kid), []byte(k.alg), der} {
			fmt.Fprintf(h, "%d:", len(b))
			h.Write(b)
		}
	}
	if len(set.keys) == 0 {
		return nil, skipped, fmt.Errorf("no usable key among %d", len(doc.Keys))
	}
	h.Sum(set.sum[:0])
	return set, skipped, nil
}

func parseJWK(raw json.RawMessage, algs []string) (jwk, error) {
	var r rawJWK
	if err := json.Unmarshal(raw, &r); err != nil {
		return jwk{}, err
	}
	if r.Use != "" && r.Use != "sig" {
		return jwk{}, fmt.Errorf("use %q is not sig", r.Use)
	}
	if r.KeyOps != nil && !slices.Contains(r.KeyOps, "verify") {
		return jwk{}, errors.New("key_ops does not include verify")
	}
	if r.Alg != "" && !slices.Contains(algs, r.Alg) {
		return jwk{}, fmt.Errorf("alg %q is not configured", r.Alg)
	}
	var key crypto.PublicKey
	var err error
	switch r.Kty {
	case "RSA":
		key, err = parseRSAJWK(r)
	case "EC":
		key, err = parseECJWK(r)
	case "OKP":
		key, err = parseOKPJWK(r)
	default:
		err = fmt.Errorf("unsupported kty %q", r.Kty)
	}
	if err != nil {
		return jwk{}, err
	}
	return jwk{kid: r.Kid, alg: r.Alg, key: key}, nil
}

// b64 decodes a base64url member. RFC 7515 §2 omits padding; we tolerate
// it, since the document comes from the configured source anyway.
func b64(name, s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", name, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("member %q is empty", name)
	}
	return b, nil
}

func parseRSAJWK(r rawJWK) (*rsa.PublicKey, error) {
	nb, err := b64("n", r.N)
	if err != nil {
		return nil, err
	}
	eb, err := b64("e", r.E)
	if err != nil {
		return nil, err
	}
	n := new(big.Int).SetBytes(nb)
	if bits := n.BitLen(); bits < minRSABits || bits > maxRSABits {
		return nil, fmt.Errorf("RSA modulus of %d bits; want %d to %d", bits, minRSABits, maxRSABits)
	}
	e := new(big.Int).SetBytes(eb)
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, errors.New("RSA exponent must be odd, at least 3 and below 2^31")
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func parseECJWK(r rawJWK) (*ecdsa.PublicKey, error) {
	var curve elliptic.Curve
	switch r.Crv {
	case "P-256":
		curve = elliptic.P256()
	case "P-384":
		curve = elliptic.P384()
	case "P-521":
		curve = elliptic.P521()
	default:
		return nil, fmt.Errorf("unsupported EC curve %q", r.Crv)
	}
	size := (curve.Params().BitSize + 7) / 8
	x, err := b64("x", r.X)
	if err != nil {
		return nil, err
	}
	y, err := b64("y", r.Y)
	if err != nil {
		return nil, err
	}
	// RFC 7518 §6.2.1.2: coordinates are the full size of the field.
	if len(x) != size || len(y) != size {
		return nil, fmt.Errorf("%s coordinates must be %d bytes", r.Crv, size)
	}
	point := make([]byte, 0, 1+2*size)
	point = append(point, 4)
	point = append(append(point, x...), y...)
	// ParseUncompressedPublicKey refuses a point off the curve (invalid
	// curve attacks) and the point at infinity.
	k, err := ecdsa.ParseUncompressedPublicKey(curve, point)
	if err != nil {
		return nil, fmt.Errorf("%s point: %w", r.Crv, err)
	}
	return k, nil
}

func parseOKPJWK(r rawJWK) (ed25519.PublicKey, error) {
	if r.Crv != "Ed25519" {
		return nil, fmt.Errorf("unsupported OKP curve %q", r.Crv)
	}
	x, err := b64("x", r.X)
	if err != nil {
		return nil, err
	}
	if len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("Ed25519 key must be %d bytes", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(bytes.Clone(x)), nil
}

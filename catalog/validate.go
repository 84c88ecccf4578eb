package catalog

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// validate checks the whole defaulted catalog and compiles what later
// requests need (input schemas, templates). It is pure: no network, no
// files, no environment. Every problem names its position, the thing at
// fault in quotes and the rule:
//
//	catalog.yaml:41:13: tool "cancel_job": placeholder {job_id} names no argument
func validate(c *Catalog, p *problems, pos map[string]Pos, lookup func(string) (string, bool)) {
	v := &checker{c: c, p: p, pos: pos, lookup: lookup}
	v.top()
	v.server()
	v.auth()
	v.gates()
	v.sensitiveData()
	v.upstreams()
	v.tenantless()
	v.prerequisites()
	v.tools()
	v.toolsets()
	v.discovery()
	v.limits()
	v.audit()
	v.approvalPage()
	v.approvalSettings()
}

func (v *checker) audit() {
	a := &v.c.Audit
	if a.MaxArgumentBytes <= 0 {
		v.add(a.At("max_argument_bytes"), "audit", "max_argument_bytes must be greater than 0")
	}
}

type checker struct {
	c   *Catalog
	p   *problems
	pos map[string]Pos
	// lookup reads the environment variables that credentials name.
	lookup func(string) (string, bool)
}

// add reports a problem about subject ("tool \"x\"", "server", ...).
func (v *checker) add(p Pos, subject, format string, args ...any) {
	v.p.add(p, "%s: %s", subject, fmt.Sprintf(format, args...))
}

// first returns the first known position.
func first(ps ...Pos) Pos {
	for _, p := range ps {
		if p != (Pos{}) {
			return p
		}
	}
	return Pos{}
}

// at is the position of key's value in m, of m itself when key is absent,
// or of the enclosing key when m was not written at all.
func at(m Meta, key string, outer Pos) Pos { return first(m.At(key), outer) }

var (
	mcpName         = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	portableMCPName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

	httpMethods  = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	asymmetric   = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
	hmacAlgs     = []string{"HS256", "HS384", "HS512"}
	framingHeads = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection"}

	// HopByHopHeaders are the connection's, not the request's (RFC 9110
	// section 7.6.1): an argument must never fill one.
	HopByHopHeaders = []string{"Keep-Alive", "Te", "Trailer", "Upgrade", "Proxy-Connection", "Expect"}
)

func (v *checker) top() {
	c := v.c
	switch {
	case !c.Has("version"):
		v.p.add(c.Pos, "missing required key %q (write version: 1)", "version")
	case c.Version != 1:
		v.p.add(c.At("version"), "version: unsupported catalog version %d; this gateway reads version 1", c.Version)
	}
	for _, key := range []string{"server", "auth", "upstreams", "tools"} {
		if !c.Has(key) {
			v.p.add(c.Pos, "missing required key %q", key)
		}
	}
	if c.Has("upstreams") && len(c.Upstreams) == 0 {
		v.p.add(c.At("upstreams"), "upstreams: declare at least one upstream")
	}
	if c.Has("tools") && len(c.Tools) == 0 {
		v.p.add(c.At("tools"), "tools: declare at least one tool")
	}
}

func (v *checker) server() {
	s := &v.c.Server
	if !v.c.Has("server") {
		return // reported by top
	}
	if strings.TrimSpace(s.Name) == "" {
		v.add(s.At("name"), "server", "name is required")
	}
	if _, port, err := net.SplitHostPort(s.Listen); err != nil || !validPort(port) {
		v.add(s.At("listen"), "server", "listen %q must be host:port, like 127.0.0.1:8080 or :8080", s.Listen)
	}
	if msg := mountPathRule(s.MCPPath); msg != "" {
		v.add(s.At("mcp_path"), "server", "mcp_path %q %s", s.MCPPath, msg)
	}
	if s.AdminPath != "" {
		if msg := mountPathRule(s.AdminPath); msg != "" {
			v.add(s.At("admin_path"), "server", "admin_path %q %s (write \"\" to disable the REST surface)", s.AdminPath, msg)
		} else if s.AdminPath == s.MCPPath {
			v.add(s.At("admin_path"), "server", "admin_path %q is the same as mcp_path", s.AdminPath)
		}
	}
	for i, o := range s.AllowedOrigins {
		if msg := originRule(o); msg != "" {
			v.add(first(v.pos[childIndex("server.allowed_origins", i)], s.At("allowed_origins")), "server", "allowed_origins entry %q %s", o, msg)
		}
	}
	if s.PublicURL != "" {
		if msg := httpURLRule(s.PublicURL); msg != "" {
			v.add(s.At("public_url"), "server", "public_url %s", msg)
		}
	}
	for i, h := range s.AllowedHosts {
		if msg := hostRule(h); msg != "" {
			v.add(first(v.pos[childIndex("server.allowed_hosts", i)], s.At("allowed_hosts")), "server", "allowed_hosts entry %q %s", h, msg)
		}
	}
	if t := s.TLS; t != nil {
		if t.CertFile == "" {
			v.add(at(t.Meta, "cert_file", s.At("tls")), "server", "tls.cert_file is required")
		}
		if t.KeyFile == "" {
			v.add(at(t.Meta, "key_file", s.At("tls")), "server", "tls.key_file is required")
		}
	}
}

// hostRule says what keeps h from being a Host header value: a host name
// or IP address, with an optional port, nothing else.
func hostRule(h string) string {
	const want = "must be a host name or address with an optional port, like mcp.example.com or mcp.example.com:8443"
	if strings.ContainsAny(h, "/?#@") {
		return want
	}
	host, port := h, ""
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return "must write an IPv6 address in brackets, like [::1] (the form a Host header carries)"
		}
	}
	if hp, pp, err := net.SplitHostPort(h); err == nil {
		host, port = hp, pp
		if !validPort(port) {
			return "has an invalid port"
		}
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" || strings.ContainsAny(host, " \t\r\n\x00[]") {
		return want
	}
	return ""
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535
}

// mountPathRule says what is wrong with an HTTP mount path, or "".
func mountPathRule(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "must start with /"
	case p == "/":
		return "must not be / alone (the gateway needs the rest of the tree)"
	case strings.ContainsAny(p, "?# \t\r\n\x00"):
		return "must be a plain path, without query, fragment or spaces"
	}
	return ""
}

// originRule says what keeps o from being a scheme://host[:port] origin.
func originRule(o string) string {
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return "must be an origin: scheme://host[:port], http or https, with nothing after"
	}
	if p := u.Port(); p != "" && !validPort(p) {
		return "has an invalid port"
	}
	return ""
}

// httpURLRule says what keeps s from being an absolute http(s) URL with a
// host and no query or fragment, or "".
func httpURLRule(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "is required"
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an absolute http:// or https:// URL"
	case u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not hold credentials (set them under headers)"
	case strings.Contains(s, "@"):
		// "http://app:1234/5@host" parses as host "app", port 1234 and
		// a path: a password that holds "/" must not make a URL that
		// sends the request elsewhere and the rest of it along.
		return `must not hold credentials or an "@" (set credentials under headers; write "@" in a path as %40)`
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "must not hold a query or fragment"
	}
	return ""
}

func (v *checker) auth() {
	a := &v.c.Auth
	if !v.c.Has("auth") {
		return // reported by top
	}
	outer := v.c.At("auth")
	switch {
	case a.JWT == nil && a.APIKeysFile == "" && a.OAuthServer == nil:
		v.add(outer, "auth", "set exactly one verifier: jwt or api_keys_file")
	case a.JWT != nil && a.APIKeysFile != "":
		v.add(a.At("api_keys_file"), "auth", "set exactly one verifier: jwt or api_keys_file, not both")
	}
	if j := a.JWT; j != nil {
		v.jwt(j)
	}
	v.oauthServer()

	if a.MaxTokenLifetime < 0 {
		v.add(a.At("max_token_lifetime"), "auth", "max_token_lifetime must not be negative (0 or absent: no ceiling)")
	}

	pr := &a.Principal
	if _, err := regexp.Compile(pr.WorkspacePattern); err != nil {
		v.add(at(pr.Meta, "workspace_pattern", outer), "auth.principal", "workspace_pattern: %v", err)
	}

	if rm := a.ResourceMetadata; rm != nil {
		if msg := httpURLRule(rm.Resource); msg != "" {
			v.add(at(rm.Meta, "resource", outer), "auth.resource_metadata", "resource %s", msg)
		}
		for i, s := range rm.AuthorizationServers {
			if msg := httpURLRule(s); msg != "" {
				v.add(first(v.pos[childIndex("auth.resource_metadata.authorization_servers", i)], rm.Pos), "auth.resource_metadata", "authorization server %q %s", s, msg)
			}
		}
	}
}

func (v *checker) jwt(j *JWT) {
	const subj = "auth.jwt"
	n := 0
	for _, s := range []string{j.JWKSURL, j.PublicKeyFile, j.HMACSecretEnv} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		v.add(j.Pos, subj, "set exactly one key source: jwks_url, public_key_file or hmac_secret_env")
	}
	if j.JWKSURL != "" {
		if msg := httpURLRule(j.JWKSURL); msg != "" {
			v.add(j.At("jwks_url"), subj, "jwks_url %s", msg)
		} else if u, _ := url.Parse(j.JWKSURL); u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) && !j.AllowInsecureJWKS {
			v.add(j.At("jwks_url"), subj, "jwks_url %q is plain http on a non-loopback host: anyone on the path could serve their own keys; use https (or set allow_insecure_jwks_url: true on a network you trust)", j.JWKSURL)
		}
	}
	if j.StartDeadline <= 0 {
		v.add(j.At("start_deadline"), subj, "start_deadline must be greater than 0")
	}
	if j.HMACSecretEnv != "" && !validEnvName(j.HMACSecretEnv) {
		v.add(j.At("hmac_secret_env"), subj, "hmac_secret_env %q must name an environment variable (it holds the secret, it is not the secret)", clip(j.HMACSecretEnv))
	}

	var hs, asym []string
	for i, alg := range j.Algorithms {
		p := first(v.pos[childIndex("auth.jwt.algorithms", i)], j.At("algorithms"))
		switch {
		case strings.EqualFold(alg, "none"):
			v.add(p, subj, "algorithm %q is never accepted", alg)
		case slices.Contains(hmacAlgs, alg):
			hs = append(hs, alg)
		case slices.Contains(asymmetric, alg):
			asym = append(asym, alg)
		default:
			v.add(p, subj, "unknown algorithm %q; want one of %s", alg, strings.Join(append(slices.Clone(asymmetric), hmacAlgs...), " "))
		}
	}
	algAt := j.At("algorithms")
	switch {
	case len(j.Algorithms) == 0:
		v.add(algAt, subj, "algorithms is required: the allowlist of signing algorithms, like [RS256]")
	case len(hs) > 0 && len(asym) > 0:
		v.add(algAt, subj, "algorithms mix HMAC (%s) and asymmetric (%s) algorithms; a key source verifies one kind", strings.Join(hs, " "), strings.Join(asym, " "))
	case len(hs) > 0 && j.HMACSecretEnv == "" && n == 1:
		v.add(algAt, subj, "algorithm %s needs hmac_secret_env", hs[0])
	case len(asym) > 0 && j.HMACSecretEnv != "" && n == 1:
		v.add(algAt, subj, "algorithm %s cannot be verified with hmac_secret_env; use HS256, HS384 or HS512", asym[0])
	}
	if strings.TrimSpace(j.Issuer) == "" {
		v.add(j.At("issuer"), subj, "issuer is required")
	}
	if strings.TrimSpace(j.Audience) == "" {
		v.add(j.At("audience"), subj, "audience is required")
	}
	if j.Leeway > DefaultMaxLeeway {
		v.add(j.At("leeway"), subj, "leeway %s is over the %s ceiling", j.Leeway, DefaultMaxLeeway)
	}
}

// IsLoopbackHost reports whether host (a name or an IP, without port or
// brackets) is localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (v *checker) gates() {
	for _, name := range slices.Sorted(maps.Keys(v.c.Gates)) {
		g := v.c.Gates[name]
		subj := fmt.Sprintf("gate %q", name)
		if name == "" {
			v.add(g.Pos, subj, "gate names must not be empty")
		}
		if len(g.Scopes) == 0 {
			v.add(first(g.At("scopes"), v.pos[childKey("gates", name)]), subj, "scopes must list at least one scope")
		}
		for i, s := range g.Scopes {
			if s == "" || strings.ContainsAny(s, " \t\r\n") {
				v.add(first(v.pos[childIndex(childKey("gates", name)+".scopes", i)], g.Pos), subj, "scope %q must be a non-empty token without spaces", s)
			}
		}
		if g.OnDeny != "" && g.OnDeny != "challenge" {
			v.add(g.At("on_deny"), subj, "on_deny %q must be \"challenge\" or absent", g.OnDeny)
		}
	}
}

// gateRef checks a reference to a gate. "view" needs no declaration: when
// undeclared it allows every authenticated caller.
func (v *checker) gateRef(name string, p Pos, subj string) {
	if _, ok := v.c.Gates[name]; ok || name == ViewGate {
		return
	}
	v.add(p, subj, "gate %q is not declared under gates%s", name, didYouMean(name, slices.Collect(maps.Keys(v.c.Gates))))
}

func didYouMean(s string, candidates []string) string {
	slices.Sort(candidates)
	if m := suggest(s, candidates); m != "" {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

func (v *checker) sensitiveData() {
	sd := &v.c.SensitiveData
	if sd.Gate != "" {
		v.gateRef(sd.Gate, sd.At("gate"), "sensitive_data")
	}
	if !validEnvName(sd.KillSwitchEnv) {
		v.add(sd.At("kill_switch_env"), "sensitive_data", "kill_switch_env %q must name an environment variable", clip(sd.KillSwitchEnv))
	}
}

// tenantless marks the catalog tenantless when every upstream declares
// workspace: none: its tokens need no workspace claim. A tool
// or probe using {workspace} against such an upstream is refused
// elsewhere, so nothing in a tenantless catalog reads the workspace.
func (v *checker) tenantless() {
	if len(v.c.Upstreams) == 0 {
		return
	}
	for _, u := range v.c.Upstreams {
		if u.Workspace == nil || !u.Workspace.None {
			return
		}
	}
	v.c.Auth.Principal.WorkspaceOptional = true
}

func (v *checker) upstreams() {
	for _, name := range slices.Sorted(maps.Keys(v.c.Upstreams)) {
		u := v.c.Upstreams[name]
		subj := fmt.Sprintf("upstream %q", name)
		path := childKey("upstreams", name)
		if name == "" {
			v.add(u.Pos, subj, "upstream names must not be empty")
		}
		if msg := httpURLRule(u.BaseURL); msg != "" {
			v.add(at(u.Meta, "base_url", v.pos[path]), subj, "base_url %s", msg)
		}
		v.headers(u.Headers, path+".headers", u.At("headers"), subj)
		if w := u.Workspace; w != nil && !w.None {
			switch {
			case (w.Header == "") == (w.Query == ""):
				v.add(w.Pos, subj, "workspace binding needs exactly one of header or query")
			case w.Header != "" && !ValidHeaderName(w.Header):
				v.add(w.At("header"), subj, "workspace header %q is not a valid header name", w.Header)
			}
		}
		if u.ActorHeader != "" && !ValidHeaderName(u.ActorHeader) {
			v.add(u.At("actor_header"), subj, "actor_header %q is not a valid header name", u.ActorHeader)
		}
		// The gateway sets these per call: a fixed value under headers
		// would name another tenant, or someone else as the actor on
		// every read.
		for _, h := range slices.Sorted(maps.Keys(u.Headers)) {
			if what := callerHeader(u, h); what != "" {
				v.add(first(v.pos[childKey(path+".headers", h)], u.At("headers")), subj,
					"header %s is %s, which the gateway sets from the caller: it cannot have a fixed value", http.CanonicalHeaderKey(h), what)
			}
		}
		if u.Timeout <= 0 {
			v.add(u.At("timeout"), subj, "timeout must be greater than 0")
		}
		if u.MaxResponseBytes <= 0 {
			v.add(u.At("max_response_bytes"), subj, "max_response_bytes must be greater than 0")
		}
		if u.MaxConcurrent < 0 {
			v.add(u.At("max_concurrent"), subj, "max_concurrent must not be negative (0: no cap)")
		}
		switch n := u.MaxConcurrentPerWorkspace; {
		case n < 0:
			v.add(u.At("max_concurrent_per_workspace"), subj, "max_concurrent_per_workspace must not be negative (0: no cap)")
		case n > 0 && u.MaxConcurrent > 0 && n > u.MaxConcurrent:
			v.add(u.At("max_concurrent_per_workspace"), subj, "max_concurrent_per_workspace %d is over max_concurrent %d", n, u.MaxConcurrent)
		}
		if !ValidHeaderName(u.IdempotencyHeader) {
			v.add(u.At("idempotency_header"), subj, "idempotency_header %q is not a valid header name", u.IdempotencyHeader)
		}
		if u.ErrorDetail != ErrorDetailMessage && u.ErrorDetail != ErrorDetailStatus {
			v.add(u.At("error_detail"), subj, "error_detail %q must be message or status", u.ErrorDetail)
		}
		v.credentials(name, u, subj)
		v.upstreamAuth(name, u, subj)
	}
}

// callerHeader names what header h of upstream u carries from the
// caller, which nothing else may set: the workspace binding's header
// (from the token) or the actor_header (the actor, on writes); "" for
// any other.
func callerHeader(u *Upstream, h string) string {
	switch {
	case u.Workspace != nil && u.Workspace.Header != "" && strings.EqualFold(u.Workspace.Header, h):
		return "the workspace binding's header"
	case u.ActorHeader != "" && strings.EqualFold(u.ActorHeader, h):
		return "the actor_header"
	}
	return ""
}

// headers checks literal header names and values (an upstream's own
// headers): valid names, no control character in values, no name twice.
func (v *checker) headers(h map[string]string, path string, outer Pos, subj string) {
	seen := map[string]string{}
	for _, name := range v.inFileOrder(h, path) {
		p := first(v.pos[childKey(path, name)], outer)
		v.headerName(name, p, subj, seen)
		if !validHeaderValue(h[name]) {
			v.add(p, subj, "header %s: %s", name, headerValueRule)
		}
	}
}

// inFileOrder returns the keys of the mapping at path in the order they
// were written, so that a repeat is reported at the second one.
func (v *checker) inFileOrder(m map[string]string, path string) []string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int {
		pa, pb := v.pos[childKey(path, a)], v.pos[childKey(path, b)]
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Column, pb.Column))
	})
	return keys
}

// headerName checks one header name; seen maps canonical names to the
// names already checked.
func (v *checker) headerName(name string, p Pos, subj string, seen map[string]string) {
	canon := http.CanonicalHeaderKey(name)
	switch {
	case !ValidHeaderName(name):
		v.add(p, subj, "header name %q is not a valid token", name)
	case slices.Contains(framingHeads, canon):
		v.add(p, subj, "header %s is set by the gateway's HTTP client and cannot be configured", canon)
	case seen[canon] != "":
		v.add(p, subj, "header %q repeats %q (header names are case-insensitive)", name, seen[canon])
		return
	}
	seen[canon] = name
}

// headerValueRule is what validHeaderValue refuses.
const headerValueRule = "value must not contain control characters (CR, LF, NUL and the others; tab is allowed)"

// validHeaderValue reports whether v may be sent as a header value: no
// control character (0x00-0x1F, 0x7F) but tab, net/http's rule. CR, LF and
// NUL could split headers; any of them makes the transport refuse every
// request to the upstream.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// ValidHeaderName reports whether s is an RFC 9110 token, as a header
// name must be.
func ValidHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func (v *checker) prerequisites() {
	for _, name := range slices.Sorted(maps.Keys(v.c.Prerequisites)) {
		pq := v.c.Prerequisites[name]
		subj := fmt.Sprintf("prerequisite %q", name)
		if (pq.Probe == nil) == (pq.Claim == "") {
			v.add(pq.Pos, subj, "set exactly one of probe or claim")
		}
		pr := pq.Probe
		if pr == nil {
			continue
		}
		switch _, ok := v.c.Upstreams[pr.Upstream]; {
		case pr.Upstream == "":
			v.add(pr.Pos, subj, "probe.upstream is required")
		case !ok:
			v.add(pr.At("upstream"), subj, "probe upstream %q is not declared under upstreams", pr.Upstream)
		case v.c.Upstreams[pr.Upstream].Auth != nil && v.c.Upstreams[pr.Upstream].Auth.Type == AuthTokenExchange:
			// A probe asks on behalf of a workspace, not a person: there is
			// no subject to exchange, and a token for a made-up one would
			// answer for nobody.
			v.add(pr.At("upstream"), subj, "probe upstream %q authenticates with token_exchange, which needs a person, and a probe runs for a workspace; probe an upstream with client_credentials or headers, or use a claim", pr.Upstream)
		}
		if !slices.Contains(httpMethods, pr.Method) {
			v.add(pr.At("method"), subj, "probe method %q must be one of %s", pr.Method, strings.Join(httpMethods, " "))
		}
		if pr.Cache <= 0 {
			v.add(pr.At("cache"), subj, "probe cache must be greater than 0 (omit it for the default %s)", DefaultProbeCache.D())
		}
		pathAt := pr.At("path")
		if !strings.HasPrefix(pr.Path, "/") {
			v.add(pathAt, subj, "probe path %q must start with /", pr.Path)
			continue
		}
		t, err := ParseTemplate(pr.Path)
		if err != nil {
			v.add(pathAt, subj, "probe path: %v", err)
			continue
		}
		for _, n := range t.Names() {
			if n != ReservedWorkspace {
				v.add(pathAt, subj, "probe path placeholder {%s}: a probe knows only {workspace}", n)
			} else if u := v.c.Upstreams[pr.Upstream]; u != nil && u.Workspace != nil && u.Workspace.None {
				v.add(pathAt, subj, "probe path placeholder {workspace}: upstream %q declares workspace: none", pr.Upstream)
			}
		}
		for _, tr := range t.Times() {
			v.add(pathAt, subj, "probe path placeholder {%s}: a probe knows only {workspace}", tr.Name)
		}
		if msg := pathRule(t); msg != "" {
			v.add(pathAt, subj, "probe path %s", msg)
		}
		pr.PathTemplate = t
	}
}

func (v *checker) limits() {
	l := &v.c.Limits
	outer := v.c.At("limits")
	const subj = "limits"
	for _, s := range []struct {
		key  string
		size Size
	}{
		{"structured_bytes", l.StructuredBytes}, {"text_bytes", l.TextBytes},
		{"inline_bytes", l.InlineBytes}, {"request_bytes", l.RequestBytes},
	} {
		if s.size <= 0 {
			v.add(at(l.Meta, s.key, outer), subj, "%s must be greater than 0", s.key)
		}
	}
	ps := &l.PageSize
	if ps.Max < 1 {
		v.add(at(ps.Meta, "max", outer), subj, "page_size.max must be at least 1")
	} else if ps.Default < 1 || ps.Default > ps.Max {
		v.add(at(ps.Meta, "default", outer), subj, "page_size.default %d must be between 1 and page_size.max (%d)", ps.Default, ps.Max)
	}
	if l.MaxInFlight < 1 {
		v.add(at(l.Meta, "max_in_flight", outer), subj, "max_in_flight must be at least 1")
	}
	v.limitRules()
	r := l.Rate
	if r == nil {
		return
	}
	if r.PerPrincipal != nil {
		v.bucket(r.PerPrincipal, "limits.rate.per_principal")
	}
	names := map[string]bool{}
	for _, t := range v.c.Tools {
		names[t.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(r.PerTool)) {
		path := childKey("limits.rate.per_tool", name)
		if !names[name] {
			v.add(v.pos[path], subj, "rate.per_tool names tool %q, which is not declared", name)
		}
		v.bucket(r.PerTool[name], path)
	}
}

// limitNamePattern bounds a rule's name: it is a metric label value and
// a key in Redis.
var limitNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// limitRules checks limits.rules: each rule named once, keyed by known
// dimensions, matching declared tools and upstreams, and limiting
// something.
func (v *checker) limitRules() {
	tools := map[string]bool{}
	for _, t := range v.c.Tools {
		tools[t.Name] = true
	}
	seen := map[string]bool{}
	for i, r := range v.c.Limits.Rules {
		path := childIndex("limits.rules", i)
		subj := path
		if r == nil {
			v.add(v.pos[path], subj, "a rule must be a mapping with name and rate or quota")
			continue
		}
		outer := first(r.Pos, v.pos[path])
		switch {
		case r.Name == "":
			v.add(outer, subj, "name is required")
		case !limitNamePattern.MatchString(r.Name):
			v.add(r.At("name"), subj, "name %q must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", r.Name)
		case r.Name == "principal" || r.Name == "tool":
			v.add(r.At("name"), subj, "name %q is taken by limits.rate's per_principal and per_tool; choose another", r.Name)
		case seen[r.Name]:
			v.add(r.At("name"), subj, "name %q is used by another rule", r.Name)
		default:
			subj = fmt.Sprintf("limits rule %q", r.Name)
		}
		seen[r.Name] = true
		dims := map[string]bool{}
		for j, d := range r.Per {
			p := first(v.pos[childIndex(path+".per", j)], r.At("per"))
			switch {
			case d != DimWorkspace && d != DimSubject && d != DimTool && d != DimUpstream:
				v.add(p, subj, "per names %q; the dimensions are workspace, subject, tool and upstream", d)
			case dims[d]:
				v.add(p, subj, "per names %q twice", d)
			}
			dims[d] = true
		}
		m := &r.Match
		for j, name := range m.Tool {
			if !tools[name] && name != SearchToolsName {
				v.add(first(v.pos[childIndex(path+".match.tool", j)], m.At("tool")), subj, "match.tool names tool %q, which is not declared", name)
			}
		}
		for j, name := range m.Upstream {
			if v.c.Upstreams[name] == nil {
				v.add(first(v.pos[childIndex(path+".match.upstream", j)], m.At("upstream")), subj, "match.upstream names upstream %q, which is not declared", name)
			}
		}
		for _, f := range []struct {
			key  string
			vals []string
		}{{"workspace", m.Workspace}, {"subject", m.Subject}, {"tool", m.Tool}, {"upstream", m.Upstream}} {
			if m.Has(f.key) && len(f.vals) == 0 {
				v.add(m.At(f.key), subj, "match.%s is empty, so the rule would match no call; leave it out to match every %s", f.key, f.key)
			}
			for _, s := range f.vals {
				if s == "" {
					v.add(m.At(f.key), subj, "match.%s holds an empty string", f.key)
				}
			}
		}
		if r.Rate == nil && r.Quota == nil {
			v.add(outer, subj, "a rule needs rate or quota (or both)")
		}
		if r.Rate != nil {
			if r.Rate.RPS <= 0 {
				v.add(at(r.Rate.Meta, "rps", r.At("rate")), subj, "rate.rps must be greater than 0")
			}
			if r.Rate.Burst < 1 && r.Rate.Has("burst") {
				v.add(at(r.Rate.Meta, "burst", r.At("rate")), subj, "rate.burst must be at least 1")
			}
		}
		if r.Quota != nil && r.Quota.PerDay < 1 {
			v.add(at(r.Quota.Meta, "per_day", r.At("quota")), subj, "quota.per_day must be at least 1")
		}
	}
}

func (v *checker) bucket(b *Bucket, subj string) {
	if b.RPS <= 0 {
		v.add(at(b.Meta, "rps", v.pos[subj]), subj, "rps must be greater than 0")
	}
	if b.Burst < 1 {
		v.add(at(b.Meta, "burst", v.pos[subj]), subj, "burst must be at least 1")
	}
}

func (v *checker) tools() {
	checkSchemasInParallel(v.c.Tools)
	firstAt := map[string]Pos{}
	for i, t := range v.c.Tools {
		v.tool(i, t, firstAt)
	}
}

// toolCheck is the state of checking one tool.
type toolCheck struct {
	*checker
	t        *Tool
	path     string // "tools[3]"
	subj     string // `tool "name"`
	props    map[string]bool
	req      map[string]bool
	strProps map[string]bool // properties with type: string
	// noWorkspace is set when the tool's upstream declares workspace: none.
	noWorkspace bool
}

func (v *checker) tool(i int, t *Tool, firstAt map[string]Pos) {
	path := childIndex("tools", i)
	tc := &toolCheck{checker: v, t: t, path: path, subj: fmt.Sprintf("tool %q", t.Name)}
	outer := first(t.Pos, v.pos[path])

	switch prev, dup := firstAt[t.Name]; {
	case t.Name == "":
		tc.subj = path
		v.add(outer, path, "name is required")
	case dup:
		// The first one's line, or FILE:LINE:COL when it is in another
		// file (a fragment).
		there := where(v.p, prev)
		pf, pp := v.p.locate(prev)
		if f, _ := v.p.locate(t.At("name")); f == pf {
			there = fmt.Sprintf("line %d", pp.Line)
		}
		v.add(t.At("name"), tc.subj, "duplicate tool name (first at %s)", there)
	case !mcpName.MatchString(t.Name):
		v.add(t.At("name"), tc.subj, "name must match [A-Za-z0-9_.-]{1,128} (the MCP tool name rule)")
	case !portableMCPName.MatchString(t.Name):
		v.p.warn(t.At("name"), "%s: name is outside [A-Za-z0-9_-]{1,64}, which some MCP clients refuse", tc.subj)
	}
	if _, dup := firstAt[t.Name]; !dup && t.Name != "" {
		firstAt[t.Name] = t.At("name")
	}
	if strings.TrimSpace(t.Description) == "" {
		v.add(at(t.Meta, "description", outer), tc.subj, "description is required (it is what the model reads)")
	}

	switch t.Kind {
	case KindRead:
	case KindWrite:
		if t.Gate == ViewGate {
			v.add(first(t.Keys["gate"], t.At("kind")), tc.subj, "a write tool must name a gate other than %q", ViewGate)
		}
	default:
		v.add(t.At("kind"), tc.subj, "kind %q must be read or write", t.Kind)
	}
	v.gateRef(t.Gate, t.At("gate"), tc.subj)
	for j, r := range t.Requires {
		if _, ok := v.c.Prerequisites[r]; !ok {
			v.add(first(v.pos[childIndex(path+".requires", j)], t.At("requires")), tc.subj, "requires %q, which is not declared under prerequisites", r)
		}
	}

	tc.input()
	tc.request()
	tc.paging()
	tc.response()
	tc.approval()
	tc.tags()
	tc.output()
	tc.probe()
}

// input checks the input schema, compiles it, and notes the declared and
// required argument names for the templates.
func (tc *toolCheck) input() {
	t := tc.t
	base := tc.path + ".input"
	inputAt := first(tc.pos[base], t.Pos)
	tc.props, tc.req, tc.strProps = map[string]bool{}, map[string]bool{}, map[string]bool{}

	if typ, _ := t.Input["type"].(string); typ != "object" {
		tc.add(first(tc.pos[base+".type"], inputAt), tc.subj, "input must be a JSON Schema object with type: object at its root")
		return
	}
	props, _ := t.Input["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		tc.props[name] = true
		if name == ReservedWorkspace || name == ReservedActor {
			tc.add(first(tc.pos[childKey(base+".properties", name)], inputAt), tc.subj,
				"argument name %q is reserved: {%s} comes from the caller's token, never from arguments", name, name)
		}
		if reservedTimeName(name) {
			tc.add(first(tc.pos[childKey(base+".properties", name)], inputAt), tc.subj,
				"argument name %q is reserved: {now}, {now.unix} and {now+ARG} are computed times, never arguments", name)
		}
		if sub, _ := props[name].(map[string]any); sub != nil && sub["type"] == "string" {
			tc.strProps[name] = true
		}
	}
	req, _ := t.Input["required"].([]any)
	for j, r := range req {
		name, _ := r.(string)
		if !tc.props[name] {
			tc.add(first(tc.pos[childIndex(base+".required", j)], inputAt), tc.subj, "required argument %q is not declared under input.properties", r)
			continue
		}
		if !tc.req[name] {
			tc.req[name] = true
			t.Required = append(t.Required, name)
		}
	}

	if loc := findKeyword(t.Input, "x-mcp-header", nil); loc != nil {
		tc.add(first(tc.schemaPos(base, loc), inputAt), tc.subj,
			"input: x-mcp-header is not supported by this gateway (clients would send Mcp-Param-* headers it does not check); remove it")
	}

	s, js, errs := compileSchema(t.Input, "catalog:///"+tc.path+"/input.json")
	for _, e := range errs {
		tc.add(first(tc.schemaPos(base, e.loc), inputAt), tc.subj, "input: %s", e.msg)
	}
	if errs != nil {
		return
	}
	t.Schema, t.InputJSON = s, js

	defs, errs := propertyDefaults(t.Input, s)
	for _, e := range errs {
		tc.add(first(tc.schemaPos(base, e.loc), inputAt), tc.subj, "input: %s", e.msg)
	}
	t.Defaults = defs
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if tc.req[name] {
			tc.p.warn(first(tc.schemaPos(base, []string{"properties", name, "default"}), inputAt),
				"%s: argument %q is required, so its default is never used", tc.subj, name)
		}
	}
}

// findKeyword returns the location of the first object member named kw
// anywhere in a decoded schema, or nil.
func findKeyword(x any, kw string, loc []string) []string {
	switch x := x.(type) {
	case map[string]any:
		if _, ok := x[kw]; ok {
			return append(slices.Clip(loc), kw)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if l := findKeyword(x[k], kw, append(slices.Clip(loc), k)); l != nil {
				return l
			}
		}
	case []any:
		for i, e := range x {
			if l := findKeyword(e, kw, append(slices.Clip(loc), strconv.Itoa(i))); l != nil {
				return l
			}
		}
	}
	return nil
}

// schemaPos finds the position of a location inside the input schema,
// walking up to the nearest recorded ancestor.
func (tc *toolCheck) schemaPos(base string, loc []string) Pos {
	paths := []string{base}
	p := base
	for _, tok := range loc {
		if i, err := strconv.Atoi(tok); err == nil {
			if _, ok := tc.pos[childIndex(p, i)]; ok {
				p = childIndex(p, i)
				paths = append(paths, p)
				continue
			}
		}
		p = childKey(p, tok)
		paths = append(paths, p)
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if pos, ok := tc.pos[paths[i]]; ok {
			return pos
		}
	}
	return Pos{}
}

// placeholders checks that every placeholder of t names a declared
// argument or a reserved name.
func (tc *toolCheck) placeholders(t Template, p Pos) {
	for _, n := range t.Names() {
		tc.workspaceRef(n, p)
		if n != ReservedWorkspace && n != ReservedActor && !tc.props[n] {
			tc.add(p, tc.subj, "placeholder {%s} names no argument%s", n, didYouMean(n, slices.Collect(maps.Keys(tc.props))))
		}
	}
	tc.times(t, p)
}

// workspaceRef refuses {workspace} against an upstream without tenants.
func (tc *toolCheck) workspaceRef(n string, p Pos) {
	if n == ReservedWorkspace && tc.noWorkspace {
		tc.add(p, tc.subj, "placeholder {workspace}: upstream %q declares workspace: none, so there is no workspace to send", tc.t.Request.Upstream)
	}
}

// times checks the computed time placeholders of t (their duration
// argument must be a declared string) and notes them in Request.Times.
func (tc *toolCheck) times(t Template, p Pos) {
	r := &tc.t.Request
	for _, tr := range t.Times() {
		switch {
		case tr.Arg == "":
		case !tc.props[tr.Arg]:
			tc.add(p, tc.subj, "placeholder {%s}: %q names no argument%s", tr.Name, tr.Arg, didYouMean(tr.Arg, slices.Collect(maps.Keys(tc.props))))
		case !tc.strProps[tr.Arg]:
			tc.add(p, tc.subj, "placeholder {%s}: argument %q must have type: string (it holds a duration like 2h or 1d)", tr.Name, tr.Arg)
		}
		if !slices.ContainsFunc(r.Times, func(o TimeRef) bool { return o.Name == tr.Name }) {
			r.Times = append(r.Times, tr)
		}
	}
}

func (tc *toolCheck) request() {
	t, r := tc.t, &tc.t.Request
	base := tc.path + ".request"
	outer := first(tc.pos[base], t.Pos)

	if u := tc.c.Upstreams[r.Upstream]; u != nil && u.Workspace != nil && u.Workspace.None {
		tc.noWorkspace = true
	}
	switch _, ok := tc.c.Upstreams[r.Upstream]; {
	case r.Upstream == "":
		tc.add(at(r.Meta, "upstream", outer), tc.subj, "request.upstream is required")
	case !ok:
		tc.add(r.At("upstream"), tc.subj, "upstream %q is not declared under upstreams%s", r.Upstream, didYouMean(r.Upstream, slices.Collect(maps.Keys(tc.c.Upstreams))))
	}
	if !slices.Contains(httpMethods, r.Method) {
		tc.add(at(r.Meta, "method", outer), tc.subj, "method %q must be one of %s", r.Method, strings.Join(httpMethods, " "))
	}

	tc.requestPath(r, at(r.Meta, "path", outer))

	for _, name := range slices.Sorted(maps.Keys(r.Query)) {
		p := first(tc.pos[childKey(base+".query", name)], r.At("query"))
		if name == "" {
			tc.add(p, tc.subj, "query parameter names must not be empty")
		}
		tpl, err := ParseTemplate(r.Query[name])
		if err != nil {
			tc.add(p, tc.subj, "query %s: %v", name, err)
			continue
		}
		tc.placeholders(tpl, p)
		if name == "_method" && slices.ContainsFunc(tpl.Parts, func(pt Part) bool { return pt.Name != "" }) {
			tc.add(p, tc.subj, "query _method: an argument must not fill it: frameworks read it as the request's method; give it a literal value or leave it out")
		}
		r.QueryParams = append(r.QueryParams, Param{Name: name, Template: tpl})
	}

	seen := map[string]string{}
	for _, name := range tc.inFileOrder(r.Headers, base+".headers") {
		p := first(tc.pos[childKey(base+".headers", name)], r.At("headers"))
		tc.headerName(name, p, tc.subj, seen)
		tpl, err := ParseTemplate(r.Headers[name])
		if err != nil {
			tc.add(p, tc.subj, "header %s: %v", name, err)
			continue
		}
		for _, part := range tpl.Parts {
			if !validHeaderValue(part.Text) {
				tc.add(p, tc.subj, "header %s: %s", name, headerValueRule)
				break
			}
		}
		tc.placeholders(tpl, p)
		tc.steeringHeader(name, tpl, p)
		tc.upstreamHeader(r, name, tpl, p)
		tc.credentialHeader(r, name, p)
		tc.authHeader(r, name, p)
		r.HeaderParams = append(r.HeaderParams, Param{Name: http.CanonicalHeaderKey(name), Template: tpl})
	}
	slices.SortStableFunc(r.HeaderParams, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })

	if r.Body != nil {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			tc.add(r.At("body"), tc.subj, "a %s request cannot carry a body", r.Method)
		}
		r.BodyTemplate = tc.body(r.Body, base+".body", r.At("body"))
	}
	tc.bodyFormat(r, base)
}

// requestPath checks and compiles the request path.
func (tc *toolCheck) requestPath(r *Request, p Pos) {
	if !strings.HasPrefix(r.Path, "/") {
		tc.add(p, tc.subj, "request.path %q must start with /", r.Path)
		return
	}
	t, err := ParseTemplate(r.Path)
	if err != nil {
		tc.add(p, tc.subj, "request.path: %v", err)
		return
	}
	if msg := pathRule(t); msg != "" {
		tc.add(p, tc.subj, "request.path %s", msg)
	}
	for _, n := range t.Names() {
		tc.workspaceRef(n, p)
		switch {
		case n == ReservedWorkspace || n == ReservedActor:
		case !tc.props[n]:
			tc.add(p, tc.subj, "placeholder {%s} names no argument%s", n, didYouMean(n, slices.Collect(maps.Keys(tc.props))))
		case !tc.req[n]:
			tc.add(p, tc.subj, "path placeholder {%s} names an optional argument; list it under input.required", n)
		}
	}
	tc.times(t, p)
	for _, tr := range t.Times() {
		if tr.Arg != "" && tc.props[tr.Arg] && !tc.req[tr.Arg] {
			tc.add(p, tc.subj, "path placeholder {%s} names an optional argument %q; list it under input.required", tr.Name, tr.Arg)
		}
	}
	for i, n := range r.MultiSegment {
		if !slices.Contains(t.Names(), n) || n == ReservedWorkspace || n == ReservedActor {
			tc.add(first(tc.pos[childIndex(tc.path+".request.multi_segment", i)], r.At("multi_segment")), tc.subj,
				"multi_segment %q names no argument placeholder of request.path", n)
		}
	}
	r.PathTemplate = t
}

// pathRule says what is wrong with a path template's literal text. Each
// placeholder then lies inside one path segment: its value is escaped when
// expanded, and no literal text can move it into a query or fragment.
func pathRule(t Template) string {
	for _, part := range t.Parts {
		if strings.ContainsAny(part.Text, "?#") {
			return "must not hold a query or fragment (use request.query)"
		}
		for _, c := range []byte(part.Text) {
			if c <= ' ' || c == 0x7f {
				return "must not contain spaces or control characters"
			}
		}
	}
	// A literal "." or ".." segment (%2e spelt or not) walks out of the
	// base URL's path at whichever server normalises it: never what a
	// tool means. A placeholder's value is escaped, so only the text
	// between placeholders, whole segments of it, can hold one.
	var lit strings.Builder
	for _, part := range t.Parts {
		if part.Name != "" {
			lit.WriteString("x") // a placeholder fills its segment
			continue
		}
		lit.WriteString(part.Text)
	}
	if DotSegment(lit.String()) {
		return `must not hold a "." or ".." segment`
	}
	return ""
}

// DotSegment reports a "." or ".." segment in path, %2e spelt or not.
func DotSegment(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if s := strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); s == "." || s == ".." {
			return true
		}
	}
	return false
}

// body compiles every string of a body template, checking placeholders.
func (tc *toolCheck) body(x any, path string, outer Pos) any {
	switch x := x.(type) {
	case string:
		p := first(tc.pos[path], outer)
		t, err := ParseTemplate(x)
		if err != nil {
			tc.add(p, tc.subj, "request.body: %v", err)
			return Template{Raw: x}
		}
		tc.placeholders(t, p)
		return t
	case map[string]any:
		m := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) { // sorted: Request.Times in a stable order
			m[k] = tc.body(x[k], childKey(path, k), outer)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = tc.body(e, childIndex(path, i), outer)
		}
		return s
	}
	return x
}

func (tc *toolCheck) paging() {
	pg := tc.t.Paging
	if pg == nil {
		return
	}
	for _, a := range []struct{ key, name string }{
		{"page_size_argument", pg.PageSizeArgument}, {"cursor_argument", pg.CursorArgument},
	} {
		if a.name != "" && !tc.props[a.name] {
			tc.add(pg.At(a.key), tc.subj, "paging.%s %q names no argument", a.key, a.name)
		}
	}
	if pg.Max < 0 {
		tc.add(pg.At("max"), tc.subj, "paging.max must not be negative")
	}
}

func (tc *toolCheck) response() {
	r := &tc.t.Response
	base := tc.path + ".response"
	outer := first(tc.pos[base], tc.t.Pos)
	if r.Render != RenderJSON && r.Render != RenderPayload {
		tc.add(r.At("render"), tc.subj, "response.render %q must be json or payload", r.Render)
	}
	tc.gjsonPath(r.At("select"), "response.select", r.Select)
	tc.gjsonPath(r.At("error_message"), "response.error_message", r.ErrorMessage)
	for _, f := range r.Fields {
		p := first(tc.pos[childKey(base+".fields", f.Name)], outer)
		if f.Path == "" {
			tc.add(p, tc.subj, "response.fields %s: path must not be empty", f.Name)
		}
		tc.gjsonPath(p, "response.fields "+f.Name, f.Path)
	}
	for i, o := range r.Optional {
		p := first(tc.pos[childIndex(base+".optional", i)], r.At("optional"))
		switch {
		case o == "select" && r.Select == "":
			tc.add(p, tc.subj, "response.optional names select, but the tool has no response.select")
		case o == "list" && r.List == "":
			tc.add(p, tc.subj, "response.optional names list, but the tool has no response.list")
		case o == "select" || o == "list" || slices.ContainsFunc(r.Fields, func(f Field) bool { return f.Name == o }):
		default:
			names := []string{"select", "list"}
			for _, f := range r.Fields {
				names = append(names, f.Name)
			}
			tc.add(p, tc.subj, "response.optional %q is neither select, list nor one of response.fields%s", o, didYouMean(o, names))
		}
	}
	if r.List != "" && len(r.Fields) > 0 && !slices.ContainsFunc(r.Fields, func(f Field) bool { return f.Name == r.List }) {
		tc.add(r.At("list"), tc.subj, "response.list %q is not one of response.fields", r.List)
	}
	for _, key := range []string{"untrusted", "sensitive"} {
		paths := r.Untrusted
		if key == "sensitive" {
			paths = r.Sensitive
		}
		for i, p := range paths {
			if p == "" {
				tc.add(first(tc.pos[childIndex(base+"."+key, i)], outer), tc.subj, "response.%s: paths must not be empty", key)
			}
		}
	}
	if nf := r.NotFound; nf != nil {
		for i, s := range nf.Status {
			if s < 400 || s > 599 {
				tc.add(first(tc.pos[childIndex(base+".not_found.status", i)], nf.Pos), tc.subj, "response.not_found status %d must be a 4xx or 5xx status", s)
			}
		}
	}
}

// gjsonPath reports a gjson path p (at pos, named key) with a certain
// syntax error. "" is not checked: it means none, or is refused elsewhere.
func (tc *toolCheck) gjsonPath(pos Pos, key, p string) {
	if p == "" {
		return
	}
	if e := checkPath(p); e != nil {
		tc.add(pos, tc.subj, "%s %q is not a valid gjson path: %s", key, p, e.msg)
	}
}

// SteeringHeader reports a header that changes how the upstream, or a
// proxy in front of it, reads a request rather than what it asks: the
// method (X-HTTP-Method-Override and its kin), the client's address,
// host or scheme (Forwarded, X-Forwarded-*, X-Real-IP, X-Client-IP), the
// path (X-Original-URL, X-Rewrite-URL) or the body's coding.
func SteeringHeader(name string) bool {
	switch h := http.CanonicalHeaderKey(name); h {
	case "X-Http-Method-Override", "X-Http-Method", "X-Method-Override", "Forwarded", "X-Real-Ip", "X-Client-Ip",
		"X-Original-Url", "X-Rewrite-Url", "X-Original-Host", "X-Host", "Content-Encoding", "True-Client-Ip":
		return true
	default:
		return strings.HasPrefix(h, "X-Forwarded-")
	}
}

// steeringHeader refuses a tool header in which an argument would choose
// the request's method, origin, path or connection (SteeringHeader,
// HopByHopHeaders): the agent would make a GET a DELETE at the upstream,
// or pass for another client. A literal value is the operator's.
func (tc *toolCheck) steeringHeader(name string, tpl Template, p Pos) {
	if !SteeringHeader(name) && !slices.Contains(HopByHopHeaders, http.CanonicalHeaderKey(name)) {
		return
	}
	if slices.ContainsFunc(tpl.Parts, func(pt Part) bool { return pt.Name != "" && pt.Name != ReservedWorkspace && pt.Name != ReservedActor }) {
		tc.add(p, tc.subj, "header %s: an argument must not fill it: it steers how the upstream or a proxy reads the request (its method, client, host, path or connection); give it a literal value or leave it out", name)
	}
}

// upstreamHeader refuses a tool header that an argument fills when the
// upstream sets that header itself (its credentials): tool headers are
// written after the upstream's, so the agent would choose its value.
func (tc *toolCheck) upstreamHeader(r *Request, name string, tpl Template, p Pos) {
	u := tc.c.Upstreams[r.Upstream]
	if u == nil || !slices.ContainsFunc(tpl.Parts, func(pt Part) bool {
		return pt.Name != "" && pt.Name != ReservedWorkspace && pt.Name != ReservedActor
	}) {
		return
	}
	for h := range u.Headers {
		if strings.EqualFold(h, name) {
			tc.add(p, tc.subj, "header %s: upstream %q sets this header itself (headers: %s), so an argument must not fill it here", name, r.Upstream, h)
			return
		}
	}
}

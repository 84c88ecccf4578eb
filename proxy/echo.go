package proxy

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpgw/gateway/catalog"
)

// This file keeps the credentials the gateway sends an upstream out of
// what the upstream answers: an upstream that echoes its request ("invalid
// key acme-s3cr3t", a whoami or /headers endpoint) must not hand the agent
// a key the agent was never given.
//
// Two lists, made at load. An error's reason is a short text, cleaned of
// every value that may be a credential: the whole value of each
// credential header and each of its parts. A 2xx body is the agent's data,
// which a wrong match would corrupt, so it is cleaned only of values that
// are credentials beyond doubt: what follows an Authorization scheme, a
// workspace's credential, a tool's credential query parameter, the token
// obtained for the call, and any other part that looks like a secret
// (long, letters and digits).

// secretSet is what an answer must not echo, in every form an echo takes
// (secretForms), longest first so that no value is half-replaced by a
// shorter one it holds.
type secretSet struct {
	reason []string // what an error's reason loses
	body   [][]byte // what a 2xx body loses; a subset of reason
}

// longest is the length of the longest form a body loses.
func (s *secretSet) longest() int {
	if s == nil || len(s.body) == 0 {
		return 0
	}
	return len(s.body[0])
}

// echoReach is how far past a cut t must read to see whole any secret
// that starts before it: its longest, its upstream's workspaces' longest,
// and a token obtained for it (at most maxTokenResponse).
func (t *tool) echoReach() int64 {
	n := t.secrets.longest()
	for _, cs := range t.up.credSecrets {
		n = max(n, cs.longest())
	}
	if t.up.auth != nil {
		n += maxTokenResponse
	}
	return int64(n)
}

// secretBuilder collects a secretSet.
type secretBuilder struct{ reason, body []string }

// add takes v, whole, into the reason list, and into the body list too
// when sure (a credential beyond doubt) or when it looks like a secret.
func (sb *secretBuilder) add(v string, sure bool) {
	if len(v) < minSecretLen {
		return
	}
	sb.reason = append(sb.reason, secretForms(v)...)
	if sure || looksSecret(v) {
		sb.body = append(sb.body, secretForms(v)...)
	}
}

// header takes a credential header's value: whole, and each part alone,
// split at white space, ';' and ',' and at '=' ("token abc…" and "SSWS
// abc…" are a scheme and a credential, a cookie is name=value pairs).
// When the value is a credential by where it goes (cred: see
// credentialHeader, or a workspace's credential), the value alone or the
// one part after its scheme is one beyond doubt; other parts count when
// they look secret.
func (sb *secretBuilder) header(v string, cred bool) {
	parts := strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == ';' || r == ',' })
	scheme := len(parts) > 1 && isScheme(parts[0])
	sb.add(v, cred && len(parts) == 1)
	for i, part := range parts {
		if i == 0 && scheme {
			continue // "Bearer", "token": a word many messages use
		}
		// name=value: a setting unless it looks secret, or it is the
		// one part after a credential's scheme ("Token token=…"). A
		// base64 value's padding ("…MjM=", "…Mw==") is no such pair.
		if name, value, ok := strings.Cut(part, "="); ok && name != "" && value != "" && !strings.HasPrefix(value, "=") {
			sure := cred && scheme && len(parts) == 2
			sb.add(strings.Trim(value, `"`), sure)
			if sure {
				sb.add(part, true)
			}
			continue
		}
		sb.add(part, cred && (len(parts) == 1 || scheme && len(parts) == 2))
	}
}

// set returns the lists, each deduplicated and longest first.
func (sb *secretBuilder) set() *secretSet {
	s := &secretSet{reason: sortSecrets(sb.reason)}
	for _, v := range sortSecrets(sb.body) {
		s.body = append(s.body, []byte(v))
	}
	return s
}

func sortSecrets(vs []string) []string {
	slices.SortFunc(vs, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(vs)
}

// upstreamSecrets are an upstream's own: its credential headers.
func upstreamSecrets(headers [][2]string) *secretSet {
	var sb secretBuilder
	for _, h := range headers {
		if secretHeader(h[0]) {
			sb.header(h[1], credentialHeader(h[0]))
		}
	}
	return sb.set()
}

// credentialSecrets are one workspace's credential, as its header carries
// it (format applied) and alone, wherever the format puts it ("Token
// token={credential}, realm=x").
func credentialSecrets(c catalog.Secret, format string) *secretSet {
	var sb secretBuilder
	v := c.Reveal()
	sb.header(v, true)
	if pre, suf, ok := strings.Cut(format, catalog.CredentialPlaceholder); ok && strings.HasPrefix(v, pre) && strings.HasSuffix(v[len(pre):], suf) {
		sb.add(v[len(pre):len(v)-len(suf)], true) // the credential itself, wherever the format puts it
	}
	return sb.set()
}

// toolSecrets are the secrets of t's answers: its upstream's, and the
// credential headers and query parameters the tool sets itself from the
// catalog (an API key in the query, where an upstream has no other place
// for one). A value with a placeholder is the caller's own argument.
func toolSecrets(t *catalog.Tool, up *secretSet) *secretSet {
	var sb secretBuilder
	for k, v := range t.Request.Headers {
		if secretHeader(k) && !strings.Contains(v, "{") {
			sb.header(v, credentialHeader(k))
		}
	}
	for k, v := range t.Request.Query {
		if catalog.CredentialQuery(k) && !strings.Contains(v, "{") {
			sb.add(v, true)
		}
	}
	if len(sb.reason) == 0 {
		return up
	}
	sb.reason = append(sb.reason, up.reason...)
	for _, b := range up.body {
		sb.body = append(sb.body, string(b))
	}
	return sb.set()
}

// secretHeader reports a header whose value may hold a credential, by its
// name: a credentialHeader, a cookie, and names speaking of signatures,
// auth or sessions. Other values (X-Env: production) are settings, and
// taking them out would garble a message.
func secretHeader(name string) bool {
	if credentialHeader(name) {
		return true
	}
	n := strings.ToLower(name)
	return n == "cookie" || strings.Contains(n, "signature") || strings.Contains(n, "auth") || strings.Contains(n, "session")
}

// credentialHeader reports a header whose value is a credential by its
// name, beyond doubt: Authorization, and names of a key, a token, a
// secret or a password (X-Api-Key, Private-Token). Other secret headers
// (cookies, X-Auth-Email) may carry settings beside a secret.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" {
		return true
	}
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// minSecretLen is the shortest value taken out: shorter ones ("1",
// "yes") are settings, and taking them out would garble a message
// without hiding anything.
const minSecretLen = 6

// looksSecret reports a value long and mixed enough to be a key or a
// token rather than a setting ("us-east-1", "en_US", an e-mail address,
// a number): 12 bytes or more holding letters and digits, or 24 or more,
// and not shaped like an e-mail address.
func looksSecret(v string) bool {
	if at := strings.IndexByte(v, '@'); at > 0 && strings.Contains(v[at:], ".") && !strings.ContainsAny(v, " :/") {
		return false // an e-mail address (X-Auth-Email)
	}
	if len(v) >= 24 {
		return true
	}
	letter := strings.IndexFunc(v, unicode.IsLetter) >= 0
	digit := strings.IndexFunc(v, unicode.IsDigit) >= 0
	return len(v) >= 12 && letter && digit
}

// secretForms are the ways an echo may write v: as it is, as a JSON
// string holds it (Go's encoder escapes <, > and &; PHP's and others
// write / as \/), and URL-encoded, as a query or form carries it.
func secretForms(v string) []string {
	out := []string{v}
	more := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if plainToken(v) {
		return out
	}
	if q, err := json.Marshal(v); err == nil {
		more(string(q[1 : len(q)-1]))
	}
	if strings.Contains(v, "/") {
		more(strings.ReplaceAll(v, "/", `\/`))
	}
	more(url.QueryEscape(v))
	return out
}

// plainToken reports a value that every encoder writes as it is: letters,
// digits and - . _ ~ (a JWT, most API keys).
func plainToken(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// isScheme reports an authorization scheme's name ("Bearer", "Basic",
// "token", "SSWS", "ApiKey"): letters only, a word long.
func isScheme(s string) bool {
	if len(s) > 16 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// withoutSecrets returns msg, an upstream's own words, with every secret
// sent for this answer taken out: the tool's (s), the workspace's
// credential and the token obtained for the call.
func (r *upstreamResponse) withoutSecrets(msg string, s *secretSet) string {
	if len(r.token) >= minSecretLen && strings.Contains(msg, r.token) {
		msg = strings.ReplaceAll(msg, r.token, catalog.Redacted)
	}
	for _, set := range []*secretSet{r.cred, s} {
		if set == nil {
			continue
		}
		for _, v := range set.reason {
			if strings.Contains(msg, v) {
				msg = strings.ReplaceAll(msg, v, catalog.Redacted)
			}
		}
	}
	return msg
}

// bodyWithoutSecrets is the 2xx body with every credential sent for it
// replaced (see secretSet): the body itself when it holds none, which is
// the common case and costs a scan per secret and no allocation. ok is
// false when a JSON body would no longer be JSON once cleaned (a secret
// that is, or ends, a number): the answer cannot be shown.
func (r *upstreamResponse) bodyWithoutSecrets(s *secretSet) (body []byte, ok bool) {
	body = r.body
	changed := false
	replace := func(v []byte) {
		if len(v) < minSecretLen || !bytes.Contains(body, v) {
			return
		}
		if !changed {
			body = bytes.Clone(body)
			changed = true
		}
		body = replaceEcho(body, v)
	}
	if len(r.token) >= minSecretLen && len(r.token) <= len(body) {
		if plainToken(r.token) {
			replace([]byte(r.token))
		} else {
			for _, f := range secretForms(r.token) {
				replace([]byte(f))
			}
		}
	}
	for _, set := range []*secretSet{r.cred, s} {
		if set == nil {
			continue
		}
		for _, v := range set.body {
			replace(v)
		}
	}
	if changed && json.Valid(r.body) && !json.Valid(body) {
		return nil, false
	}
	return body, true
}

// replaceEcho replaces each v in body with catalog.Redacted, but for one
// preceded by an odd run of backslashes: its first letter belongs to an
// escape ("\nk3y…" holds a newline and "k3y…", not "nk3y…").
func replaceEcho(body, v []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i <= len(body)-len(v); {
		j := bytes.Index(body[i:], v)
		if j < 0 {
			break
		}
		at := i + j
		slashes := 0
		for k := at - 1; k >= 0 && body[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			i = at + 1
			continue
		}
		out = append(append(out, body[last:at]...), catalog.Redacted...)
		last = at + len(v)
		i = last
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}

package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/rendering"
	"github.com/tidwall/gjson"
)

// This file reads an upstream's answer for the agent: its media type,
// and, for a failure, a short reason taken from the body (a JSON error
// member, an HTML title) cleaned of control characters and credentials.

// upstreamResponse is a fully read, bounded upstream answer.
type upstreamResponse struct {
	status int
	header http.Header
	body   []byte
	// total is the body's full length when known (Content-Length), else
	// the bytes read.
	total int64
	// notFollowed says why a redirect (the status) was not followed.
	notFollowed string
	// token is the token obtained for this call and sent with it (auth:
	// client_credentials or token_exchange), which an echo must not show.
	token string
}

func (r *upstreamResponse) contentType() string {
	ct := r.header.Get("Content-Type")
	if ct == "" {
		return "no content type"
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return "an invalid content type"
}

// mediaType is the answer's media type in lower case, or "" when it has
// none or an invalid one.
func (r *upstreamResponse) mediaType() string {
	mt, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// isText reports a text answer other than HTML (text/plain, text/csv…),
// which a 2xx returns as {"text": …}. An HTML page in a JSON API's place
// is a login page or a proxy's, not data.
func (r *upstreamResponse) isText() bool {
	mt := r.mediaType()
	return strings.HasPrefix(mt, "text/") && mt != "text/html"
}

// failure describes a non-2xx answer for a tool error: the status, the
// upstream's own short reason when it sent one and error_detail allows
// it (statusOnly false), and Retry-After. reasonPath is the tool's
// response.error_message.
func (r *upstreamResponse) failure(u *upstream, secrets []string, reasonPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "upstream %s answered %d %s", u.name, r.status, http.StatusText(r.status))
	if r.notFollowed != "" {
		b.WriteString(" (a redirect, not followed): ")
		b.WriteString(r.notFollowed)
		return b.String()
	}
	if !u.statusOnly {
		if msg := errorMessage(r.body, r.mediaType(), reasonPath); msg != "" {
			clean := r.withoutSecrets(msg, secrets)
			if strings.HasSuffix(clean, "…") {
				// Cut at the bound: its last word may be half a secret that
				// withoutSecrets could not match whole.
				clean = clean[:max(strings.LastIndexByte(clean, ' '), 0)] + "…"
			}
			b.WriteString(": ")
			b.WriteString(clean)
		}
	}
	if ra := r.header.Get("Retry-After"); ra != "" && (r.status == 429 || r.status == 503) {
		// Secrets out before the cut, which could leave half of one.
		if ra = r.withoutSecrets(ra, secrets); len(ra) > 64 {
			ra = ra[:max(strings.LastIndexByte(ra[:64], ' '), 0)]
		}
		if ra = cleanReason(ra, false); ra != "" {
			fmt.Fprintf(&b, " (retry after %s)", ra)
		}
	}
	return b.String()
}

// withoutSecrets returns msg, an upstream's own words, with every secret
// the gateway sent for this answer taken out: the upstream's and the
// tool's (secrets, see secretValues) and the token obtained for the call.
// An upstream that echoes what it was sent ("invalid key acme-s3cr3t")
// must not hand the key to the agent.
func (r *upstreamResponse) withoutSecrets(msg string, secrets []string) string {
	if len(r.token) >= minSecretLen && strings.Contains(msg, r.token) {
		msg = strings.ReplaceAll(msg, r.token, catalog.Redacted)
	}
	for _, v := range secrets {
		if strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, catalog.Redacted)
		}
	}
	return msg
}

// bodyWithoutSecrets is the answer's body with every echo of a secret
// the gateway sent for it replaced, in the forms a JSON encoder writes
// (secretValues lists them): an upstream that reflects its request (a
// whoami or debug endpoint, /headers) hands over the credential in a
// success too. It is the body itself when it holds none, which costs a
// scan per secret.
func (r *upstreamResponse) bodyWithoutSecrets(secrets []string) []byte {
	body := r.body
	replace := func(v string) {
		if bytes.Contains(body, []byte(v)) {
			body = bytes.ReplaceAll(body, []byte(v), []byte(catalog.Redacted))
		}
	}
	if len(r.token) >= minSecretLen {
		for _, v := range secretForms(r.token) {
			replace(v)
		}
	}
	for _, v := range secrets {
		replace(v)
	}
	return body
}

// secretValues lists, once at load, what an answer must not echo: the
// workspaces' credentials and the values of credential headers (an API
// key, a bearer token) and query parameters, whole and each part alone
// ("token abc…" and "SSWS abc…" are a scheme and a credential, a cookie
// is name=value pairs, and an upstream may echo the credential alone),
// each in the forms an echo takes (secretForms), longest first so a
// value is never half-replaced by a shorter one it holds.
func secretValues(headers [][2]string, query [][2]string, creds map[string]catalog.Secret) []string {
	var out []string
	add := func(v string) {
		if len(v) < minSecretLen {
			return
		}
		for _, f := range secretForms(v) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	addParts := func(v string) {
		add(v)
		parts := strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == ';' || r == ',' })
		for i, part := range parts {
			if i == 0 && len(parts) > 1 && isScheme(part) {
				continue // "Bearer", "token": a word many messages use
			}
			add(part)
			if _, value, ok := strings.Cut(part, "="); ok {
				add(strings.Trim(value, `"`))
			}
		}
	}
	for _, h := range headers {
		if secretHeader(h[0]) {
			addParts(h[1])
		}
	}
	for _, q := range query {
		if secretHeader(q[0]) {
			addParts(q[1])
		}
	}
	for _, c := range creds {
		addParts(c.Reveal())
	}
	slices.SortFunc(out, longestFirst)
	return out
}

// longestFirst orders secrets longest first, equal ones side by side.
func longestFirst(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(a, b)
}

// toolSecrets are the secrets of t's answers: its upstream's, and the
// credential headers and query parameters the tool sets itself from the
// catalog (an API key in the query, where an upstream has no other place
// for one). A value with a placeholder is the caller's own argument.
func toolSecrets(t *catalog.Tool, u *upstream) []string {
	var headers, query [][2]string
	for k, v := range t.Request.Headers {
		if !strings.Contains(v, "{") {
			headers = append(headers, [2]string{k, v})
		}
	}
	for k, v := range t.Request.Query {
		if !strings.Contains(v, "{") {
			query = append(query, [2]string{k, v})
		}
	}
	if len(headers) == 0 && len(query) == 0 {
		return u.secrets
	}
	own := secretValues(headers, query, nil)
	if len(own) == 0 {
		return u.secrets
	}
	out := slices.Concat(u.secrets, own)
	slices.SortFunc(out, longestFirst)
	return slices.Compact(out)
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
	if q, err := json.Marshal(v); err == nil {
		more(string(q[1 : len(q)-1]))
	}
	if strings.Contains(v, "/") {
		more(strings.ReplaceAll(v, "/", `\/`))
	}
	more(url.QueryEscape(v))
	return out
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

// secretHeader reports a header whose value is a credential by its name:
// Authorization, cookies, and names speaking of keys, tokens, secrets,
// passwords, signatures or auth. Other values (X-Env: production) are
// settings, and taking them out would garble the message.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "cookie" || n == "proxy-authorization" {
		return true
	}
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "signature", "auth", "credential", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// minSecretLen is the shortest header value withoutSecrets takes out:
// shorter ones ("1", "yes") are settings, and taking them out would
// garble the message without hiding anything.
const minSecretLen = 6

// maxErrorMessage bounds what an upstream's error message contributes.
const maxErrorMessage = 300

// Bounds on the work a reason costs: how much of a text or HTML body is
// read for it, and how much cleaned text is kept before the final cut.
const (
	maxReasonScan   = 64 << 10
	maxReasonWindow = 4 << 10
)

// errorMessage finds a short reason in an error body of the given media
// type, tried in this order:
//
//   - JSON, whatever the content type: the tool's reasonPath when it finds
//     a string, number or boolean; a bare JSON string; else the first two
//     distinct strings among RFC 9457 detail and title, message,
//     error.message, error and errors.0.message, joined by ": ".
//   - text/html: the page's <title>, nothing of the page itself.
//   - any other text/*: the text.
//
// Whatever its source, the reason is cleaned (see cleanReason) and at most
// maxErrorMessage bytes long.
func errorMessage(body []byte, mediaType, reasonPath string) string {
	switch {
	case rendering.Readable(body) == nil && gjson.ValidBytes(body):
		return cleanReason(jsonReason(gjson.ParseBytes(body), reasonPath), false)
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		return cleanReason(htmlTitle(body), false)
	case strings.HasPrefix(mediaType, "text/"):
		cut := len(body) > maxReasonScan
		return cleanReason(string(body[:min(len(body), maxReasonScan)]), cut)
	}
	return ""
}

func jsonReason(root gjson.Result, reasonPath string) string {
	if reasonPath != "" {
		switch v := root.Get(reasonPath); v.Type {
		case gjson.String, gjson.Number, gjson.True, gjson.False:
			if s := v.String(); strings.TrimSpace(s) != "" {
				return s
			}
		}
	}
	if root.Type == gjson.String {
		return root.Str
	}
	var parts []string
	for _, r := range root.Get(`[detail,title,message,error.message,error,errors.0.message]`).Array() {
		if r.Type == gjson.String && strings.TrimSpace(r.Str) != "" && len(parts) < 2 && !slices.Contains(parts, r.Str) {
			parts = append(parts, r.Str)
		}
	}
	return strings.Join(parts, ": ")
}

// htmlTitle is the text of an HTML page's <title> ("502 Bad Gateway"
// from a proxy), or "".
func htmlTitle(body []byte) string {
	head := body[:min(len(body), maxReasonScan)]
	lower := bytes.ToLower(head) // ASCII case folding keeps offsets for these tags
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	return html.UnescapeString(string(head[start : start+end]))
}

// cleanReason makes an upstream's reason safe to show: invalid UTF-8
// becomes U+FFFD; control characters and invisible format characters
// (bidi overrides, zero-width) are removed; runs of white space, CR and LF
// included, become one space; URL credentials are stripped; and the result
// is cut to maxErrorMessage bytes. cut says s is a prefix of the reason:
// its last word, which a credential may straddle, is dropped.
func cleanReason(s string, cut bool) string {
	var b strings.Builder
	pending := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			pending = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if b.Len() >= maxReasonWindow {
			cut = true
			break
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError: U+FFFD
	}
	msg := b.String()
	if cut {
		// The window or the scan ended inside the text: its last word may
		// be half a credential, which stripping would not recognise.
		msg = msg[:max(strings.LastIndexByte(msg, ' '), 0)]
	}
	// Before the cut, so a cut cannot leave half a password unmatched.
	msg = stripURLCredentials(msg)
	// A fence-shaped tag in an upstream's error is rewritten as in its
	// answers: the agent must not take it for the gateway's fence.
	msg = rendering.Neutralize(msg)
	if len(msg) > maxErrorMessage {
		n := maxErrorMessage
		for n > 0 && !utf8Start(msg[n]) {
			n--
		}
		msg = msg[:n] + "…"
	}
	return msg
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// urlStart finds where a URL's user information may begin in free text:
// after "scheme://" (group 1), or after "scheme:" in a bare
// "scheme:user:password@host" (group 2, the user and its colon matched).
var urlStart = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)|([A-Za-z][A-Za-z0-9+.\-]*:)[^\s/?#@:]+:`)

// stripURLCredentials removes the credentials of every URL in an
// upstream's message, "postgres://app:secret@db/x" becoming
// "postgres://db/x": upstreams quote connection strings in their errors,
// and agents must not see them.
//
// Passwords are quoted as they were set, not percent-encoded, so one may
// hold "/", "?", "#" or "@" ("postgres://app:p/ss@db"), where a URL parser
// would end the authority early and leave the rest of the password in the
// text. So the user information runs to the last "@" of the URL's run of
// non-space text whenever it can be read as credentials (see userinfoEnd);
// when a URL could be either, more is removed, never less.
func stripURLCredentials(s string) string {
	// Each pass removes at least one "@"; repeat until none is left to
	// remove, so what is returned has nothing more to strip.
	for strings.Contains(s, "@") {
		out := stripPass(s)
		if out == s {
			break
		}
		s = out
	}
	return s
}

func stripPass(s string) string {
	var b strings.Builder
	for {
		loc := urlStart.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		from := loc[3] // after "scheme://"
		if loc[2] < 0 {
			from = loc[5] // after "scheme:" of a bare URL
		}
		run := s[from:]
		if i := strings.IndexFunc(run, unicode.IsSpace); i >= 0 {
			run = run[:i]
		}
		end := -1
		if loc[2] >= 0 {
			end = userinfoEnd(run)
		} else {
			end = strings.LastIndexByte(run, '@')
		}
		if end < 0 {
			next := loc[1]
			b.WriteString(s[:next])
			s = s[next:]
			continue
		}
		b.WriteString(s[:from])
		s = s[from+end+1:]
	}
}

// userinfoEnd returns the index in run (the text after "scheme://" up to
// white space) of the "@" that ends the URL's user information, or -1
// when the URL has none. A URL whose authority (up to the first "/", "?"
// or "#") holds an "@" has credentials; so does one whose authority is
// "user:x" where x is not a port ("app:p" of "app:p/ss@db", whose
// password holds a "/"), or "name:digits" where name is no host name
// ("app:1234/5@db"). Only a host name (dotted, localhost or an IP
// literal), with or without a port, keeps an "@" further on as part of
// the path or query ("https://example.com/users/@me").
func userinfoEnd(run string) int {
	at := strings.LastIndexByte(run, '@')
	if at < 0 {
		return -1
	}
	if !strings.ContainsAny(run[:at], "/?#") {
		return at
	}
	auth := run[:strings.IndexAny(run, "/?#")]
	if strings.Contains(auth, "@") {
		return at
	}
	if strings.HasPrefix(auth, "[") {
		return -1 // an IPv6 literal
	}
	host, port, hasPort := strings.Cut(auth, ":")
	switch {
	case !hasPort:
		return -1
	case port == "" || strings.Trim(port, "0123456789") != "":
		return at
	case host == "localhost" || strings.Contains(host, "."):
		return -1
	}
	return at
}

package proxy

import (
	"bytes"
	"fmt"
	"html"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"

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
	// client_credentials or token_exchange), and cred the secrets of the
	// caller's workspace's credential: what an echo must not show, beside
	// the tool's own (secretSet).
	token string
	cred  *secretSet
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
func (r *upstreamResponse) failure(u *upstream, secrets *secretSet, reasonPath string) string {
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
	// Fold ASCII only: bytes.ToLower also maps invalid bytes and some
	// letters (İ) to sequences of another length, and then its offsets
	// would not be the page's.
	lower := make([]byte, len(head))
	for k, c := range head {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[k] = c
	}
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

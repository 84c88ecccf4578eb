package catalog

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// An upstream shared by every workspace and called with one credential
// trusts the gateway's workspace binding alone: a tool that can name
// another tenant reaches it. With credentials chosen by the caller's
// workspace, the upstream checks its own fence as well, so a binding the
// gateway gets wrong reaches only what that workspace's own credential
// may reach.

// Defaults of an upstream's credentials block.
const (
	DefaultCredentialHeader = "Authorization"
	DefaultCredentialFormat = "{credential}"
	// CredentialPlaceholder is where the credential goes in Format.
	CredentialPlaceholder = "{credential}"
)

// Credentials choose the credential an upstream receives by the caller's
// workspace (upstreams.NAME.credentials).
type Credentials struct {
	Meta `yaml:"-"`
	// Header carries the credential; default DefaultCredentialHeader.
	Header string `yaml:"header"`
	// Format is the header value with CredentialPlaceholder where the
	// credential goes ("Bearer {credential}"); default the credential
	// alone.
	Format string `yaml:"format"`
	// ByWorkspace maps a workspace to the environment variable holding
	// its credential. The names are taken as written, never expanded.
	ByWorkspace map[string]string `yaml:"by_workspace"`

	// Values is compiled by Load: each workspace's header value, Format
	// filled with its variable's value.
	Values map[string]Secret `yaml:"-"`
}

// Secret is a credential read from the environment. It formats, logs and
// marshals as [Redacted], so a secret that ends up in an error, a log
// attribute or a JSON document shows nothing; [Secret.Reveal] returns the
// value for the one place that sends it.
type Secret struct{ v string }

// Redacted is what a [Secret] shows in place of its value.
const Redacted = "[redacted]"

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v} }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.v }

func (s Secret) String() string                { return Redacted }
func (s Secret) GoString() string              { return Redacted }
func (s Secret) LogValue() slog.Value          { return slog.StringValue(Redacted) }
func (s Secret) MarshalText() ([]byte, error)  { return []byte(Redacted), nil }
func (s Secret) MarshalJSON() ([]byte, error)  { return []byte(`"` + Redacted + `"`), nil }
func (s Secret) MarshalYAML() (any, error)     { return Redacted, nil }
func (s Secret) Format(f fmt.State, verb rune) { f.Write([]byte(Redacted)) }

// byWorkspaceField reports whether a decoder path names a value under an
// upstream's credentials.by_workspace, or its auth.client_secret_env: a
// variable name, never expanded
// (expanded, a mistaken ${VAR} would put the secret itself where a name is
// expected, and into the message that says it is not one).
func byWorkspaceField(path string) bool {
	rest, ok := strings.CutPrefix(path, "upstreams")
	switch {
	case !ok || rest == "":
		return false
	case strings.HasPrefix(rest, `["`):
		// A quoted name: upstreams["a.b"].credentials.
		end := strings.Index(rest, `"]`)
		if end < 0 {
			return false
		}
		rest = rest[end+2:]
	case rest[0] == '.':
		_, rest = firstSegment(rest[1:])
	default:
		return false
	}
	return strings.HasPrefix(rest, ".credentials.by_workspace.") || strings.HasPrefix(rest, ".credentials.by_workspace[") ||
		rest == ".auth.client_secret_env"
}

func defaultCredentials(u *Upstream) {
	if cr := u.Credentials; cr != nil {
		cr.Header = or(cr.Header, DefaultCredentialHeader)
		cr.Format = or(cr.Format, DefaultCredentialFormat)
	}
}

// credentials checks an upstream's credentials block and reads each
// workspace's variable. Messages name variables, never their values.
func (v *checker) credentials(name string, u *Upstream, subj string) {
	cr := u.Credentials
	if cr == nil {
		return
	}
	where := func(key string) Pos { return first(cr.At(key), u.At("credentials")) }
	subj += " credentials"
	canon, caller := http.CanonicalHeaderKey(cr.Header), callerHeader(u, cr.Header)
	switch {
	case !ValidHeaderName(cr.Header):
		v.add(where("header"), subj, "header %q is not a valid header name", cr.Header)
	case slices.Contains(framingHeads, canon):
		v.add(where("header"), subj, "header %s is set by the gateway's HTTP client and cannot carry a credential", canon)
	case caller != "":
		v.add(where("header"), subj, "header %s is %s", canon, caller)
	case strings.EqualFold(u.IdempotencyHeader, cr.Header):
		v.add(where("header"), subj, "header %s is the idempotency_header", canon)
	}
	for h := range u.Headers {
		if strings.EqualFold(h, cr.Header) {
			v.add(where("header"), subj, "header %s is also set under headers (%s): one credential per request, chosen by the workspace", canon, h)
		}
	}
	if n := strings.Count(cr.Format, CredentialPlaceholder); n != 1 {
		v.add(where("format"), subj, "format must hold %s exactly once (it holds it %d times)", CredentialPlaceholder, n)
	} else if !validHeaderValue(cr.Format) {
		v.add(where("format"), subj, "format: %s", headerValueRule)
	}
	if u.Workspace != nil && u.Workspace.None {
		v.add(u.At("credentials"), subj, "credentials are chosen by workspace, and the upstream says workspace: none")
	}
	if len(cr.ByWorkspace) == 0 {
		v.add(where("by_workspace"), subj, "by_workspace must name at least one workspace and its variable")
		return
	}
	pattern, _ := regexp.Compile(v.c.Auth.Principal.WorkspacePattern)
	path := childKey(childKey("upstreams", name), "credentials") + ".by_workspace"
	cr.Values = make(map[string]Secret, len(cr.ByWorkspace))
	for _, ws := range slices.Sorted(maps.Keys(cr.ByWorkspace)) {
		env := cr.ByWorkspace[ws]
		p := first(v.pos[childKey(path, ws)], where("by_workspace"))
		if pattern != nil && !pattern.MatchString(ws) {
			v.add(p, subj, "by_workspace: %q is not a workspace the principal's workspace_pattern admits", clip(ws))
			continue
		}
		if !validEnvName(env) {
			// Not quoted: what stands here by mistake may be the
			// credential itself, and messages reach logs and /status.
			hint := "write the name of the variable holding the credential, such as GITEA_TOKEN"
			if inner, ok := strings.CutPrefix(env, "${"); ok {
				if name, _, _ := strings.Cut(strings.TrimSuffix(inner, "}"), ":-"); validEnvName(name) {
					hint = "write " + name + ", without ${}"
				}
			}
			v.add(p, subj, "by_workspace.%s is not an environment variable name (%s)", ws, hint)
			continue
		}
		val, ok := v.lookup(env)
		switch {
		case !ok:
			v.add(p, subj, "by_workspace.%s: environment variable %s is not set", ws, env)
		case val == "":
			v.add(p, subj, "by_workspace.%s: environment variable %s is empty", ws, env)
		case !validHeaderValue(val):
			v.add(p, subj, "by_workspace.%s: environment variable %s holds a control character (CR, LF, NUL or another), which cannot be sent in a header", ws, env)
		default:
			cr.Values[ws] = NewSecret(strings.Replace(cr.Format, CredentialPlaceholder, val, 1))
		}
	}
}

// credentialHeader refuses a tool header that names the header its
// upstream's credentials fill: written after the upstream's own, it would
// replace the workspace's credential, with a literal or an argument.
func (tc *toolCheck) credentialHeader(r *Request, name string, p Pos) {
	u := tc.c.Upstreams[r.Upstream]
	if u == nil || u.Credentials == nil || !strings.EqualFold(u.Credentials.Header, name) {
		return
	}
	tc.add(p, tc.subj, "header %s: upstream %q sends each workspace's credential in this header (credentials), so a tool must not set it", name, r.Upstream)
}

// CredentialQuery reports a query parameter that carries a credential by
// its whole name (api_key, access_token, oauth_token, sig), not by a word it holds
// (sort_key, author, tokenizer are settings). The gateway keeps a tool's
// fixed value of such a parameter out of what the upstream echoes, and
// the import sets one from the environment rather than an argument.
func CredentialQuery(name string) bool {
	n := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' {
			return -1
		}
		return unicode.ToLower(r)
	}, name)
	switch n {
	case "key", "apikey", "accesskey", "token", "accesstoken", "authtoken", "oauthtoken", "bearertoken", "auth", "secret", "clientsecret",
		"sig", "signature", "password", "passwd", "pwd", "sessionid", "session":
		return true
	}
	return false
}

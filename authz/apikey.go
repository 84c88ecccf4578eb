package authz

// Opaque API keys (auth.api_keys_file).
//
// The file stores SHA-256 hashes of the keys, never the keys, each with the
// claims its holder gets:
//
//	keys:
//	  - sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	    subject: ci-bot
//	    workspace: acme
//	    scopes: [jobs:read, jobs:operate]   # or "jobs:read jobs:operate"
//	    actor: ci@example.com               # optional; default: the subject
//	    expires: 2027-01-01T00:00:00Z       # optional, RFC 3339
//
// It is loaded as strictly as the catalog: unknown fields, duplicate keys
// or hashes, bad hex, a missing subject or workspace, or a workspace the
// pattern refuses are errors naming file:line:column, and the verifier is
// not built.
//
// Lookup hashes the presented key and finds the entry by its digest in a
// map, then confirms with crypto/subtle. The map's comparison is not
// constant time, but what it compares is a SHA-256 digest of the caller's
// input: to learn a stored hash byte by byte from timing, a caller would
// have to choose inputs whose digests share a prefix with it, which is a
// preimage search, and a stored hash, even learned, does not give the key.
// The subtle compare makes the final equality constant time regardless.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unsafe"

	"gopkg.in/yaml.v3"

	"github.com/mcpgw/gateway/catalog"
)

// apiKeyVerifier maps API keys to principals fixed at load. It is immutable
// and safe for concurrent use.
type apiKeyVerifier struct {
	keys map[[sha256.Size]byte]*apiKey
	now  func() time.Time
}

type apiKey struct {
	hash    [sha256.Size]byte
	p       *Principal
	expires time.Time // zero: never
}

// apiKeyClaims is the claim set an API key's principal carries as JSON,
// so prerequisites can query it with gjson like a JWT's claims.
type apiKeyClaims struct {
	Subject   string   `json:"subject"`
	Workspace string   `json:"workspace,omitempty"` // "" only in a tenantless catalog
	Scopes    []string `json:"scopes"`
	Actor     string   `json:"actor,omitempty"`
	Expires   string   `json:"expires,omitempty"`
}

// apiKeyMapper reads apiKeyClaims; it is the JWT mapper with fixed paths,
// so both token kinds go through the same rules.
func apiKeyMapper(p catalog.Principal) (*mapper, error) {
	return newMapper(catalog.Principal{Subject: "subject", Workspace: "workspace", Scopes: "scopes", Actor: "actor",
		WorkspacePattern: p.WorkspacePattern, WorkspaceOptional: p.WorkspaceOptional})
}

func newAPIKeyVerifier(path string, principal catalog.Principal, opts *VerifierOptions) (*apiKeyVerifier, error) {
	read := opts.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("auth.api_keys_file: %w", err)
	}
	m, err := apiKeyMapper(principal)
	if err != nil {
		return nil, err
	}
	keys, err := parseAPIKeys(path, data, m)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &apiKeyVerifier{keys: keys, now: now}, nil
}

// Verify finds the key's entry by the SHA-256 of token.
func (v *apiKeyVerifier) Verify(_ context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if len(token) > MaxTokenBytes {
		return nil, rejectf(ReasonOversize, "api key longer than %d bytes", MaxTokenBytes)
	}
	sum := tokenSum(token)
	k, ok := v.keys[sum]
	if !ok || subtle.ConstantTimeCompare(k.hash[:], sum[:]) != 1 {
		return nil, rejectf(ReasonAPIKey, "unknown api key")
	}
	if !k.expires.IsZero() && !v.now().Before(k.expires) {
		return nil, rejectd(ReasonExpired, "the API key has expired", "api key for subject %q expired at %s", k.p.Subject, k.expires.Format(time.RFC3339))
	}
	return k.p, nil
}

// Close does nothing: an API key verifier holds no goroutine.
func (v *apiKeyVerifier) Close() error { return nil }

// keysProblems collects load problems with their positions.
type keysProblems struct {
	path string
	errs []error
}

func (ps *keysProblems) add(n *yaml.Node, format string, args ...any) {
	ps.errs = append(ps.errs, fmt.Errorf("%s:%d:%d: %s", ps.path, n.Line, n.Column, fmt.Sprintf(format, args...)))
}

var apiKeyFields = []string{"sha256", "subject", "workspace", "scopes", "actor", "expires"}

// parseAPIKeys decodes the file into a yaml.Node first, so every problem
// has a line and a column, and reports all of them at once.
func parseAPIKeys(path string, data []byte, m *mapper) (map[[sha256.Size]byte]*apiKey, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file; want a keys list", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: want one YAML document", path)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file; want a keys list", path)
	}
	ps := &keysProblems{path: path}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		ps.add(root, "want a mapping with a keys list")
		return nil, errors.Join(ps.errs...)
	}
	var list *yaml.Node
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if prev := seen[k.Value]; prev != nil {
			ps.add(k, "duplicate field %q (first at line %d)", k.Value, prev.Line)
			continue
		}
		seen[k.Value] = k
		if k.Value != "keys" {
			ps.add(k, "unknown field %q; want keys", k.Value)
			continue
		}
		list = v
	}
	switch {
	case list == nil && len(ps.errs) == 0:
		ps.add(root, "keys is required")
	case list != nil && list.Kind != yaml.SequenceNode:
		ps.add(list, "keys must be a list")
	case list != nil && len(list.Content) == 0:
		ps.add(list, "keys must list at least one key")
	}
	if len(ps.errs) > 0 {
		return nil, errors.Join(ps.errs...)
	}

	keys := make(map[[sha256.Size]byte]*apiKey, len(list.Content))
	first := map[[sha256.Size]byte]int{} // hash → index, for the duplicate message
	for i, item := range list.Content {
		k := parseAPIKey(ps, fmt.Sprintf("keys[%d]", i), item, m)
		if k == nil {
			continue
		}
		if j, dup := first[k.hash]; dup {
			ps.add(item, "keys[%d]: sha256 duplicates keys[%d] (line %d)", i, j, list.Content[j].Line)
			continue
		}
		first[k.hash] = i
		keys[k.hash] = k
	}
	if len(ps.errs) > 0 {
		return nil, errors.Join(ps.errs...)
	}
	return keys, nil
}

// parseAPIKey parses one entry, reporting its problems to ps; it returns
// nil when there were any.
func parseAPIKey(ps *keysProblems, name string, item *yaml.Node, m *mapper) *apiKey {
	before := len(ps.errs)
	if item.Kind != yaml.MappingNode {
		ps.add(item, "%s: want a mapping with %s", name, strings.Join(apiKeyFields, ", "))
		return nil
	}
	fields := map[string]*yaml.Node{}
	keyAt := map[string]*yaml.Node{}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := item.Content[i], item.Content[i+1]
		switch {
		case !slices.Contains(apiKeyFields, k.Value):
			ps.add(k, "%s: unknown field %q; want one of %s", name, k.Value, strings.Join(apiKeyFields, ", "))
		case keyAt[k.Value] != nil:
			ps.add(k, "%s: duplicate field %q (first at line %d)", name, k.Value, keyAt[k.Value].Line)
		default:
			keyAt[k.Value], fields[k.Value] = k, v
		}
	}
	str := func(field string, required bool) string {
		v := fields[field]
		switch {
		case v == nil:
			if required {
				ps.add(item, "%s: %s is required", name, field)
			}
			return ""
		case v.Kind != yaml.ScalarNode || v.Tag == "!!null":
			ps.add(v, "%s: %s must be a string", name, field)
			return ""
		case required && strings.TrimSpace(v.Value) == "":
			ps.add(v, "%s: %s must not be empty", name, field)
		}
		return v.Value
	}

	var key apiKey
	if h := str("sha256", true); h != "" {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			ps.add(fields["sha256"], "%s: sha256 must be %d hex digits (the SHA-256 of the key, not the key)", name, 2*sha256.Size)
		} else {
			copy(key.hash[:], b)
		}
	}
	c := apiKeyClaims{Subject: str("subject", true), Workspace: str("workspace", !m.workspaceOptional), Actor: str("actor", false)}
	if c.Workspace != "" && !m.pattern.MatchString(c.Workspace) {
		ps.add(fields["workspace"], "%s: workspace %q does not match the workspace pattern %s", name, c.Workspace, m.pattern)
	}
	if v := fields["scopes"]; v != nil {
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag != "!!null" {
				c.Scopes = strings.Fields(v.Value)
			}
		case yaml.SequenceNode:
			for _, s := range v.Content {
				if s.Kind != yaml.ScalarNode || s.Tag == "!!null" || strings.TrimSpace(s.Value) == "" || strings.ContainsAny(s.Value, " \t\r\n") {
					ps.add(s, "%s: each scope must be a non-empty string without spaces", name)
					continue
				}
				c.Scopes = append(c.Scopes, s.Value)
			}
		default:
			ps.add(v, "%s: scopes must be a list or a space-separated string", name)
		}
	}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	if e := str("expires", false); e != "" {
		t, err := time.Parse(time.RFC3339, e)
		if err != nil {
			ps.add(fields["expires"], "%s: expires %q is not an RFC 3339 time, like 2027-01-01T00:00:00Z", name, e)
		} else {
			key.expires = t
			c.Expires = t.UTC().Format(time.RFC3339)
		}
	}
	if len(ps.errs) > before {
		return nil
	}
	claims, err := json.Marshal(c)
	if err != nil {
		ps.add(item, "%s: %v", name, err)
		return nil
	}
	p, err := m.principal(claims)
	if err != nil {
		ps.add(item, "%s: %v", name, err)
		return nil
	}
	key.p = p
	return &key
}

// tokenSum is a token's SHA-256, read from the string's own bytes: a
// []byte conversion would copy a token longer than 32 bytes to the heap on
// every request. Sum256 only reads them.
func tokenSum(token string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

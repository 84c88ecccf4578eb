package openapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Operations that reveal secrets are imported sensitive: true, behind the
// triple lock (docs/catalog.md, sensitive_data), so a token that merely
// passes a tool's gate cannot read them: a workflow service's
// GET /block_documents/{id}?include_secrets=true answers stored
// credentials in clear, and admin, settings and config endpoints answer
// the service's own. The words are guesses, so each is marked.

// secretWords make a name (a path segment, a parameter, a property)
// look like it carries a secret.
var secretWords = []string{"secret", "secrets", "password", "passwords", "passwd", "credential", "credentials", "token", "tokens", "apikey", "apikeys", "decrypt", "unmask"}

// pagingTokenWords before "token" make it a paging cursor, not a secret:
// page_token, next_token, continuation_token.
var pagingTokenWords = []string{"page", "next", "prev", "previous", "continuation", "pagination", "cursor", "sync", "resume", "after", "before", "idempotency"}

// sensitivePathWords are path segments of operations that expose the
// service's own configuration.
var sensitivePathWords = []string{"admin", "settings", "config", "configuration"}

// secretTail are the words that may follow a secret word in a name that
// still holds the secret itself (secret_value), unlike access_tokens_url,
// token_type or credential_accessed_at, which only describe one.
var secretTail = []string{"value", "values", "plaintext", "text", "data", "hash"}

// secretName returns the words of name that make it look like a secret,
// or "".
func secretName(name string) string {
	words := strings.Split(snake(name), "_")
	for i, w := range words {
		if rest := words[i+1:]; len(rest) > 1 || len(rest) == 1 && !slices.Contains(secretTail, rest[0]) {
			continue
		}
		switch {
		case (w == "token" || w == "tokens") && i > 0 && slices.Contains(pagingTokenWords, words[i-1]):
		case slices.Contains(secretWords, w):
			return w
		case (w == "key" || w == "keys") && i > 0 && (words[i-1] == "api" || words[i-1] == "private" || words[i-1] == "secret"):
			return words[i-1] + "_" + w
		}
	}
	return ""
}

// sensitivity returns why t may reveal secrets, or nothing. params are
// the document's names of t's parameters and body properties.
func sensitivity(t *tool, params []string) []string {
	var why []string
	for _, seg := range strings.Split(t.opPath, "/") {
		if pathParam.MatchString(seg) {
			continue
		}
		for _, w := range strings.Split(snake(seg), "_") {
			if slices.Contains(sensitivePathWords, w) {
				why = append(why, fmt.Sprintf("the path segment %q is the service's own administration or configuration", seg))
				break
			}
		}
		if w := secretName(seg); w != "" {
			why = append(why, fmt.Sprintf("the path segment %q names %s", seg, w))
		}
	}
	for _, p := range params {
		if w := secretName(p); w != "" {
			why = append(why, fmt.Sprintf("the parameter %q names %s", p, w))
		}
	}
	// A query written into the path says as much as a segment or a
	// parameter would: /block_documents/{id}?include_secrets=true,
	// /rest?method=auth.getToken.
	for _, k := range t.pathQueryKeys() {
		if w := secretName(k); w != "" {
			why = append(why, fmt.Sprintf("the path's query sets %q, which names %s", k, w))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.fixed)) {
		for _, w := range strings.Split(snake(t.fixed[k]), "_") {
			if slices.Contains(sensitivePathWords, w) {
				why = append(why, fmt.Sprintf("the path's query sets %s=%s, the service's own administration or configuration", k, bound(t.fixed[k], 100)))
				break
			}
		}
		if w := secretName(t.fixed[k]); w != "" {
			why = append(why, fmt.Sprintf("the path's query sets %s=%s, which names %s", k, bound(t.fixed[k], 100), w))
		}
	}
	if p := propertyNamed(t.output, func(n string) bool { return secretName(n) != "" }); p != "" {
		why = append(why, fmt.Sprintf("the answer holds a property %q", p))
	}
	return slices.Compact(why)
}

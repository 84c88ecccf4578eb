package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// The 300-byte cut happens inside cleanReason, before withoutSecrets: a
// secret straddling the cut is no longer whole, so its first part shows.
func TestSecretStraddlingTheCutIsNotShown(t *testing.T) {
	c, _ := answersCore(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"message":"%s key upstream-secret was refused"}`, strings.Repeat("a", 282))
	}, "")
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	t.Logf("%s", res.Text)
	if strings.Contains(res.Text, "upstream-s") {
		t.Errorf("part of the secret reaches the agent: %q", res.Text[len(res.Text)-40:])
	}
}

// An ordinary, non-secret header value (>= 6 bytes) is redacted as a word
// of every error message, and a value with a space loses its last word.
func TestOrdinaryHeaderValuesStayInMessages(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"message":"the production database is read-only; ask the gateway team"}`)
	})
	src := strings.Replace(testCatalog, `headers: { Authorization: "Bearer upstream-secret" }`,
		`headers: { Authorization: "Bearer upstream-secret", X-Env: production, X-Client: "mcp gateway" }`, 1)
	c := parseCoreWith(t, src+answersTools, rec.srv.URL, &proxy.Options{Audit: discardAudit{}})
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	if strings.Contains(res.Text, "[redacted]") {
		t.Errorf("non-secret words redacted: %s", res.Text)
	}
}

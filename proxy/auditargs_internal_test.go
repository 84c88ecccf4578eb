package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// argsOfLength is {"id":"q1","reason":"xxx…"} of exactly n bytes: the same
// bytes whether sent or re-encoded after redaction.
func argsOfLength(n int) string {
	return `{"id":"q1","reason":"` + strings.Repeat("x", n-len(`{"id":"q1","reason":""}`)) + `"}`
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf(`{"sha256":%q,"bytes":%d}`, hex.EncodeToString(sum[:]), len(s))
}

// audit.max_argument_bytes at limit−1, limit and limit+1, for tools with
// and without writeOnly arguments; a max of 0 stands for the 8 KiB default.
func TestAuditArgsAtTheCap(t *testing.T) {
	plain := &tool{}
	redacting := &tool{redact: []string{"approval_code"}}
	for _, tc := range []struct {
		max, limit int
	}{{1024, 1024}, {0, 8 << 10}} {
		for _, tl := range []*tool{plain, redacting} {
			for _, n := range []int{tc.limit - 1, tc.limit, tc.limit + 1} {
				args := argsOfLength(n)
				want := args
				if n > tc.limit {
					want = digestOf(args)
				}
				if got := string(auditArgs([]byte(args), tl, tc.max)); got != want {
					t.Errorf("auditArgs(%d bytes, redact %v, max %d) = %.100s, want %.100s", n, tl.redact, tc.max, got, want)
				}
			}
		}
	}
	// The redacted arguments are what is measured: a writeOnly value
	// that takes the sent arguments over the cap does not, once redacted.
	code := strings.Repeat("9", 100)
	sent := `{"approval_code":"` + code + `","id":"q1"}`
	if got, want := string(auditArgs([]byte(sent), redacting, 60)), `{"approval_code":"[redacted]","id":"q1"}`; got != want {
		t.Errorf("auditArgs of %d bytes, %d once redacted, under a 60-byte cap = %s, want %s", len(sent), len(want), got, want)
	}
}

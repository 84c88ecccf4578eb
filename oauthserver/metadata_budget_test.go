package oauthserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Before dde40f5 every /oauth/authorize spent sign_in.per_minute before
// the client was loaded, so a metadata-document fetch was budgeted. Now
// the client is loaded first: failing document URLs cost nothing.
func TestMetadataURLSignInsSpendTheBudget(t *testing.T) {
	var fetches atomic.Int64
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer ds.Close()
	e := newEnvWith(t, 10, loopback, nil, func(s string) string {
		return strings.Replace(s, "access_token_ttl: 5m", "access_token_ttl: 5m\n    sign_in: { per_minute: 2 }", 1)
	})
	for i := range 50 {
		c := &client{id: fmt.Sprintf("%s/junk/%d.json", ds.URL, i), redirect: "http://127.0.0.1:7777/callback", verifier: strings.Repeat("d", 43)}
		resp, _ := newBrowser().do(t, "GET", e.authorizeURL(c, nil), nil)
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Logf("429 after %d", i)
			return
		}
	}
	t.Errorf("50 sign-ins naming distinct failing documents with per_minute 2: %d outbound fetches, no 429", fetches.Load())
}

package proxy_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// Redirects: an obtained token or a static credential never reaches a
// foreign origin, the Location is never quoted, and the token endpoint's
// redirect is not followed with the client secret.
func TestRedirectsKeepCredentialsHome(t *testing.T) {
	var foreign atomic.Int32
	var foreignAuth atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		foreignAuth.Store(r.Header.Get("Authorization") + "|" + r.URL.RawQuery)
		w.Write([]byte(`{}`))
	}))
	defer other.Close()
	as, _ := tokenServer(t, nil)
	for _, target := range []string{other.URL + "/thing?leak=LOCATION-S3CRET", "//" + strings.TrimPrefix(other.URL, "http://") + "/thing"} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		}))
		src := strings.Replace(obtainedTokenCatalog, "    workspace: none\n    auth:\n      type: client_credentials", "    workspace: none\n    follow_redirects: true\n    auth:\n      type: client_credentials", 1)
		_, keyFile := exchangeKey(t)
		vars := map[string]string{"UP": up.URL, "SECRET": strings.Repeat("k", 32), "AS_TOKEN_URL": as.URL, "AS_CLIENT_SECRET": "as-client-s3cret", "KEY_FILE": keyFile}
		cat, err := catalog.Parse("t.yaml", []byte(src), &catalog.LoadOptions{Getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
		if err != nil {
			t.Fatal(err)
		}
		c, err := proxy.New(cat, &proxy.Options{Getenv: func(k string) string { return vars[k] }})
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, c, reader, "get_cc", `{}`)
		t.Logf("%s", res.Text)
		if strings.Contains(res.Text, "LOCATION-S3CRET") || strings.Contains(res.Text, "127.0.0.1") {
			t.Errorf("the Location is quoted: %s", res.Text)
		}
		up.Close()
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("a foreign origin received %d requests: %v", n, foreignAuth.Load())
	}
}

// The token endpoint redirecting elsewhere: the secret is not replayed.
func TestTokenEndpointRedirectNotFollowed(t *testing.T) {
	var foreign atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { foreign.Add(1) }))
	defer other.Close()
	as, _ := tokenServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	})
	up := httptest.NewServer(echoAuthorization(200))
	defer up.Close()
	c := obtainedTokenCore(t, up.URL, as.URL, nil)
	res := call(t, c, reader, "get_cc", `{}`)
	t.Logf("%s", res.Text)
	if foreign.Load() != 0 {
		t.Error("the token request followed the redirect")
	}
}

// Logs of a call whose error echoes the obtained token hold no token.
func TestLogsHoldNoObtainedToken(t *testing.T) {
	as, _ := tokenServer(t, nil)
	up := httptest.NewServer(echoAuthorization(403))
	defer up.Close()
	_, keyFile := exchangeKey(t)
	vars := map[string]string{"UP": up.URL, "SECRET": strings.Repeat("k", 32), "AS_TOKEN_URL": as.URL, "AS_CLIENT_SECRET": "as-client-s3cret", "KEY_FILE": keyFile}
	cat, err := catalog.Parse("t.yaml", []byte(obtainedTokenCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c, err := proxy.New(cat, &proxy.Options{Getenv: func(k string) string { return vars[k] }, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	call(t, c, reader, "get_cc", `{}`)
	call(t, c, reader, "get_tx", `{}`)
	if strings.Contains(logs.String(), "obtained-at-") {
		t.Errorf("logs hold the token: %s", logs.String())
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckProbeHidesAnEchoedObtainedToken: gateway check --probe
// prints each tool error's text: an upstream that echoes the
// client-credentials token it was sent in a 4xx body must not put that token on
// check's stdout (and in --format json). A static header credential is
// redacted in the same place.
func TestCheckProbeHidesAnEchoedObtainedToken(t *testing.T) {
	const obtained = "obtained-at-check-5c4b3a2910"
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": obtained, "token_type": "Bearer", "expires_in": 3600})
	}))
	defer as.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":"scope missing for %s"}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	fragment := strings.Replace(runsFragment, `runs: { base_url: "${RUNS_URL}", workspace: none }`,
		`runs: { base_url: "${RUNS_URL}", workspace: none, auth: { type: client_credentials, token_url: "${AS_TOKEN_URL}", client_id: gateway, client_secret_env: RUNS_CLIENT_SECRET } }`, 1)
	dir := writeRuns(t, fragment, runsCatalog)
	env := testEnv(map[string]string{"RUNS_URL": srv.URL, "AS_TOKEN_URL": as.URL, "RUNS_CLIENT_SECRET": "runs-client-s3cret"})
	for _, format := range []string{"text", "json"} {
		var stdout, stderr bytes.Buffer
		args := []string{"check", "--catalog", filepath.Join(dir, "catalog.yaml"), "--openapi", filepath.Join(dir, "openapi.yaml"), "--probe", "--format", format}
		_ = run(context.Background(), args, nil, &stdout, &stderr, env)
		if out := stdout.String() + stderr.String(); strings.Contains(out, obtained) {
			t.Errorf("check --probe --format %s prints the obtained access token:\n%s", format, out)
		}
	}
}

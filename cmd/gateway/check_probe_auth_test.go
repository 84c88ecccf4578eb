package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/test/oauthas"
)

// TestCheckProbeObtainsUpstreamTokens: gateway check --probe calls an
// upstream behind an authorization server as a client's call would, with
// one client-credentials token for every probed tool, and the upstream,
// which accepts only that server's tokens, answers each.
func TestCheckProbeObtainsUpstreamTokens(t *testing.T) {
	const secret = "runs-client-s3cret"
	as, err := oauthas.Start(oauthas.Options{Clients: map[string]string{"gateway": secret}, Audience: "https://runs.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	verify := as.Verifier("https://runs.test")
	up := &runsUpstream{answers: map[string]string{
		"POST /runs/count": `42`,
		"GET /runs/r1":     `{"id":"r1"}`,
		"GET /health":      `true`,
		"GET /version":     `"1.2.3"`,
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, err := verify(r.Context(), raw); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		up.ServeHTTP(w, r)
	}))
	defer srv.Close()
	fragment := strings.Replace(runsFragment, `runs: { base_url: "${RUNS_URL}", workspace: none }`,
		`runs: { base_url: "${RUNS_URL}", workspace: none, auth: { type: client_credentials, token_url: "${AS_TOKEN_URL}", client_id: gateway, client_secret_env: RUNS_CLIENT_SECRET } }`, 1)
	dir := writeRuns(t, fragment, runsCatalog)
	env := testEnv(map[string]string{"RUNS_URL": srv.URL, "AS_TOKEN_URL": as.TokenURL, "RUNS_CLIENT_SECRET": secret})
	var stdout, stderr bytes.Buffer
	args := []string{"check", "--catalog", filepath.Join(dir, "catalog.yaml"), "--openapi", filepath.Join(dir, "openapi.yaml"), "--probe"}
	if err := run(context.Background(), args, nil, &stdout, &stderr, env); err != nil {
		t.Fatalf("check --probe = %v, want success\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "probed 4 of 5 read tools: 4 ok") {
		t.Errorf("check --probe printed\n%s\nwant 4 tools probed ok", stdout.String())
	}
	if n := as.TokenRequests("client_credentials"); n != 1 {
		t.Errorf("%d token requests for 4 probed tools, want 1", n)
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Error("check printed the client secret")
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A change to an included fragment, in another directory than the
// catalog, reloads the catalog like a change to the catalog itself.
func TestWatchReloadsOnFragmentChange(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "frag"), 0o755)
	const main = `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: GATEWAY_JWT_SECRET, algorithms: [HS256], issuer: iss, audience: aud }
include: [frag/*.yaml]
`
	const frag = `upstreams:
  up: { base_url: "http://127.0.0.1:1", workspace: none }
tools:
  - name: ping
    description: VERSION
    request: { upstream: up, path: /ping }
`
	path := filepath.Join(dir, "catalog.yaml")
	fragPath := filepath.Join(dir, "frag", "a.yaml")
	os.WriteFile(path, []byte(main), 0o600)
	os.WriteFile(fragPath, []byte(strings.Replace(frag, "VERSION", "first", 1)), 0o600)
	rt := installedRuntime(t, testEnv(nil), path, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.watch(ctx, 10*time.Millisecond) }()
	defer func() { cancel(); <-done }()

	description := func() string { return rt.cur.Load().core.Catalog().Tool("ping").Description }
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; description() != "second" && time.Now().Before(deadline); i++ {
		// Rewrite until the watcher (which may not be watching yet) sees it.
		os.WriteFile(fragPath, []byte(strings.Replace(frag, "VERSION", "second", 1)+strings.Repeat("\n", i%2)), 0o600)
		time.Sleep(50 * time.Millisecond)
	}
	if got := description(); got != "second" {
		t.Fatalf("after the fragment changed, the tool's description is %q, want %q", got, "second")
	}
}

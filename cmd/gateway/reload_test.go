package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/demo"
)

// TestReloadWhileCalling swaps the catalog over and over while callers
// keep calling; run with -race it checks the swap is safe, and every call
// must succeed on one catalog or the other.
func TestReloadWhileCalling(t *testing.T) {
	up := httptest.NewServer(demo.New(demo.Options{ServiceToken: "svc"}))
	defer up.Close()
	env := testEnv(map[string]string{"MONITOR_URL": up.URL, "OPERATOR_URL": up.URL, "KB_URL": up.URL, "GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"})
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	versions := []string{string(gateway.DefaultCatalog), strings.Replace(string(gateway.DefaultCatalog), "title: BackWave jobs", "title: BackWave jobs (reloaded)", 1)}
	os.WriteFile(path, []byte(versions[0]), 0o600)

	rt := installedRuntime(t, env, path, nil)
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "iss", "aud": "aud", "sub": "u", "ws": "acme", "scope": "jobs:read",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(env.get("GATEWAY_JWT_SECRET")))

	// Callers run until a fixed number of reloads is done: a count, not a
	// time window, so a busy machine slows the test but cannot fail it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, failures atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_queues","arguments":{}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				calls.Add(1)
				if resp.StatusCode != 200 || strings.Contains(string(body), `"isError":true`) {
					failures.Add(1)
					t.Errorf("a call during reloads failed: %d %.200s", resp.StatusCode, body)
				}
			}
		}()
	}
	const reloads = 40
	for i := range reloads {
		os.WriteFile(path, []byte(versions[i%2]), 0o600)
		if err := rt.reload("test", false); err != nil {
			t.Fatalf("reload: %v", err)
		}
		// Let some calls land on each catalog.
		for n := calls.Load(); calls.Load() < n+2 && failures.Load() == 0; {
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	if rt.reloads.Load() < reloads/2 {
		t.Errorf("only %d of %d reloads swapped the catalog", rt.reloads.Load(), reloads)
	}
	t.Logf("%d calls, %d failures, %d reloads (%d swaps)", calls.Load(), failures.Load(), reloads, rt.reloads.Load())
}

// installedRuntime loads the catalog file at path and installs it, as
// serve does; auditLog (nil: the logger) receives audit records when the
// catalog names no audit file.
func installedRuntime(t *testing.T, env lookupEnv, path string, auditLog *slog.Logger) *runtime {
	t.Helper()
	rt := newRuntime(env, slog.New(slog.DiscardHandler), newMetrics())
	rt.auditLog = auditLog
	rt.path = path
	rt.load = rt.fileLoader(path)
	cat, err := rt.load()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.install(cat); err != nil {
		t.Fatal(err)
	}
	return rt
}

// A SIGHUP always reloads, and a reload must not hold a second copy of a
// catalog nothing has changed: with the same file and the same variables
// the serving catalog is rebuilt on (every tool and schema shared, none
// parsed again); a variable the catalog reads that changed, or a changed
// file, makes a new catalog that uses it.
func TestSIGHUPReloadsWithoutCopyingAnUnchangedCatalog(t *testing.T) {
	var mu sync.Mutex
	vars := map[string]string{"MONITOR_URL": "http://127.0.0.1:1", "GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"}
	base := testEnv(nil)
	env := lookupEnv(func(k string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if v, ok := vars[k]; ok {
			return v, true
		}
		return base(k)
	})
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, gateway.DefaultCatalog, 0o600)
	rt := installedRuntime(t, env, path, nil)
	monitorURL := func() string { return rt.cur.Load().core.Catalog().Upstreams["monitor"].BaseURL }

	first := rt.cur.Load()
	if err := rt.reload("SIGHUP", true); err != nil {
		t.Fatal(err)
	}
	second := rt.cur.Load()
	if second == first || rt.reloads.Load() != 1 {
		t.Fatalf("SIGHUP with nothing changed: state swapped %v, reloads %d; want a new core, one reload", second != first, rt.reloads.Load())
	}
	if second.core.Catalog() != first.core.Catalog() {
		t.Errorf("SIGHUP with nothing changed parsed the catalog again; want the serving one shared")
	}

	mu.Lock()
	vars["MONITOR_URL"] = "http://127.0.0.1:2"
	mu.Unlock()
	if err := rt.reload("SIGHUP", true); err != nil {
		t.Fatal(err)
	}
	if got := monitorURL(); got != "http://127.0.0.1:2" {
		t.Errorf("after MONITOR_URL changed and SIGHUP, monitor base_url = %q, want the new value", got)
	}

	retitled := strings.Replace(string(gateway.DefaultCatalog), "title: BackWave jobs", "title: BackWave jobs (reloaded)", 1)
	os.WriteFile(path, []byte(retitled), 0o600)
	before := rt.cur.Load().core.Catalog()
	if err := rt.reload("SIGHUP", true); err != nil {
		t.Fatal(err)
	}
	if after := rt.cur.Load().core.Catalog(); after == before || after.Server.Title != "BackWave jobs (reloaded)" {
		t.Errorf("after the file changed and SIGHUP, title = %q, want the new file's", after.Server.Title)
	}
}

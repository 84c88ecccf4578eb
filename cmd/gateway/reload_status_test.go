package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gateway "github.com/mcpgw/gateway"
)

// TestFailedReloadIsVisible: after a reload fails, the old catalog keeps
// serving, and an operator can see that the file on disk is not the one
// serving: the metrics say the last reload failed and when, one log line
// says why with both hashes, and /status shows the last reload's outcome
// and error beside the hash of the file on disk. A good reload
// clears it all.
func TestFailedReloadIsVisible(t *testing.T) {
	env := testEnv(map[string]string{"GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"})
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	good := string(gateway.DefaultCatalog)
	os.WriteFile(path, []byte(good), 0o600)
	rt := installedRuntime(t, env, path, nil)
	var logs syncBuffer
	rt.logger = slog.New(slog.NewJSONHandler(&logs, nil))
	serving := fileHash(path)

	private := httptest.NewServer(rt.metricsRoutes())
	defer private.Close()
	get := func(p string) string {
		t.Helper()
		resp, err := http.Get(private.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	type status struct {
		Hash       string
		DiskHash   *string `json:"disk_hash"`
		LastReload *struct {
			OK    *bool
			Time  string
			Error *string
		} `json:"last_reload"`
	}
	readStatus := func() status {
		t.Helper()
		var st status
		if body := get("/status"); json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("/status = %s, not JSON", body)
		}
		return st
	}

	bad := strings.Replace(good, "tools:\n", "tools:\n  - respone: {}\n    name: broken\n", 1)
	os.WriteFile(path, []byte(bad), 0o600)
	before := time.Now().Add(-time.Second)
	if err := rt.reload("test", false); err == nil {
		t.Fatal("reload of a broken catalog succeeded")
	}
	onDisk := fileHash(path)

	st := readStatus()
	if st.Hash != serving {
		t.Errorf("/status hash = %s, want the serving catalog's %s", st.Hash, serving)
	}
	if st.DiskHash == nil || *st.DiskHash != onDisk {
		t.Errorf("/status disk_hash = %v, want %s (the file on disk differs from the one serving)", st.DiskHash, onDisk)
	}
	lr := st.LastReload
	if lr == nil || lr.OK == nil || *lr.OK || lr.Error == nil || !strings.Contains(*lr.Error, `field "respone" not found`) {
		t.Fatalf("/status last_reload = %+v, want ok false and the error", lr)
	}
	if tm, err := time.Parse(time.RFC3339, lr.Time); err != nil || tm.Before(before) {
		t.Errorf("/status last_reload.time = %q, want an RFC 3339 time of the failed reload", lr.Time)
	}
	m := get("/metrics")
	for _, want := range []string{
		"gateway_catalog_last_reload_success 0",
		"gateway_catalog_last_reload_timestamp_seconds ",
		`gateway_catalog_reloads_total{result="error"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var line map[string]any
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "catalog reload failed") {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line == nil || line["serving_hash"] != serving || line["disk_hash"] != onDisk || !strings.Contains(line["error"].(string), "respone") {
		t.Errorf("reload failure log line = %v, want error, serving_hash %s and disk_hash %s\nlogs:\n%s", line, serving, onDisk, logs.String())
	}

	// Back to a good file: all clear.
	os.WriteFile(path, []byte(good), 0o600)
	if err := rt.reload("test", false); err != nil {
		t.Fatal(err)
	}
	st = readStatus()
	if st.DiskHash != nil || st.LastReload == nil || st.LastReload.OK == nil || !*st.LastReload.OK || st.LastReload.Error != nil {
		t.Errorf("/status after a good reload = %+v, want last_reload ok without error and no disk_hash", st)
	}
	if m := get("/metrics"); !strings.Contains(m, "gateway_catalog_last_reload_success 1") {
		t.Error("/metrics lacks gateway_catalog_last_reload_success 1 after a good reload")
	}
}

// TestReloadErrorNeverQuotesIncludedFile: a catalog includes
// "fragments/*"; an env file and a broken YAML file holding a password
// land in that directory. The reload fails, and neither /status, nor the
// log line, nor the returned error quotes what those files hold; they
// say the file, the line and the rule.
func TestReloadErrorNeverQuotesIncludedFile(t *testing.T) {
	const secret = "pg-hunter2-Secret"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "fragments"), 0o755)
	path := filepath.Join(dir, "catalog.yaml")
	good := strings.Replace(string(gateway.DefaultCatalog), "\nupstreams:\n", "\ninclude: [\"fragments/*\"]\nupstreams:\n", 1)
	os.WriteFile(filepath.Join(dir, "fragments", "extra.yaml"), []byte("upstreams: {}\n"), 0o600)
	os.WriteFile(path, []byte(good), 0o600)
	env := testEnv(map[string]string{"GATEWAY_AUDIENCE": "aud", "GATEWAY_ISSUER": "iss"})
	rt := installedRuntime(t, env, path, nil)
	var logs syncBuffer
	rt.logger = slog.New(slog.NewJSONHandler(&logs, nil))
	private := httptest.NewServer(rt.metricsRoutes())
	defer private.Close()

	for name, body := range map[string]string{
		"db.env":        "DATABASE_PASSWORD=" + secret + "\n",
		"broken.yaml":   "upstreams:\n  db: { password: \"" + secret + "\n",
		".hidden.yaml":  secret, // never read at all
		"settings.yaml": "upstreams: " + secret + "\n",
	} {
		os.WriteFile(filepath.Join(dir, "fragments", name), []byte(body), 0o600)
	}
	err := rt.reload("test", false)
	if err == nil {
		t.Fatal("reload succeeded with broken fragments")
	}
	resp, gerr := http.Get(private.URL + "/status")
	if gerr != nil {
		t.Fatal(gerr)
	}
	status, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for what, text := range map[string]string{"/status": string(status), "the log": logs.String(), "the error": err.Error()} {
		if strings.Contains(text, secret) || strings.Contains(text, "DATABASE_PASSWORD") {
			t.Errorf("%s quotes an included file's content:\n%s", what, text)
		}
	}
	for _, want := range []string{"db.env:1:1: a fragment is a mapping of upstreams and tools", "broken.yaml:", "settings.yaml:1:12: upstreams: want a mapping"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("/status lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(string(status), ".hidden.yaml") {
		t.Errorf("/status names a hidden file, which include never reads:\n%s", status)
	}
}

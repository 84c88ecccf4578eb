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
// and error beside the hash of the file on disk (issue 10). A good reload
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

// Package redistest gives tests a real Redis: Debian's redis-server,
// started on a unix socket in the test's temp dir (no port, no network)
// and stopped when the test ends. A missing redis-server fails under
// CI=true (scripts/test.sh installs it) and skips the test elsewhere.
package redistest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Start returns the URL of a real Redis server for t: the one
// GATEWAY_TEST_REDIS_URL names, or a redis-server of t's own.
func Start(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("GATEWAY_TEST_REDIS_URL"); u != "" {
		return u
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed (scripts/test.sh installs Debian's redis-server): %v", err)
		}
		t.Skip("redis-server is not installed: apt-get install redis-server")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return "unix://" + sock
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not open its socket within 10s")
		}
	}
}

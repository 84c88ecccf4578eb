package approval_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgw/gateway/approval"
)

// startRedis returns the URL of a real Redis server: the one
// GATEWAY_TEST_REDIS_URL names (scripts/test.sh starts one), or a
// redis-server this test starts on a unix socket in its temp dir. A
// missing redis-server fails under CI=true and skips elsewhere.
func startRedis(t *testing.T) string {
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not open its socket within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "unix://" + sock
}

func openRedis(t *testing.T, url, prefix string) *approval.RedisStore {
	t.Helper()
	s, err := approval.OpenRedisStore(context.Background(), url, &approval.RedisOptions{Prefix: prefix})
	if err != nil {
		t.Fatalf("OpenRedisStore: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

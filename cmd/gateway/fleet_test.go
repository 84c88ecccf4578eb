package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The start log says where limits are counted; a store URL that is not
// Redis's stops the start, naming the variable; a Redis that does not
// answer does not (limits are counted locally until it does).
func TestStateStoreIsChosenAndLogged(t *testing.T) {
	cat := catalogWith(t, "")
	t.Run("none-counts-locally", func(t *testing.T) {
		_, log := startServe(t, cat)
		if !strings.Contains(log.String(), "limits are counted in this process") {
			t.Errorf("log = %s", log.String())
		}
	})
	t.Run("bad-url-is-refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stderr := &syncBuffer{}
		err := run(ctx, []string{"serve", "--catalog", cat, "--listen", "127.0.0.1:0", "--watch=false"}, nil, io.Discard, stderr,
			testEnv(map[string]string{"GATEWAY_STATE_STORE": "http://cache:6379"}))
		if err == nil || !strings.Contains(stderr.String()+err.Error(), `GATEWAY_STATE_STORE: "http://cache:6379" is not a redis://, rediss:// or unix:// URL`) {
			t.Fatalf("run = %v\n%s", err, stderr.String())
		}
	})
	t.Run("redis-not-answering-still-serves", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "none.sock")
		ctx, cancel := context.WithCancel(context.Background())
		stderr := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--catalog", cat, "--listen", "127.0.0.1:0", "--watch=false"}, nil, io.Discard, stderr,
				testEnv(map[string]string{"GATEWAY_STATE_STORE": "unix://" + sock}))
		}()
		defer func() { cancel(); <-done }()
		until(t, "the serving line and the outage warning", func() bool {
			select {
			case err := <-done:
				t.Fatalf("serve stopped: %v\n%s", err, stderr.String())
			default:
			}
			s := stderr.String()
			return strings.Contains(s, `"msg":"serving"`) && strings.Contains(s, "limits are counted in Redis") && strings.Contains(s, "shared limit store unavailable")
		})
	})
}

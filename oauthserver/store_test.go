package oauthserver_test

import (
	"context"
	"errors"
	"github.com/mcpgw/gateway/test/redistest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/gateway/oauthserver"
)

// Every store keeps the single-use promises the server builds on: Create
// succeeds once, Take hands a value to one of many racing callers.
func TestStoresMakeEachChangeOnce(t *testing.T) {
	stores := map[string]func(t *testing.T) oauthserver.Store{
		"memory": func(t *testing.T) oauthserver.Store { s, _ := oauthserver.OpenFileStore(""); return s },
		"file": func(t *testing.T) oauthserver.Store {
			s, err := oauthserver.OpenFileStore(filepath.Join(t.TempDir(), "oauth.json"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"redis": func(t *testing.T) oauthserver.Store {
			s, err := oauthserver.OpenRedisStore(context.Background(), redistest.Start(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			key := "test:" + t.Name() + time.Now().Format(time.RFC3339Nano)
			exp := time.Now().Add(time.Minute)
			if _, err := s.Get(ctx, key); !errors.Is(err, oauthserver.ErrNotFound) {
				t.Fatalf("Get of nothing = %v, want ErrNotFound", err)
			}
			if ok, err := s.Create(ctx, key, []byte("a"), exp); !ok || err != nil {
				t.Fatalf("first Create = %v, %v", ok, err)
			}
			if ok, err := s.Create(ctx, key, []byte("b"), exp); ok || err != nil {
				t.Fatalf("second Create = %v, %v; want refused", ok, err)
			}
			if v, err := s.Get(ctx, key); string(v) != "a" || err != nil {
				t.Fatalf("Get = %q, %v", v, err)
			}
			var won atomic.Int32
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if v, err := s.Take(ctx, key); err == nil && string(v) == "a" {
						won.Add(1)
					}
				})
			}
			wg.Wait()
			if won.Load() != 1 {
				t.Fatalf("%d racing Takes got the value, want 1", won.Load())
			}
			if err := s.Put(ctx, key, []byte("c"), time.Now().Add(-time.Second)); err != nil {
				t.Fatal(err)
			}
			if name != "redis" { // Redis keeps a key at least a millisecond
				if _, err := s.Get(ctx, key); !errors.Is(err, oauthserver.ErrNotFound) {
					t.Errorf("an expired value is still there: %v", err)
				}
			}
		})
	}
}

package approval_test

import (
	"context"
	"testing"

	"github.com/mcpgw/gateway/approval"
)

func openRedis(t *testing.T, url, prefix string) *approval.RedisStore {
	t.Helper()
	s, err := approval.OpenRedisStore(context.Background(), url, &approval.RedisOptions{Prefix: prefix})
	if err != nil {
		t.Fatalf("OpenRedisStore: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

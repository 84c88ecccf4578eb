package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// BenchmarkWriteCallAudit is one write call through the core against a
// loopback upstream, with its two audit records going nowhere (the cost
// of the call alone), to a file, and to a file synced after each record.
//
//	go test -run='^$' -bench=WriteCallAudit -benchmem ./proxy/
func BenchmarkWriteCallAudit(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"q1","limit":4}`)
	}))
	defer up.Close()
	for _, bc := range []struct {
		name string
		sink func(b *testing.B) proxy.AuditSink
	}{
		{"discard", func(*testing.B) proxy.AuditSink { return &proxy.LogAudit{Logger: slog.New(slog.DiscardHandler)} }},
		{"file", func(b *testing.B) proxy.AuditSink { return benchFile(b, false) }},
		{"file+fsync", func(b *testing.B) proxy.AuditSink { return benchFile(b, true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := auditCoreB(b, up.URL, bc.sink(b))
			args := []byte(`{"id":"q1","limit":4,"reason":"bench"}`)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.Call(ctx, writer, "set_limit", args)
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

func benchFile(b *testing.B, fsync bool) proxy.AuditSink {
	a, err := proxy.OpenFileAudit(filepath.Join(b.TempDir(), "audit.jsonl"), &proxy.FileAuditOptions{Fsync: fsync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return proxy.NewAuditTrail(a, nil, nil)
}

func auditCoreB(b *testing.B, upURL string, sink proxy.AuditSink) *proxy.Core {
	return auditCoreTB(b, upURL, "", sink)
}

package proxy_test

import (
	"net/http"
	"testing"

	"github.com/mcpgw/gateway/test/memnet"
)

// newMemRecorder is newRecorder over an in-memory network (package
// memnet), for tests in a testing/synctest bubble: the recorder, and the
// transport that reaches it (for proxy.Options.Transport).
func newMemRecorder(t *testing.T, handle http.HandlerFunc) (*recorder, http.RoundTripper) {
	t.Helper()
	rec := &recorder{}
	var tr *http.Transport
	rec.srv, tr = memnet.Server(t, "upstream.test", recordingHandler(rec, handle))
	return rec, tr
}

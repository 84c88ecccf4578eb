package proxy_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// memListener is an in-memory network for tests that run in a
// testing/synctest bubble: a real http.Server serves connections made by
// net.Pipe, which block durably (loopback sockets do not), so the bubble's
// clock can advance while a call waits on the upstream.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *memListener) Addr() net.Addr { return memAddr{} }

func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, net.ErrClosed
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "upstream.test:80" }

// newMemRecorder is newRecorder over the in-memory network: the recorder,
// and the transport that reaches it (for proxy.Options.Transport). Both
// are closed when the test ends.
func newMemRecorder(t *testing.T, handle http.HandlerFunc) (*recorder, http.RoundTripper) {
	t.Helper()
	rec := &recorder{}
	ln := newMemListener()
	rec.srv = httptest.NewUnstartedServer(recordingHandler(rec, handle))
	rec.srv.Listener = ln
	rec.srv.Start()
	tr := &http.Transport{DialContext: ln.dial}
	t.Cleanup(rec.srv.Close)
	t.Cleanup(tr.CloseIdleConnections)
	return rec, tr
}

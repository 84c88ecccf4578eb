// Package memnet is an in-memory network for tests that run in a
// testing/synctest bubble. A real http.Server serves connections made by
// net.Pipe: they block durably (loopback sockets do not), so the bubble's
// clock advances, and synctest.Wait returns, while calls wait on each
// other or on an upstream.
package memnet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Listener accepts the connections its Dial makes. Its zero value is not
// usable; see [NewListener].
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  string
}

// NewListener returns a listener whose Addr is addr (host:port), the
// host the server's URL names.
func NewListener(addr string) *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

// Accept waits for the next connection Dial makes.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; connections already made stay open.
func (l *Listener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

// Addr is the address given to NewListener.
func (l *Listener) Addr() net.Addr { return addr(l.addr) }

// Dial connects to the listener, whatever the address; it has the
// signature of http.Transport.DialContext.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
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

type addr string

func (addr) Network() string  { return "memnet" }
func (a addr) String() string { return string(a) }

// Server starts h on an in-memory listener named host:80 and returns it
// with a transport that reaches it. Both are closed when t ends.
func Server(t testing.TB, host string, h http.Handler) (*httptest.Server, *http.Transport) {
	t.Helper()
	ln := NewListener(host + ":80")
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	tr := &http.Transport{DialContext: ln.Dial}
	t.Cleanup(srv.Close)
	t.Cleanup(tr.CloseIdleConnections)
	return srv, tr
}

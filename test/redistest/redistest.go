// Package redistest gives tests a real Redis: Debian's redis-server,
// started on a unix socket in the test's temp dir (no port, no network)
// and stopped when the test ends. A missing redis-server fails under
// CI=true (scripts/test.sh installs it) and skips the test elsewhere.
package redistest

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
	return New(t, false).URL()
}

// Server is a redis-server of one test's own, which the test may stop,
// pause and start again on the same socket, as an outage would.
type Server struct {
	t       testing.TB
	bin     string
	dir     string
	sock    string
	persist bool
	cmd     *exec.Cmd
}

// New starts a redis-server for t. With persist, it saves its data when
// stopped and reads it back when started again, as a production Redis
// with persistence would.
func New(t testing.TB, persist bool) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed (scripts/test.sh installs Debian's redis-server): %v", err)
		}
		t.Skip("redis-server is not installed: apt-get install redis-server")
	}
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dir: dir, sock: filepath.Join(dir, "redis.sock"), persist: persist}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's address for go-redis and the gateway.
func (s *Server) URL() string { return "unix://" + s.sock }

// Start starts the server (again), and waits for its socket.
func (s *Server) Start() {
	s.t.Helper()
	os.Remove(s.sock)
	save := ""
	if s.persist {
		save = "3600 1"
	}
	s.cmd = exec.Command(s.bin, "--port", "0", "--unixsocket", s.sock, "--save", save, "--appendonly", "no", "--dir", s.dir)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	// Ready when it answers: the socket file exists from bind(), before
	// listen(), and a connection then is refused, which the limiter
	// rightly takes for an outage.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s.answers() {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("redis-server did not answer PING on its socket within 10s")
		}
	}
}

// answers reports whether the server answers PING on its socket.
func (s *Server) answers() bool {
	c, err := net.DialTimeout("unix", s.sock, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	reply := make([]byte, 7)
	n, _ := io.ReadFull(c, reply)
	return string(reply[:n]) == "+PONG\r\n"
}

// Stop stops the server as an operator would (SIGTERM, which saves a
// persistent one), killing it after 10 s.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot stop
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Pause freezes the server (SIGSTOP): it holds its connections and
// answers nothing, as a Redis that is slow or stuck does. Resume undoes it.
func (s *Server) Pause() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused server run again.
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gateway "github.com/mcpgw/gateway"
	"github.com/mcpgw/gateway/catalog"
)

// syncBuffer is a bytes.Buffer safe to write from the gateway's
// goroutines while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logRecord returns the first JSON log record in out whose msg is msg.
func logRecord(out, msg string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	return nil
}

// until polls cond every 20 ms for up to 10 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeCert writes a fresh self-signed certificate for 127.0.0.1 and its
// key to certFile and keyFile, and returns the certificate.
func writeCert(t *testing.T, certFile, keyFile, name string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// catalogWith writes the bundled catalog with lines added under server:.
func catalogWith(t *testing.T, serverLines string) string {
	t.Helper()
	src := strings.Replace(string(gateway.DefaultCatalog), "server:\n", "server:\n"+serverLines, 1)
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServe runs `gateway serve` in the test process until the test ends
// and returns the URL it logged and its log.
func startServe(t *testing.T, catPath string, extra ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	args := append([]string{"serve", "--catalog", catPath, "--listen", "127.0.0.1:0", "--watch=false"}, extra...)
	go func() { done <- run(ctx, args, nil, io.Discard, stderr, testEnv(nil)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	var url string
	until(t, "the serving log line", func() bool {
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, stderr.String())
		default:
		}
		if rec := logRecord(stderr.String(), "serving"); rec != nil {
			url, _ = rec["url"].(string)
		}
		return url != ""
	})
	return url, stderr
}

// peerCert fetches /healthz over a new connection trusting roots and
// returns the certificate the gateway presented.
func peerCert(t *testing.T, base string, roots ...*x509.Certificate) (*x509.Certificate, error) {
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
	}}
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("GET /healthz over TLS = %d (tls %v)", resp.StatusCode, resp.TLS != nil)
	}
	return resp.TLS.PeerCertificates[0], nil
}

func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writeCert(t, certFile, keyFile, "first")
	catPath := catalogWith(t, "  tls: { cert_file: "+certFile+", key_file: "+keyFile+" }\n")

	// SIGHUP must never end the test process, whenever it arrives.
	hupSeen := make(chan os.Signal, 16)
	signal.Notify(hupSeen, syscall.SIGHUP)
	defer signal.Stop(hupSeen)

	url, logs := startServe(t, catPath)
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("serving url = %q, want https://127.0.0.1:…", url)
	}
	base := url[:strings.Index(url[len("https://"):], "/")+len("https://")]
	got, err := peerCert(t, base, first)
	if err != nil {
		t.Fatalf("HTTPS with the configured certificate: %v", err)
	}
	if !got.Equal(first) {
		t.Fatalf("the gateway presented %q, want %q", got.Subject.CommonName, first.Subject.CommonName)
	}
	plain, err := http.Get("http://" + base[len("https://"):] + "/healthz")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Error("plain HTTP on the TLS listener answered 200")
		}
	}

	t.Run("bad-new-pair-keeps-the-old-one", func(t *testing.T) {
		if err := os.WriteFile(keyFile, []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		until(t, "the failed certificate reload in the log", func() bool {
			syscall.Kill(os.Getpid(), syscall.SIGHUP)
			time.Sleep(50 * time.Millisecond)
			return strings.Contains(logs.String(), "TLS certificate reload failed")
		})
		got, err := peerCert(t, base, first)
		if err != nil || !got.Equal(first) {
			t.Fatalf("after a bad pair the gateway presented %v (%v), want the first certificate", got, err)
		}
	})

	t.Run("sighup-loads-the-new-pair", func(t *testing.T) {
		second := writeCert(t, certFile, keyFile, "second")
		until(t, "new connections to see the new certificate", func() bool {
			syscall.Kill(os.Getpid(), syscall.SIGHUP)
			got, err := peerCert(t, base, first, second)
			return err == nil && got.Equal(second)
		})
	})
}

func TestServeTLSBadPairFailsStart(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeCert(t, certFile, keyFile, "first")
	other := filepath.Join(dir, "other.key")
	writeCert(t, filepath.Join(dir, "other.crt"), other, "other")
	for name, lines := range map[string]string{
		"missing-file":      "  tls: { cert_file: " + filepath.Join(dir, "nope.crt") + ", key_file: " + keyFile + " }\n",
		"key-of-other-pair": "  tls: { cert_file: " + certFile + ", key_file: " + other + " }\n",
	} {
		t.Run(name, func(t *testing.T) {
			catPath := catalogWith(t, lines)
			var stderr syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := run(ctx, []string{"serve", "--catalog", catPath, "--listen", "127.0.0.1:0", "--watch=false"}, nil, io.Discard, &stderr, testEnv(nil))
			if err == nil || !strings.Contains(err.Error(), "server.tls") || !strings.Contains(err.Error(), certFile[:len(dir)]) {
				t.Fatalf("serve with a bad TLS pair = %v, want an error naming server.tls and the files", err)
			}
		})
	}
}

func TestStartWarnings(t *testing.T) {
	public := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8080}
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	tlsOn := &catalog.TLS{CertFile: "c", KeyFile: "k"}
	cases := []struct {
		name string
		addr net.Addr
		srv  catalog.Server
		want []string // warning messages, in order
	}{
		{"loopback-plain-is-quiet", loop, catalog.Server{}, nil},
		{"public-plain-without-hosts-warns-twice", public, catalog.Server{}, []string{"no DNS-rebinding guard on a non-loopback listener: set server.public_url or server.allowed_hosts", "plain HTTP on a non-loopback listener: set server.tls or terminate TLS in front"}},
		{"public-tls-without-hosts", public, catalog.Server{TLS: tlsOn}, []string{"no DNS-rebinding guard on a non-loopback listener: set server.public_url or server.allowed_hosts"}},
		{"public-plain-with-allowed-hosts", public, catalog.Server{AllowedHosts: []string{"gw"}}, []string{"plain HTTP on a non-loopback listener: set server.tls or terminate TLS in front"}},
		{"public-tls-with-public-url-is-quiet", public, catalog.Server{PublicURL: "https://gw", TLS: tlsOn}, nil},
		{"unspecified-address-is-not-loopback", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, catalog.Server{PublicURL: "https://gw"}, []string{"plain HTTP on a non-loopback listener: set server.tls or terminate TLS in front"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			warnListener(slog.New(slog.NewJSONHandler(&out, nil)), tc.addr, &tc.srv)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil {
					if rec["level"] != "WARN" {
						t.Errorf("level = %v, want WARN", rec["level"])
					}
					got = append(got, rec["msg"].(string))
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("warnings = %q, want %q", got, tc.want)
			}
		})
	}
}

// /readyz on the main listener says ready or not, nothing else; the
// catalog's path, hash, tool count and reloads are on the metrics
// listener's /status.
func TestReadyzSaysOnlyStatus(t *testing.T) {
	rt := newRuntime(testEnv(nil), slog.New(slog.DiscardHandler), newMetrics())
	main := httptest.NewServer(rt.routes())
	defer main.Close()
	private := httptest.NewServer(rt.metricsRoutes())
	defer private.Close()
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(main.URL + "/readyz"); code != 503 || body != `{"status":"not ready"}` {
		t.Errorf("/readyz before install = %d %s, want 503 {\"status\":\"not ready\"}", code, body)
	}
	if code, _ := get(private.URL + "/status"); code != 503 {
		t.Errorf("/status before install = %d, want 503", code)
	}
	path, _ := filepath.Abs("catalog.yaml")
	cat, err := catalog.Parse(path, gateway.DefaultCatalog, &catalog.LoadOptions{Getenv: testEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.install(cat); err != nil {
		t.Fatal(err)
	}
	if code, body := get(main.URL + "/readyz"); code != 200 || body != `{"status":"ready"}` {
		t.Errorf("/readyz after install = %d %s, want 200 {\"status\":\"ready\"} and nothing else", code, body)
	}
	code, body := get(private.URL + "/status")
	var st struct {
		Status, Catalog, Hash string
		Tools, Reloads        *int
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Status != "ready" || st.Catalog != path || st.Hash != cat.Hash || st.Tools == nil || *st.Tools != len(cat.Tools) || st.Reloads == nil {
		t.Errorf("metrics /status = %d %s, want ready with catalog, hash, tools and reloads", code, body)
	}
	if code, _ := get(private.URL + "/metrics"); code != 200 {
		t.Errorf("metrics /metrics = %d, want 200", code)
	}
}

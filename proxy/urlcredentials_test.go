package proxy_test

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

// passwords hold what ends a URL's authority when it is not escaped.
var passwords = []string{"s3cr/et", "s3cr?et", "s3cr#et", "s3cr@et", "s3/c?r#e@t"}

// An upstream that quotes its connection string in an error loses the
// credentials in it, whatever the password holds.
func TestUpstreamErrorURLsLoseCredentialsWithAnyPassword(t *testing.T) {
	for _, pass := range passwords {
		t.Run(pass, func(t *testing.T) {
			rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"error":"cannot connect to postgres://app:`+pass+`@db.internal:5432/app?sslmode=require"}`)
			})
			c := newCore(t, rec.srv.URL, nil)
			res := call(t, c, reader, "get_item", `{"id":"a"}`)
			want := "upstream up answered 500 Internal Server Error: cannot connect to postgres://db.internal:5432/app?sslmode=require"
			if !res.IsError || res.Text != want {
				t.Errorf("result = %q, want %q", res.Text, want)
			}
		})
	}
}

// A catalog that did not come through the loader (built in code) with
// credentials in its base_url is refused, without quoting them.
func TestCoreRefusesBaseURLCredentials(t *testing.T) {
	for _, pass := range append(passwords, "1234/5s3cret") {
		t.Run(pass, func(t *testing.T) {
			cat := parseCatalog(t, "http://127.0.0.1:1", "2s")
			cat.Upstreams["up"].BaseURL = "http://app:" + pass + "@127.0.0.1:1/api"
			_, err := proxy.New(cat, nil)
			if err == nil || strings.Contains(err.Error(), "s3") || strings.Contains(err.Error(), "1234") {
				t.Errorf("New = %v, want a refusal that quotes no part of the password", err)
			}
		})
	}
}

// A catalog built in code is held to the loader's rule on base_url: http
// and https are served, any other scheme is refused.
func TestCoreServesHTTPAndHTTPSUpstreamsOnly(t *testing.T) {
	for base, ok := range map[string]bool{"http://127.0.0.1:1/api": true, "https://api.example.com/v1": true, "ftp://127.0.0.1:1/api": false, "file:///etc": false} {
		cat := parseCatalog(t, "http://127.0.0.1:1", "2s")
		cat.Upstreams["up"].BaseURL = base
		if _, err := proxy.New(cat, nil); (err == nil) != ok {
			t.Errorf("base_url %s: New = %v, want served %v", base, err, ok)
		}
	}
}

// A refused connection and a timeout are reported in words of the
// gateway's own, never with the URL the transport's error carries (its
// path may hold what the upstream treats as a secret).
func TestTransportFailuresNeverQuoteTheURL(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close)
	for _, tc := range []struct{ name, host, want string }{
		{"refused", refused, "upstream up refused the connection"},
		{"timeout", strings.TrimPrefix(hang.URL, "http://"), "upstream up did not answer within its 300ms timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			cat := parseCatalog(t, "http://"+tc.host+"/t0k3n-s3cret", "300ms")
			c, err := proxy.New(cat, &proxy.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			res := call(t, c, reader, "get_item", `{"id":"a"}`)
			if !res.IsError || res.Text != tc.want || strings.Contains(logs.String(), "s3cret") {
				t.Errorf("result = %q, logs:\n%s\nwant %q and no URL anywhere", res.Text, logs.String(), tc.want)
			}
		})
	}
}

func parseCatalog(t *testing.T, up, timeout string) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Parse("test.yaml", []byte(testCatalog), &catalog.LoadOptions{Getenv: func(k string) (string, bool) {
		v, ok := map[string]string{"UP": up, "SECRET": strings.Repeat("k", 32), "TIMEOUT": timeout}[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cat
}

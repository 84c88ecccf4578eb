package proxy_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Every bound the proxy enforces is tested at limit−1, limit
// and limit+1, so a bound moved by one (a < for a <=) fails a test.

const boundsCap = 1000 // max_response_bytes in boundsCatalog

const boundsCatalog = `
version: 1
server: { name: test }
auth:
  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }
upstreams:
  up: { base_url: "${UP}", max_response_bytes: "1000", follow_redirects: true }
limits: { inline_bytes: 100, page_size: { default: 10, max: 50 } }
tools:
  - name: get_json
    description: A JSON answer of n bytes.
    input: { type: object, properties: { n: { type: string }, mode: { type: string } }, required: [n, mode] }
    request: { upstream: up, path: "/json/{n}/{mode}" }
  - name: get_payload
    description: A payload of n bytes.
    input: { type: object, properties: { n: { type: string }, mode: { type: string } }, required: [n, mode] }
    request: { upstream: up, path: "/payload/{n}/{mode}" }
    response: { render: payload }
  - name: follow
    description: Redirected n times before it answers.
    input: { type: object, properties: { n: { type: string } }, required: [n] }
    request: { upstream: up, path: "/hops/{n}" }
  - name: status
    description: Answers with the status asked for.
    input: { type: object, properties: { code: { type: string } }, required: [code] }
    request: { upstream: up, path: "/status/{code}" }
  - name: search
    description: Paged by the limits alone.
    input: { type: object, properties: { page_size: { type: integer, minimum: 1 } } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size }
  - name: search_lower
    description: Paged, the upstream's own ceiling under the limits'.
    input: { type: object, properties: { page_size: { type: integer, minimum: 1 } } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size, max: 30 }
  - name: search_tiny
    description: Paged, the upstream's ceiling under the default page size.
    input: { type: object, properties: { page_size: { type: integer, minimum: 1 } } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size, max: 5 }
  - name: search_number
    description: Paged, with a page size the schema lets be fractional.
    input: { type: object, properties: { page_size: { type: number, exclusiveMinimum: 0 } } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size }
  - name: search_higher
    description: Paged, the upstream's own ceiling over the limits'.
    input: { type: object, properties: { page_size: { type: integer, minimum: 1 } } }
    request: { upstream: up, path: /search, query: { limit: "{page_size}" } }
    paging: { page_size_argument: page_size, max: 80 }
`

// jsonOfLength is a JSON object of exactly n bytes (n >= 8).
func jsonOfLength(n int) string { return `{"x":"` + strings.Repeat("a", n-8) + `"}` }

// writeSized answers body: mode "known" with a Content-Length, mode
// "chunked" without one (the first byte is flushed before the rest).
func writeSized(w http.ResponseWriter, body, mode string) {
	if mode == "known" {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
		return
	}
	io.WriteString(w, body[:1])
	w.(http.Flusher).Flush()
	io.WriteString(w, body[1:])
}

func boundsUpstream(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch parts[0] {
		case "json":
			n, _ := strconv.Atoi(parts[1])
			w.Header().Set("Content-Type", "application/json")
			writeSized(w, jsonOfLength(n), parts[2])
		case "payload":
			n, _ := strconv.Atoi(parts[1])
			w.Header().Set("Content-Type", "application/octet-stream")
			writeSized(w, strings.Repeat("p", n), parts[2])
		case "hops":
			// /hops/N redirects to /hops/N/1, /hops/N/1/2… until N hops
			// were made, then answers how many it took.
			n, _ := strconv.Atoi(parts[1])
			if made := len(parts) - 2; made < n {
				http.Redirect(w, r, r.URL.Path+"/"+strconv.Itoa(made+1), http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"hops":%d}`, len(parts)-2)
		case "status":
			code, _ := strconv.Atoi(parts[1])
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"status":%d}`, code)
		case "search":
			io.WriteString(w, `{"items":[]}`)
		}
	})
}

// An answer of exactly max_response_bytes is read whole; one byte more is
// refused, with or without a Content-Length.
func TestMaxResponseBytesAtTheCap(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	for _, mode := range []string{"known", "chunked"} {
		for _, n := range []int{boundsCap - 1, boundsCap, boundsCap + 1} {
			t.Run(fmt.Sprintf("%s/%d", mode, n), func(t *testing.T) {
				res := call(t, c, reader, "get_json", fmt.Sprintf(`{"n":"%d","mode":"%s"}`, n, mode))
				if n > boundsCap {
					if !res.IsError || !strings.Contains(res.Text, "more than max_response_bytes (1000 bytes)") {
						t.Errorf("a %d-byte answer over a %d-byte cap = %.120q, want the over-cap tool error", n, boundsCap, res.Text)
					}
					return
				}
				if res.IsError || res.Text != jsonOfLength(n) {
					t.Errorf("a %d-byte answer within a %d-byte cap = %.120q, want it whole", n, boundsCap, res.Text)
				}
			})
		}
	}
}

// A payload tool keeps only inline_bytes (plus a character's worth) of the
// answer but still refuses one over max_response_bytes, and reports the
// exact size of one within it, with or without a Content-Length.
func TestPayloadAtTheResponseCap(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	for _, mode := range []string{"known", "chunked"} {
		for _, n := range []int{boundsCap - 1, boundsCap, boundsCap + 1} {
			t.Run(fmt.Sprintf("%s/%d", mode, n), func(t *testing.T) {
				res := call(t, c, reader, "get_payload", fmt.Sprintf(`{"n":"%d","mode":"%s"}`, n, mode))
				if n > boundsCap {
					if !res.IsError || !strings.Contains(res.Text, "more than max_response_bytes (1000 bytes)") {
						t.Errorf("a %d-byte payload over a %d-byte cap = %.120q, want the over-cap tool error", n, boundsCap, res.Text)
					}
					return
				}
				want := fmt.Sprintf(`{"encoding":"utf8","content":"%s","truncated":true,"byteCount":%d}`, strings.Repeat("p", 100), n)
				if res.IsError || string(res.Structured) != want {
					t.Errorf("a %d-byte payload = %.200s, want %s", n, res.Structured, want)
				}
			})
		}
	}
}

// inline_bytes: a payload of inline_bytes−1 or inline_bytes comes back
// whole; one byte more is cut to inline_bytes and marked truncated.
func TestPayloadAtTheInlineBound(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	const inline = 100
	for _, mode := range []string{"known", "chunked"} {
		for _, n := range []int{inline - 1, inline, inline + 1, inline + 4, inline + 5} {
			t.Run(fmt.Sprintf("%s/%d", mode, n), func(t *testing.T) {
				res := call(t, c, reader, "get_payload", fmt.Sprintf(`{"n":"%d","mode":"%s"}`, n, mode))
				kept := min(n, inline)
				want := fmt.Sprintf(`{"encoding":"utf8","content":"%s","truncated":%v,"byteCount":%d}`, strings.Repeat("p", kept), n > inline, n)
				if res.IsError || string(res.Structured) != want {
					t.Errorf("a %d-byte payload = %.200s, want %s", n, res.Structured, want)
				}
			})
		}
	}
}

// A read with follow_redirects: true follows three redirects in a row;
// the fourth comes back as the answer, not followed.
func TestRedirectLimit(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	for _, n := range []int{2, 3, 4} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			before := rec.count()
			res := call(t, c, reader, "follow", fmt.Sprintf(`{"n":"%d"}`, n))
			sent := rec.count() - before
			if n > 3 {
				if !res.IsError || !strings.Contains(res.Text, "answered 302 Found (a redirect, not followed): more than 3 redirects in a row") {
					t.Errorf("%d redirects = %q, want the fourth refused", n, res.Text)
				}
				if sent != 4 {
					t.Errorf("%d redirects: the upstream received %d requests, want 4 (the first and three redirects)", n, sent)
				}
				return
			}
			if want := fmt.Sprintf(`{"hops":%d}`, n); res.IsError || res.Text != want {
				t.Errorf("%d redirects = %q, want %s", n, res.Text, want)
			}
			if sent != n+1 {
				t.Errorf("%d redirects: the upstream received %d requests, want %d", n, sent, n+1)
			}
		})
	}
}

// limits.page_size.max and paging.max: a page size one under the ceiling
// goes as asked, the ceiling goes as it is, one over is clamped to it; the
// lower of the two ceilings holds, and an absent page size is the default
// unless the ceiling is lower.
func TestPageSizeClampsAtTheirBounds(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	cases := []struct {
		tool    string
		ceiling int
		def     int
	}{
		{"search", 50, 10},        // limits.page_size.max
		{"search_lower", 30, 10},  // paging.max under it
		{"search_tiny", 5, 5},     // paging.max under the default too
		{"search_higher", 50, 10}, // paging.max over it: the limits hold
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			sent := map[string]string{
				`{}`: fmt.Sprintf("limit=%d", tc.def),
				fmt.Sprintf(`{"page_size":%d}`, tc.ceiling-1): fmt.Sprintf("limit=%d", tc.ceiling-1),
				fmt.Sprintf(`{"page_size":%d}`, tc.ceiling):   fmt.Sprintf("limit=%d", tc.ceiling),
				fmt.Sprintf(`{"page_size":%d}`, tc.ceiling+1): fmt.Sprintf("limit=%d", tc.ceiling),
			}
			if tc.tool == "search_higher" {
				sent[`{"page_size":80}`] = "limit=50"
			}
			for args, want := range sent {
				before := rec.count()
				if res := call(t, c, reader, tc.tool, args); res.IsError {
					t.Fatalf("%s(%s): %s", tc.tool, args, res.Text)
				}
				if got := rec.all()[before].Query; got != want {
					t.Errorf("%s(%s) sent %q, want %q", tc.tool, args, got, want)
				}
			}
		})
	}
}

// A read sent as a POST (a search with a JSON body) on an upstream with
// follow_redirects: 307 and 308 repeat the POST with its body; 301, 302
// and 303 turn it into a GET without body or Content-Type, as net/http's
// client does. Every hop keeps the upstream's credentials.
func TestFollowedRedirectOfAReadPost(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) == 2 {
			code, _ := strconv.Atoi(parts[1])
			w.Header().Set("Location", r.URL.Path+"/done")
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q}`, r.Method)
	})
	src := strings.Replace(boundsCatalog, "tools:\n", `tools:
  - name: find
    description: A search sent as a POST.
    input: { type: object, properties: { code: { type: string }, q: { type: string } }, required: [code, q] }
    request: { upstream: up, method: POST, path: "/find/{code}", body: { q: "{q}" } }
`, 1)
	src = strings.Replace(src, `follow_redirects: true }`, `follow_redirects: true, headers: { Authorization: "Bearer up-secret" } }`, 1)
	c := parseCore(t, src, rec.srv.URL, nil)
	for _, tc := range []struct {
		code   int
		method string
		body   string
		ctype  string
	}{
		{301, "GET", "", ""},
		{302, "GET", "", ""},
		{303, "GET", "", ""},
		{307, "POST", `{"q":"x"}`, "application/json"},
		{308, "POST", `{"q":"x"}`, "application/json"},
	} {
		before := rec.count()
		res := call(t, c, reader, "find", fmt.Sprintf(`{"code":"%d","q":"x"}`, tc.code))
		if want := fmt.Sprintf(`{"method":%q}`, tc.method); res.IsError || res.Text != want {
			t.Errorf("find through a %d = %q, want %s", tc.code, res.Text, want)
			continue
		}
		hops := rec.all()[before:]
		if len(hops) != 2 || hops[0].Method != "POST" || hops[0].Body != `{"q":"x"}` {
			t.Fatalf("find through a %d sent %+v, want the POST then one more hop", tc.code, hops)
		}
		h := hops[1]
		if h.Method != tc.method || h.Body != tc.body || h.Header.Get("Content-Type") != tc.ctype || h.Header.Get("Authorization") != "Bearer up-secret" {
			t.Errorf("after a %d: %s with body %q, Content-Type %q, Authorization %q; want %s with body %q, Content-Type %q and the credential",
				tc.code, h.Method, h.Body, h.Header.Get("Content-Type"), h.Header.Get("Authorization"), tc.method, tc.body, tc.ctype)
		}
	}
}

// Every 2xx is a success, 200 and 299 included; 300 is not.
func TestSuccessStatusBounds(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	for code, want := range map[int]string{
		200: `{"status":200}`,
		201: `{"status":201}`,
		299: `{"status":299}`,
		300: "upstream up answered 300 Multiple Choices",
		404: "upstream up answered 404 Not Found",
	} {
		res := call(t, c, reader, "status", fmt.Sprintf(`{"code":"%d"}`, code))
		if res.IsError != (code > 299) || !strings.HasPrefix(res.Text, want) {
			t.Errorf("an answer %d = %+v, want %q", code, res, want)
		}
	}
}

// A page size the schema lets be fractional is clamped like any other, and
// otherwise sent as validated: the gateway changes a value only to clamp
// it.
func TestFractionalPageSizeIsClampedNotRounded(t *testing.T) {
	rec := boundsUpstream(t)
	c := parseCore(t, boundsCatalog, rec.srv.URL, nil)
	for args, want := range map[string]string{
		`{"page_size":0.5}`:  "limit=0.5",
		`{"page_size":1}`:    "limit=1",
		`{"page_size":7.5}`:  "limit=7.5",
		`{"page_size":50}`:   "limit=50",
		`{"page_size":50.5}`: "limit=50",
	} {
		before := rec.count()
		if res := call(t, c, reader, "search_number", args); res.IsError {
			t.Fatalf("search_number(%s): %s", args, res.Text)
		}
		if got := rec.all()[before].Query; got != want {
			t.Errorf("search_number(%s) sent %q, want %q", args, got, want)
		}
	}
}

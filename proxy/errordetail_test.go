package proxy_test

import (
	"io"
	"net/http"
	"testing"
)

// Exposure: an upstream's error message may carry a URL with
// its credentials; it must not reach the agent.

const leakyBody = `{"error":"db down: postgres://app:s3cret@db.internal:5432/app"}`

func TestUpstreamErrorMessagesLoseURLCredentials(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		io.WriteString(w, leakyBody)
	})
	c := coreWith(t, rec.srv.URL, nil, "")
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	want := "upstream up answered 500 Internal Server Error: db down: postgres://db.internal:5432/app"
	if !res.IsError || res.Text != want {
		t.Errorf("error_detail message (default): %q, want %q", res.Text, want)
	}

	c = coreWith(t, rec.srv.URL, nil, "    error_detail: status\n")
	res = call(t, c, reader, "get_item", `{"id":"a"}`)
	if want := "upstream up answered 500 Internal Server Error"; !res.IsError || res.Text != want {
		t.Errorf("error_detail status: %q, want %q", res.Text, want)
	}
}

func TestErrorDetailStatusKeepsRetryAfter(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(503)
		io.WriteString(w, `{"detail":"maintenance, see https://ops:hunter2@status.internal/"}`)
	})
	c := coreWith(t, rec.srv.URL, nil, "    error_detail: status\n")
	res := call(t, c, reader, "get_item", `{"id":"a"}`)
	if want := "upstream up answered 503 Service Unavailable (retry after 7)"; res.Text != want {
		t.Errorf("got %q, want %q", res.Text, want)
	}
}

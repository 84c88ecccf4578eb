package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgw/gateway/authz"
)

// A live confirmation's wait is bounded: by its wait, and by the client
// going away. Either way the waiting call leaves the hub, so a late
// answer is refused at once (404), never held.

func liveExchange(ctx context.Context) *exchange {
	return &exchange{ctx: ctx, log: slog.New(slog.DiscardHandler), version: "2025-11-25",
		principal: &authz.Principal{Subject: "operator", Workspace: "acme"}}
}

// askedID reads the elicitation id from the stream written so far.
func askedID(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	body := rec.Body.String()
	data, ok := strings.CutPrefix(strings.SplitN(body, "\n", 3)[1], "data: ")
	var req struct {
		ID string `json:"id"`
	}
	if !ok || json.Unmarshal([]byte(data), &req) != nil || !strings.HasPrefix(req.ID, elicitIDPrefix) {
		t.Fatalf("stream %q does not start with an elicitation/create event", body)
	}
	return req.ID
}

func lateAnswer(hub *liveHub, id string) int {
	x := liveExchange(context.Background())
	x.msg = &message{kind: kindResponse, id: []byte(`"` + id + `"`), result: []byte(`{"action":"accept","content":{"confirm":true}}`)}
	status, _, _ := hub.deliver(x)
	return status
}

func TestLiveAskIsBoundedByItsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hub, rec := newLiveHub(), httptest.NewRecorder()
		x := liveExchange(context.Background())
		s := hub.stream(rec, &http.Request{Header: http.Header{"Accept": {"application/json, text/event-stream"}}}, x)
		start := time.Now()
		ans, err := s.ask(x.ctx, "Confirm?", json.RawMessage(`{"type":"object"}`), 5*time.Minute)
		if ans != nil || err == nil || !strings.Contains(err.Error(), "did not answer within 5m0s") {
			t.Fatalf("ask = %v, %v; want the wait to run out", ans, err)
		}
		if d := time.Since(start); d != 5*time.Minute {
			t.Errorf("waited %s, want 5m", d)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" || !s.started() {
			t.Errorf("Content-Type %q, started %v: the answer should have become a stream", ct, s.started())
		}
		if st := lateAnswer(hub, askedID(t, rec)); st != http.StatusNotFound {
			t.Errorf("answer after the wait: %d, want 404", st)
		}
	})
}

func TestLiveAskEndsWhenTheClientGoesAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hub, rec := newLiveHub(), httptest.NewRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		x := liveExchange(ctx)
		s := hub.stream(rec, &http.Request{Header: http.Header{"Accept": {"text/event-stream, application/json"}}}, x)
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		_, err := s.ask(ctx, "Confirm?", json.RawMessage(`{"type":"object"}`), 5*time.Minute)
		if err == nil || !strings.Contains(err.Error(), "went away") {
			t.Fatalf("ask = %v; want the client's leaving to end it", err)
		}
		if st := lateAnswer(hub, askedID(t, rec)); st != http.StatusNotFound {
			t.Errorf("answer after the client left: %d, want 404", st)
		}
	})
}

func TestLiveAnswerErrorsSayWhy(t *testing.T) {
	for _, c := range []struct {
		a    liveAnswer
		want string
	}{
		{liveAnswer{errv: []byte(`{"code":-32601,"message":"no handler"}`)}, `error -32601 "no handler"`},
		{liveAnswer{result: []byte(`[]`)}, "not an object"},
		{liveAnswer{result: []byte(`{"action":7}`)}, "not an object with a string action"},
	} {
		if _, err := decodeElicitAnswer(c.a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s: %v, want %q", c.a.result, c.a.errv, err, c.want)
		}
	}
}

func TestAcceptsEventStream(t *testing.T) {
	for in, want := range map[string]bool{
		"application/json, text/event-stream": true,
		"text/*":                              true,
		"text/event-stream;q=0":               false,
		"application/json":                    false,
		"*/*":                                 false,
		"":                                    false,
		"text/event-stream;q=x":               false,
	} {
		if got := acceptsEventStream([]string{in}); got != want {
			t.Errorf("acceptsEventStream(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzAcceptsEventStream(f *testing.F) {
	f.Add("application/json, text/event-stream")
	f.Add("text/*;q=0.5,,")
	f.Fuzz(func(t *testing.T, accept string) {
		got := acceptsEventStream([]string{accept})
		if got && !strings.Contains(strings.ToLower(accept), "text/") {
			t.Errorf("%q accepted without naming text/", accept)
		}
	})
}

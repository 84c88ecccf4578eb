package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBoth writes r through slog's JSON handler and through lineHandler
// and returns both lines.
func logBoth(t testing.TB, r slog.Record) (want, got string) {
	var jw, lw bytes.Buffer
	if err := slog.NewJSONHandler(&jw, nil).Handle(context.Background(), r.Clone()); err != nil {
		t.Fatal(err)
	}
	if err := newLineHandler(&lw, slog.LevelInfo).Handle(context.Background(), r.Clone()); err != nil {
		t.Fatal(err)
	}
	return jw.String(), lw.String()
}

func TestLineHandlerWritesWhatTheJSONHandlerWrites(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	cases := []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
	}{
		{"access-line", at, slog.LevelInfo, "request", []slog.Attr{
			slog.String("request_id", "0123456789abcdef"), slog.String("surface", "mcp"), slog.String("method", "tools/call"),
			slog.String("tool", "get_item"), slog.Int("status", 200), slog.Int("rpc_code", -32602),
			slog.Duration("duration", 1234567*time.Nanosecond), slog.String("subject", "alice"), slog.String("workspace", "acme"),
		}},
		{"no-time", time.Time{}, slog.LevelWarn, "m", []slog.Attr{slog.Bool("ok", true), slog.Uint64("n", 1<<63)}},
		{"odd-level", at, slog.LevelDebug + 2, "m", nil},
		{"escapes-in-strings", at, slog.LevelInfo, "quote \" backslash \\ <html> & \n\r\t \x00\x1f \u2028\u2029 é 😀",
			[]slog.Attr{slog.String("bad \xff utf8", "a\xc3b\xed\xa0\x80c"), slog.String("", "empty key")}},
		{"empty-attr-dropped", at, slog.LevelInfo, "m", []slog.Attr{{}, slog.Int("n", 0)}},
		{"any-falls-back", at, slog.LevelError, "m", []slog.Attr{slog.Any("err", errors.New("boom")), slog.Group("g", slog.Int("a", 1)), slog.Float64("f", 1.5), slog.Time("t", at)}},
		{"year-out-of-range-falls-back", time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelInfo, "m", nil},
		{"utc-time", at.UTC().Truncate(time.Second), slog.LevelInfo, "m", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := slog.NewRecord(c.time, c.level, c.msg, 0)
			r.AddAttrs(c.attrs...)
			want, got := logBoth(t, r)
			if got != want {
				t.Fatalf("lineHandler wrote\n%s\nthe JSON handler\n%s", got, want)
			}
		})
	}
}

func TestLineHandlerLeavesDerivedLoggersToTheJSONHandler(t *testing.T) {
	var jw, lw bytes.Buffer
	slog.New(slog.NewJSONHandler(&jw, nil)).With("a", 1).WithGroup("g").Info("m", "b", "x")
	slog.New(newLineHandler(&lw, slog.LevelInfo)).With("a", 1).WithGroup("g").Info("m", "b", "x")
	// The times differ; compare from the level on.
	cut := func(s string) string { return s[bytes.IndexByte([]byte(s), ',')+1:] }
	if cut(lw.String()) != cut(jw.String()) {
		t.Fatalf("derived lineHandler wrote %s, JSON handler %s", lw.String(), jw.String())
	}
	if slog.New(newLineHandler(&lw, slog.LevelInfo)).Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("a handler at Info is enabled for Debug")
	}
}

func FuzzLineHandler(f *testing.F) {
	f.Add("request", "tools/call", "get_item", int64(200), int64(1234))
	f.Add("m \x00 \u2028 \xff", "<&>", "\"\\", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, msg, k, v string, n, d int64) {
		r := slog.NewRecord(time.Unix(0, n).UTC(), slog.Level(n%20), msg, 0)
		r.AddAttrs(slog.String(k, v), slog.Int64("n", n), slog.Duration(v, time.Duration(d)), slog.Bool(k, n > 0))
		if want, got := logBoth(t, r); got != want {
			t.Fatalf("lineHandler wrote\n%s\nthe JSON handler\n%s", got, want)
		}
	})
}

func TestLineHandlerKeepsConcurrentLinesWhole(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(newLineHandler(&buf, slog.LevelInfo))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				l.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.Int("g", g), slog.Int("i", i), slog.String("pad", strings.Repeat("x", g*50)))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("a line is not one JSON object: %q", line)
		}
	}
}

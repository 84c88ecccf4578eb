package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// lineHandler writes the records every request logs (the access line:
// strings, integers, a duration) by appending their JSON by hand, one
// Write per record, and hands every other record to slog's JSON handler.
// The bytes are the JSON handler's own, key for key (a test holds the two
// to each other): what changes is the cost, since the JSON handler
// formats through a general state machine and a pooled buffer per
// record, and the access line is written once per request.
//
// Loggers derived with WithAttrs or WithGroup are the JSON handler's.
type lineHandler struct {
	json  slog.Handler
	level slog.Leveler
	mu    sync.Mutex // one record per Write, as the JSON handler does
	w     io.Writer
	pool  sync.Pool
}

func newLineHandler(w io.Writer, level slog.Leveler) *lineHandler {
	return &lineHandler{json: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}), level: level, w: w}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.json.WithAttrs(as) }

func (h *lineHandler) WithGroup(name string) slog.Handler { return h.json.WithGroup(name) }

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	if !plainRecord(r) {
		return h.json.Handle(ctx, r)
	}
	bp, _ := h.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := (*bp)[:0]
	b = append(b, '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":"`...)
		b = r.Time.Round(0).AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendJSONString(b, r.Level.String())
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "" && a.Value.Equal(slog.Value{}) {
			return true // the JSON handler drops an empty attribute too
		}
		b = append(b, ',')
		b = appendJSONString(b, a.Key)
		b = append(b, ':')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			b = appendJSONString(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			b = strconv.AppendInt(b, int64(v.Duration()), 10)
		}
		return true
	})
	b = append(b, '}', '\n')
	h.mu.Lock()
	_, err := h.w.Write(b)
	h.mu.Unlock()
	if cap(b) <= 4<<10 {
		*bp = b
		h.pool.Put(bp)
	}
	return err
}

// plainRecord reports whether every attribute of r is of a kind
// lineHandler writes itself, and its time is one the JSON handler writes
// without complaint.
func plainRecord(r slog.Record) bool {
	if y := r.Time.Year(); !r.Time.IsZero() && (y < 0 || y >= 10000) {
		return false
	}
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindBool, slog.KindDuration:
			return true
		}
		plain = false
		return false
	})
	return plain
}

// appendJSONString appends s as the JSON handler writes a string:
// encoding/json's escaping without the HTML rule, invalid UTF-8 as
// \ufffd, and U+2028 and U+2029 escaped. It is not rendering.AppendString,
// which writes U+FFFD itself and escapes DEL: a log line must be the
// JSON handler's, byte for byte, and a tool result need not be.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

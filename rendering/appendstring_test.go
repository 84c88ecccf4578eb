package rendering_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgw/gateway/rendering"
)

// appendStringByByte is AppendString's rule written the plain way, one
// byte or rune at a time: the reference the run-copying AppendString is
// held to.
func appendStringByByte(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

var appendStringSeeds = []string{
	"", "plain ascii", `{"items":[{"id":"item-000001","note":"a"}],"total":1}`,
	"quote \" backslash \\ <html> & \n\r\t \x00\x1f\x7f", "\u2028\u2029 é 😀 日本",
	"bad \xff\xfe utf8 \xc3", "\xed\xa0\x80 surrogate", strings.Repeat("x\"", 100),
}

func TestAppendStringWritesWhatTheByteByByteRuleWrites(t *testing.T) {
	for _, s := range appendStringSeeds {
		if got, want := rendering.AppendString([]byte("p"), s), appendStringByByte([]byte("p"), s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := rendering.AppendString(nil, s)
		if want := appendStringByByte(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %q, want %q", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("AppendString(%q) = %q: not valid UTF-8", s, got)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	var sb strings.Builder
	for i := range 100 {
		sb.WriteString(`{"id":"item-00000` + string(rune('0'+i%10)) + `","name":"Item","state":"Succeeded","tags":["region=eu","tier=gold"],"note":"a short free-text note that pads this record."},`)
	}
	s := sb.String()
	buf := make([]byte, 0, 2*len(s))
	b.SetBytes(int64(len(s)))
	b.Run("runs", func(b *testing.B) {
		for b.Loop() {
			buf = rendering.AppendString(buf[:0], s)
		}
	})
	b.Run("byte-by-byte", func(b *testing.B) {
		for b.Loop() {
			buf = appendStringByByte(buf[:0], s)
		}
	})
}

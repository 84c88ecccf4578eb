package rendering

import (
	"strconv"
	"unicode/utf8"
)

// Payload renders raw bytes as {"encoding","content","truncated","byteCount"}:
// valid UTF-8 as text ("utf8"), anything else as uppercase hex ("hex").
// content holds at most inline bytes of the raw payload, cut on a
// character boundary (utf8) or a byte boundary (hex); total is the full
// raw length, which may exceed len(raw) when only a prefix was read.
func Payload(raw []byte, total int64, inline int) []byte {
	if total < int64(len(raw)) {
		total = int64(len(raw))
	}
	if inline <= 0 {
		inline = 16 << 10
	}
	cut := raw
	truncated := total > int64(len(raw))
	if len(cut) > inline {
		cut, truncated = cut[:inline], true
	}
	// Judge the encoding on what was read; a prefix whose only flaw is a
	// character split by the read cap is still UTF-8.
	isText := utf8.Valid(raw) || (int64(len(raw)) < total && validPrefix(raw))
	b := make([]byte, 0, 2*len(cut)+80)
	b = append(b, `{"encoding":`...)
	if isText {
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1] // step back off a split character
		}
		b = append(b, `"utf8","content":`...)
		b = AppendString(b, string(cut))
	} else {
		const hex = "0123456789ABCDEF"
		b = append(b, `"hex","content":"`...)
		for _, c := range cut {
			b = append(b, hex[c>>4], hex[c&0xf])
		}
		b = append(b, '"')
	}
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, truncated)
	b = append(b, `,"byteCount":`...)
	b = strconv.AppendInt(b, total, 10)
	return append(b, '}')
}

// validPrefix reports whether b is valid UTF-8 but for an incomplete
// character at its end: at most three bytes that begin a character and
// stop short of its end. Other bad bytes make b binary (a leading 0xFF
// once passed as text with every byte stepped back off).
func validPrefix(b []byte) bool {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if !utf8.FullRune(b[len(b)-i:]) && utf8.Valid(b[:len(b)-i]) {
			return true
		}
	}
	return utf8.Valid(b)
}

package mcp

import (
	"strconv"
	"unicode/utf8"
)

// Responses on the hot paths (tools/list, tools/call) are appended byte by
// byte: tool objects arrive pre-encoded from proxy.Listed and call results
// as raw JSON, so nothing is re-encoded per request.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; U+2028 and U+2029 are escaped so the output is
// also safe inside JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendID appends a raw id, or null when there is none.
func appendID(dst, id []byte) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// appendResultStart opens a success response up to the result object's
// first member.
func appendResultStart(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	return append(dst, `,"result":{`...)
}

// appendServerInfo appends an Implementation object.
func appendServerInfo(dst []byte, si serverInfo) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, si.Name)
	dst = append(dst, `,"version":`...)
	dst = appendString(dst, si.Version)
	if si.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendString(dst, si.Title)
	}
	return append(dst, '}')
}

// appendModernTail appends the members every modern result carries,
// preceded by a comma; the caller has written at least one member.
func appendModernTail(dst []byte, si serverInfo) []byte {
	dst = append(dst, `,"resultType":"complete","_meta":{"`+metaServerInfo+`":`...)
	dst = appendServerInfo(dst, si)
	return append(dst, '}')
}

// appendError appends a whole error response. data is raw JSON or nil.
func appendError(dst, id []byte, code int, msg string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	if data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, "}}"...)
}

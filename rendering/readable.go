package rendering

import (
	"fmt"
	"strconv"
)

// MaxDepth is how deeply an upstream answer may nest arrays and objects.
// Real APIs stay within a few dozen levels; past this the gateway does not
// read the answer: a JSON parser that recurses (gjson's validator does,
// with no bound) would be driven past Go's stack limit by a few megabytes
// of "[[[[", killing the process, and every walk of a deep answer costs
// its depth times its size.
const MaxDepth = 128

// UnreadableError is Shape's answer for a JSON body it will not read:
// nested deeper than MaxDepth, or holding a number no client can decode
// as a 64-bit float (1e400 fails the whole result in the Go SDK).
type UnreadableError struct{ Why string }

func (e *UnreadableError) Error() string { return "its body " + e.Why }

// Readable returns why body, read as JSON, must not be read further, or
// nil. It looks at every byte once, without recursion, and does not check
// that body is JSON: call it before anything that parses.
func Readable(body []byte) *UnreadableError {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			// Skip the string, escapes included.
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > MaxDepth {
				return &UnreadableError{Why: fmt.Sprintf("is nested deeper than %d levels, more than the gateway reads", MaxDepth)}
			}
		case ']', '}':
			depth--
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j := i
			big := false
			for j < len(body) && numberByte(body[j]) {
				big = big || body[j] == 'e' || body[j] == 'E'
				j++
			}
			if n := body[i:j]; big || len(n) > 300 {
				if _, err := strconv.ParseFloat(string(n), 64); err != nil {
					if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
						return &UnreadableError{Why: fmt.Sprintf("holds the number %.40s, beyond what a 64-bit float holds, which clients cannot decode", n)}
					}
				}
			}
			i = j - 1
		}
	}
	return nil
}

func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

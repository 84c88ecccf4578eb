package proxy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgw/gateway/catalog"
)

// Numbers in arguments. The schema validator computes with
// big.Rat: 1e999999 is a 3.3-million-bit integer that costs it ~25 ms,
// and an array of them costs that many times over. So before validation
// every numeric literal in the arguments is checked and rewritten:
//
//   - A literal longer than MaxNumberLiteralBytes is refused.
//   - A literal spelt as an integer (no fraction, no exponent) must fit
//     int64: past it, float64 would silently change the value.
//   - Any other literal must be a finite float64 that keeps a non-zero
//     value non-zero: 1.8e308 overflows, 1e-999999 underflows; both are
//     out of range.
//   - What is accepted is rewritten to its canonical spelling: an integral
//     value within int64 as plain decimal (1e3 → 1000, 20.0 → 20, -0 → 0),
//     anything else as Go's shortest round-trip form (strconv 'g', -1):
//     0.001, 1.5e-07, 1e+19.
//
// The validator then sees only canonical, finite numbers, and the upstream
// receives exactly what was validated, in path, query and body alike.
// Whether an integral value past int64 (1e+19) fits a `type: integer`
// argument is the schema's question: catalog refuses it there.

// MaxNumberLiteralBytes caps the length of one numeric literal in the
// arguments. 64 bytes hold any int64 and the 17 significant digits of any
// float64 with room to spare.
const MaxNumberLiteralBytes = 64

// canonicalNumbers checks every number in v, recursively, and rewrites
// each to its canonical spelling in place. The error names the first
// offending argument.
func canonicalNumbers(v any) error {
	var path []string
	var walk func(v any) (any, error)
	walk = func(v any) (any, error) {
		switch v := v.(type) {
		case json.Number:
			n, msg := canonicalNumber(string(v))
			if msg != "" {
				return nil, &catalog.ArgumentError{Field: fieldName(path), Msg: msg}
			}
			return n, nil
		case map[string]any:
			for k, e := range v {
				path = append(path, "."+k)
				n, err := walk(e)
				path = path[:len(path)-1]
				if err != nil {
					return nil, err
				}
				v[k] = n
			}
		case []any:
			for i, e := range v {
				path = append(path, "["+strconv.Itoa(i)+"]")
				n, err := walk(e)
				path = path[:len(path)-1]
				if err != nil {
					return nil, err
				}
				v[i] = n
			}
		}
		return v, nil
	}
	_, err := walk(v)
	return err
}

// fieldName renders a path of ".key" and "[i]" steps as
// catalog.ArgumentError does: filter.tags[2].
func fieldName(path []string) string {
	return strings.TrimPrefix(strings.Join(path, ""), ".")
}

// canonicalNumber returns the canonical spelling of the JSON number lit,
// or why it is refused.
func canonicalNumber(lit string) (json.Number, string) {
	if len(lit) > MaxNumberLiteralBytes {
		return "", fmt.Sprintf("number literal of %d bytes is longer than the %d-byte limit", len(lit), MaxNumberLiteralBytes)
	}
	if !strings.ContainsAny(lit, ".eE") {
		i, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return "", fmt.Sprintf("integer %s is outside the 64-bit range", lit)
		}
		var buf [20]byte
		if c := strconv.AppendInt(buf[:0], i, 10); string(c) != lit {
			return json.Number(c), ""
		}
		return json.Number(lit), "" // already canonical: no second string
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || (f == 0 && nonZeroMantissa(lit)) {
		return "", fmt.Sprintf("number %s is out of range", lit)
	}
	return formatNumber(f), ""
}

// formatNumber spells a finite f canonically.
func formatNumber(f float64) json.Number {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// nonZeroMantissa reports whether the digits before any exponent of a
// JSON number include one other than 0.
func nonZeroMantissa(lit string) bool {
	for _, c := range lit {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

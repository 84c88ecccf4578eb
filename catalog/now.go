package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Computed times: silences, range queries and reports need "now"
// and "now plus a duration". A template may hold, instead of an argument,
//
//	{now}            the current time, RFC 3339 in UTC to the second
//	{now.unix}       the current time in Unix seconds
//	{now+ARG}        now plus the duration in argument ARG, RFC 3339
//	{now-ARG}        now minus it
//	{now+ARG.unix}   the same in Unix seconds (and {now-ARG.unix})
//
// and nothing more general: no arithmetic, no formats, no time zones. ARG
// must be a declared string argument; its value is parsed when the tool is
// called, by [ParseTimeOffset].

// ReservedNow is the name computed time placeholders start with. It cannot
// be an argument name, nor can a name starting with "now." or "now-".
const ReservedNow = "now"

// MaxTimeOffset is the largest duration {now+ARG} and {now-ARG} accept:
// 366 days, a year and a leap day. A silence or a report window longer
// than that is more likely a typo ("1000d") than an intent.
const MaxTimeOffset = 366 * 24 * time.Hour

// TimeRef is one computed time placeholder.
type TimeRef struct {
	// Name is the placeholder's text: "now", "now.unix", "now+ttl.unix".
	Name string
	// Sign is 0 for {now}, +1 for {now+ARG}, -1 for {now-ARG}.
	Sign int
	// Arg is the argument holding the duration; "" when Sign is 0.
	Arg string
	// Unix asks for Unix seconds instead of RFC 3339.
	Unix bool
}

// ParseTimeRef reports whether name, a placeholder's text without braces,
// is a computed time. It is when name is "now" or starts with "now.",
// "now+" or "now-"; err is then set if the rest is not one of the forms
// above.
func ParseTimeRef(name string) (ref TimeRef, ok bool, err error) {
	if name != ReservedNow && !strings.HasPrefix(name, "now.") && !strings.HasPrefix(name, "now+") && !strings.HasPrefix(name, "now-") {
		return TimeRef{}, false, nil
	}
	bad := fmt.Errorf("placeholder {%s} is not a computed time: write {now}, {now.unix}, {now+ARG}, {now-ARG}, {now+ARG.unix} or {now-ARG.unix}, where ARG is an argument holding a duration", name)
	ref = TimeRef{Name: name}
	rest := name[len(ReservedNow):]
	if r, unix := strings.CutSuffix(rest, ".unix"); unix {
		ref.Unix, rest = true, r
	}
	switch {
	case rest == "":
		return ref, true, nil
	case rest[0] == '+':
		ref.Sign = 1
	case rest[0] == '-':
		ref.Sign = -1
	default:
		return TimeRef{}, true, bad
	}
	ref.Arg = rest[1:]
	if !validArgName(ref.Arg) {
		return TimeRef{}, true, bad
	}
	return ref, true, nil
}

// reservedTimeName reports whether an argument called name would read as
// a computed time placeholder.
func reservedTimeName(name string) bool {
	_, ok, _ := ParseTimeRef(name)
	return ok
}

// TimeOffsetError is a duration argument that [ParseTimeOffset] refuses.
type TimeOffsetError struct{ Msg string }

func (e *TimeOffsetError) Error() string { return e.Msg }

// ParseTimeOffset parses the value of a {now+ARG} or {now-ARG} argument:
// a Go duration (time.ParseDuration: "90m", "2h30m", "1.5h") that may
// start with a whole number of days ("1d", "1d12h", "7d"). It must be
// greater than zero and at most [MaxTimeOffset]; no sign, no spaces.
func ParseTimeOffset(s string) (time.Duration, error) {
	const want = "a duration like 90m, 2h, 1d or 1d12h"
	bad := func(why string) error {
		return &TimeOffsetError{fmt.Sprintf("%q is not %s%s", clip(s), want, why)}
	}
	if s == "" || len(s) > 64 {
		return 0, bad("")
	}
	if s[0] == '+' || s[0] == '-' {
		return 0, bad(" (write it without a sign: the template says + or -)")
	}
	var days int64
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || i == 0 || !allDigits(s[:i]) {
			return 0, bad("")
		}
		if n > int64(MaxTimeOffset/(24*time.Hour)) {
			return 0, bad(fmt.Sprintf(" of at most %s", fmtOffset(MaxTimeOffset)))
		}
		days, rest = n, s[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		d, err = time.ParseDuration(rest)
		if err != nil || rest[0] == '+' || rest[0] == '-' {
			return 0, bad("")
		}
	}
	if d > MaxTimeOffset {
		return 0, bad(fmt.Sprintf(" of at most %s", fmtOffset(MaxTimeOffset)))
	}
	d += time.Duration(days) * 24 * time.Hour
	switch {
	case d <= 0:
		return 0, bad(" greater than zero")
	case d > MaxTimeOffset:
		return 0, bad(fmt.Sprintf(" of at most %s", fmtOffset(MaxTimeOffset)))
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// fmtOffset writes a whole number of days as "366d".
func fmtOffset(d time.Duration) string {
	return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
}

// FormatTime renders a computed time: RFC 3339 in UTC to the second, or
// Unix seconds.
func FormatTime(t time.Time, unix bool) string {
	if unix {
		return strconv.FormatInt(t.Unix(), 10)
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}
